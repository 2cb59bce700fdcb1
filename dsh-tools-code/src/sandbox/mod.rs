//! What every sandbox backend shares, whatever its language (`docs/CONTRACTS.md`, "The runtime
//! seam"): the binding calls in flight polled on the sandbox thread ([`calls`]), the
//! outer-output ledger ([`ledger`]), the stop flag and ledger the sandbox thread and the host
//! side share ([`shared`]), the supervision of a run from the caller's side ([`supervise`]), and
//! the portable binding-name rules ([`names`]). QuickJS and Monty
//! build on it; neither names the other.

pub(crate) mod calls;
pub(crate) mod ledger;
pub(crate) mod names;
pub(crate) mod shared;
pub(crate) mod supervise;
