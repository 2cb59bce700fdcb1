//! Where a program calls each binding, when the script itself says so.
//!
//! A failed call's `stack` carries the program's frames at the call. Reading them means making
//! an engine error at every call (about 8,000 instructions, a third of an awaited call), though
//! only failures use them. A binding the script names exactly once, as `global.name` or
//! `global["name"]`, with no computed `global[…]` anywhere, has one call site: its position is
//! read from the script when the call fails, and the call makes no error. Every other binding
//! (named twice or more, aliased, or reachable through a computed name) keeps the engine's
//! frames.
//!
//! Fast path of `bindings::call_site`'s capture, held equal by
//! `tests/code/wrong_programs_ts.rs::each_mistake_gets_the_text_that_names_it` (an uncaught
//! failure of a once-named tool, and of a tool named twice).

use super::bindings::NamespaceSpec;
use super::errors::{PROGRAM_FILE, is_ident_char};

/// For each namespace and function, the byte offset where its only mention in `script` starts
/// (`None`: the engine's frames are needed).
pub(crate) fn single_sites(script: &str, namespaces: &[NamespaceSpec]) -> Vec<Vec<Option<usize>>> {
    namespaces
        .iter()
        .map(|namespace| {
            let computed = has_computed_access(script, &namespace.global);
            namespace
                .functions
                .iter()
                .map(|name| {
                    if computed {
                        return None;
                    }
                    only_mention(script, &namespace.global, name)
                })
                .collect()
        })
        .collect()
}

/// The frame of a call at `offset` (where the callee's name starts) in `script`, as the engine
/// writes one: `    at program.ts:<line>:<column>`.
pub(crate) fn frame_at(script: &str, offset: usize) -> String {
    let before = &script[..offset];
    let line = before.matches('\n').count() + 1;
    let column = offset - before.rfind('\n').map_or(0, |n| n + 1) + 1;
    format!("    at {PROGRAM_FILE}:{line}:{column}")
}

/// Whether `script` indexes `global` with anything but a string literal (`global[name]`).
fn has_computed_access(script: &str, global: &str) -> bool {
    let opening = format!("{global}[");
    script.match_indices(&opening).any(|(at, _)| {
        let after = &script[at + opening.len()..];
        !after.starts_with('"') && !after.starts_with('\'')
    })
}

/// The start of the only mention of `name` in `script` as a whole word, when that mention is
/// `global.name` or `global["name"]` / `global['name']`.
fn only_mention(script: &str, global: &str, name: &str) -> Option<usize> {
    let ident = is_ident_char;
    let mut mentions = script.match_indices(name).filter(|(at, _)| {
        let before = script[..*at].chars().next_back();
        let after = script[at + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    });
    let (at, _) = mentions.next()?;
    if mentions.next().is_some() {
        return None;
    }
    let before = &script[..at];
    let dotted = before
        .strip_suffix('.')
        .and_then(|object| object.strip_suffix(global))
        .is_some_and(|rest| !rest.chars().next_back().is_some_and(ident));
    let quoted = [format!("{global}[\""), format!("{global}['")]
        .iter()
        .any(|opening| before.ends_with(opening.as_str()));
    (dotted || quoted).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(functions: &[&str]) -> Vec<NamespaceSpec> {
        vec![NamespaceSpec {
            global: "tools".into(),
            functions: functions.iter().map(|f| (*f).to_owned()).collect(),
            error_class: None,
        }]
    }

    #[test]
    fn a_binding_named_once_has_its_site_in_the_script() {
        let script =
            "const a = await tools.read({});\nawait tools[\"write\"]({});\nawait tools.read2({});";
        let sites = single_sites(script, &tools(&["read", "write", "read2", "gone"]));
        let read = sites[0][0].unwrap();
        assert_eq!(frame_at(script, read), "    at program.ts:1:23");
        assert_eq!(
            frame_at(script, sites[0][1].unwrap()),
            "    at program.ts:2:14"
        );
        assert!(sites[0][2].is_some());
        assert_eq!(sites[0][3], None, "never named: no site");
    }

    #[test]
    fn twice_named_aliased_or_computed_keeps_the_engines_frames() {
        let twice = "await tools.read({}); await tools.read({});";
        assert_eq!(single_sites(twice, &tools(&["read"]))[0][0], None);
        let in_a_string = "const n = 'read'; await tools.read({});";
        assert_eq!(single_sites(in_a_string, &tools(&["read"]))[0][0], None);
        let aliased = "const t = tools; await t.read({});";
        assert_eq!(single_sites(aliased, &tools(&["read"]))[0][0], None);
        let other_object = "await mytools.read({});";
        assert_eq!(single_sites(other_object, &tools(&["read"]))[0][0], None);
        let computed = "await tools.read({}); const k = 'x'; await tools[k]({});";
        assert_eq!(single_sites(computed, &tools(&["read"]))[0][0], None);
    }
}
