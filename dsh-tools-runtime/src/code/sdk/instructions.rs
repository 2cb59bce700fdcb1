//! The prose above the SDK declarations (`docs/CONTRACTS.md`, "The SDK").
//!
//! Ours to write, keeping the pinned fragments: it starts `## Writing code for run_code`, ends
//! with the line `The available tools:`, and contains `two required arguments`, `` `code` ``,
//! `` `description` ``, `erasable syntax only`, ``rejects with `ToolCallError` ``,
//! ``MAY overlap under `Promise.all` `` and `lossless JSON`.

/// The instructions of the SDK section, up to and including `The available tools:`.
pub const INSTRUCTIONS: &str = "\
## Writing code for run_code

`run_code` takes two required arguments:

- `code`: the BODY of an async TypeScript function — not a module, not a function declaration. \
Top-level `await` and `return` work. Write erasable syntax only: type annotations, interfaces and \
`type` aliases are fine; `enum`, `namespace`, parameter properties and decorators are not. Types \
are advisory: they are stripped before the program runs, never checked.
- `description`: a short active-voice summary of what the program does (5–10 words), shown to \
the user.

Call a tool as `await tools.name(args)`; a tool whose name is not a plain identifier is reached \
with quoted access, e.g. `await tools[\"my-tool\"](args)`. Every call resolves to the tool's \
typed result (its canonical JSON value, typed by `ToolOutputMap` below). Arguments must be \
lossless JSON: no `undefined`, functions, `NaN`, `Infinity`, `-0`, class instances, `Date`s, \
`Map`s or cycles.

A failed call rejects with `ToolCallError`: its `toolName` names the tool and its `message` says \
what went wrong. Catch it with `try`/`catch` to carry on with the rest of the program.

Independent read-only calls MAY overlap under `Promise.all`: calls that are safe to run \
concurrently run together, while mutating calls run alone, in submission order.

Only what the program emits comes back: `return` a value and/or print with `console.log(...)`, \
and keep it to what matters — every other intermediate result stays out of the conversation. \
Images from successful calls are attached after the run.

The available tools:";
