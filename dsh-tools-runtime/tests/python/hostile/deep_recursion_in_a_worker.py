# expect: stack-overflow: recursion limit reached (1000 frames)
# isolation: workers
class Loop:
    def __repr__(self):
        return repr(self)


repr(Loop())
