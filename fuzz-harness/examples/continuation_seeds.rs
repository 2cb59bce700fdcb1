//! Writes the `continuation` target's seeds: real suspensions of a few programs on the
//! harness's host, as sealed bodies (odd selectors: the harness re-seals them) and as
//! continuations of another host (selector 0: refused as tampered).
//!
//! `cargo run -p dsh-tools-fuzz-harness --example continuation_seeds -- fuzz/corpus/continuation`

use dsh_tools_fuzz_harness::continuation::{start, unseal};
use dsh_tools_runtime::code::durable::RunOutcome;
fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: continuation_seeds DIR");
    let programs = [
        "const r = await tools.read({ n: 1 }); await tools.write({ path: 'a' }); return r;",
        "await tools.write({ path: 'a' }); return 1;",
        "const [a, b] = await Promise.all([tools.read({n: 1}), tools.read({n: 2})]); const w = await tools.write({a, b, t: Date.now(), r: Math.random()}); return w;",
        "try { await tools.write({}); } catch (e) { return String(e); } return await tools.write({again: true});",
        "for (let i = 0; i < 3; i++) { await tools.read({i}); } console.log('x'); await tools.write({path: 'loop'});",
    ];
    for (i, program) in programs.iter().enumerate() {
        match start(program) {
            RunOutcome::Suspended { continuation, .. } => {
                let body = unseal(&continuation);
                for selector in [1u8, 3, 5, 9] {
                    let mut data = vec![selector];
                    data.extend_from_slice(&body);
                    std::fs::write(format!("{dir}/body_{i}_{selector}"), &data).unwrap();
                }
                let mut data = vec![0u8];
                data.extend_from_slice(continuation.as_bytes());
                std::fs::write(format!("{dir}/foreign_key_{i}"), &data).unwrap();
            }
            RunOutcome::Completed(r) => panic!("{program}: {r:?}"),
        }
    }
}
