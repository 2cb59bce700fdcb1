// expect: timeout: compute budget exhausted
// rquickjs#663: the interrupt must fire (and be survived) while draining promise jobs.
while (true) await Promise.resolve();
