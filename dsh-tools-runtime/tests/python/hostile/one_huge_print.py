# expect: output-limit: outer output exceeded 65536 bytes
# limits: output=65536 cpu=4000ms wall=6000ms
print("x" * 10_000_000)
