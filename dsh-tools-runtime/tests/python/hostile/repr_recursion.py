# expect: stack-overflow: recursion limit reached (1000 frames)
# Recursion through a dunder re-enters the interpreter natively, frame after frame.
class Loop:
    def __repr__(self):
        return repr(self)


repr(Loop())
