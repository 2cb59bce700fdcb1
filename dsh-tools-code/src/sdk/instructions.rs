//! The prose above the SDK declarations (`docs/CONTRACTS.md`, "The SDK").
//!
//! Ours to write, keeping the pinned fragments: it starts `## Writing code for run_code`, ends
//! with the line `The available tools:`, and contains `two required arguments`, `` `code` ``,
//! `` `description` ``, `erasable syntax only`, ``rejects with `ToolCallError` ``,
//! ``MAY overlap under `Promise.all` `` and `lossless JSON`. Every token of it is in every
//! Code Mode prompt: say each thing once.

/// The instructions of the SDK section, up to and including `The available tools:`.
pub const INSTRUCTIONS: &str = "\
## Writing code for run_code

`run_code` takes two required arguments: `code`, the BODY of an async TypeScript function \
(top-level `await` and `return` work; erasable syntax only: no `enum`, `namespace`, parameter \
properties or decorators; types are stripped, not checked), and `description`, a 5–10 word \
active-voice summary shown to the user.

Call `await tools.name(args)` (`await tools[\"my-tool\"](args)` for a name that is not an \
identifier): it resolves to the tool's typed result (`JsonValue` unless `ToolOutputMap` types \
it); a failure rejects with `ToolCallError` (`toolName`, `message`), catch it to carry on. \
A `(may ask for approval)` tool waits for a person; with no one to ask it rejects with `tool \
\"<name>\" requires approval, but no approval channel is available`. \
Arguments must be lossless JSON: no `undefined`, functions, `NaN`, `Infinity`, `-0`, class \
instances, `Date`s, `Map`s or cycles. Independent read-only calls MAY overlap under \
`Promise.all`; mutating calls run alone, in order.

Only what the program returns or prints with `console.log(...)` comes back: keep it to what \
matters. Images from successful calls are attached after the run.

The available tools:";
