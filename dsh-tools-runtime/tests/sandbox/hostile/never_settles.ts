// expect: timeout: wall-clock ceiling reached (1000ms)
// No CPU is spent: only the wall clock can end a program that waits forever.
await new Promise(() => {});
