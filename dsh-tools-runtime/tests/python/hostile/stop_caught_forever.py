# expect: timeout: wall-clock ceiling reached (300ms)
# limits: cpu=1500ms wall=300ms
# A stop raises at the interpreter's checkpoints, and this program catches it each time: the
# host gives up on the thread after a grace period, and the thread ends at its time budget.
while True:
    try:
        while True:
            pass
    except BaseException:
        pass
