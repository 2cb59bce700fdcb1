//! An MCP import used from Code Mode: the tools of the official filesystem MCP server become
//! `mcp__fs__*` tools of a registry, and a TypeScript program calls them through `tools.*`.
//!
//! ```sh
//! cargo run -p dsh-tools-examples --example mcp_import_code_mode
//! cargo run -p dsh-tools-examples --example mcp_import_code_mode -- node path/to/server-filesystem/dist/index.js
//! ```
//!
//! The server is started as a child process speaking MCP on stdio: by default with
//! `npx -y @modelcontextprotocol/server-filesystem` (Node.js and the npm registry needed), or
//! with the command given after `--`. Either way the example appends the directory it serves: a
//! temporary directory holding three notes.
//!
//! Prints the imported tools, the SDK declaration the model would see for one of them, then the
//! program's result: it lists the directory, reads every note in parallel, and tallies their
//! lines — every `tools.*` call an MCP `tools/call` through the full pipeline.

use std::sync::Arc;

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::mcp::McpImport;
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::json;

const NOTES: [(&str, &str); 3] = [
    ("groceries.txt", "milk\neggs\nbread\n"),
    ("ideas.txt", "a tool layer for agents\n"),
    ("todo.txt", "write the README\nrun the tests\n"),
];

/// The program the model would write; `ROOT` is prepended as a constant.
const PROGRAM: &str = r#"
// An imported tool resolves with the server's `{content, structuredContent?}`.
const text = (result: { content: JsonValue[] }) => (result.content[0] as { text: string }).text;
const listing = await tools.mcp__fs__list_directory({ path: ROOT });
const files = text(listing)
  .split("\n")
  .filter((line) => line.startsWith("[FILE] "))
  .map((line) => line.slice("[FILE] ".length));
const texts = await Promise.all(
  files.map((name) => tools.mcp__fs__read_text_file({ path: `${ROOT}/${name}` })),
);
const lines: Record<string, number> = {};
texts.forEach((result, i) => {
  lines[files[i]] = text(result).split("\n").filter((l) => l.length > 0).length;
});
try {
  await tools.mcp__fs__read_text_file({ path: "/etc/passwd" });
} catch (e) {
  console.log(`outside the root: ${(e as ToolCallError).message.split("\n")[0]}`);
}
return { files: files.length, lines };
"#;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path().canonicalize().expect("the directory exists");
    for (name, text) in NOTES {
        std::fs::write(root.join(name), text).expect("a note written");
    }

    let mut words: Vec<String> = std::env::args().skip(1).collect();
    if words.is_empty() {
        words = ["npx", "-y", "@modelcontextprotocol/server-filesystem"]
            .map(String::from)
            .to_vec();
    }
    let mut server = tokio::process::Command::new(&words[0]);
    server.args(&words[1..]).arg(&root);

    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let sandbox = QuickJsRuntime::new(QuickJsConfig::default()).expect("a valid config");
    CodeMode::new(Arc::new(sandbox))
        .install(&registry)
        .expect("Code Mode installs");
    let fs = McpImport::new(&registry)
        .connect_stdio("fs", server)
        .await
        .unwrap_or_else(|e| {
            eprintln!("mcp_import_code_mode: cannot import the filesystem server: {e}");
            std::process::exit(1);
        });
    let mut imported: Vec<String> = fs.tools().into_iter().map(|t| t.public_name).collect();
    imported.sort();
    println!("imported: {}", imported.join(", "));

    let prompt = registry.prompt(None).expect("a code runtime is mounted");
    let sdk = prompt
        .sections
        .iter()
        .find(|s| s.name == "tools:sdk")
        .expect("the SDK section");
    // The tool's entry in `ToolArgsMap`: from its name to the end of its type (one line when
    // the SDK refers to an earlier tool's identical type, else up to the closing brace).
    let mut declaration: Vec<&str> = Vec::new();
    for line in sdk
        .text
        .lines()
        .skip_while(|l| !l.starts_with("mcp__fs__read_text_file: "))
    {
        declaration.push(line);
        if line.ends_with(';') && (declaration.len() == 1 || line.starts_with('}')) {
            break;
        }
    }
    println!("sdk:\n{}", declaration.join("\n"));

    let code = format!("const ROOT = {};\n{PROGRAM}", json!(root));
    let input = ToolExecutionInput::new(
        "call-1",
        "run_code",
        json!({"code": code, "description": "Tally the notes"}),
    );
    let result = registry.execute(input).await;
    println!(
        "run_code:\n{}",
        result.content()[0].as_text().unwrap_or_default()
    );
    fs.close().await;
}
