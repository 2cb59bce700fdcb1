// expect: exception: EvalError: code generation from strings is disabled
// Every route to compiling a string must throw; the last attempt's error ends the program.
const g = globalThis as any;
const attempts: Array<() => unknown> = [
  () => g.eval('1'),
  () => new g.Function('return 1')(),
  () => (function () {}).constructor('return 1')(),
  () => (async function () {}).constructor('return 1'),
  () => (function* () {}).constructor('yield 1'),
  () => (async function* () {}).constructor('yield 1'),
  () => Reflect.construct(Object.getPrototypeOf(function () {}).constructor, ['return 1']),
  () => [].constructor.constructor('return this')(),
  () => (tools.echo as any).constructor('return this')(),
  () => (console.log as any).constructor('return this')(),
  () => new (class extends (function () {}).constructor {} as any)('return 1'),
];
const escaped: number[] = [];
attempts.forEach((attempt, i) => {
  try { attempt(); escaped.push(i); } catch { /* refused */ }
});
if (escaped.length > 0) return { escaped };
(() => {}).constructor('while (true) {}')();
