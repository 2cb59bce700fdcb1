// expect: memory-limit: memory limit reached (16777216 bytes)
// One allocation doubling each round: the failing allocation is a single huge flat string
// (`s += s` would build a rope and stop at QuickJS's string length limit instead).
let s = 'x';
while (true) s = s.repeat(2);
