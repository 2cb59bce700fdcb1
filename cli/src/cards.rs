//! Cards on a terminal: a tool call's pending card ([`ToolCallView`]) and completed card
//! ([`ToolResultView`]) as text, coloured when the stream is a terminal that wants colour.
//!
//! A terminal card is a command line (`$ …`), then its output and exit status; a diff card is a
//! unified diff (`-` red, `+` green, hunk headers cyan); a generic card is its title and content.
//! Search, read and web result cards get a listing each.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use dsh_tools::present::{FileDiff, SearchView, ToolCallView, ToolResultView, WebView};
use dsh_tools::{ContentBlock, ToolDefinition};
use serde_json::Value;

/// Whether (and how) text is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Palette {
    colour: bool,
}

impl Palette {
    /// No colour at all.
    #[cfg(test)]
    pub(crate) const PLAIN: Self = Self { colour: false };

    /// Colour for a stream that is a terminal, unless `NO_COLOR` is set (no-color.org).
    pub(crate) fn for_terminal(is_terminal: bool) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            colour: is_terminal && !no_color,
        }
    }

    fn paint(self, style: Style, text: &str) -> String {
        if self.colour && !text.is_empty() {
            format!("{style}{text}{style:#}")
        } else {
            text.to_owned()
        }
    }

    fn bold(self, text: &str) -> String {
        self.paint(Style::new().bold(), text)
    }

    fn dim(self, text: &str) -> String {
        self.paint(Style::new().dimmed(), text)
    }

    fn colour(self, colour: AnsiColor, text: &str) -> String {
        self.paint(colour.on_default(), text)
    }
}

/// The pending card of a call: the tool's own card, or the generic fallback.
pub(crate) fn call_view(
    definition: Option<&ToolDefinition>,
    name: &str,
    args: &Value,
) -> ToolCallView {
    definition
        .and_then(|def| def.present_call(args))
        .unwrap_or_else(|| dsh_tools::present::fallback_call_view(name, args))
}

/// A diff card that creates files which already exist shows the change from their current text
/// (a pure presenter cannot read the file; the terminal, showing the card now, can).
pub(crate) fn against_current_files(view: ToolCallView) -> ToolCallView {
    let ToolCallView::Diff {
        title,
        diffs,
        locations,
    } = view
    else {
        return view;
    };
    let diffs = diffs
        .into_iter()
        .map(|diff| match diff.old_text {
            Some(_) => diff,
            None => FileDiff {
                old_text: std::fs::read(&diff.path)
                    .ok()
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
                ..diff
            },
        })
        .collect();
    ToolCallView::Diff {
        title,
        diffs,
        locations,
    }
}

/// The pending card as lines of text (each ending in a newline).
pub(crate) fn render_call(view: &ToolCallView, palette: Palette) -> String {
    let mut out = String::new();
    match view {
        ToolCallView::Terminal {
            title,
            description,
            cwd,
        } => {
            if let Some(description) = description {
                line(&mut out, &palette.dim(description));
            }
            if let Some(cwd) = cwd {
                line(&mut out, &palette.dim(&format!("in {cwd}")));
            }
            line(&mut out, &palette.bold(&format!("$ {title}")));
        }
        ToolCallView::Diff { title, diffs, .. } => {
            line(&mut out, &palette.bold(title));
            for diff in diffs {
                out.push_str(&unified_diff(diff, palette));
            }
        }
        ToolCallView::Generic {
            title,
            kind,
            raw_input,
            content,
            locations,
        } => {
            let kind = kind
                .and_then(|k| serde_json::to_value(k).ok())
                .and_then(|k| k.as_str().map(|k| format!(" [{k}]")))
                .unwrap_or_default();
            line(
                &mut out,
                &format!("{}{}", palette.bold(title), palette.dim(&kind)),
            );
            // A location the title already names adds nothing.
            let new =
                |l: &&dsh_tools::present::Location| l.line.is_some() || !title.contains(&l.path);
            for location in locations.iter().flatten().filter(new) {
                let at = location.line.map(|n| format!(":{n}")).unwrap_or_default();
                line(&mut out, &format!("  {}{at}", location.path));
            }
            if let Some(input) = raw_input {
                let pretty = serde_json::to_string_pretty(input).unwrap_or_default();
                for text in pretty.lines() {
                    line(&mut out, &palette.dim(&format!("  {text}")));
                }
            }
            blocks(
                &mut out,
                content.as_deref().unwrap_or_default(),
                None,
                palette,
            );
        }
    }
    out
}

/// The completed card as lines of text; an error's text is red.
pub(crate) fn render_result(view: &ToolResultView, is_error: bool, palette: Palette) -> String {
    let mut out = String::new();
    if let Some(title) = view.title() {
        let title = match view {
            ToolResultView::Terminal { .. } => format!("$ {title}"),
            _ => title.to_owned(),
        };
        line(&mut out, &palette.bold(&title));
    }
    let error_colour = is_error.then_some(AnsiColor::Red);
    match view {
        ToolResultView::Generic { content, .. } => {
            blocks(
                &mut out,
                content.as_deref().unwrap_or_default(),
                error_colour,
                palette,
            );
        }
        ToolResultView::Terminal {
            output,
            exit_code,
            signal,
            ..
        } => {
            if let Some(output) = output.as_deref().filter(|o| !o.is_empty()) {
                out.push_str(output);
                if !output.ends_with('\n') {
                    out.push('\n');
                }
            }
            let status = match (exit_code, signal) {
                (Some(0), _) => Some((AnsiColor::Green, "exit status 0".to_owned())),
                (Some(code), _) => Some((AnsiColor::Red, format!("exit status {code}"))),
                (None, Some(signal)) => Some((AnsiColor::Red, format!("killed by {signal}"))),
                (None, None) => None,
            };
            if let Some((colour, text)) = status {
                line(&mut out, &palette.colour(colour, &text));
            }
        }
        ToolResultView::Diff { diffs, .. } => {
            for diff in diffs {
                out.push_str(&unified_diff(diff, palette));
            }
        }
        ToolResultView::Search(search) => render_search(&mut out, search, palette),
        ToolResultView::Read {
            path,
            offset,
            lines,
            total_lines,
            content,
            ..
        } => {
            let shown = match (lines.first(), lines.last()) {
                (Some(first), Some(last)) => {
                    format!("lines {}-{} of {total_lines}", first.number, last.number)
                }
                _ => format!("no lines from line {offset} ({total_lines} in all)"),
            };
            line(
                &mut out,
                &format!("{} {}", palette.bold(path), palette.dim(&shown)),
            );
            let width = lines.last().map_or(1, |l| l.number.to_string().len());
            for l in lines {
                let number = format!("{:>width$}", l.number);
                line(&mut out, &format!("{}  {}", palette.dim(&number), l.text));
            }
            blocks(
                &mut out,
                content.as_deref().unwrap_or_default(),
                None,
                palette,
            );
        }
        ToolResultView::Web(web) => render_web(&mut out, web, palette),
    }
    out
}

fn render_search(out: &mut String, search: &SearchView, palette: Palette) {
    let (total, truncated, what) = match search {
        SearchView::Matches {
            files,
            truncated,
            total,
            ..
        } => {
            for file in files {
                line(out, &palette.colour(AnsiColor::Magenta, &file.path));
                for m in &file.matches {
                    let number = palette.colour(AnsiColor::Green, &m.line_number.to_string());
                    line(out, &format!("  {number}: {}", m.line));
                }
            }
            (*total, *truncated, ["match", "matches"])
        }
        SearchView::Paths {
            paths,
            truncated,
            total,
            ..
        } => {
            for path in paths {
                line(out, path);
            }
            (*total, *truncated, ["path", "paths"])
        }
    };
    let what = what[usize::from(total != 1)];
    let cut = if truncated { ", list truncated" } else { "" };
    line(out, &palette.dim(&format!("{total} {what}{cut}")));
}

fn render_web(out: &mut String, web: &WebView, palette: Palette) {
    match web {
        WebView::Fetch {
            url,
            status_code,
            truncated,
            ..
        } => {
            let cut = if *truncated { ", truncated" } else { "" };
            line(
                out,
                &format!(
                    "{url} {}",
                    palette.dim(&format!("(HTTP {status_code}{cut})"))
                ),
            );
        }
        WebView::Search {
            sources,
            answer,
            truncated,
            ..
        } => {
            if let Some(answer) = answer {
                line(out, answer);
            }
            for source in sources {
                let title = source.title.as_deref().unwrap_or(&source.url);
                line(
                    out,
                    &format!("- {} {}", palette.bold(title), palette.dim(&source.url)),
                );
                if let Some(snippet) = &source.snippet {
                    line(out, &format!("  {snippet}"));
                }
            }
            if *truncated {
                line(out, &palette.dim("(more sources not shown)"));
            }
        }
    }
}

/// A file's change as a unified diff; a new file is diffed against `/dev/null`.
pub(crate) fn unified_diff(diff: &FileDiff, palette: Palette) -> String {
    let old = diff.old_text.as_deref().unwrap_or("");
    // git's `a/` and `b/` prefixes mark relative paths; an absolute path stands as it is.
    let (a, b) = if std::path::Path::new(&diff.path).is_absolute() {
        ("", "")
    } else {
        ("a/", "b/")
    };
    let from = if diff.old_text.is_some() {
        format!("{a}{}", diff.path)
    } else {
        "/dev/null".to_owned()
    };
    let text_diff = similar::TextDiff::from_lines(old, diff.new_text.as_str());
    let mut out = String::new();
    line(&mut out, &palette.bold(&format!("--- {from}")));
    line(&mut out, &palette.bold(&format!("+++ {b}{}", diff.path)));
    if old == diff.new_text {
        line(&mut out, &palette.dim("(no change)"));
        return out;
    }
    let mut unified = text_diff.unified_diff();
    unified.context_radius(3);
    for hunk in unified.iter_hunks() {
        line(
            &mut out,
            &palette.colour(AnsiColor::Cyan, &hunk.header().to_string()),
        );
        for change in hunk.iter_changes() {
            let (sign, colour) = match change.tag() {
                similar::ChangeTag::Delete => ('-', Some(AnsiColor::Red)),
                similar::ChangeTag::Insert => ('+', Some(AnsiColor::Green)),
                similar::ChangeTag::Equal => (' ', None),
            };
            let text = format!("{sign}{}", change.value().trim_end_matches(['\n', '\r']));
            line(
                &mut out,
                &colour.map_or_else(|| text.clone(), |c| palette.colour(c, &text)),
            );
            if change.missing_newline() {
                line(&mut out, &palette.dim("\\ No newline at end of file"));
            }
        }
    }
    out
}

/// Text blocks as they are; other blocks as a one-line note.
fn blocks(out: &mut String, content: &[ContentBlock], colour: Option<AnsiColor>, palette: Palette) {
    for block in content {
        let text = match block {
            ContentBlock::Text { text } | ContentBlock::Reasoning { text } => text.clone(),
            ContentBlock::Image { .. } => "[image]".to_owned(),
            ContentBlock::ToolCall { name, .. } => format!("[tool call {name}]"),
            ContentBlock::ToolResult { .. } => "[tool result]".to_owned(),
            ContentBlock::Unknown(map) => {
                let kind = map.get("type").and_then(Value::as_str).unwrap_or("?");
                format!("[{kind} block]")
            }
        };
        for text_line in text.lines() {
            line(
                out,
                &colour.map_or_else(|| text_line.to_owned(), |c| palette.colour(c, text_line)),
            );
        }
    }
}

fn line(out: &mut String, text: &str) {
    let _ = writeln!(out, "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_tools::present::{ReadLine, SearchFile, SearchMatch};

    #[test]
    fn a_terminal_call_card_is_a_command_line_under_its_description() {
        let view = ToolCallView::terminal("echo hi").with_description("say hi");
        assert_eq!(render_call(&view, Palette::PLAIN), "say hi\n$ echo hi\n");
    }

    #[test]
    fn a_terminal_result_card_is_output_then_exit_status() {
        let view = ToolResultView::terminal_output("hi").with_exit_code(3);
        assert_eq!(
            render_result(&view, false, Palette::PLAIN),
            "hi\nexit status 3\n"
        );
        let view = ToolResultView::terminal_output("").with_signal("SIGKILL");
        assert_eq!(
            render_result(&view, false, Palette::PLAIN),
            "killed by SIGKILL\n"
        );
    }

    #[test]
    fn a_diff_card_is_a_unified_diff_and_a_new_file_comes_from_dev_null() {
        let view = ToolResultView::diff(vec![FileDiff::modified(
            "a.txt",
            "1\n2\n3\n",
            "1\ntwo\n3\n",
        )]);
        assert_eq!(
            render_result(&view, false, Palette::PLAIN),
            "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n"
        );
        let view = ToolCallView::diff("new.txt", vec![FileDiff::created("new.txt", "hi")]);
        assert_eq!(
            render_call(&view, Palette::PLAIN),
            "new.txt\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn colour_marks_removed_and_added_lines() {
        let colour = Palette { colour: true };
        let text = unified_diff(&FileDiff::modified("a", "x\n", "y\n"), colour);
        assert!(text.contains("\u{1b}[31m-x\u{1b}[0m"), "{text:?}");
        assert!(text.contains("\u{1b}[32m+y\u{1b}[0m"), "{text:?}");
        assert!(
            !unified_diff(&FileDiff::modified("a", "x\n", "y\n"), Palette::PLAIN)
                .contains('\u{1b}')
        );
    }

    #[test]
    fn a_generic_card_is_its_title_and_content() {
        let view =
            dsh_tools::present::fallback_call_view("grep", &serde_json::json!({"pattern": "fn"}));
        assert_eq!(
            render_call(&view, Palette::PLAIN),
            "grep\n  {\n    \"pattern\": \"fn\"\n  }\n"
        );
        let view = ToolResultView::generic_content(vec![ContentBlock::text("Error: no")]);
        assert_eq!(render_result(&view, true, Palette::PLAIN), "Error: no\n");
    }

    #[test]
    fn search_and_read_cards_are_listings() {
        let view = ToolResultView::from(SearchView::matches(
            vec![SearchFile {
                path: "a.rs".into(),
                matches: vec![SearchMatch {
                    line_number: 4,
                    line: "fn main()".into(),
                }],
            }],
            false,
            1,
        ));
        assert_eq!(
            render_result(&view, false, Palette::PLAIN),
            "a.rs\n  4: fn main()\n1 match\n"
        );
        let view = ToolResultView::Read {
            title: None,
            path: "n.txt".into(),
            offset: 9,
            lines: vec![
                ReadLine {
                    number: 9,
                    text: "nine".into(),
                },
                ReadLine {
                    number: 10,
                    text: "ten".into(),
                },
            ],
            total_lines: 12,
            lang: None,
            content: None,
        };
        assert_eq!(
            render_result(&view, false, Palette::PLAIN),
            "n.txt lines 9-10 of 12\n 9  nine\n10  ten\n"
        );
    }

    #[test]
    fn an_existing_file_is_diffed_against_its_current_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "old\n").unwrap();
        let path = path.to_string_lossy().into_owned();
        let view = against_current_files(ToolCallView::diff(
            "f.txt",
            vec![FileDiff::created(path.clone(), "new\n")],
        ));
        let ToolCallView::Diff { diffs, .. } = view else {
            panic!("a diff card")
        };
        assert_eq!(diffs, [FileDiff::modified(path, "old\n", "new\n")]);
    }
}
