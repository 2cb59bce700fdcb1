# expect: stack-overflow: recursion limit reached (1000 frames)
# Comparing two 200,000-deep lists recurses in native code.
a = []
b = []
for _ in range(200_000):
    a = [a]
    b = [b]
a == b
