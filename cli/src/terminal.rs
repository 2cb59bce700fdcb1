//! The one owner of the terminal's input.
//!
//! Every interactive read goes through the process's single [`Terminal`]: the REPL's programs
//! and the approval prompts' answers take turns through one line editor (`rustyline`, on the
//! controlling terminal), so no two readers ever compete for the same keystrokes. The REPL reads
//! while no program runs; an approval prompt reads while its program waits for the answer.
//!
//! The terminal exists only when standard input and standard error are both terminals; with
//! piped input there is no one to ask (approvals are refused, the REPL reads lines as they come).
//! While a reader has the terminal, tool progress bars are off the screen ([`Screen::hold`]).
//! (`docs/CONTRACTS.md`, "The command line".)

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock, PoisonError};

use rustyline::completion::Completer;
use rustyline::config::{Behavior, Config};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Editor, Helper};

use crate::progress::{Hold, Screen};

/// The REPL's prompt (a program's first line).
pub(crate) const PROMPT: &str = "dsh> ";

/// How many programs the history keeps.
const HISTORY_SIZE: usize = 1000;

/// What reading a program gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProgramInput {
    /// A program (its ending `.` line removed); empty when only Enter was pressed.
    Program(String),
    /// Ctrl-C: the lines typed so far are dropped.
    Interrupted,
    /// Ctrl-D on an empty line, or the terminal is gone.
    End,
}

/// What reading an answer gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// A line (without its line break).
    Line(String),
    /// Ctrl-C.
    Interrupted,
    /// Ctrl-D, or the terminal is gone.
    End,
}

/// The process's terminal: one line editor and the REPL's history.
pub(crate) struct Terminal {
    state: Mutex<State>,
}

struct State {
    editor: Editor<Reading, FileHistory>,
    /// Where the history lives; `None` until the REPL first reads (or when there is no data
    /// directory).
    history: Option<PathBuf>,
    history_loaded: bool,
}

impl Terminal {
    /// The terminal, when standard input and standard error are both terminals (and the line
    /// editor can be set up).
    pub(crate) fn get() -> Option<&'static Terminal> {
        static TERMINAL: OnceLock<Option<Terminal>> = OnceLock::new();
        TERMINAL
            .get_or_init(|| {
                if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
                    return None;
                }
                Terminal::open()
            })
            .as_ref()
    }

    fn open() -> Option<Self> {
        let config = Config::builder()
            // The controlling terminal, not stdout: a program's output may be piped elsewhere.
            .behavior(Behavior::PreferTerm)
            .auto_add_history(false)
            .max_history_size(HISTORY_SIZE)
            .ok()?
            .build();
        let mut editor = Editor::with_config(config).ok()?;
        editor.set_helper(Some(Reading::Program));
        Some(Self {
            state: Mutex::new(State {
                editor,
                history: None,
                history_loaded: false,
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads one program: lines up to one holding only `.`, edited as one text, recalled from
    /// and added to the history (kept in the user's data directory).
    pub(crate) fn read_program(&self) -> ProgramInput {
        let mut state = self.lock();
        let _hold = Screen::stderr().hold();
        state.load_history();
        state.editor.set_helper(Some(Reading::Program));
        match state.editor.readline(PROMPT) {
            Ok(text) => {
                if !text.trim().is_empty() {
                    state.remember(&text);
                }
                ProgramInput::Program(program_of(&text))
            }
            Err(ReadlineError::Interrupted) => ProgramInput::Interrupted,
            Err(_) => ProgramInput::End,
        }
    }

    /// Takes the terminal's input until the turn is dropped; waits while another reader has it.
    /// Progress bars are off the screen for the turn.
    pub(crate) fn turn(&self) -> Turn<'_> {
        let state = self.lock();
        Turn {
            state,
            _hold: Screen::stderr().hold(),
        }
    }
}

/// The terminal's input, held by one reader.
pub(crate) struct Turn<'t> {
    state: std::sync::MutexGuard<'t, State>,
    /// The progress bars stay off the screen while the turn lasts.
    _hold: Hold<'static>,
}

impl Turn<'_> {
    /// Asks a one-line question (the prompt is `question`) and reads the answer.
    pub(crate) fn ask(&mut self, question: &str) -> Answer {
        self.state.editor.set_helper(Some(Reading::Answer));
        match self.state.editor.readline(question) {
            Ok(line) => Answer::Line(line),
            Err(ReadlineError::Interrupted) => Answer::Interrupted,
            Err(_) => Answer::End,
        }
    }
}

impl State {
    fn load_history(&mut self) {
        if self.history_loaded {
            return;
        }
        self.history_loaded = true;
        self.history = history_path();
        if let Some(path) = &self.history
            && path.exists()
            && let Err(error) = self.editor.load_history(path)
        {
            eprintln!(
                "dsh-tools: cannot read the history {}: {error}",
                path.display()
            );
        }
    }

    fn remember(&mut self, text: &str) {
        let _ = self.editor.add_history_entry(text);
        let Some(path) = self.history.clone() else {
            return;
        };
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(ReadlineError::from)
            .and_then(|()| self.editor.append_history(&path));
        if let Err(error) = written {
            eprintln!(
                "dsh-tools: cannot write the history {}: {error}",
                path.display()
            );
            // Say it once.
            self.history = None;
        }
    }
}

/// `<data dir>/dsh-tools/repl-history` (e.g. `~/.local/share/dsh-tools/repl-history`).
pub(crate) fn history_path() -> Option<PathBuf> {
    dirs::data_dir().map(|dir| dir.join("dsh-tools").join("repl-history"))
}

/// Whether the text typed so far is a whole program: it ends with a line holding only `.` (or
/// nothing but blanks was typed).
fn is_complete(text: &str) -> bool {
    text.trim().is_empty() || text.lines().last().is_some_and(|line| line.trim() == ".")
}

/// The program of a complete text: its lines without the final `.` line.
fn program_of(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.last().is_some_and(|line| line.trim() == ".") {
        lines.pop();
    }
    let mut program = lines.join("\n");
    if !program.trim().is_empty() {
        program.push('\n');
    } else {
        program.clear();
    }
    program
}

/// What the line editor is reading: Enter ends an answer, but a program only at its `.` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Program,
    Answer,
}

impl Validator for Reading {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(match self {
            Self::Program if !is_complete(ctx.input()) => ValidationResult::Incomplete,
            _ => ValidationResult::Valid(None),
        })
    }
}

impl Completer for Reading {
    type Candidate = String;
}

impl Hinter for Reading {
    type Hint = String;
}

impl Highlighter for Reading {}

impl Helper for Reading {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_ends_at_a_dot_line() {
        assert!(!is_complete("return 1"));
        assert!(!is_complete("return 1\n.5"));
        assert!(is_complete("return 1\n."));
        assert!(is_complete("return 1\n  .  "));
        assert!(is_complete("   "));
        assert_eq!(
            program_of("let a = 1\nreturn a\n."),
            "let a = 1\nreturn a\n"
        );
        assert_eq!(program_of("."), "");
        assert_eq!(program_of(""), "");
    }
}
