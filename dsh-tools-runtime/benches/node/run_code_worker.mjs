// The Node.js side of the `run_code` comparison (benches/run_code.rs): the same job as one
// dsh-tools `run_code` call — a fresh `worker_thread` per run, a program making three awaited
// tool calls answered by the parent thread, console capture, a lossless JSON completion.
//
// The Node side gets the program with its types already removed: Node 20 has no built-in type
// strip, so its figure excludes the strip dsh-tools pays for. That favours Node.
//
// Two ways to run (the bench reports both):
// - fresh: a new `worker_thread` per run (the isolation each dsh-tools run has: a fresh sandbox);
// - warm: one pre-warmed worker, started before timing and reused for every run (each program
//   still gets fresh bindings and console, but shares the worker's isolate and globals with the
//   runs before it) — the fairest Node can be: no worker start-up on the critical path at all.
//
// Protocol (stdin → stdout, one line each): `check` / `check warm` → the JSON outcome of one
// run; `<n>` / `warm <n>` → runs n times in a row and prints the total elapsed nanoseconds.
import { Worker } from 'node:worker_threads';
import { createInterface } from 'node:readline';

const PROGRAM = `
const files = await tools.list({ dir: 'src' });
const hits = await tools.search({ pattern: 'TODO', files });
const text = await tools.read({ path: hits[0].path });
console.log(\`\${hits.length} hits\`);
return { first: hits[0], size: text.length };`;

const TOOLS = {
  list: () => ['a.rs', 'b.rs'],
  search: () => [{ path: 'a.rs', line: 3 }],
  read: () => 'fn main() {}',
};

// Runs inside a worker: `settle` answers a pending tool call; `run` gives a program fresh
// bindings that message the parent and a captured console, and runs it as the body of an
// async function.
const RUNTIME = `
const { parentPort, workerData } = require('node:worker_threads');
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
const pending = new Map();
let nextId = 0;
function settle(m) {
  const call = pending.get(m.id);
  pending.delete(m.id);
  if ('error' in m) call.reject(new Error(m.error)); else call.resolve(m.value);
}
function run(program, names) {
  const tools = Object.create(null);
  for (const name of names) {
    tools[name] = (args) => new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      parentPort.postMessage({ type: 'call', id, name, args: JSON.parse(JSON.stringify(args)) });
    });
  }
  const logs = [];
  const sandboxConsole = { log: (...a) => logs.push(a.map(String).join(' ')) };
  new AsyncFunction('tools', 'console', '"use strict";' + program)(tools, sandboxConsole)
    .then((value) => parentPort.postMessage({ type: 'done', logs, value: JSON.parse(JSON.stringify(value)) }),
          (error) => parentPort.postMessage({ type: 'done', logs, error: String(error && error.stack || error) }));
}
`;

// A fresh worker per run: its program arrives with it.
const WORKER = RUNTIME + `
parentPort.on('message', settle);
run(workerData.program, workerData.names);
`;

function runOnce() {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, {
      eval: true,
      env: {},
      execArgv: [],
      workerData: { program: PROGRAM, names: Object.keys(TOOLS) },
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    });
    worker.on('message', (m) => {
      if (m.type === 'call') {
        worker.postMessage({ id: m.id, value: TOOLS[m.name](m.args) });
      } else if (m.type === 'done') {
        // A fresh sandbox per run: this one is torn down off the critical path, as ours are.
        worker.terminate();
        resolve(m);
      }
    });
    worker.on('error', reject);
  });
}

// The reused worker: it waits for programs and runs each with fresh bindings and console.
const WARM_WORKER = RUNTIME + `
parentPort.on('message', (m) => (m.type === 'result' ? settle(m) : run(m.program, m.names)));
`;

let warm = null;
let settle = null;

function warmWorker() {
  if (warm) return warm;
  warm = new Worker(WARM_WORKER, {
    eval: true,
    env: {},
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: 64 },
  });
  warm.on('message', (m) => {
    if (m.type === 'call') {
      warm.postMessage({ type: 'result', id: m.id, value: TOOLS[m.name](m.args) });
    } else if (m.type === 'done') {
      settle(m);
    }
  });
  return warm;
}

function runWarm() {
  return new Promise((resolve) => {
    settle = resolve;
    warmWorker().postMessage({ type: 'run', program: PROGRAM, names: Object.keys(TOOLS) });
  });
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const [first, second] = line.split(' ');
  const isWarm = first === 'warm' || second === 'warm';
  const run = isWarm ? runWarm : runOnce;
  if (first === 'check') {
    const outcome = await run();
    process.stdout.write(JSON.stringify({ value: outcome.value, logs: outcome.logs }) + '\n');
    continue;
  }
  const n = Number(isWarm ? second : first);
  if (isWarm) await runWarm(); // started and warmed before the clock runs
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await run();
  process.stdout.write(String(process.hrtime.bigint() - start) + '\n');
}

// stdin closed: the warm worker would keep the process alive.
process.exit(0);
