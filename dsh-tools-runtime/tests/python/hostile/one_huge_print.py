# expect: output-limit: outer output exceeded 65536 bytes
# limits: output=65536
print("x" * 10_000_000)
