//! The interactive paths of `dsh-tools`, driven as a person meets them: the built binary in a
//! pseudo-terminal, keystrokes typed (`y`, `n`, `a`, Enter, Ctrl-C, Ctrl-D), and assertions on
//! what appears on the screen and on what happened to the machine (a file written or not, a
//! command run or killed).
//!
//! Every wait is for expected output (or an expected file), with a deadline; nothing sleeps in
//! place of synchronisation.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nix::sys::wait::WaitStatus;
use rexpect::reader::Options;
use rexpect::session::{PtySession, spawn_with_options};

/// How long any one expected output may take (a debug build on a loaded 2-core machine).
const DEADLINE_MS: u64 = 60_000;

const ENTER: &str = "\r";
const CTRL_C: char = 'c';
const CTRL_D: char = 'd';

/// A scratch directory: the working directory, and the user's data directory (the history).
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `dsh-tools <args>` in a pseudo-terminal (stdin, stdout and stderr all the terminal).
    fn spawn(&self, args: &[&str]) -> PtySession {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dsh-tools"));
        command.args(args);
        self.spawn_command(command)
    }

    /// `sh -c <script>` in a pseudo-terminal, `$DSH` naming the binary.
    fn spawn_shell(&self, script: &str) -> PtySession {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(script)
            .env("DSH", env!("CARGO_BIN_EXE_dsh-tools"));
        self.spawn_command(command)
    }

    fn spawn_command(&self, mut command: Command) -> PtySession {
        command
            .current_dir(self.dir.path())
            .env("HOME", self.path("home"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("TERM", "xterm")
            .env_remove("NO_COLOR");
        let options = Options::new()
            .timeout_ms(Some(DEADLINE_MS))
            .strip_ansi_escape_codes(true);
        spawn_with_options(command, options).unwrap()
    }
}

/// Waits for `needle`; returns what came before it.
fn expect(session: &mut PtySession, needle: &str) -> String {
    session
        .exp_string(needle)
        .unwrap_or_else(|e| panic!("waiting for {needle:?}: {e}"))
}

/// Types a program line by line, then its ending `.` line.
fn type_program(session: &mut PtySession, lines: &[&str]) {
    for line in lines {
        session.send(&format!("{line}{ENTER}")).unwrap();
    }
    session.send(&format!(".{ENTER}")).unwrap();
    session.flush().unwrap();
}

fn answer(session: &mut PtySession, text: &str) {
    session.send(&format!("{text}{ENTER}")).unwrap();
    session.flush().unwrap();
}

/// Leaves with Ctrl-D and returns the exit status.
fn leave(mut session: PtySession) -> i32 {
    session.send_control(CTRL_D).unwrap();
    exit_status(session)
}

fn exit_status(mut session: PtySession) -> i32 {
    let _ = session.exp_eof();
    match session.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => code,
        other => panic!("dsh-tools did not exit: {other:?}"),
    }
}

/// Waits until `path` exists (the command under test writes it).
fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_millis(DEADLINE_MS);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` is gone (or a zombie: dead, not yet reaped).
fn is_dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

const BASH_PROGRAM: &str = r#"return (await tools.bash({command: "printf made > made.txt; echo $((6*7))", description: "make a file"})).stdout"#;

#[test]
fn the_repl_runs_programs_and_keeps_them_in_its_history() {
    let scratch = Scratch::new();
    let mut repl = scratch.spawn(&["repl"]);
    expect(&mut repl, "dsh> ");
    type_program(&mut repl, &["let a = 6", "return a * 7"]);
    expect(&mut repl, "42");
    expect(&mut repl, "dsh> ");
    // Ctrl-C drops the text typed so far.
    repl.send(&format!("return 'dro' + 'pped'{ENTER}")).unwrap();
    repl.send_control(CTRL_C).unwrap();
    expect(&mut repl, "dsh> ");
    type_program(&mut repl, &["return 'ke' + 'pt'"]);
    let before = expect(&mut repl, "kept");
    assert!(!before.contains("dropped"), "{before}");
    expect(&mut repl, "dsh> ");
    assert_eq!(leave(repl), 0);

    let history = std::fs::read_to_string(scratch.path("data/dsh-tools/repl-history")).unwrap();
    assert!(history.contains("return a * 7"), "{history}");
    assert!(!history.contains("dropped"), "{history}");

    // A new session recalls the last program with Up.
    let mut repl = scratch.spawn(&["repl"]);
    expect(&mut repl, "dsh> ");
    repl.send("\u{1b}[A").unwrap();
    repl.send(ENTER).unwrap();
    repl.flush().unwrap();
    expect(&mut repl, "kept");
    expect(&mut repl, "dsh> ");
    assert_eq!(leave(repl), 0);
}

#[test]
fn the_repl_asks_before_a_tool_and_runs_it_when_approved() {
    let scratch = Scratch::new();
    let mut repl = scratch.spawn(&["repl"]);
    expect(&mut repl, "dsh> ");
    type_program(&mut repl, &[BASH_PROGRAM]);
    // The card (the description, the command line), then the question.
    let card = expect(&mut repl, "allow tool \"bash\"");
    assert!(card.contains("make a file"), "{card}");
    assert!(
        card.contains("$ printf made > made.txt; echo $((6*7))"),
        "{card}"
    );
    expect(&mut repl, "[y/N/a]");
    answer(&mut repl, "y");
    expect(&mut repl, "42");
    expect(&mut repl, "dsh> ");
    assert_eq!(
        std::fs::read_to_string(scratch.path("made.txt")).unwrap(),
        "made"
    );
    // The REPL goes on.
    type_program(&mut repl, &["return 'ne' + 'xt'"]);
    expect(&mut repl, "next");
    assert_eq!(leave(repl), 0);
}

#[test]
fn the_repl_runs_nothing_when_denied() {
    let scratch = Scratch::new();
    let mut repl = scratch.spawn(&["repl"]);
    expect(&mut repl, "dsh> ");
    type_program(&mut repl, &[BASH_PROGRAM]);
    expect(&mut repl, "[y/N/a]");
    answer(&mut repl, "n");
    expect(&mut repl, "the user rejected tool \"bash\"");
    expect(&mut repl, "dsh> ");
    assert!(!scratch.path("made.txt").exists());
    // An answer that is none of y, n, a is asked again; Enter alone means no.
    type_program(&mut repl, &[BASH_PROGRAM]);
    expect(&mut repl, "[y/N/a]");
    answer(&mut repl, "maybe");
    expect(&mut repl, "answer y (run it), n (do not) or a");
    expect(&mut repl, "[y/N/a]");
    answer(&mut repl, "");
    expect(&mut repl, "the user rejected tool");
    expect(&mut repl, "dsh> ");
    assert!(!scratch.path("made.txt").exists());
    // Leaving after a refused program: exit status 1 (a program failed).
    assert_eq!(leave(repl), 1);
}

#[test]
fn always_allows_the_tool_for_the_rest_of_the_session() {
    let scratch = Scratch::new();
    let mut repl = scratch.spawn(&["repl"]);
    expect(&mut repl, "dsh> ");
    type_program(
        &mut repl,
        &[
            r#"await tools.bash({command: "echo one > one.txt", description: "first"})"#,
            r#"await tools.bash({command: "echo two > two.txt", description: "second"})"#,
            "return 'bo' + 'th'",
        ],
    );
    expect(&mut repl, "[y/N/a]");
    answer(&mut repl, "a");
    let between = expect(&mut repl, "both");
    assert!(!between.contains("allow tool"), "asked again: {between}");
    assert!(scratch.path("one.txt").exists() && scratch.path("two.txt").exists());
    // A later program: still allowed.
    type_program(
        &mut repl,
        &[
            r#"await tools.bash({command: "echo three > three.txt", description: "third"})"#,
            "return 'la' + 'ter'",
        ],
    );
    let between = expect(&mut repl, "later");
    assert!(!between.contains("allow tool"), "asked again: {between}");
    assert!(scratch.path("three.txt").exists());
    assert_eq!(leave(repl), 0);
}

#[test]
fn ctrl_c_cancels_a_long_tool_and_the_repl_goes_on() {
    let scratch = Scratch::new();
    let mut repl = scratch.spawn(&["repl", "--yes"]);
    expect(&mut repl, "dsh> ");
    type_program(
        &mut repl,
        &[
            r#"return await tools.bash({command: "echo $$ > pid.txt; exec sleep 30", description: "wait"})"#,
        ],
    );
    let pid = wait_for_file(&scratch.path("pid.txt"));
    let pid = pid.trim();
    assert!(!is_dead(pid), "the command is not running");
    let interrupted = Instant::now();
    repl.send_control(CTRL_C).unwrap();
    expect(&mut repl, "cancelled");
    expect(&mut repl, "dsh> ");
    // Far sooner than the 30 s the command would take (not a speed target: a liveness bound).
    assert!(
        interrupted.elapsed() < Duration::from_secs(20),
        "{:?}",
        interrupted.elapsed()
    );
    assert!(
        is_dead(pid),
        "the command's process {pid} outlived the cancellation"
    );
    type_program(&mut repl, &["return 6 * 7"]);
    expect(&mut repl, "42");
    expect(&mut repl, "dsh> ");
    leave(repl);
}

#[test]
fn yes_runs_tools_without_asking() {
    let scratch = Scratch::new();
    let mut repl = scratch.spawn(&["repl", "--yes"]);
    expect(&mut repl, "dsh> ");
    type_program(&mut repl, &[BASH_PROGRAM]);
    let before = expect(&mut repl, "42");
    assert!(!before.contains("allow tool"), "{before}");
    assert_eq!(
        std::fs::read_to_string(scratch.path("made.txt")).unwrap(),
        "made"
    );
    assert_eq!(leave(repl), 0);
}

#[test]
fn call_shows_the_diff_once_then_asks_and_shows_the_result() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path("notes.txt"), "alpha\nold\n").unwrap();
    let mut call = scratch.spawn(&[
        "call",
        "write_file",
        r#"{"path": "notes.txt", "content": "alpha\nnew\n"}"#,
    ]);
    let card = expect(&mut call, "allow tool \"write_file\"");
    // The pending card: a unified diff against the file as it is, shown once.
    assert!(card.contains("--- a/notes.txt"), "{card}");
    assert!(card.contains("-old"), "{card}");
    assert_eq!(card.matches("+new").count(), 1, "{card}");
    answer(&mut call, "y");
    // The result card: the applied change.
    expect(&mut call, "+new");
    assert_eq!(exit_status(call), 0);
    assert_eq!(
        std::fs::read_to_string(scratch.path("notes.txt")).unwrap(),
        "alpha\nnew\n"
    );
}

#[test]
fn call_runs_nothing_when_denied() {
    let scratch = Scratch::new();
    let mut call = scratch.spawn(&[
        "call",
        "bash",
        r#"{"command": "touch touched", "description": "touch a file"}"#,
    ]);
    let card = expect(&mut call, "[y/N/a]");
    assert!(card.contains("$ touch touched"), "{card}");
    answer(&mut call, "n");
    expect(&mut call, "Error: the user rejected tool \"bash\"");
    assert_eq!(exit_status(call), 1);
    assert!(!scratch.path("touched").exists());
}

#[test]
fn call_shows_a_terminal_card_and_json_keeps_the_document() {
    let scratch = Scratch::new();
    let mut call = scratch.spawn(&[
        "call",
        "--yes",
        "bash",
        r#"{"command": "echo $((6*7)); exit 3", "description": "answer"}"#,
    ]);
    expect(&mut call, "$ echo $((6*7)); exit 3");
    expect(&mut call, "42");
    expect(&mut call, "exit status 3");
    assert_eq!(exit_status(call), 0);

    std::fs::write(scratch.path("notes.txt"), "alpha\nbeta\n").unwrap();
    let mut call = scratch.spawn(&["call", "--json", "read_file", r#"{"path": "notes.txt"}"#]);
    let document = expect(&mut call, "\n");
    let document = document.trim();
    let result: serde_json::Value =
        serde_json::from_str(document).unwrap_or_else(|e| panic!("{e}: {document}"));
    assert_eq!(result["value"]["total_lines"], 2);
    assert_eq!(exit_status(call), 0);
}

#[test]
fn run_asks_on_the_terminal() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path("prog.ts"), BASH_PROGRAM).unwrap();
    let mut run = scratch.spawn(&["run", "prog.ts"]);
    expect(&mut run, "[y/N/a]");
    answer(&mut run, "y");
    expect(&mut run, "42");
    assert_eq!(exit_status(run), 0);
    assert_eq!(
        std::fs::read_to_string(scratch.path("made.txt")).unwrap(),
        "made"
    );
}

#[test]
fn without_a_terminal_on_stdin_approval_is_refused() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path("prog.ts"), BASH_PROGRAM).unwrap();
    // stdout and stderr are the terminal; the program comes through a pipe.
    let run = scratch.spawn_shell(r#""$DSH" run - < prog.ts; echo "status $?""#);
    let mut run = run;
    let before = expect(&mut run, "no approval channel is available");
    assert!(!before.contains("[y/N/a]"), "{before}");
    expect(&mut run, "status 1");
    assert!(!scratch.path("made.txt").exists());
}

/// `--mcp` importing `@modelcontextprotocol/server-everything` (whose
/// `trigger-long-running-operation` reports progress), or `None` (reason printed) when it is
/// not installed outside CI.
fn everything_server() -> Option<String> {
    let script = std::env::var_os("DSH_MCP_SERVER_EVERYTHING")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join(
                "../tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            )
        });
    if !script.exists() {
        let message = format!(
            "the everything MCP server is missing at {} — run `npm ci --prefix tests/node` \
             (scripts/test does)",
            script.display()
        );
        assert!(
            !["CI", "DSH_REQUIRE_NODE"]
                .iter()
                .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty())),
            "{message}"
        );
        eprintln!("skipped: {message}");
        return None;
    }
    let node = std::env::var("DSH_NODE").unwrap_or_else(|_| "node".to_owned());
    Some(format!("{node} {}", script.display()))
}

const LONG_OPERATION: &str = "mcp__s1__trigger-long-running-operation";

#[test]
fn call_draws_an_imported_tools_progress_as_a_bar() {
    let Some(everything) = everything_server() else {
        return;
    };
    let scratch = Scratch::new();
    let mut call = scratch.spawn(&[
        "call",
        "--mcp",
        &everything,
        LONG_OPERATION,
        r#"{"duration": 2, "steps": 4}"#,
    ]);
    // The bar: the tool's name, then position/length as the server reports them.
    let before = expect(&mut call, "/4");
    assert!(before.contains(LONG_OPERATION), "{before}");
    expect(&mut call, "Long running operation completed");
    assert_eq!(exit_status(call), 0);
}

#[test]
fn run_draws_progress_then_asks_with_the_whole_card() {
    let Some(everything) = everything_server() else {
        return;
    };
    let scratch = Scratch::new();
    std::fs::write(
        scratch.path("prog.ts"),
        format!(
            r#"const r = await tools["{LONG_OPERATION}"]({{duration: 1, steps: 5}});
await tools.write_file({{path: "asked.txt", content: "yes\n"}});
return r.content[0].text;
"#
        ),
    )
    .unwrap();
    let mut run = scratch.spawn(&["run", "--mcp", &everything, "prog.ts"]);
    expect(&mut run, "/5");
    // The bar is off the screen before the card: the card and the question arrive whole.
    let card = expect(&mut run, "[y/N/a]");
    let card = card.rsplit("/5").next().unwrap_or_default();
    assert!(card.contains("asked.txt"), "the card: {card:?}");
    assert!(card.contains("allow tool \"write_file\""), "{card:?}");
    answer(&mut run, "y");
    expect(&mut run, "Long running operation completed");
    assert_eq!(exit_status(run), 0);
    assert_eq!(
        std::fs::read_to_string(scratch.path("asked.txt")).unwrap(),
        "yes\n"
    );
}

/// The everything server's tool that asks the user a form (it is listed only to a client that
/// declares elicitation: the CLI does, on a terminal).
const ELICITATION: &str = "mcp__s1__trigger-elicitation-request";

#[test]
fn an_imported_tools_question_is_asked_on_the_terminal() {
    let Some(everything) = everything_server() else {
        return;
    };
    let scratch = Scratch::new();
    let mut call = scratch.spawn(&["call", "--mcp", &everything, ELICITATION, "{}"]);
    expect(
        &mut call,
        "the tool asks: Please provide inputs for the following fields:",
    );
    expect(&mut call, "answer? [y/N]");
    answer(&mut call, "y");
    // One line per field of the form (13): the name is typed, every other field keeps its
    // default or stays empty (Enter).
    for _ in 0..13 {
        let prompt = expect(&mut call, ": ");
        let line = if prompt.trim_end().ends_with("name (string)") {
            "Ada"
        } else {
            ""
        };
        answer(&mut call, line);
    }
    expect(&mut call, "User provided the requested information");
    expect(&mut call, "- Name: Ada");
    assert_eq!(exit_status(call), 0);
}
