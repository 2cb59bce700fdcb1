# expect: memory-limit: memory limit reached (16777216 bytes)
# isolation: workers
x = "a" * (10 * 1024**3)
