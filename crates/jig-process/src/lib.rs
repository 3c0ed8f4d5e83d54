//! Process trees on the host: what a process jig started and everything it started are, how to
//! end them all, and the watchdog that ends them when jig itself dies.
//!
//! jig runs three kinds of host processes: `bash` commands (`jig-env-local`'s `exec`),
//! extension processes and command hooks (`jig-extensions`). All three are tracked the same
//! way, with this crate:
//! - each is started in a **new session** with a unique **`JIG_EXEC_TAG`** in its environment,
//!   inherited by everything it starts, and jig marks itself **child subreaper** (Linux), so an
//!   orphan re-parents to jig instead of init;
//! - its processes are found by session, tag and ancestry in the process table ([`procfs`],
//!   [`Membership`]) and ended with SIGTERM, a grace period and SIGKILL ([`terminate`]); that
//!   reaches `setsid` and double-forked daemons too;
//! - one **watchdog** process per jig ([`set_watchdog_command`], [`run_watchdog`]) is told of
//!   every tree and SIGKILLs what is left of them when jig dies without cleaning up (SIGKILL, a
//!   crash).
//!
//! [`ProcessTree`] is one such process as a value: [`ProcessTree::spawn`] starts it,
//! [`ProcessTree::terminate`] ends the tree, dropping it SIGKILLs what is left.
//!
//! ```ignore
//! let mut command = tokio::process::Command::new("extension");
//! let (child, tree) = jig_process::ProcessTree::spawn(&mut command)?;
//! // … talk to `child` …
//! tree.terminate(Duration::from_millis(500)).await; // nothing it started is left
//! ```
//!
//! What is not covered: a process that left the session *and* cleared its environment is
//! found only while it still descends from the tree (and, for commands, as an untagged orphan;
//! see `jig-env-local`); a process re-parented to another subreaper; other systems than Linux,
//! where only the process group is signalled.
#![expect(
    clippy::disallowed_methods,
    reason = "host I/O: this crate reads the host's process table and starts the watchdog"
)]

pub mod procfs;
mod tree;
mod watchdog;

pub use procfs::{Membership, ProcInfo, TAG_VARIABLE};
pub use tree::{KILL_WAIT, ProcessTree, TERMINATE_POLL, new_tag, start_new_session, terminate};
pub use watchdog::{
    Watchdog, WatchdogCommand, run_watchdog, running_watchdog, set_watchdog_command,
    shared_watchdog,
};
