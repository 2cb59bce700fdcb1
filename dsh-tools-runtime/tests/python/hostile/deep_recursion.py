# expect: stack-overflow: recursion limit reached (1000 frames)
def down(n):
    return down(n + 1)


down(0)
