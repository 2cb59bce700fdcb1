// expect: exception: ToolCallError: fail: disk on fire
// The program rewrites what the host might use: the prototypes of Object, Array, Error, Promise
// and the ToolCallError class, JSON, and the tools namespace itself. The host must still
// dispatch, convert values and report the uncaught rejection with its own intrinsics.
const { echo, fail } = tools;
const t = tools as any;
(Object.prototype as any).toJSON = () => 'polluted';
(Array.prototype as any).push = () => { throw new Error('push trap'); };
(Array.prototype as any)[Symbol.iterator] = function* () { yield 'polluted'; };
(Error.prototype as any).toString = () => 'polluted error';
Object.defineProperty(Error.prototype, 'stack', { get() { throw new Error('stack trap'); }, configurable: true });
Object.defineProperty(ToolCallError.prototype, 'message', { get() { throw new Error('message trap'); }, configurable: true });
(ToolCallError.prototype as any).toString = () => 'polluted ToolCallError';
(JSON as any).stringify = () => 'polluted';
(JSON as any).parse = () => ({});
(Promise.prototype as any).then = function () { throw new Error('promise trap'); };
// The namespace is the program's own: replacing its members only changes what it calls.
t.fail = () => 'replaced';
Object.setPrototypeOf(t, { echo: () => 'hijacked' });
const echoed = await echo({ ok: [1, 2] });
if (echoed.ok[1] !== 2) return 'echo lost its value';
await fail({});
