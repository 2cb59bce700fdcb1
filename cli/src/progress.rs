//! Tool progress as progress bars on stderr (`docs/CONTRACTS.md`, "Progress"), for `call` and
//! `run` when stderr is a terminal.
//!
//! All bars of the process share one [`Screen`]: one `indicatif::MultiProgress`, so concurrent
//! calls get one line each instead of drawing over each other. While the terminal reads (an
//! approval prompt, the REPL's prompt) the screen is held ([`Screen::hold`]): the bars are taken
//! off and nothing is drawn until the reading ends, so a bar never draws over a prompt or the
//! card above it. Reports that arrive meanwhile still move the bars; they are drawn again, where
//! they stand, when the hold ends.

use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use dsh_tools::exec::{Progress, ProgressObserver, ToolExecution};
use dsh_tools_runtime::{Registration, ToolRegistry};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle, WeakProgressBar};

/// Where bars are drawn, and whether a reader holds the terminal.
pub(crate) struct Screen {
    multi: MultiProgress,
    target: fn() -> ProgressDrawTarget,
    /// How many readers hold the screen; the lock also orders drawing against holding.
    state: Mutex<ScreenState>,
}

#[derive(Default)]
struct ScreenState {
    held: usize,
    /// The bars drawn so far (to draw again when a hold ends).
    bars: Vec<WeakProgressBar>,
}

/// The process's screen: stderr.
static STDERR: LazyLock<Screen> = LazyLock::new(|| Screen::new(ProgressDrawTarget::stderr));

impl Screen {
    fn new(target: fn() -> ProgressDrawTarget) -> Self {
        Self {
            multi: MultiProgress::with_draw_target(target()),
            target,
            state: Mutex::default(),
        }
    }

    /// The process's screen (stderr).
    pub(crate) fn stderr() -> &'static Screen {
        &STDERR
    }

    fn lock(&self) -> MutexGuard<'_, ScreenState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the bars off the screen until the returned hold is dropped (holds nest).
    pub(crate) fn hold(&self) -> Hold<'_> {
        let mut state = self.lock();
        if state.held == 0 {
            let _ = self.multi.clear();
            self.multi.set_draw_target(ProgressDrawTarget::hidden());
        }
        state.held += 1;
        Hold { screen: self }
    }

    /// Prints a line on stderr above the bars (which are drawn again below it).
    pub(crate) fn eprintln(&self, line: &str) {
        let _state = self.lock();
        self.multi.suspend(|| eprintln!("{line}"));
    }

    /// Adds a bar (drawn on its first update unless the screen is held).
    fn add(&self, bar: ProgressBar) -> ProgressBar {
        let mut state = self.lock();
        state.bars.retain(|weak| weak.upgrade().is_some());
        let bar = self.multi.add(bar);
        state.bars.push(bar.downgrade());
        bar
    }

    /// Runs `update` on a bar, ordered against [`Screen::hold`] (so a bar being drawn never
    /// lands after the screen was cleared for a prompt).
    fn update(&self, update: impl FnOnce()) {
        let _state = self.lock();
        update();
    }
}

/// The screen held by a reader of the terminal; dropping it draws the bars again.
pub(crate) struct Hold<'s> {
    screen: &'s Screen,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        let mut state = self.screen.lock();
        state.held -= 1;
        if state.held == 0 {
            self.screen.multi.set_draw_target((self.screen.target)());
            for bar in state.bars.iter().filter_map(WeakProgressBar::upgrade) {
                if !bar.is_finished() {
                    bar.tick();
                }
            }
        }
    }
}

/// One bar per running call, drawn on a screen; cleared when the last clone is dropped.
#[derive(Clone)]
pub(crate) struct ProgressBars {
    screen: &'static Screen,
    bars: Arc<Mutex<HashMap<String, ProgressBar>>>,
}

impl ProgressBars {
    /// Bars on stderr, when stderr is a terminal.
    pub(crate) fn on_terminal() -> Option<Self> {
        std::io::stderr()
            .is_terminal()
            .then(|| Self::new(Screen::stderr()))
    }

    fn new(screen: &'static Screen) -> Self {
        Self {
            screen,
            bars: Arc::default(),
        }
    }

    /// The observer to put on the command's call (rate-limited to 20 updates a second).
    pub(crate) fn observer(&self) -> ProgressObserver {
        let bars = self.clone();
        ProgressObserver::new(move |exec, progress| bars.show(exec, progress))
            .throttled(Duration::from_millis(50))
    }

    /// Takes each call's bar away when the call's result arrives (a call that ended without a
    /// completing report leaves no stale bar behind). Dispose of the handle when the run ends.
    pub(crate) fn follow(&self, registry: &ToolRegistry) -> Registration {
        let bars = self.clone();
        registry.on_result(move |exec, _| bars.finish(&exec.call_id))
    }

    /// Clears and forgets the bar of `call_id`, if it has one.
    fn finish(&self, call_id: &str) {
        let bar = self
            .bars
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(call_id);
        if let Some(bar) = bar {
            self.screen.update(|| {
                bar.finish_and_clear();
                self.screen.multi.remove(&bar);
            });
        }
    }

    fn show(&self, exec: &ToolExecution, progress: &Progress) {
        let mut bars = self.bars.lock().unwrap_or_else(PoisonError::into_inner);
        let bar = bars
            .entry(exec.call_id.to_string())
            .or_insert_with(|| {
                let bar = ProgressBar::hidden();
                let style = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ");
                bar.set_style(style);
                bar.set_prefix(exec.name.to_string());
                self.screen.add(bar)
            })
            .clone();
        drop(bars);
        self.screen.update(|| {
            if let Some(total) = progress.total {
                bar.set_length(total.max(0.0) as u64);
            }
            bar.set_message(progress.message.clone().unwrap_or_default());
            bar.set_position(progress.done.max(0.0) as u64);
            if progress.is_complete() {
                bar.finish_and_clear();
            }
        });
    }

    /// The bar of a call (tests).
    #[cfg(test)]
    fn bar(&self, call_id: &str) -> Option<ProgressBar> {
        self.bars
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(call_id)
            .cloned()
    }
}

impl Drop for ProgressBars {
    fn drop(&mut self) {
        if Arc::strong_count(&self.bars) == 1 {
            let bars = self.bars.lock().unwrap_or_else(PoisonError::into_inner);
            self.screen.update(|| {
                for bar in bars.values() {
                    bar.finish_and_clear();
                    self.screen.multi.remove(bar);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use indicatif::TermLike;

    use super::*;

    /// A terminal that records what is drawn on it.
    #[derive(Debug, Clone, Default)]
    struct Recorder(Arc<Mutex<String>>);

    impl Recorder {
        fn take(&self) -> String {
            std::mem::take(&mut *self.0.lock().unwrap())
        }

        fn push(&self, text: &str) -> io::Result<()> {
            self.0.lock().unwrap().push_str(text);
            Ok(())
        }
    }

    impl TermLike for Recorder {
        fn width(&self) -> u16 {
            100
        }
        fn move_cursor_up(&self, n: usize) -> io::Result<()> {
            self.push(&format!("<up {n}>"))
        }
        fn move_cursor_down(&self, n: usize) -> io::Result<()> {
            self.push(&format!("<down {n}>"))
        }
        fn move_cursor_right(&self, n: usize) -> io::Result<()> {
            self.push(&format!("<right {n}>"))
        }
        fn move_cursor_left(&self, n: usize) -> io::Result<()> {
            self.push(&format!("<left {n}>"))
        }
        fn write_line(&self, s: &str) -> io::Result<()> {
            self.push(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> io::Result<()> {
            self.push(s)
        }
        fn clear_line(&self) -> io::Result<()> {
            self.push("<clear>")
        }
        fn flush(&self) -> io::Result<()> {
            Ok(())
        }
    }

    static RECORDER: LazyLock<Recorder> = LazyLock::new(Recorder::default);

    /// A screen drawing on [`RECORDER`] with no rate limit (every update draws).
    fn recorded() -> &'static Screen {
        static SCREEN: LazyLock<Screen> = LazyLock::new(|| {
            Screen::new(|| ProgressDrawTarget::term_like(Box::new(RECORDER.clone())))
        });
        &SCREEN
    }

    #[test]
    fn reports_move_the_calls_bar_and_completion_finishes_it() {
        let bars = ProgressBars::new(Screen::stderr());
        let exec = ToolExecution::detached("c1", "index", serde_json::Value::Null);
        let observer = bars.observer();
        observer.observe(&exec, &Progress::new(3.0, Some(10.0), Some("a.rs")));
        let bar = bars.bar("c1").expect("a bar for the call");
        assert_eq!((bar.position(), bar.length()), (3, Some(10)));
        assert_eq!(bar.message(), "a.rs");
        assert_eq!(bar.prefix(), "index");
        observer.observe(&exec, &Progress::new(10.0, Some(10.0), None));
        assert_eq!(bar.position(), 10);
        assert!(bar.is_finished());
    }

    /// The approval prompt and the bars share stderr: while the terminal is held nothing is
    /// drawn, the bars having been cleared first; when the hold ends they are drawn again.
    #[test]
    fn a_held_screen_draws_nothing_until_the_hold_ends() {
        let screen = recorded();
        let bars = ProgressBars::new(screen);
        let exec = ToolExecution::detached("c1", "index", serde_json::Value::Null);
        bars.show(&exec, &Progress::new(1.0, Some(10.0), Some("first")));
        let drawn = RECORDER.take();
        assert!(
            drawn.contains("index [===") && drawn.contains("1/10 first"),
            "{drawn:?}"
        );

        let hold = screen.hold();
        let cleared = RECORDER.take();
        assert!(
            cleared.contains("<clear>"),
            "the bar is taken off: {cleared:?}"
        );
        assert!(!cleared.contains("index"), "{cleared:?}");
        // A second call starts and the first one moves while the prompt is up.
        let other = ToolExecution::detached("c2", "fetch", serde_json::Value::Null);
        bars.show(&exec, &Progress::new(5.0, Some(10.0), Some("during")));
        bars.show(&other, &Progress::new(1.0, Some(2.0), None));
        let nested = screen.hold();
        drop(nested);
        assert_eq!(
            RECORDER.take(),
            "",
            "nothing is drawn while the screen is held"
        );

        drop(hold);
        let redrawn = RECORDER.take();
        assert!(redrawn.contains("5/10 during"), "{redrawn:?}");
        bars.show(&other, &Progress::new(2.0, Some(2.0), None));
        let after = RECORDER.take();
        let last_frame = after.rsplit("<clear>").next().unwrap_or_default();
        assert!(last_frame.contains("index"), "{after:?}");
        assert!(
            !last_frame.contains("fetch"),
            "a finished bar is cleared: {after:?}"
        );
        drop(bars);
    }

    #[tokio::test]
    async fn a_calls_result_takes_its_bar_away() {
        let registry = ToolRegistry::new();
        let tool = dsh_tools::ToolDefinition::builder("index")
            .description("Index without knowing how much there is.")
            .execute(|_, ctx| async move {
                // A report that does not complete the job: without `follow` the bar would stay
                // on the screen until the run ends.
                ctx.progress(3.0, None, Some("a.rs"));
                Ok(serde_json::Value::Null)
            })
            .build()
            .unwrap();
        registry.register(tool).unwrap().keep();
        let bars = ProgressBars::new(Screen::stderr());
        let call = |id: &str| {
            dsh_tools::exec::ToolExecutionInput::new(id, "index", serde_json::json!({}))
                .with_progress(bars.observer())
        };
        let follow = bars.follow(&registry);
        assert!(!registry.execute(call("c1")).await.is_error());
        assert!(bars.bar("c1").is_none(), "the bar is gone with the call");
        follow.dispose();
        // Control: not followed, the bar stays.
        assert!(!registry.execute(call("c2")).await.is_error());
        assert!(bars.bar("c2").is_some_and(|bar| !bar.is_finished()));
    }
}
