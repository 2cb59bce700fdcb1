//! The CLI's approval service: the call's card, then `allow tool "…"? [y/N/a]` on the terminal.
//!
//! `y` runs this call, `n` (or Enter) refuses it, `a` runs it and every later call of the same
//! tool for the rest of the session (the process: a whole REPL session). Ctrl-C at the prompt
//! cancels the running program or call, as Ctrl-C does while it runs ([`crate::interrupt`]).
//! With no terminal there is no channel to a user; `--yes` approves everything.
//! (`docs/CONTRACTS.md`, "The command line".)

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::definition::BoxFuture;
use dsh_tools_runtime::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};

use crate::cards::{self, Palette};
use crate::terminal::{Answer, Terminal};

/// Asks on the terminal.
pub(crate) struct TerminalApproval {
    yes: bool,
    prompt: Arc<Prompt>,
}

/// What the prompt remembers across calls.
#[derive(Default)]
struct Prompt {
    /// The tools answered `a`.
    always: Mutex<HashSet<String>>,
    /// A call whose card is already on the screen (`call` shows it before running).
    card_shown_for: Option<String>,
}

impl TerminalApproval {
    /// The service; `yes` approves every call without asking.
    pub(crate) fn new(yes: bool) -> Self {
        Self {
            yes,
            prompt: Arc::default(),
        }
    }

    /// The same service, told that the card of call `call_id` is already on the screen.
    pub(crate) fn with_card_shown_for(self, call_id: impl Into<String>) -> Self {
        Self {
            yes: self.yes,
            prompt: Arc::new(Prompt {
                always: Mutex::default(),
                card_shown_for: Some(call_id.into()),
            }),
        }
    }
}

/// What an answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Once,
    Always,
    No,
}

fn choice(answer: &str) -> Option<Choice> {
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Some(Choice::Once),
        "a" | "always" => Some(Choice::Always),
        "" | "n" | "no" => Some(Choice::No),
        _ => None,
    }
}

impl ApprovalService for TerminalApproval {
    fn request(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
        let (yes, prompt) = (self.yes, Arc::clone(&self.prompt));
        Box::pin(async move {
            if yes || prompt.always_allowed(&request.tool_name) {
                return ApprovalOutcome::AllowedOnce;
            }
            let Some(terminal) = Terminal::get() else {
                return ApprovalOutcome::Unavailable;
            };
            let cancel = request.cancel.clone();
            let asked = tokio::task::spawn_blocking(move || prompt.ask(terminal, &request));
            tokio::select! {
                answer = asked => answer.unwrap_or(ApprovalOutcome::Cancelled),
                // The run ended some other way: its answer no longer matters.
                () = cancel.cancelled() => ApprovalOutcome::Cancelled,
            }
        })
    }
}

impl Prompt {
    fn always_allowed(&self, tool: &str) -> bool {
        self.always
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool)
    }

    /// Shows the card and asks until the answer is one of `y`, `n`, `a` (blocking).
    fn ask(&self, terminal: &Terminal, request: &ApprovalRequest) -> ApprovalOutcome {
        let mut card = String::new();
        if self.card_shown_for.as_deref() != Some(request.call_id.as_str()) {
            let view = cards::against_current_files(request.view.clone());
            card = cards::render_call(&view, Palette::for_terminal(true));
        }
        let reason = request
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        let question = format!(
            "dsh-tools: allow tool \"{}\"{reason}? [y/N/a] ",
            request.tool_name
        );
        let mut turn = terminal.turn();
        // Another prompt may have said `a` for this tool while this one waited its turn.
        if self.always_allowed(&request.tool_name) {
            return ApprovalOutcome::AllowedOnce;
        }
        eprint!("{card}");
        loop {
            match turn.ask(&question) {
                Answer::Line(line) => match choice(&line) {
                    Some(Choice::Once) => return ApprovalOutcome::AllowedOnce,
                    Some(Choice::Always) => {
                        self.always
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .insert(request.tool_name.clone());
                        return ApprovalOutcome::AllowedOnce;
                    }
                    Some(Choice::No) => return ApprovalOutcome::Rejected,
                    None => eprintln!(
                        "dsh-tools: answer y (run it), n (do not) or a (allow \"{}\" from now on)",
                        request.tool_name
                    ),
                },
                Answer::Interrupted => {
                    crate::interrupt::raise();
                    request.cancel.cancel();
                    return ApprovalOutcome::Cancelled;
                }
                Answer::End => return ApprovalOutcome::Rejected,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_y_n_a_and_enter_means_no() {
        assert_eq!(choice("y"), Some(Choice::Once));
        assert_eq!(choice(" Yes "), Some(Choice::Once));
        assert_eq!(choice("a"), Some(Choice::Always));
        assert_eq!(choice("n"), Some(Choice::No));
        assert_eq!(choice(""), Some(Choice::No));
        assert_eq!(choice("maybe"), None);
    }
}
