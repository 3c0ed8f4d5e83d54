//! Killing everything a started process started: [`terminate`] for any set of
//! [`Membership`]s, and [`ProcessTree`], one process started so that nothing it starts can
//! outlive it.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use crate::procfs::{self, Membership, TAG_VARIABLE};
use crate::watchdog::{running_watchdog, shared_watchdog};

/// How long to wait for processes to disappear after SIGKILL.
pub const KILL_WAIT: Duration = Duration::from_secs(1);

/// How often the process table is rescanned while processes are being terminated.
pub const TERMINATE_POLL: Duration = Duration::from_millis(20);

/// SIGTERM to every process of each membership, up to `grace` for them to exit, SIGKILL to the
/// rest (rescanning until none is left, at most [`KILL_WAIT`]), then reaps. `owned` is a pid
/// whose status tokio collects (never reaped here).
pub async fn terminate(memberships: &mut [Membership], grace: Duration, owned: Option<i32>) {
    if !grace.is_zero() {
        let kill_at = Instant::now() + grace;
        let mut any = signal_members(memberships, Some(Signal::TERM), owned).await;
        while any && Instant::now() < kill_at {
            tokio::time::sleep(TERMINATE_POLL).await;
            any = signal_members(memberships, Some(Signal::TERM), owned).await;
        }
        if !any {
            return;
        }
    }
    let give_up = Instant::now() + KILL_WAIT;
    loop {
        while signal_members(memberships, Some(Signal::KILL), owned).await
            && Instant::now() < give_up
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // A process caught mid-fork or mid-exec may not show its tag yet: look once more
        // after a moment, and go on killing if it appeared.
        tokio::time::sleep(Duration::from_millis(20)).await;
        if !signal_members(memberships, Some(Signal::KILL), owned).await
            || Instant::now() >= give_up
        {
            break;
        }
    }
    // One more pass to reap what died in the last interval.
    signal_members(memberships, None, owned).await;
}

/// One pass of [`terminate`]: scans the process table (on the blocking pool), reaps the
/// memberships' zombies (except `owned`), sends `signal` to the rest; true while any member is
/// alive.
async fn signal_members(
    memberships: &mut [Membership],
    signal: Option<Signal>,
    owned: Option<i32>,
) -> bool {
    let table = procfs::scan_async().await;
    let mut any = false;
    for membership in memberships.iter_mut() {
        let members = membership.members(&table);
        procfs::reap(&members, owned);
        if let Some(signal) = signal {
            procfs::signal_all(membership.session, &members, signal);
        }
        any |= procfs::live(&members).next().is_some();
    }
    any
}

/// A tag unique to this process and the tree it names.
pub fn new_tag() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    format!("{}-{nanos:x}-{n}", std::process::id())
}

/// Makes the child a session leader: no controlling terminal, and its own process group.
#[expect(
    unsafe_code,
    reason = "setsid must run in the child between fork and exec; std has no safe way to ask for it"
)]
pub fn start_new_session(command: &mut tokio::process::Command) {
    // SAFETY: the closure runs in the forked child before exec. It only calls setsid(2), which
    // is async-signal-safe, and converts the error code without allocating or taking locks.
    unsafe {
        command.pre_exec(|| rustix::process::setsid().map(drop).map_err(io::Error::from));
    }
}

/// One process started the way `bash` commands are, and everything it starts: found by its
/// session, by the `JIG_EXEC_TAG` its descendants inherit (jig is the child subreaper, so
/// orphans that left the session re-parent to jig) and by ancestry (see [`procfs`]), and listed
/// with the process's watchdog (see [`crate::set_watchdog_command`]) so that they die with jig
/// even when jig is killed.
///
/// [`terminate`](Self::terminate) ends the whole tree (a `setsid` and double-forked daemon
/// included); dropping the tree SIGKILLs what is left of it. Extension processes and command
/// hooks are started this way.
#[derive(Debug)]
pub struct ProcessTree {
    session: i32,
    /// `None` once the tree was terminated.
    membership: Mutex<Option<Membership>>,
}

impl ProcessTree {
    /// Starts `command` as the first process of a new tree: in a new session (no controlling
    /// terminal, its own process group), with a fresh `JIG_EXEC_TAG`, jig marked child
    /// subreaper, and the tree listed with the watchdog. The caller keeps the [`tokio::process::Child`]
    /// (its status is the caller's to collect).
    pub fn spawn(
        command: &mut tokio::process::Command,
    ) -> io::Result<(tokio::process::Child, Self)> {
        procfs::become_subreaper();
        // Started first, so the tree is listed as soon as it exists: what it starts at once is
        // covered if jig is killed right after.
        let watchdog = shared_watchdog();
        let tag = new_tag();
        command.env(TAG_VARIABLE, &tag);
        start_new_session(command);
        let child = command.spawn()?;
        let session = child.id().map_or(0, u32::cast_signed);
        if let (Some(watchdog), Some(start_time)) = (watchdog, procfs::start_time(session)) {
            watchdog.started(session, start_time, &tag);
        }
        let tree = Self {
            session,
            membership: Mutex::new(Some(Membership::new(session, tag))),
        };
        Ok((child, tree))
    }

    /// The first process's pid: the tree's session and process-group id.
    pub fn session(&self) -> i32 {
        self.session
    }

    /// SIGKILLs the first process's process group at once, without looking for the rest (no
    /// scan: cheap, for synchronous paths). [`terminate`](Self::terminate) or the drop finds the
    /// others.
    pub fn kill_group(&self) {
        if self.lock().is_some()
            && let Some(group) = Pid::from_raw(self.session)
        {
            let _ = rustix::process::kill_process_group(group, Signal::KILL);
        }
    }

    /// Ends every process of the tree: SIGTERM, up to `grace` for them to exit, then SIGKILL
    /// (rescanning, so processes forked meanwhile are caught), and reaps the orphans that
    /// re-parented to jig. The first process is signalled but not reaped (its `Child` is). The
    /// process table is read on the blocking pool. Once it returns, the tree is forgotten (by
    /// the watchdog too); if the future is dropped first, dropping the tree kills what is left.
    pub async fn terminate(&self, grace: Duration) {
        let Some(mut membership) = self.lock().clone() else {
            return;
        };
        terminate(
            std::slice::from_mut(&mut membership),
            grace,
            Some(self.session),
        )
        .await;
        if self.lock().take().is_some() {
            forget(self.session);
        }
    }

    /// SIGKILLs every process of the tree now, reading the process table on this thread (for
    /// paths that cannot wait, like a drop), and forgets the tree.
    pub fn kill_now(&self) {
        let Some(mut membership) = self.lock().take() else {
            return;
        };
        // A process may be forking while the table is read: its child was not seen, and
        // outlives a parent killed after the fork. Scan again until a pass finds nothing new.
        let mut killed: Vec<_> = Vec::new();
        for _ in 0..8 {
            let members = membership.members(&procfs::scan());
            let fresh: Vec<_> = members
                .into_iter()
                .filter(|info| {
                    !killed
                        .iter()
                        .any(|seen: &procfs::ProcInfo| seen.pid == info.pid)
                })
                .collect();
            if fresh.is_empty() {
                break;
            }
            procfs::signal_all(self.session, &fresh, Signal::KILL);
            killed.extend(fresh);
            std::thread::sleep(Duration::from_millis(5));
        }
        let orphans: Vec<_> = killed
            .into_iter()
            .filter(|info| info.pid != self.session)
            .collect();
        procfs::reap_blocking(&orphans, Duration::from_millis(200));
        forget(self.session);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Membership>> {
        self.membership
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for ProcessTree {
    // Nothing can be awaited in a drop, and the processes must be gone when it returns.
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Tells the watchdog (if one runs) that nothing of the tree in `session` runs any more.
fn forget(session: i32) {
    if let Some(watchdog) = running_watchdog() {
        watchdog.finished(session);
    }
}
