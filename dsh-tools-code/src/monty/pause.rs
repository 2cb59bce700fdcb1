//! Pausing a program and continuing it later (a durable run's suspension): the interpreter's
//! dump plus what the driver knew — the tool calls the program still awaits, the failures it
//! raised, a partial `print` line and the logs so far — as one [`RunSnapshot`] state:
//!
//! ```text
//! state = u32-le(header length) ‖ header (JSON) ‖ Monty dump (postcard)
//! ```
//!
//! The host only ever hands back a state it authenticated (a sealed continuation): a corrupted
//! dump may bring the interpreter down.

use monty::{Dump, RunProgress, Session, SessionRef};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::program::SCRIPT_NAME;
use crate::runtime::RunSnapshot;

/// A tool call the paused program still awaits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Awaited {
    /// The interpreter's call id (its future).
    pub(crate) id: u32,
    /// The run's binding-call ordinal (its sub-call number).
    pub(crate) ordinal: usize,
    /// The namespace's index.
    pub(crate) namespace: usize,
    /// The tool (by name: the resuming host's tools may be listed in another order).
    pub(crate) function: String,
    pub(crate) args: Value,
}

/// What the driver knew when it paused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct DriverState {
    /// The calls still awaited, by ordinal.
    pub(crate) awaited: Vec<Awaited>,
    /// Binding calls made so far.
    pub(crate) calls: usize,
    /// The messages of the tool failures raised into the program.
    pub(crate) failures: Vec<String>,
    /// A `print` line not yet ended.
    pub(crate) partial: String,
    /// The captured output so far (filled by the host).
    pub(crate) logs: Vec<String>,
}

/// A paused program: the driver's state and the interpreter's.
pub(crate) struct Paused {
    pub(crate) driver: DriverState,
    pub(crate) dump: Vec<u8>,
}

impl std::fmt::Debug for Paused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Paused")
            .field("driver", &self.driver)
            .field("dump_bytes", &self.dump.len())
            .finish()
    }
}

impl Paused {
    /// Dumps `step` with the driver's state.
    pub(crate) fn new(driver: DriverState, step: &RunProgress) -> Result<Self, String> {
        let dump = monty::dump(SCRIPT_NAME, None, SessionRef::Running(step))
            .map_err(|e| format!("the paused program could not be serialised: {e}"))?;
        Ok(Self { driver, dump })
    }

    /// The snapshot the host keeps.
    pub(crate) fn into_snapshot(self) -> Result<RunSnapshot, String> {
        let header = serde_json::to_vec(&self.driver).map_err(|e| e.to_string())?;
        let length = u32::try_from(header.len()).map_err(|e| e.to_string())?;
        let mut state = Vec::with_capacity(4 + header.len() + self.dump.len());
        state.extend_from_slice(&length.to_le_bytes());
        state.extend_from_slice(&header);
        state.extend_from_slice(&self.dump);
        let awaiting = self.driver.awaited.iter().map(|a| a.ordinal).collect();
        Ok(RunSnapshot::new(state, awaiting, self.driver.calls))
    }

    /// Reads a snapshot's state back (an authenticated one).
    pub(crate) fn from_snapshot(snapshot: &RunSnapshot) -> Result<Self, String> {
        let state = &snapshot.state;
        let length = state
            .get(..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or("the paused state is truncated")?;
        let header = state
            .get(4..4 + length)
            .ok_or("the paused state is truncated")?;
        let driver: DriverState = serde_json::from_slice(header)
            .map_err(|e| format!("the paused state is unreadable: {e}"))?;
        Ok(Self {
            driver,
            dump: state[4 + length..].to_vec(),
        })
    }

    /// The interpreter where it paused.
    pub(crate) fn progress(&self) -> Result<RunProgress, String> {
        let dump = Dump::load(&self.dump)
            .map_err(|e| format!("the paused program could not be restored: {e}"))?;
        match dump.state {
            Session::Running(progress) => Ok(*progress),
            _ => Err("the paused program could not be restored: not a paused run".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_that_is_not_a_paused_run_is_refused_with_a_reason() {
        let truncated = RunSnapshot::new(vec![9, 0], Vec::new(), 0);
        let error = Paused::from_snapshot(&truncated).err().unwrap();
        assert_eq!(error, "the paused state is truncated");
        let header = serde_json::to_vec(&DriverState::default()).unwrap();
        let mut state = (header.len() as u32).to_le_bytes().to_vec();
        state.extend_from_slice(&header);
        state.extend_from_slice(b"not a dump");
        let paused = Paused::from_snapshot(&RunSnapshot::new(state, Vec::new(), 0)).unwrap();
        assert_eq!(paused.driver, DriverState::default());
        let error = paused.progress().err().unwrap();
        assert!(
            error.starts_with("the paused program could not be restored: "),
            "{error}"
        );
    }
}
