//! The outer-output ledger (`docs/CONTRACTS.md`, "The QuickJS sandbox").
//!
//! Bytes = the UTF-8 length of `JSON.stringify(logs)` (2 for `[]`, plus each entry's JSON, plus
//! one comma per extra entry) plus the JSON of the completion value or of the failure message.
//! Over the budget the run fails with `output-limit` and keeps the longest prefix of its logs
//! (the last entry possibly cut at a code point) such that prefix + message fit.

use dsh_tools::json::{js_stringify, json_quote};
use serde_json::Value;

use crate::runtime::{CodeErrorKind, CodeRunError, CodeRunResult};

/// The JSON length of one string, as `JSON.stringify` writes it.
fn quoted_len(s: &str) -> usize {
    2 + s.chars().map(escaped_len).sum::<usize>()
}

fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
        '\0'..='\u{1f}' => 6,
        _ => c.len_utf8(),
    }
}

/// Logs captured so far, with their JSON size.
#[derive(Debug)]
pub(crate) struct Ledger {
    max: usize,
    logs: Vec<String>,
    /// `JSON.stringify(logs).len()`.
    bytes: usize,
    /// A log entry did not fit: the run is over with `output-limit`.
    overflowed: bool,
}

impl Ledger {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max,
            logs: Vec::new(),
            bytes: 2,
            overflowed: false,
        }
    }

    /// The entries captured so far.
    #[cfg_attr(
        not(feature = "python"),
        allow(dead_code, reason = "read only by the Python runtime")
    )]
    pub(crate) fn logs(&self) -> &[String] {
        &self.logs
    }

    /// Whether the logs alone already exceeded the budget.
    #[cfg(test)]
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Appends one entry; `false` when the logs no longer fit (the run must stop). Entries after
    /// an overflow are dropped.
    pub(crate) fn push(&mut self, mut entry: String) -> bool {
        if self.overflowed {
            return false;
        }
        let added = quoted_len(&entry) + usize::from(!self.logs.is_empty());
        if self.bytes + added > self.max {
            // Keep only what a final prefix could use.
            if entry.len() > self.max {
                let mut cut = self.max;
                while !entry.is_char_boundary(cut) {
                    cut -= 1;
                }
                entry.truncate(cut);
            }
            self.logs.push(entry);
            self.overflowed = true;
            return false;
        }
        self.bytes += added;
        self.logs.push(entry);
        true
    }

    /// The run's result: `value` or `error` checked against the budget.
    pub(crate) fn finish(self, value: Option<Value>, error: Option<CodeRunError>) -> CodeRunResult {
        if !self.overflowed {
            let tail = match (&value, &error) {
                (_, Some(error)) => quoted_len(&error.message),
                (Some(value), None) => js_stringify(value).len(),
                (None, None) => 0,
            };
            if self.bytes + tail <= self.max {
                let value = if error.is_some() { None } else { value };
                return CodeRunResult {
                    value,
                    logs: self.logs,
                    error,
                };
            }
        }
        self.output_limit()
    }

    /// `output-limit` with the longest fitting log prefix.
    fn output_limit(self) -> CodeRunResult {
        let message = format!("outer output exceeded {} bytes", self.max);
        let budget = self.max.saturating_sub(json_quote(&message).len());
        let mut logs = Vec::new();
        let mut used = 2;
        for entry in self.logs {
            let comma = usize::from(!logs.is_empty());
            let full = quoted_len(&entry) + comma;
            if used + full <= budget {
                used += full;
                logs.push(entry);
                continue;
            }
            // The partially fitting entry, cut at a code point.
            let mut room = budget.saturating_sub(used + comma + 2);
            let mut end = 0;
            for (index, c) in entry.char_indices() {
                let len = escaped_len(c);
                if len > room {
                    break;
                }
                room -= len;
                end = index + c.len_utf8();
            }
            if end > 0 {
                let mut entry = entry;
                entry.truncate(end);
                logs.push(entry);
            }
            break;
        }
        CodeRunResult {
            value: None,
            logs,
            error: Some(CodeRunError {
                kind: CodeErrorKind::OutputLimit,
                message,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reference_boundary() {
        // `"€"` is 5 bytes, `[]` 2: it fits 7 and not 6.
        let result = Ledger::new(7).finish(Some(json!("€")), None);
        assert_eq!(result.value, Some(json!("€")));
        let result = Ledger::new(6).finish(Some(json!("€")), None);
        assert_eq!(
            result.error.unwrap().message,
            "outer output exceeded 6 bytes"
        );
        assert_eq!(result.value, None);
    }

    #[test]
    fn logs_count_with_commas_and_escapes() {
        let mut ledger = Ledger::new(2 + 4 + 1 + 4);
        assert!(ledger.push("ab".into()));
        assert!(ledger.push("\n".into()));
        assert_eq!(ledger.bytes, 11);
        assert!(!ledger.push("x".into()));
        assert!(ledger.overflowed());
    }

    #[test]
    fn keeps_the_longest_fitting_prefix() {
        let message_len = json_quote("outer output exceeded 60 bytes").len();
        assert_eq!(message_len, 32);
        // Budget for logs: 60 - 32 = 28 bytes = `["aaaaaaaaaa","€€€…` …
        let mut ledger = Ledger::new(60);
        assert!(ledger.push("a".repeat(10)));
        assert!(!ledger.push("€".repeat(20)));
        let result = ledger.finish(None, None);
        // 2 + 12 + 1 (comma) + 2 (quotes) = 17; 11 bytes left = three `€`.
        assert_eq!(result.logs, vec!["a".repeat(10), "€€€".to_owned()]);
        assert_eq!(result.error.unwrap().kind, CodeErrorKind::OutputLimit);
    }

    #[test]
    fn failure_messages_count_too() {
        let error = CodeRunError {
            kind: CodeErrorKind::Exception,
            message: "x".repeat(10),
        };
        let result = Ledger::new(14).finish(None, Some(error.clone()));
        assert_eq!(result.error, Some(error.clone()));
        let result = Ledger::new(13).finish(None, Some(error));
        assert_eq!(result.error.unwrap().kind, CodeErrorKind::OutputLimit);
    }
}
