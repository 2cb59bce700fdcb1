# expect: memory-limit: memory limit reached
s = "x"
while True:
    s = s + s
