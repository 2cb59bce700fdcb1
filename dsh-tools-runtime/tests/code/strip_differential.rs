//! The type strip against TypeScript's own transpiler (`transpileModule` of the TypeScript 5
//! pinned as `typescript-transpiler` in `tests/node`: the TypeScript 7 that checks the SDK is the
//! native compiler and has no JavaScript API).
//!
//! For each model-style program, both strips of the wrapped program run in Node.js with the same
//! stub `tools` (every call resolves with its name and arguments; `tools.fail` rejects) and a
//! collecting `console`: the returned value, the logs, the calls and the error must be the same.
//! A program TypeScript transpiles but we refuse must be one of the constructs the strip refuses
//! by contract (`docs/CONTRACTS.md`, "Code Mode programs": erasable TypeScript only).
//!
//! The corpus: the SDK fixture programs, hand-written programs covering the erasable syntax, and
//! generated programs that mix typed statements, with and without semicolons (automatic
//! semicolon insertion around erased declarations is where a strip goes wrong).
#![cfg(feature = "code-mode")]

use std::path::Path;

use dsh_tools_runtime::code::strip::{
    SourceLimits, StripError, WRAPPER_PREFIX, WRAPPER_SUFFIX, strip_program,
};
use dsh_tools_tests::node::{run_differential, workspace_root};
use dsh_tools_tests::record_figure;
use serde_json::{Value, json};

const SCRATCH: &str = env!("CARGO_TARGET_TMPDIR");

/// Hand-written programs: the erasable TypeScript a model writes.
const PROGRAMS: &[&str] = &[
    "const x: number = 1;\nreturn x + 1;",
    "interface Hit { path: string; line?: number }\nconst hits: Hit[] = [{ path: \"a\" }];\nreturn hits.map((h: Hit): string => h.path);",
    "type Pair<T> = [T, T];\nconst p: Pair<number> = [1, 2];\nreturn p;",
    "const r = (await tools.search({ q: \"x\" })) as { tool: string; args: { q: string } };\nreturn r.args.q;",
    "const r = <{ tool: string }>(await tools.search({}));\nreturn r.tool;",
    "function id<T extends object>(x: T, y?: number): T { return x; }\nreturn id({ a: 1 });",
    "const g = <T,>(x: T): T => x;\nreturn g(\"s\");",
    "let u: string | undefined;\nu ??= \"d\";\nreturn u!;",
    "const a = [1, 2, 3] satisfies number[];\nreturn a.length;",
    "class Counter { private n: number = 0; declare label: string; inc(): this { this.n++; return this; } get value(): number { return this.n; } }\nreturn new Counter().inc().inc().value;",
    "abstract class Shape { abstract area(): number; describe(): string { return `area ${this.area()}`; } }\nclass Sq extends Shape { constructor(readonly_: number) { super(); this.s = readonly_; } s: number; area() { return this.s ** 2; } }\nreturn new Sq(3).describe();",
    "function over(x: string): string;\nfunction over(x: number): number;\nfunction over(x: any): any { return x; }\nreturn [over(1), over(\"a\")];",
    "const conf = { mode: \"fast\", n: 3 } as const;\ntype Keys = keyof typeof conf;\nconst k: Keys = \"mode\";\nreturn conf[k];",
    "declare const maybe: number | undefined;\nlet d!: number;\nd = 4;\nreturn d;",
    "declare namespace Ns { const x: number; }\ndeclare enum E { A }\nreturn 1;",
    "function assertIsString(x: unknown): asserts x is string { if (typeof x !== \"string\") throw new TypeError(\"no\"); }\nconst v: unknown = \"s\";\nassertIsString(v);\nreturn v.length;",
    "function isNum(x: unknown): x is number { return typeof x === \"number\"; }\nreturn [1, \"a\", 2].filter(isNum);",
    "function self(this: { n: number }, k: number) { return this.n * k; }\nreturn self.call({ n: 2 }, 3);",
    "const entries = Object.entries({ a: 1, b: 2 } as Record<string, number>);\nfor (const [k, v] of entries) { console.log(k, v); }\nreturn entries.length;",
    "type Tpl = `id-${number}`;\nconst id: Tpl = `id-${7}`;\nreturn id;",
    "const f = function <T>(x: T): T { return x; };\nconst inst = f<string>;\nreturn inst(\"q\");",
    "let x = 1\ntype T = string\n;(x as number)\nreturn x",
    "const results = await Promise.all([\"a\", \"b\"].map((q: string) => tools.search({ q })));\nreturn results.map((r: any) => r.args.q).join(\",\");",
    "try { await tools.fail({}); } catch (e: unknown) { console.log(\"caught\", (e as Error).message); }\nreturn \"done\";",
    "const o: { [key: string]: number } = {};\no[\"x\"] = 1;\nreturn o;",
    "const big = 2 ** 53 + 1;\nconst n = -2 ** 2;\nreturn [big, n];",
    "const t = (-1) ** 2;\nreturn t;",
    "let a: any = { b: { c: 1 } };\nreturn a?.b!.c!;",
    "class Box<T> { constructor(public value: T) {} }\nreturn new Box(1).value;",
    "enum Color { Red, Green }\nreturn Color.Green;",
    "const enum Dir { Up = 1 }\nreturn Dir.Up;",
    "namespace Util { export const x = 1; }\nreturn Util.x;",
    "import fs = require(\"fs\");\nreturn 1;",
    "return <T,>(x: T) => x;",
    "const m = new Map<string, number[]>();\nm.set(\"a\", [1]);\nreturn [...m.entries()];",
    "const s = new Set<number>([1, 1, 2]);\nreturn s.size;",
    "const x = 5 as unknown as string;\nreturn typeof x;",
    "let v = 3;\nlet w = v < 4 ? \"lt\" : \"ge\";\nreturn w;",
    "const a = 1, b = 2, c = 3;\nconst r = a < b > c;\nreturn r;",
    "const arr: Array<Array<number>> = [[1]];\nreturn arr[0]![0];",
    "type Fn = (x: number) => number;\nconst double: Fn = (x) => x * 2;\nreturn double(21);",
    "async function twice<T>(f: () => Promise<T>): Promise<[T, T]> { return [await f(), await f()]; }\nreturn await twice(() => tools.ping({}));",
    "const label = (n: number): string => {\n  if (n > 1) return \"many\";\n  return \"one\";\n};\nreturn label(2);",
    "let count = 0\ninterface Nothing {}\n[1, 2].forEach((x) => (count += x))\nreturn count",
    "const s = \"a\"\ntype Q = number\n`tpl`\nreturn s",
    "let q = 1\ndeclare let zz: number\n+q\nreturn q",
    "label: for (const i of [1, 2, 3] as number[]) { if (i === 2) break label; console.log(i); }\nreturn 0;",
    "const { a, b = 2 }: { a: number; b?: number } = { a: 1 };\nreturn a + b;",
    "function opt(x?: number, ...rest: string[]): number { return (x ?? 0) + rest.length; }\nreturn opt(undefined, \"a\", \"b\");",
    "class K { static #n: number = 1; static get n(): number { return K.#n; } }\nreturn K.n;",
    "class A extends Object { override toString(): string { return \"A\"; } }\nreturn String(new A());",
    "class B { accessor x: number = 1; }\nreturn new B().x;",
    "const x: unique symbol = Symbol();\nreturn typeof x;",
    "let y = <const>[\"a\", \"b\"];\nreturn y;",
    "const fn = async <T,>(x: T): Promise<T> => x;\nreturn await fn(3);",
    "const rx = /a<b>c/g;\nreturn \"a<b>c\".replace(rx, \"x\");",
    "const cmp = (a: number, b: number) => a < b;\nconst gt = (a: number, b: number) => a > b;\nreturn [cmp(1, 2), gt(1, 2)];",
    "return (await tools.list({ page: 1 }) as any).args.page satisfies number;",
];

/// Constructs the strip refuses by contract: they need code generation (or are not a program
/// body), and TypeScript transpiles them.
fn refused_by_contract(program: &str) -> bool {
    [
        "enum Color",
        "const enum",
        "namespace Util",
        "import fs",
        "constructor(public",
    ]
    .iter()
    .any(|construct| program.contains(construct))
}

/// Where the strip and TypeScript knowingly differ: an auto-accessor field (`accessor x`) is
/// kept by the strip (it is JavaScript, of a later edition) while TypeScript lowers it for
/// ES2022; the engine then refuses it as a syntax error (Node.js 20 and QuickJS alike).
fn known_difference(program: &str, ours: &Value) -> bool {
    program.contains("accessor x")
        && ours["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("SyntaxError"))
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// Typed statements a generated program mixes; `{i}` is a unique index, each snippet logs what
/// it computed. Several start with `(`, `[` or a template, after an erased declaration.
const SNIPPETS: &[&str] = &[
    "const v{i}: number = {i} * 2;\nconsole.log(\"v\", v{i});",
    "interface I{i} { a: string; b?: number[] }\nconst o{i}: I{i} = { a: \"x{i}\", b: [1, 2] };\nconsole.log(o{i});",
    "type T{i} = { k: \"a\" | \"b\" };\n[\"a\", \"b\"].forEach((k) => console.log(k as T{i}[\"k\"]));",
    "const r{i} = (await tools.t{i}({ q: \"x{i}\" })) as { tool: string; args: unknown };\nconsole.log(r{i}.tool);",
    "function f{i}<T>(x: T, y?: number): T { return x; }\nconsole.log(f{i}<number>({i}));",
    "let u{i}: string | undefined;\nu{i} ??= \"d{i}\";\nconsole.log(u{i}!);",
    "declare const d{i}: number;\n(() => console.log(\"iife {i}\"))();",
    "type A{i} = number[];\n[{i}, {i}].map((x): A{i} => [x]).forEach((x) => console.log(x));",
    "interface E{i} {}\n`t{i}`.split(\"\").forEach((c: string) => console.log(c));",
    "const g{i} = <T,>(x: T): T[] => [x];\nconsole.log(g{i}(\"g{i}\"));",
    "class C{i} { private n: number = {i}; get v(): number { return this.n; } }\nconsole.log(new C{i}().v);",
    "let n{i} = {i} as unknown as number;\nn{i} = n{i}! + 1;\nconsole.log(n{i});",
    "const m{i} = new Map<string, number>([[\"k\", {i}]]);\nconsole.log([...m{i}.values()]);",
    "try { await tools.fail({ i: {i} }); } catch (e: unknown) { console.log((e as Error).message); }",
    "const s{i} = { a: {i} } satisfies Record<string, number>;\nconsole.log(s{i}.a);",
    "let c{i} = 0;\nfor (const x of [1, 2] as const) { c{i} += x; }\nconsole.log(c{i});",
    "const w{i} = {i} < 5 ? \"small\" : \"big\";\nconsole.log(w{i});",
    "function isS{i}(x: unknown): x is string { return typeof x === \"string\"; }\nconsole.log([1, \"a\"].filter(isS{i}));",
];

/// Generated programs: 2–6 snippets, with or without semicolons, ending in a `return`.
fn generated_programs(count: usize) -> Vec<String> {
    let mut rng = Rng(0x57_21b);
    (0..count)
        .map(|_| {
            let semicolons = rng.below(2) == 0;
            let mut program = String::new();
            let parts = 2 + rng.below(5);
            for i in 0..parts {
                let snippet = SNIPPETS[rng.below(SNIPPETS.len() as u64) as usize]
                    .replace("{i}", &i.to_string());
                let snippet = if semicolons {
                    snippet
                } else {
                    snippet.replace(";\n", "\n")
                };
                program.push_str(&snippet);
                program.push('\n');
            }
            program.push_str(if semicolons {
                "return \"end\";"
            } else {
                "return \"end\""
            });
            program
        })
        .collect()
}

/// The SDK fixture programs (`tests/fixtures/sdk/programs/{ok,err}`).
fn fixture_programs() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sdk/programs");
    let mut programs = Vec::new();
    for dir in ["ok", "err"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("the SDK fixture programs")
            .map(|entry| entry.expect("an entry").path())
            .collect();
        files.sort();
        for file in files {
            programs.push(std::fs::read_to_string(&file).expect("a readable program"));
        }
    }
    programs
}

#[test]
fn the_strip_behaves_as_typescripts_transpiler() {
    let mut programs: Vec<String> = PROGRAMS.iter().map(|p| (*p).to_owned()).collect();
    programs.extend(fixture_programs());
    programs.extend(generated_programs(400));
    let ours: Vec<Result<String, StripError>> = programs
        .iter()
        .map(|program| strip_program(program, &SourceLimits::default()))
        .collect();
    let cases: Vec<Value> = programs
        .iter()
        .zip(&ours)
        .map(|(program, stripped)| {
            json!({
                "source": format!("{WRAPPER_PREFIX}{program}{WRAPPER_SUFFIX}"),
                "ours": stripped.as_ref().ok(),
            })
        })
        .collect();
    let typescript = workspace_root().join("tests/node/node_modules/typescript-transpiler");
    assert!(
        typescript.join("package.json").is_file(),
        "{} is missing: run `npm ci --prefix tests/node` (scripts/test does)",
        typescript.display()
    );
    let node = run_differential(
        SCRATCH,
        "strip",
        &json!({"typescript": typescript, "cases": cases}),
    );
    let node = node.as_array().expect("answers");
    assert_eq!(node.len(), programs.len());
    let (mut ran, mut refused, mut known, mut disagreements) = (0, 0, 0, Vec::new());
    for ((program, stripped), js) in programs.iter().zip(&ours).zip(node) {
        if let Some(error) = js.get("tsError") {
            // TypeScript refuses it too (a syntax error): nothing to run.
            if let Ok(script) = stripped {
                disagreements.push(format!(
                    "we strip what TypeScript refuses ({error}):\n{program}\n--- ours:\n{script}"
                ));
            }
            continue;
        }
        match stripped {
            Err(error) if refused_by_contract(program) => {
                refused += 1;
                assert!(!error.to_string().is_empty());
            }
            Err(error) => disagreements.push(format!(
                "we refuse what TypeScript transpiles ({error}):\n{program}"
            )),
            Ok(_) if refused_by_contract(program) => disagreements.push(format!(
                "a construct the contract refuses was stripped:\n{program}"
            )),
            Ok(_) if known_difference(program, &js["ours"]) => known += 1,
            Ok(script) => {
                ran += 1;
                if js["ours"] != js["typescript"] {
                    disagreements.push(format!(
                        "different behaviour:\n{program}\n--- TypeScript: {}\n--- ours: {}\n--- our script:\n{script}",
                        js["typescript"], js["ours"]
                    ));
                }
            }
        }
    }
    record_figure(
        SCRATCH,
        "node-strip",
        &format!(
            "type strip vs TypeScript 5 transpileModule: {} programs, {ran} run on both sides, {refused} refused by contract, {known} known difference (auto-accessors), {} disagreements",
            programs.len(),
            disagreements.len()
        ),
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements with TypeScript, first: {:#?}",
        disagreements.len(),
        &disagreements[..disagreements.len().min(10)]
    );
}
