//! Child-process plumbing for `bash`: a process group that dies with the call, and the capped
//! capture of an output stream.

use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

/// The most bytes kept of each stream; the middle of longer output is dropped.
const CAPTURE_LIMIT: usize = 64 * 1024;

/// The process group the shell leads. Killing it is idempotent, and dropping it kills it (the
/// call's future was dropped before the command finished).
pub(super) struct ProcessGroup {
    id: Option<u32>,
    killed: AtomicBool,
}

/// Signals a whole group through the shell's `kill` builtin: the standard library can only signal
/// one process, and the workspace forbids the `unsafe` a direct `kill(2)` would need.
const KILL_GROUP: &str = r#"kill -s KILL -- "-$1" 2>/dev/null"#;

impl ProcessGroup {
    pub(super) fn of(child: &Child) -> Self {
        Self {
            id: child.id().filter(|_| cfg!(unix)),
            killed: AtomicBool::new(false),
        }
    }

    /// The id to kill, the first time only.
    fn take(&self) -> Option<String> {
        let id = self.id?;
        (!self.killed.swap(true, Ordering::SeqCst)).then(|| id.to_string())
    }

    pub(super) async fn kill(&self) {
        if let Some(id) = self.take() {
            let _ = Command::from(kill_group(&id)).status().await;
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if let Some(id) = self.take() {
            let _ = kill_group(&id).status();
        }
    }
}

/// `sh -c 'kill …' sh <id>`, silent.
fn kill_group(id: &str) -> std::process::Command {
    let mut command = std::process::Command::new("sh");
    command
        .args(["-c", KILL_GROUP, "sh", id])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// One output stream: its first and last halves of [`CAPTURE_LIMIT`], and its full length.
#[derive(Default)]
pub(super) struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
}

impl Capture {
    const HALF: usize = CAPTURE_LIMIT / 2;

    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = Self::HALF.saturating_sub(self.head.len()).min(bytes.len());
        let (head, tail) = bytes.split_at(room);
        self.head.extend_from_slice(head);
        self.tail.extend_from_slice(tail);
        if self.tail.len() > 2 * Self::HALF {
            self.tail.drain(..self.tail.len() - Self::HALF);
        }
    }

    pub(super) fn finish(mut self) -> String {
        if self.total <= CAPTURE_LIMIT as u64 {
            self.head.append(&mut self.tail);
            return String::from_utf8_lossy(&self.head).into_owned();
        }
        let tail = &self.tail[self.tail.len() - Self::HALF..];
        let cut = self.total - (self.head.len() + tail.len()) as u64;
        format!(
            "{}\n[… {cut} bytes truncated]\n{}",
            String::from_utf8_lossy(&self.head),
            String::from_utf8_lossy(tail)
        )
    }
}

/// Reads a whole stream (an absent one is empty), keeping what [`Capture`] keeps.
pub(super) async fn capture(stream: Option<impl AsyncRead + Unpin>) -> Capture {
    let mut capture = Capture::default();
    let Some(mut stream) = stream else {
        return capture;
    };
    let mut buffer = vec![0; 16 * 1024];
    while let Ok(read @ 1..) = stream.read(&mut buffer).await {
        capture.push(&buffer[..read]);
    }
    capture
}

#[cfg(unix)]
pub(super) fn signal_of(status: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
pub(super) fn signal_of(_status: ExitStatus) -> Option<i32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(chunks: &[&[u8]]) -> String {
        let mut capture = Capture::default();
        for chunk in chunks {
            capture.push(chunk);
        }
        capture.finish()
    }

    #[test]
    fn output_within_the_limit_is_kept_whole() {
        let exact = vec![b'a'; CAPTURE_LIMIT];
        assert_eq!(captured(&[&exact[..10], &exact[10..]]).len(), CAPTURE_LIMIT);
        assert_eq!(captured(&[b"hi ", "é".as_bytes()]), "hi é");
    }

    #[test]
    fn longer_output_keeps_its_head_and_tail() {
        let mut data = vec![b'h'; Capture::HALF];
        data.extend(vec![b'm'; 1000]);
        data.extend(vec![b't'; Capture::HALF]);
        let chunks: Vec<&[u8]> = data.chunks(7000).collect();
        let text = captured(&chunks);
        let (head, rest) = text.split_once("\n[… 1000 bytes truncated]\n").unwrap();
        assert_eq!(head, "h".repeat(Capture::HALF));
        assert_eq!(rest, "t".repeat(Capture::HALF));
    }
}
