// expect: memory-limit: memory limit reached (16777216 bytes)
// Live objects grow until the heap limit; the same runtime must work afterwards.
const hoard: unknown[] = [];
while (true) hoard.push({ n: hoard.length, s: 'x'.repeat(1024) + hoard.length, a: [1, 2, 3] });
