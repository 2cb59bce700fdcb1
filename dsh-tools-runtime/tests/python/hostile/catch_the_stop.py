# expect: timeout: compute budget exhausted (300ms of interpreter time)
# The budget is uncatchable: a program that catches everything still ends.
while True:
    try:
        while True:
            pass
    except BaseException:
        pass
