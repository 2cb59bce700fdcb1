//! The texts the model sees of Code Mode, in one place: the `run_code` tool's name and
//! descriptions per flavour (`docs/CONTRACTS.md`, "The run_code tool"), the prompt sections'
//! fixed texts ("Prompt sections"), the names of the discovery bindings, and the rejections
//! both sandboxes give. A leaf: it names no other module of the crate.

/// The Code Mode transport's name, reserved in every mode.
pub const RUN_CODE_NAME: &str = "run_code";

/// The tool description (TypeScript flavour). Pinned fragments: `Execute a TypeScript program`,
/// `BODY of an`, `` `description` ``.
pub const RUN_CODE_DESCRIPTION: &str = "Execute a TypeScript program against the available tools. It takes two required arguments: `code`, the BODY of an async function (erasable TypeScript only: type annotations are stripped, `enum` and namespaces are not allowed; top-level `await` and `return` work), and `description`, a short summary shown to the user. Inside the program call tools as `await tools.name(args)`; each call resolves to the tool's typed result or rejects with a `ToolCallError`. Only what the program prints with `console.log` or returns comes back to you, so curate it: filter, aggregate and summarise in code. Image results of tool calls are attached after the run.";

/// The `code` parameter's description (TypeScript flavour).
pub const CODE_PARAMETER_DESCRIPTION: &str =
    "The program: the body of an async TypeScript function.";

/// The tool description (Python flavour). Pinned fragments: `Execute a Python program`,
/// `` `return <value>` ``, `print(...)`; never "TypeScript".
pub const RUN_CODE_DESCRIPTION_PY: &str = "Execute a Python program against the available tools. It takes two required arguments: `code`, the BODY of an async function (a sandboxed subset of Python 3; top-level `await` and `return <value>` work), and `description`, a short summary shown to the user. Inside the program call tools as `await tools.name({...})`; each call returns the tool's typed result or raises `ToolCallError`. Only what the program prints with `print(...)` or returns with `return <value>` comes back to you, so curate it: filter, aggregate and summarise in code. Image results of tool calls are attached after the run.";

/// The `code` parameter's description (Python flavour).
pub const CODE_PARAMETER_DESCRIPTION_PY: &str =
    "The program: the body of an async Python function.";

/// The `description` parameter's description (language independent).
pub const DESCRIPTION_PARAMETER_DESCRIPTION: &str = "A 5-10 word summary of what the program does, in the active voice; it is shown to the user while the program runs. Examples: \"Find TODO comments under src\", \"Rename the config loader\", \"Count lines per module\".";

/// The collapse rule shown to a scope in `code` mode.
pub const CODE_ONLY_TEXT: &str = "`run_code` is the only tool you can call directly: a call naming any other tool fails. Every tool declared in the SDK below is reached from inside a `run_code` program, as `await tools.name(args)`.";

/// The `tools:search` text: how a program finds the tools the SDK does not declare (the
/// TypeScript flavour's; [`TOOL_SEARCH_TEXT_PY`] is the Python flavour's).
pub const TOOL_SEARCH_TEXT: &str = "More tools exist than the SDK declares. Find them from a program: `await tools.$search(query)` (or `tools.$search({ query, limit })`) resolves to `{ name: string; score: number; signature: string }[]`, best first, where `signature` is the tool's TypeScript declaration; `await tools.$describe(name)` resolves to `{ name: string; signature: string }`, or `null` for no such tool. A found tool can be called at once, as `await tools.name(args)`, and is declared in the SDK from the next prompt on.";

/// The `tools:search` text of the Python flavour.
pub const TOOL_SEARCH_TEXT_PY: &str = "More tools exist than the SDK declares. Find them from a program: `await tools[\"$search\"](query)` (or `tools[\"$search\"]({\"query\": query, \"limit\": k})`) returns a list of `{\"name\": str, \"score\": float, \"signature\": str}` dicts, best first, where `signature` is the tool's Python declaration (its classes and its `Tools` method); `await tools[\"$describe\"](name)` returns `{\"name\": str, \"signature\": str}`, or `None` for no such tool. A found tool can be called at once, as `await tools.name({...})`, and is declared in the SDK from the next prompt on.";

/// The binding names (a `$` keeps them apart from tool names, which cannot hold one).
pub(crate) const SEARCH: &str = "$search";

/// See [`SEARCH`].
pub(crate) const DESCRIBE: &str = "$describe";

/// Rejection of a call whose arguments are not lossless JSON (`docs/CONTRACTS.md`, "Sub-calls",
/// rule 10).
pub(crate) const ARGS_NOT_LOSSLESS: &str =
    "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)";

/// Rejection of a call whose host resolution is not lossless JSON (`docs/CONTRACTS.md`, "The
/// QuickJS sandbox").
pub(crate) const RESOLUTION_NOT_LOSSLESS: &str = "binding resolution must be lossless JSON";

/// The message of the `abort` outcome when the request's cancellation token fires (both
/// sandboxes).
pub(crate) const CANCELLED: &str = "run cancelled";
