// expect: exception
// Nothing of quickjs-libc or of the host is reachable: no std/os/require/module loader, no
// internal __dsh_* names, and a walk of everything reachable from globalThis finds no native
// handle beyond the standard built-ins. The dynamic import that ends the program must throw.
const g = globalThis as any;
const found: string[] = [];
for (const name of ['std', 'os', 'require', 'module', 'process', 'bjson', 'gc', 'print', 'scriptArgs',
  '__dsh_main__', '__dsh_run__', '__dsh_bindings__', '__dsh_state__', 'evalScript', 'loadScript']) {
  if (name in g || typeof g[name] !== 'undefined') found.push(name);
}
const seen = new Set<unknown>();
const queue: Array<[unknown, string]> = [[g, 'globalThis']];
while (queue.length > 0) {
  const [value, path] = queue.shift()!;
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
  seen.add(value);
  for (const key of Reflect.ownKeys(value as object)) {
    const name = String(key);
    if (/^__dsh|evalScript|loadFile|setInterruptHandler|^std$|^os$/.test(name)) found.push(`${path}.${name}`);
    const descriptor = Reflect.getOwnPropertyDescriptor(value as object, key);
    if (descriptor && 'value' in descriptor) queue.push([descriptor.value, `${path}.${name}`]);
  }
  queue.push([Object.getPrototypeOf(value), `${path}.__proto__`]);
}
if (found.length > 0) return found;
await import('std');
