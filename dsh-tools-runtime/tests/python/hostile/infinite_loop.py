# expect: timeout: compute budget exhausted (300ms of interpreter time)
while True:
    pass
