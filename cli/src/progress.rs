//! Tool progress as progress bars on stderr (`docs/CONTRACTS.md`, "Progress"), for `call` and
//! `run` when stderr is a terminal.

use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use dsh_tools::exec::{Progress, ProgressObserver, ToolExecution};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// One bar per running call, drawn on a target; cleared when dropped.
#[derive(Clone)]
pub(crate) struct ProgressBars {
    target: Arc<dyn Fn() -> ProgressDrawTarget + Send + Sync>,
    bars: Arc<Mutex<HashMap<String, ProgressBar>>>,
}

impl ProgressBars {
    /// Bars on stderr, when stderr is a terminal.
    pub(crate) fn on_terminal() -> Option<Self> {
        std::io::stderr()
            .is_terminal()
            .then(|| Self::new(ProgressDrawTarget::stderr))
    }

    fn new(target: impl Fn() -> ProgressDrawTarget + Send + Sync + 'static) -> Self {
        Self {
            target: Arc::new(target),
            bars: Arc::default(),
        }
    }

    /// The observer to put on the command's call (rate-limited to 20 updates a second).
    pub(crate) fn observer(&self) -> ProgressObserver {
        let bars = self.clone();
        ProgressObserver::new(move |exec, progress| bars.show(exec, progress))
            .throttled(Duration::from_millis(50))
    }

    fn show(&self, exec: &ToolExecution, progress: &Progress) {
        let mut bars = self.bars.lock().unwrap_or_else(PoisonError::into_inner);
        let bar = bars
            .entry(exec.call_id.to_string())
            .or_insert_with(|| {
                let bar = ProgressBar::with_draw_target(None, (self.target)());
                let style = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ");
                bar.set_style(style);
                bar.set_prefix(exec.name.to_string());
                bar
            })
            .clone();
        drop(bars);
        if let Some(total) = progress.total {
            bar.set_length(total.max(0.0) as u64);
        }
        bar.set_position(progress.done.max(0.0) as u64);
        bar.set_message(progress.message.clone().unwrap_or_default());
        if progress.is_complete() {
            bar.finish_and_clear();
        }
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
            for bar in self
                .bars
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .values()
            {
                bar.finish_and_clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_move_the_calls_bar_and_completion_finishes_it() {
        let bars = ProgressBars::new(ProgressDrawTarget::hidden);
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
}
