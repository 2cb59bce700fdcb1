# expect: memory-limit: memory limit reached
# limits: cpu=4000ms wall=6000ms
s = "x"
while True:
    s = s + s
