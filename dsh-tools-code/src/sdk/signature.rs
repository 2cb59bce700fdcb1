//! One tool's TypeScript declaration on its own, for tool search in programs
//! (`tools.$search`, `tools.$describe`): what the SDK would declare for it, as interface
//! members the SDK's `ToolArgsMap` / `ToolOutputMap` merge with.

use dsh_tools::ToolDefinition;

use super::fragment::Fragment;
use super::render::{ToolView, sdk_declarations, sdk_tool_from};

/// The declaration of `def`: its `ToolArgsMap` member (with its doc comment) and, when its
/// output is typed, its `ToolOutputMap` member, each in its interface. A tool whose types need
/// named aliases (recursive or very deep schemas) gets the whole declarations of an SDK of
/// that one tool.
pub(crate) fn signature(def: &ToolDefinition) -> String {
    let fragment = Fragment::of(ToolView::from(def));
    if !fragment.aliases.is_empty() || fragment.nodes.is_none() {
        return sdk_declarations(&[sdk_tool_from(def)]);
    }
    let mut out = format!("interface ToolArgsMap {{\n{}\n}}", fragment.args.piece.text);
    if let Some(output) = &fragment.output {
        out.push_str(&format!(
            "\ninterface ToolOutputMap {{\n{}\n}}",
            output.piece.text
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use dsh_tools::ToolDefinition;
    use serde_json::json;

    #[test]
    fn a_signature_is_the_tool_s_sdk_members() {
        let def = ToolDefinition::builder("read_file")
            .description("Read a file.")
            .parameters_json(json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}))
            .output_json(json!({"type": "string"}))
            .execute(|_, _| async { Ok(json!("")) })
            .build()
            .unwrap();
        let signature = super::signature(&def);
        assert!(
            signature.starts_with(
                "interface ToolArgsMap {\n// Read a file.\nread_file: {\npath: string;\n}"
            ),
            "{signature}"
        );
        assert!(
            signature.ends_with("interface ToolOutputMap {\nread_file: string;\n}"),
            "{signature}"
        );
        let sdk = super::super::render_tools_sdk(&[super::super::sdk_tool_from(&def)]);
        let members = signature
            .lines()
            .filter(|l| !l.starts_with("interface ") && *l != "}");
        for line in members {
            assert!(sdk.contains(line), "the SDK declares {line:?} the same way");
        }
    }
}
