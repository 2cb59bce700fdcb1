//! What a program that names no tool meant (`docs/CONTRACTS.md`, "Sub-calls"): a misspelt name
//! is answered with the one tool it misspells; any other name is ranked like a tool search
//! over the run's tools (names, parameters and descriptions, [`dsh_tools_core::search`]), so
//! `search_files` finds `grep`, and a few are listed.

use dsh_tools::ToolDefinition;

use dsh_tools_core::search::ToolIndex;

/// How many tools a hint lists at most.
const MAX_HINTS: usize = 3;

/// The tools `name` most likely meant, best first (empty: nothing is near).
pub(crate) fn meant<'a>(name: &str, tools: &'a [ToolDefinition]) -> Vec<&'a str> {
    if let Some(candidate) = misspelt(name, tools.iter().map(ToolDefinition::name)) {
        return vec![candidate];
    }
    let index = ToolIndex::from_definitions(tools);
    index
        .search(name, MAX_HINTS)
        .into_iter()
        .filter_map(|hit| {
            tools
                .iter()
                .map(ToolDefinition::name)
                .find(|n| *n == hit.name)
        })
        .collect()
}

/// The one of `names` that `name` misspells (the fewest edits, within [`typo_budget`]).
fn misspelt<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    names
        .map(|candidate| (strsim::damerau_levenshtein(name, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= typo_budget(name, candidate))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// The refusal of `<global>[name]` for a name that is not one of `functions` (both sandboxes,
/// at run time, where only the names are at hand): `<global> has no function named '<name>'`,
/// then `; did you mean <global>["<near>"]?` when it misspells one.
pub(crate) fn no_function(global: &str, name: &str, functions: &[String]) -> String {
    let mut message = format!("{global} has no function named '{name}'");
    if let Some(near) = misspelt(name, functions.iter().map(String::as_str)) {
        message.push_str(&format!("; did you mean {global}[\"{near}\"]?"));
    }
    message
}

/// How many edits still read as a misspelling: one per four characters, at least one.
fn typo_budget(name: &str, candidate: &str) -> usize {
    (name.chars().count().max(candidate.chars().count()) / 4).max(1)
}

/// ` did you mean tools.a?`, `; did you mean tools.a, tools.b or tools.c?` (`prefix` before
/// each name), or nothing.
pub(crate) fn hint(meant: &[&str], prefix: &str) -> String {
    let Some((last, rest)) = meant.split_last() else {
        return String::new();
    };
    let mut out = String::from("; did you mean ");
    for (i, name) in rest.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(prefix);
        out.push_str(name);
    }
    if !rest.is_empty() {
        out.push_str(" or ");
    }
    out.push_str(prefix);
    out.push_str(last);
    out.push('?');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> ToolDefinition {
        ToolDefinition::builder(name)
            .description(description)
            .parameters_json(json!({"type": "object", "properties": {}}))
            .execute(|_, _| async { Ok(serde_json::Value::Null) })
            .build()
            .expect("a tool")
    }

    #[test]
    fn a_misspelling_gets_one_name_and_other_names_a_ranking() {
        let tools = [
            tool("read_file", "Read a text file."),
            tool("grep", "Search file contents with a regular expression."),
            tool("glob", "Find files by name with a glob pattern."),
            tool("bash", "Run a shell command."),
        ];
        assert_eq!(meant("raed_file", &tools), ["read_file"]);
        // `glob` first: the same words as `grep`'s, in a shorter description.
        assert_eq!(meant("search_files", &tools), ["glob", "grep", "read_file"]);
        assert_eq!(meant("deploy", &tools), Vec::<&str>::new());
        assert_eq!(
            hint(&["grep", "glob"], "tools."),
            "; did you mean tools.grep or tools.glob?"
        );
        assert_eq!(hint(&["a", "b", "c"], ""), "; did you mean a, b or c?");
        assert_eq!(hint(&[], ""), "");
        let names = ["read_file".to_owned(), "grep".to_owned()];
        assert_eq!(
            no_function("tools", "read_files", &names),
            "tools has no function named 'read_files'; did you mean tools[\"read_file\"]?"
        );
        assert_eq!(
            no_function("tools", "search_files", &names),
            "tools has no function named 'search_files'"
        );
    }
}
