# expect: stack-overflow: recursion limit reached (1000 frames)
# limits: cpu=4000ms wall=6000ms
# Comparing two 20,000-deep lists recurses in native code (far past the recursion limit).
a = []
b = []
for _ in range(20_000):
    a = [a]
    b = [b]
a == b
