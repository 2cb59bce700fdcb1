//! CPU time of the sandbox thread, for the compute budget.
//!
//! Busy wall time (time the thread spends running JavaScript rather than waiting for the host)
//! is an upper bound of the CPU time the program used: on a loaded machine the thread is
//! descheduled and busy wall time overstates it. The watch checks busy wall time on every
//! interrupt (cheap) and reads the thread's CPU clock (a system call) only once busy wall time
//! passes what is left of the budget, so a program on an idle machine never pays for it.

use std::time::Duration;

/// The calling thread's CPU time, where the platform measures it.
#[cfg(unix)]
pub(crate) fn thread_time() -> Option<Duration> {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let seconds = u64::try_from(now.tv_sec).ok()?;
    let nanos = u32::try_from(now.tv_nsec).ok()?;
    Some(Duration::new(seconds, nanos))
}

/// The calling thread's CPU time, where the platform measures it.
#[cfg(not(unix))]
pub(crate) fn thread_time() -> Option<Duration> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_time_advances_with_work_and_not_with_sleep() {
        let Some(start) = thread_time() else { return };
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_time().unwrap() - start;
        assert!(slept < Duration::from_millis(25), "{slept:?}");
        let mut x = 0u64;
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(thread_time().unwrap() > start);
    }
}
