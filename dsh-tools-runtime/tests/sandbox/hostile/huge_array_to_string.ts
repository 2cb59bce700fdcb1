// expect: timeout: wall-clock ceiling reached (300ms)
// limits: wall=300ms
// abandons: its sandbox thread
// quickjs-emscripten#219: the join inside `+ ''` never consults the interrupt handler; the
// watchdog outside the engine ends the run and abandons the thread, which goes on joining on
// its own (for tens of seconds here, whatever the memory limit): it runs last, and the child
// process exits without waiting for it.
return new Array(1e9) + '';
