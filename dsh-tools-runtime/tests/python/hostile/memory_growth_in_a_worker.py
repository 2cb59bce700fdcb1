# expect: memory-limit: memory limit reached (16777216 bytes)
# isolation: workers
# Small allocations only: no single one is large, together they are.
pieces = []
while True:
    pieces.append("x" * 1000)
