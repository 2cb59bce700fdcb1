# expect: memory-limit: memory limit reached
x = [0] * 10**10
