// expect: timeout: compute budget exhausted (300ms of CPU time)
while (true) {}
