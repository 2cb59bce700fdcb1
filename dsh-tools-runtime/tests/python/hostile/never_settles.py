# expect: timeout: wall-clock ceiling reached (1000ms)
await tools.never({})
