//! The fence around an SDK's declarations (`docs/CONTRACTS.md`, "The SDK"): a run of backticks
//! longer than any inside the text, so a description quoting a ```` ``` ```` block cannot close the
//! section early.

/// Appends to `out` the fenced block of `body` with `info` (`ts`, `python`): the fence is three
/// backticks, or one more than the longest run of backticks in `body`. The closing fence stands
/// on its own line.
pub(crate) fn push_fenced(out: &mut String, info: &str, body: &str) {
    let fence = fence_for(longest_backtick_run(body));
    out.push_str(&fence);
    out.push_str(info);
    out.push('\n');
    out.push_str(body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
}

/// The fence of a body whose longest run of backticks is `longest`.
pub(crate) fn fence_for(longest: usize) -> String {
    "`".repeat(longest.max(2) + 1)
}

/// The longest run of backticks in `text` (the search for a backtick skips ahead with `memchr`).
pub(crate) fn longest_backtick_run(text: &str) -> usize {
    let mut longest = 0;
    let mut run = 0;
    let mut next = 0;
    for (at, _) in text.match_indices('`') {
        run = if at == next { run + 1 } else { 1 };
        next = at + 1;
        longest = longest.max(run);
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fenced(info: &str, body: &str) -> String {
        let mut out = String::new();
        push_fenced(&mut out, info, body);
        out
    }

    #[test]
    fn three_backticks_unless_the_body_has_a_longer_run() {
        assert_eq!(fenced("ts", "type A = 1;"), "```ts\ntype A = 1;\n```");
        assert_eq!(
            fenced("ts", "/** `a` ``b`` */\n"),
            "```ts\n/** `a` ``b`` */\n```"
        );
        assert_eq!(fenced("ts", "/** ```sh */"), "````ts\n/** ```sh */\n````");
        assert_eq!(
            fenced("python", "x = '`````'\n"),
            "``````python\nx = '`````'\n``````"
        );
        for (text, run) in [("", 0), ("`", 1), ("a`b``c", 2), ("```a`", 3), ("`` ``", 2)] {
            assert_eq!(longest_backtick_run(text), run, "{text}");
        }
    }
}
