//! `LocalEnv::exec`: running a process on the host so that it always ends, its output is
//! streamed in arrival order, and nothing it started outlives what the caller allows.
//!
//! # What happens
//! - The program runs in a **new session** (`setsid`, so it has no controlling terminal and is
//!   its own process-group leader) with **stdin at EOF** (`/dev/null`). stdout and stderr are
//!   the **same pipe**, so the sink sees them merged in true arrival order.
//! - Every process it starts inherits `JIG_EXEC_TAG=<unique tag>`, and on Linux jig marks itself
//!   **child subreaper** (`PR_SET_CHILD_SUBREAPER`), so an orphan re-parents to jig instead of
//!   init. See [`jig_process::procfs`] for how a command's processes are found.
//! - **Timeout or cancellation**: SIGTERM to the process group and to every process of the
//!   command, `kill_grace`, then SIGKILL to whatever is left (rescanned, so processes forked in
//!   the meantime are caught); then jig waits until none is left (at most 1 s more) and reaps
//!   the orphans re-parented to it.
//! - **Normal end**: when the shell has exited, output is read until the pipe reaches EOF, or
//!   until no byte arrived for `idle_grace`, or at most [`DRAIN_LIMIT`] after the exit (a
//!   daemonised grandchild may hold the pipe open forever). Processes still running then were
//!   left in the background on purpose (`server &`, `nohup`): they keep running, the pipe keeps
//!   being drained (so they never die of SIGPIPE), and they are tracked until the env's
//!   [`cleanup`](jig_env::ExecutionEnv::cleanup), which kills them the same way (TERM, grace,
//!   KILL). Dropping the env without cleanup SIGKILLs them.
//! - A process killed by signal `n` reports exit code `128 + n` and `signal: Some(n)`.
//! - Dropping the `exec` future before it returns SIGKILLs the command's processes.
//! - Scans of the process table (`/proc`, a file per process) run on tokio's blocking pool, never
//!   on the runtime's threads; only the two last-resort `Drop` paths (the future or the env
//!   dropped) scan on the dropping thread, because a drop cannot wait.
//!
//! # What is guaranteed, and what is not
//! On **Linux**, after a timeout or abort no process of the command is left running if every
//! process either (a) stayed in the shell's session, (b) had a parent among the command's
//! processes when a scan ran, (c) was orphaned to jig still carrying its `JIG_EXEC_TAG`, or
//! (d) was orphaned to jig with no `JIG_EXEC_TAG` at all (it cleared its environment) and
//! started after the command's shell. That covers background jobs, processes ignoring SIGTERM,
//! `setsid`/`nohup`/double-fork daemons, and `( setsid env -i … & )`. Rule (d) cannot tell
//! two commands running at once apart: stopping one also stops an environment-clearing orphan
//! the other started after it. Not covered: a process re-parented to another subreaper (e.g. a
//! nested container runtime or `systemd-run`); processes in uninterruptible sleep (they die
//! once it ends). If jig itself dies without cleaning up (SIGKILL, a crash), the host's
//! watchdog (see [`jig_process::run_watchdog`], `LocalEnv::with_watchdog`; one per jig process,
//! shared with extension processes and hooks) kills what is left, except a
//! process that left the session and cleared its environment. Reaping: zombies of the command's orphans are reaped; an orphan of some other jig
//! child process that re-parents to jig stays a zombie until jig exits.
//!
//! On **other Unix systems** only the process group is signalled: a process that left the
//! group (`setsid`) is not found.

mod signals;

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jig_env::{EnvError, EnvResult, ErrorKind, ExecOutcome, ExecRequest, ExecSink};
use jig_process::procfs;
use jig_process::{
    KILL_WAIT, Membership, TAG_VARIABLE, TERMINATE_POLL, Watchdog, WatchdogCommand, new_tag,
    start_new_session, terminate,
};
use rustix::process::Signal;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::task::JoinHandle;

/// After the shell exits, output is read for at most this long (a background process that keeps
/// printing would otherwise hold the call open forever).
pub(crate) const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// Read buffer for the output pipe; large reads keep a 500 MB flood cheap.
const READ_BUFFER: usize = 256 * 1024;

/// Requested capacity of the output pipe (Linux; the default is 64 KiB).
#[cfg(target_os = "linux")]
const PIPE_CAPACITY: usize = 1024 * 1024;

/// Grace between SIGTERM and SIGKILL when the env is cleaned up.
const CLEANUP_GRACE: Duration = Duration::from_secs(2);

/// Runs `request` on the host; see the module docs.
pub(crate) async fn exec(
    env: &crate::LocalEnv,
    request: ExecRequest,
    sink: &mut dyn ExecSink,
) -> EnvResult<ExecOutcome> {
    env.processes.run(request, sink).await
}

/// The processes commands left running in the background, per env; killed by
/// [`ProcessTracker::kill_all`] (env cleanup) or, as a last resort, when dropped.
#[derive(Debug, Default)]
pub(crate) struct ProcessTracker {
    background: Mutex<Vec<Background>>,
    /// Whether the commands are listed with the process's watchdog (started with the first).
    watched: bool,
    /// The sandbox mechanism for this env's commands; `None`: the process's
    /// ([`crate::sandbox::mechanism`]).
    mechanism: Option<crate::sandbox::Mechanism>,
}

/// One finished command that left processes running.
#[derive(Debug)]
struct Background {
    membership: Membership,
    /// Keeps reading (and discarding) the output pipe so background writers never get SIGPIPE.
    drain: Option<JoinHandle<()>>,
    /// When the record was added: a process-table scan begun before then may not show its
    /// processes yet, so [`ProcessTracker::prune`] leaves it alone.
    tracked_at: Instant,
}

impl ProcessTracker {
    /// A tracker with nothing tracked.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Lists the commands with the process's watchdog, `command` unless one was named before
    /// (see [`jig_process::set_watchdog_command`]); it starts with the first command.
    pub(crate) fn set_watchdog(&mut self, command: WatchdogCommand) {
        jig_process::set_watchdog_command(command);
        self.watched = true;
    }

    /// Enforces sandbox policies with `mechanism` instead of the process's.
    pub(crate) fn set_mechanism(&mut self, mechanism: crate::sandbox::Mechanism) {
        self.mechanism = Some(mechanism);
    }

    /// The watchdog, started on first use; `None` without one.
    fn watchdog(&self) -> Option<&'static Watchdog> {
        if self.watched {
            jig_process::shared_watchdog()
        } else {
            None
        }
    }

    /// Tells the watchdog that nothing of the command in `session` runs any more.
    fn forget(&self, session: i32) {
        if let Some(watchdog) = jig_process::running_watchdog().filter(|_| self.watched) {
            watchdog.finished(session);
        }
    }

    /// How many finished commands still have processes running (for tests and logs).
    #[cfg_attr(not(test), expect(dead_code, reason = "used by tests and diagnostics"))]
    pub(crate) fn background_count(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Background>> {
        self.background
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Kills every tracked background process: SIGTERM, a grace period, SIGKILL; then reaps.
    /// Best effort; never fails.
    pub(crate) async fn kill_all(&self) {
        let mut records: Vec<Background> = std::mem::take(&mut *self.lock());
        if records.is_empty() {
            return;
        }
        for record in &mut records {
            if let Some(drain) = record.drain.take() {
                drain.abort();
            }
        }
        let mut memberships: Vec<Membership> = records
            .into_iter()
            .map(|record| record.membership)
            .collect();
        terminate(&mut memberships, CLEANUP_GRACE, None).await;
        for membership in &memberships {
            self.forget(membership.session);
        }
    }

    /// Reaps zombies of finished background processes and forgets records with nothing left.
    async fn prune(&self) {
        if self.lock().is_empty() {
            return;
        }
        let scanned_at = Instant::now();
        let table = procfs::scan_async().await;
        let mut records = self.lock();
        records.retain_mut(|record| {
            if record.tracked_at >= scanned_at {
                return true;
            }
            let members = record.membership.members(&table);
            procfs::reap(&members, None);
            let alive = procfs::live(&members).next().is_some();
            if !alive {
                if let Some(drain) = record.drain.take() {
                    drain.abort();
                }
                self.forget(record.membership.session);
            }
            alive
        });
    }

    /// Runs one command (the body of `LocalEnv::exec`).
    #[expect(
        clippy::too_many_lines,
        reason = "spawn, the select loop and the wrap-up read best in one place"
    )]
    pub(crate) async fn run(
        &self,
        request: ExecRequest,
        sink: &mut dyn ExecSink,
    ) -> EnvResult<ExecOutcome> {
        if request.cancel.is_cancelled() {
            return Err(EnvError::aborted("exec"));
        }
        check_cwd(&request).await?;
        procfs::become_subreaper();
        self.prune().await;

        // Started before the command, so the command is listed as soon as it exists.
        let watchdog = self.watchdog();
        let tag = new_tag();
        let (reader, writer) = std::io::pipe()
            .map_err(|error| spawn_error(&request, "create the output pipe", &error))?;
        #[cfg(target_os = "linux")]
        {
            // A bigger pipe means fewer wake-ups under a flood; the default still works.
            let _ = rustix::pipe::fcntl_setpipe_size(&reader, PIPE_CAPACITY);
        }
        let writer_for_stderr = writer
            .try_clone()
            .map_err(|error| spawn_error(&request, "create the output pipe", &error))?;

        // Kept until the command has ended: it owns the sandbox's private temporary directory.
        let mut sandboxed = None;
        let mut command = if request.sandbox.is_on() {
            let mut prepared = crate::sandbox::prepare(
                self.mechanism
                    .as_ref()
                    .unwrap_or_else(|| crate::sandbox::mechanism()),
                &request.sandbox,
                &request.program,
                &request.args,
                &request.cwd,
            )
            .map_err(|error| EnvError::new(ErrorKind::Unsupported, "exec", error.to_string()))?;
            let mut command = tokio::process::Command::new(&prepared.program);
            command.args(&prepared.args);
            #[cfg(target_os = "linux")]
            if let Some(confinement) = prepared.confinement.take() {
                confinement.install(&mut command);
            }
            sandboxed = Some(prepared);
            command
        } else {
            let mut command = tokio::process::Command::new(&request.program);
            command.args(&request.args);
            command
        };
        command
            .current_dir(&request.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::from(writer))
            .stderr(Stdio::from(writer_for_stderr))
            .kill_on_drop(true);
        for name in &request.env_remove {
            command.env_remove(name);
        }
        command.envs(&request.env).env(TAG_VARIABLE, &tag);
        if let Some(prepared) = &sandboxed {
            command.envs(prepared.env.iter().cloned());
        }
        start_new_session(&mut command);

        let started = Instant::now();
        let spawned = command.spawn();
        // The command holds our copies of the pipe's write end: drop them so EOF can arrive.
        drop(command);
        let mut child = spawned.map_err(|error| {
            let kind = ErrorKind::from_io(&error);
            let message = match kind {
                ErrorKind::NotFound => format!("program not found: {}", request.program),
                ErrorKind::PermissionDenied => {
                    format!("permission denied running {}", request.program)
                }
                _ => format!("could not start {}: {error}", request.program),
            };
            EnvError::new(kind, "exec", message).with_path(&request.program)
        })?;
        let session = child.id().map_or(0, u32::cast_signed);
        let shell_started = procfs::start_time(session);
        if let (Some(watchdog), Some(start_time)) = (watchdog, shell_started) {
            watchdog.started(session, start_time, &tag);
        }
        let mut guard = KillOnDrop {
            membership: Some(
                Membership::new(session, tag).claiming_untagged_orphans(shell_started),
            ),
        };

        let reader = pipe::Receiver::from_owned_fd(OwnedFd::from(reader))
            .map_err(|error| spawn_error(&request, "watch the output pipe", &error))?;
        let mut state = RunState::new(started, &request);
        let mut reader = Some(reader);
        let mut buffer = vec![0_u8; READ_BUFFER];

        loop {
            if state.finished(reader.is_none()) {
                break;
            }
            let idle_deadline = state.idle_deadline(&request);
            tokio::select! {
                // Timers first: under a flood the pipe is always readable and must not starve
                // the timeout, the abort or the termination.
                biased;
                () = request.cancel.cancelled(), if state.phase == Phase::Running => {
                    state.aborted = true;
                    state.begin_terminate(guard.membership_mut(), request.kill_grace).await;
                }
                () = sleep_until(state.deadline), if state.phase == Phase::Running && state.deadline.is_some() => {
                    state.timed_out = true;
                    state.begin_terminate(guard.membership_mut(), request.kill_grace).await;
                }
                () = sleep_until(state.next_poll), if state.next_poll.is_some() => {
                    state.poll_terminate(guard.membership_mut()).await;
                }
                () = sleep_until(idle_deadline), if idle_deadline.is_some() => {
                    // The shell is gone and output went quiet (or the drain limit passed).
                    break;
                }
                status = child.wait(), if state.status.is_none() => {
                    let status = status.map_err(|error| EnvError::new(
                        ErrorKind::from_io(&error), "exec", format!("could not wait for the process: {error}")))?;
                    state.status = Some(status);
                    state.exited_at = Some(Instant::now());
                }
                read = read_some(reader.as_mut(), &mut buffer) => match read {
                    Some(n) => {
                        state.last_output = Instant::now();
                        sink.output(&buffer[..n]).await;
                    }
                    None => reader = None,
                },
            }
        }

        let status = match state.status {
            Some(status) => status,
            None => child.wait().await.map_err(|error| {
                EnvError::new(
                    ErrorKind::from_io(&error),
                    "exec",
                    format!("could not wait for the process: {error}"),
                )
            })?,
        };
        let duration = started.elapsed();
        let killed = state.phase != Phase::Running;
        let mut membership = guard.disarm();
        if killed {
            // Make sure nothing survived (forks during the grace period included) and reap.
            terminate(
                std::slice::from_mut(&mut membership),
                Duration::ZERO,
                Some(session),
            )
            .await;
            self.forget(session);
        } else if cfg!(target_os = "linux")
            && procfs::off_runtime({
                let watchdog = self.watchdog().and_then(Watchdog::pid);
                move || procfs::has_children(watchdog)
            })
            .await
                == Some(false)
        {
            self.forget(session);
            // The shell is reaped and jig has no child: nothing of the command is running
            // (see `procfs::has_children`). Keep draining a pipe someone may still hold.
            if let Some(reader) = reader {
                tokio::spawn(drain_pipe(reader));
            }
        } else {
            let table = procfs::scan_async().await;
            let members = membership.members(&table);
            procfs::reap(&members, Some(session));
            let survivors = procfs::live(&members).any(|info| info.pid != session);
            if survivors {
                let drain = reader.map(|reader| tokio::spawn(drain_pipe(reader)));
                self.lock().push(Background {
                    membership,
                    drain,
                    tracked_at: Instant::now(),
                });
            } else {
                self.forget(session);
                if let Some(reader) = reader {
                    // Nothing of ours is alive, yet the pipe is open: a writer we cannot see
                    // (for example one that escaped tracking). Keep draining so it never blocks.
                    tokio::spawn(drain_pipe(reader));
                }
            }
        }

        let (exit_code, signal) = exit_code(status);
        Ok(ExecOutcome {
            exit_code,
            signal,
            signal_name: signal.map(signals::signal_name),
            timed_out: state.timed_out,
            aborted: state.aborted,
            duration,
        })
    }
}

impl Drop for ProcessTracker {
    // A drop cannot wait for the blocking pool, and the kill must be done when it returns (the
    // runtime may be gone by then): this last-resort path scans on the dropping thread.
    fn drop(&mut self) {
        let records = std::mem::take(&mut *self.lock());
        if records.is_empty() {
            return;
        }
        let table = procfs::scan();
        for mut record in records {
            if let Some(drain) = record.drain.take() {
                drain.abort();
            }
            let members = record.membership.members(&table);
            procfs::signal_all(record.membership.session, &members, Signal::KILL);
            procfs::reap_blocking(&members, Duration::from_millis(200));
        }
    }
}

/// Where one `run` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    /// SIGTERM was sent; SIGKILL follows at `kill_at`.
    Terminating {
        kill_at: Instant,
    },
    /// SIGKILL was sent.
    Killed,
}

#[derive(Debug)]
struct RunState {
    phase: Phase,
    status: Option<ExitStatus>,
    exited_at: Option<Instant>,
    last_output: Instant,
    deadline: Option<Instant>,
    timed_out: bool,
    aborted: bool,
    /// After SIGKILL: when to stop waiting for the pipe.
    killed_at: Option<Instant>,
    /// While terminating: when to rescan the process table next.
    next_poll: Option<Instant>,
}

impl RunState {
    fn new(started: Instant, request: &ExecRequest) -> Self {
        Self {
            phase: Phase::Running,
            status: None,
            exited_at: None,
            last_output: started,
            deadline: request.timeout.map(|timeout| started + timeout),
            timed_out: false,
            aborted: false,
            killed_at: None,
            next_poll: None,
        }
    }

    /// Done when the shell has exited, the pipe is closed and no termination is in progress.
    fn finished(&self, pipe_closed: bool) -> bool {
        self.status.is_some() && pipe_closed && !matches!(self.phase, Phase::Terminating { .. })
    }

    /// When to stop reading after the shell exited; `None` while it runs or while processes are
    /// being terminated (the kill must complete first).
    fn idle_deadline(&self, request: &ExecRequest) -> Option<Instant> {
        let exited_at = self.exited_at?;
        match self.phase {
            Phase::Running => {
                let quiet = self.last_output.max(exited_at) + request.idle_grace;
                Some(quiet.min(exited_at + DRAIN_LIMIT))
            }
            Phase::Terminating { .. } => None,
            Phase::Killed => {
                let killed_at = self.killed_at.unwrap_or(exited_at);
                Some(
                    (self.last_output.max(killed_at) + request.idle_grace)
                        .min(killed_at + KILL_WAIT),
                )
            }
        }
    }

    async fn begin_terminate(&mut self, membership: &mut Membership, grace: Duration) {
        let members = membership.members(&procfs::scan_async().await);
        procfs::signal_all(membership.session, &members, Signal::TERM);
        self.phase = Phase::Terminating {
            kill_at: Instant::now() + grace,
        };
        self.next_poll = Some(Instant::now() + TERMINATE_POLL);
        if grace.is_zero() {
            self.poll_terminate(membership).await;
        }
    }

    /// Rescans: signals processes forked since, and escalates to SIGKILL when the grace is over.
    /// Moves on early once nothing is left.
    async fn poll_terminate(&mut self, membership: &mut Membership) {
        let Phase::Terminating { kill_at } = self.phase else {
            return;
        };
        let members = membership.members(&procfs::scan_async().await);
        let shell_exited = self.status.is_some();
        let any_alive = procfs::live(&members).next().is_some();
        if Instant::now() >= kill_at {
            procfs::signal_all(membership.session, &members, Signal::KILL);
            self.phase = Phase::Killed;
            self.killed_at = Some(Instant::now());
            self.next_poll = None;
        } else if !any_alive && shell_exited {
            self.phase = Phase::Killed;
            self.killed_at = Some(Instant::now());
            self.next_poll = None;
        } else {
            // New processes forked during the grace period get SIGTERM too.
            procfs::signal_all(membership.session, &members, Signal::TERM);
            self.next_poll = Some(Instant::now() + TERMINATE_POLL);
        }
    }
}

/// SIGKILLs the command's processes if `run` is dropped before it finishes.
#[derive(Debug)]
struct KillOnDrop {
    membership: Option<Membership>,
}

impl KillOnDrop {
    fn membership_mut(&mut self) -> &mut Membership {
        self.membership
            .get_or_insert_with(|| Membership::new(0, String::new()))
    }

    fn disarm(&mut self) -> Membership {
        self.membership
            .take()
            .unwrap_or_else(|| Membership::new(0, String::new()))
    }
}

impl Drop for KillOnDrop {
    // The `exec` future is being dropped: nothing can be awaited any more, and the processes
    // must be gone when the drop returns, so this scan runs on the dropping thread.
    fn drop(&mut self) {
        if let Some(mut membership) = self.membership.take() {
            let members = membership.members(&procfs::scan());
            procfs::signal_all(membership.session, &members, Signal::KILL);
        }
    }
}

/// Reads into `buffer`; `None` at EOF or on a read error, pends forever without a reader.
async fn read_some(reader: Option<&mut pipe::Receiver>, buffer: &mut [u8]) -> Option<usize> {
    match reader {
        Some(reader) => match reader.read(buffer).await {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

/// Reads and discards what background processes still write, until EOF.
async fn drain_pipe(mut reader: pipe::Receiver) {
    let mut buffer = vec![0_u8; 64 * 1024];
    while let Ok(n) = reader.read(&mut buffer).await {
        if n == 0 {
            break;
        }
    }
}

/// Exit code and terminating signal: `128 + n` for a process killed by signal `n`.
fn exit_code(status: ExitStatus) -> (i32, Option<i32>) {
    match (status.code(), status.signal()) {
        (Some(code), _) => (code, None),
        (None, Some(signal)) => (128 + signal, Some(signal)),
        (None, None) => (1, None),
    }
}

async fn check_cwd(request: &ExecRequest) -> EnvResult<()> {
    match tokio::fs::metadata(&request.cwd).await {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(EnvError::new(
            ErrorKind::NotADirectory,
            "exec",
            "working directory is not a directory",
        )
        .with_path(&request.cwd)),
        Err(error) => {
            let kind = ErrorKind::from_io(&error);
            let message = if kind == ErrorKind::NotFound {
                "working directory does not exist".to_owned()
            } else {
                format!("working directory is not usable: {error}")
            };
            Err(EnvError::new(kind, "exec", message).with_path(&request.cwd))
        }
    }
}

fn spawn_error(request: &ExecRequest, what: &str, error: &std::io::Error) -> EnvError {
    EnvError::new(
        ErrorKind::from_io(error),
        "exec",
        format!("could not {what}: {error}"),
    )
    .with_path(&request.program)
}

#[cfg(test)]
mod tests;
