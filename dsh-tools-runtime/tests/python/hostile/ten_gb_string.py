# expect: memory-limit: memory limit reached
x = "a" * (10 * 1024**3)
