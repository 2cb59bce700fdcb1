# expect: output-limit: outer output exceeded 65536 bytes
# limits: output=65536
while True:
    print("flood " * 100)
