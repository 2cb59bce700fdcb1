// The Node.js side of the differential tests: JavaScript itself is the judge.
//
// Usage: node differential.mjs <mode> <input.json>
// Reads one JSON document of cases, writes one JSON document of JavaScript's answers to stdout.
// Strings that may hold lone surrogates travel as arrays of UTF-16 code units.
//
// Modes:
//   numbers    {texts: [t], pairs: [[i, j]]} ->
//              {strings: [String(JSON.parse(t)) | null], pairs: [[a === b, a < b]]}
//   json       {texts: [t]} -> [{ok, lossless, wellFormed, depth,
//                                 stringify: JSON.stringify(JSON.parse(t))}]
//   strings    {strings: [[code units]]} -> [JSON.stringify(s)]
//   strip      {typescript: <module dir>, cases: [{source, ours}]} ->
//              [{tsError} | {typescript: run, ours: run | null}], where run is
//              {value, logs, calls} or {error, logs, calls}

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const [mode, path] = process.argv.slice(2);
const input = JSON.parse(readFileSync(path, 'utf8'));

const parse = (t) => {
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch {
    return { ok: false };
  }
};

// Whether JSON.stringify then JSON.parse gives back the same value (Object.is on numbers, so -0
// and non-finite numbers are lossy).
const lossless = (v) => {
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
  if (Array.isArray(v)) return v.every(lossless);
  if (v !== null && typeof v === 'object') return Object.values(v).every(lossless);
  return true;
};

// Whether every string (keys included) is well-formed UTF-16 (no lone surrogates).
const wellFormed = (v) => {
  if (typeof v === 'string') return v.isWellFormed();
  if (Array.isArray(v)) return v.every(wellFormed);
  if (v !== null && typeof v === 'object') {
    return Object.entries(v).every(([k, x]) => k.isWellFormed() && wellFormed(x));
  }
  return true;
};

// Nesting depth: a scalar is 0, each array or object adds one.
const depth = (v) => {
  if (v === null || typeof v !== 'object') return 0;
  const children = Array.isArray(v) ? v : Object.values(v);
  return 1 + children.reduce((d, x) => Math.max(d, depth(x)), 0);
};

const modes = {
  numbers({ texts, pairs }) {
    const values = texts.map((t) => parse(t));
    return {
      strings: values.map((p) => (p.ok && typeof p.value === 'number' ? String(p.value) : null)),
      pairs: pairs.map(([i, j]) => [values[i].value === values[j].value, values[i].value < values[j].value]),
    };
  },
  json({ texts }) {
    return texts.map((t) => {
      const p = parse(t);
      if (!p.ok) return { ok: false };
      return {
        ok: true,
        lossless: lossless(p.value),
        wellFormed: wellFormed(p.value),
        depth: depth(p.value),
        stringify: JSON.stringify(p.value),
      };
    });
  },
  strings({ strings }) {
    return strings.map((units) => JSON.stringify(String.fromCharCode(...units)));
  },
  // Each case: the wrapped TypeScript program and our strip of it (null when we refused it).
  // TypeScript's own transpiler strips the same source; both outputs run with stub tools.
  async strip({ typescript, cases }) {
    const ts = createRequire(import.meta.url)(typescript);
    const results = [];
    for (const { source, ours } of cases) {
      const out = ts.transpileModule(source, {
        reportDiagnostics: true,
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
      });
      const errors = (out.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
      if (errors.length > 0) {
        const message = errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ');
        results.push({ tsError: message });
        continue;
      }
      results.push({
        typescript: await runOne(out.outputText),
        ours: ours === null ? null : await runOne(ours),
      });
    }
    return results;
  },
};

// Runs one stripped program (an expression evaluating to an async function) with stub tools:
// `tools.<name>(args)` resolves with {tool, args} (and `tools.fail` rejects), `console.log`
// collects lines. The answer is what the program returned (as JSON), its logs and its calls.
async function runOne(script) {
  const logs = [];
  const calls = [];
  const tools = new Proxy(
    {},
    {
      get(_, name) {
        return async (args) => {
          calls.push([String(name), args === undefined ? null : args]);
          if (name === 'fail') throw new Error('tool failed');
          return { tool: String(name), args: args === undefined ? null : args };
        };
      },
    },
  );
  const show = (x) => (typeof x === 'string' ? x : typeof x === 'function' ? 'function' : JSON.stringify(x));
  const console = {
    log: (...xs) => logs.push(xs.map(show).join(' ')),
    error: (...xs) => logs.push(`error: ${xs.map(show).join(' ')}`),
  };
  try {
    // Direct eval: the script's completion value is the wrapper function, and it sees the stubs.
    const main = new Function('tools', 'console', 'script', 'return eval(script)')(tools, console, script);
    const value = await main();
    return { value: value === undefined ? null : show(value), logs, calls };
  } catch (error) {
    return { error: String(error && error.name) + ': ' + String(error && error.message), logs, calls };
  }
}

const result = await modes[mode](input);
process.stdout.write(JSON.stringify(result));
