# expect: memory-limit: memory limit reached (16777216 bytes)
# limits: cpu=4000ms wall=6000ms
# isolation: workers
# Small allocations only: no single one is large, together they are.
pieces = []
while True:
    pieces.append("x" * 1000)
