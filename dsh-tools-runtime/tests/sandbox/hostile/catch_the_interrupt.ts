// expect: timeout: compute budget exhausted (300ms of CPU time)
// The interrupt is uncatchable: neither catch nor finally can resume the loop.
while (true) {
  try {
    for (;;) {}
  } catch {
    continue;
  } finally {
    continue;
  }
}
