# expect: invalid-output: program completion must be lossless JSON: nested deeper than
x = []
for _ in range(100_000):
    x = [x]
return x
