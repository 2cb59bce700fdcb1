# expect: invalid-output: program completion must be lossless JSON: nested deeper than
# limits: cpu=4000ms wall=6000ms
x = []
for _ in range(100_000):
    x = [x]
return x
