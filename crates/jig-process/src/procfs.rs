//! The host's process table, read from `/proc` (Linux), and the signals sent to what a command
//! started.
//!
//! A command's processes are found three ways, because each alone misses some:
//! - its **session**: the shell is started with `setsid`, so everything that did not call
//!   `setsid` itself shares the shell's session id (this survives re-parenting);
//! - **ancestry**: every process whose parent chain leads to one of the command's processes
//!   (catches a descendant that moved to a new session while its parent still runs);
//! - a **tag** in the environment (`JIG_EXEC_TAG`), checked on jig's own direct children: jig is
//!   a child subreaper, so an orphan that left the session re-parents to jig, and the tag it
//!   inherited says which command it came from.
//!
//! Processes seen once are remembered by `(pid, start time)` so a later scan still knows them
//! (the start time guards against pid reuse).
//!
//! The functions here are the building blocks; [`crate::ProcessTree`] puts them together for
//! one started process, and `jig-env-local`'s `exec` for a command.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions};

/// The environment variable that tags every process a command starts.
pub const TAG_VARIABLE: &str = jig_protocol::EnvVars::JIG_EXEC_TAG;

/// One row of the process table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcInfo {
    /// The process id.
    pub pid: i32,
    /// Its parent's id.
    pub ppid: i32,
    /// Its session id.
    pub session: i32,
    /// Whether it has exited and waits to be reaped.
    pub zombie: bool,
    /// Start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`).
    pub start_time: u64,
}

/// A process identity that survives pid reuse.
pub type ProcessKey = (i32, u64);

/// What identifies the processes of one command (or of one extension process, or one hook).
#[derive(Debug, Clone)]
pub struct Membership {
    /// The first process's pid, which is also its session and process-group id.
    pub session: i32,
    /// The value of [`TAG_VARIABLE`] the command was started with.
    tag: String,
    /// Processes seen in earlier scans.
    known: HashSet<ProcessKey>,
    /// The shell's start time: an orphan re-parented to jig that carries no tag at all (it
    /// cleared its environment) and started no earlier than this is taken as the command's.
    since: Option<u64>,
}

impl Membership {
    /// The processes of the session `session` (started with `setsid`) and those carrying
    /// `JIG_EXEC_TAG=<tag>`, with their descendants.
    pub fn new(session: i32, tag: String) -> Self {
        Self {
            session,
            tag,
            known: HashSet::new(),
            since: None,
        }
    }

    /// The same membership, also claiming untagged orphans started at or after the shell
    /// (`since`, its start time in clock ticks).
    #[must_use]
    pub fn claiming_untagged_orphans(mut self, since: Option<u64>) -> Self {
        self.since = since;
        self
    }

    /// The command's processes in the current process table (zombies included), remembering
    /// every live one for later scans. jig's own process is never a member.
    pub fn members(&mut self, table: &[ProcInfo]) -> Vec<ProcInfo> {
        let own_pid = std::process::id().cast_signed();
        let mut member: HashSet<i32> = HashSet::new();
        for info in table {
            if info.pid == own_pid {
                continue;
            }
            let adopted = info.ppid == own_pid && !info.zombie;
            let is_member = info.session == self.session
                || self.known.contains(&(info.pid, info.start_time))
                || (adopted && environ_has_tag(info.pid, &self.tag))
                || (adopted
                    && self.since.is_some_and(|since| info.start_time >= since)
                    && environ_has_no_tag(info.pid));
            if is_member {
                member.insert(info.pid);
            }
        }
        // Close under descendants: a child of a member is a member.
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for info in table {
            children.entry(info.ppid).or_default().push(info.pid);
        }
        let mut stack: Vec<i32> = member.iter().copied().collect();
        while let Some(pid) = stack.pop() {
            if let Some(kids) = children.get(&pid) {
                for &kid in kids {
                    if kid != own_pid && member.insert(kid) {
                        stack.push(kid);
                    }
                }
            }
        }
        let members: Vec<ProcInfo> = table
            .iter()
            .filter(|info| member.contains(&info.pid))
            .copied()
            .collect();
        for info in &members {
            if !info.zombie {
                self.known.insert((info.pid, info.start_time));
            }
        }
        members
    }
}

/// Runs `work` (reading `/proc`: a file per process for a full scan) on tokio's blocking pool,
/// so the runtime's threads keep serving other tasks meanwhile. A panic in `work` resumes here;
/// when the runtime is shutting down and no longer runs blocking work, `work` runs on this
/// thread instead, so the answer is the same either way.
pub async fn off_runtime<T, F>(work: F) -> T
where
    T: Send + 'static,
    F: Fn() -> T + Clone + Send + 'static,
{
    let fallback = work.clone();
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(error) => match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(_) => fallback(),
        },
    }
}

/// [`scan`] on the blocking pool (see [`off_runtime`]).
pub async fn scan_async() -> Vec<ProcInfo> {
    off_runtime(scan).await
}

/// Reads the whole process table. Unreadable entries (a process that just exited) are skipped.
#[cfg(target_os = "linux")]
pub fn scan() -> Vec<ProcInfo> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut table = Vec::new();
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(info) = read_stat(pid) {
            table.push(info);
        }
    }
    table
}

/// Without `/proc` only the process group can be signalled; the table is empty.
#[cfg(not(target_os = "linux"))]
pub fn scan() -> Vec<ProcInfo> {
    Vec::new()
}

#[cfg(target_os = "linux")]
fn read_stat(pid: i32) -> Option<ProcInfo> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) may contain spaces and parentheses,
/// so fields are counted from the last `)`.
pub fn parse_stat(pid: i32, text: &str) -> Option<ProcInfo> {
    let after_name = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_ascii_whitespace().collect();
    // fields[0] is field 3 (state); field n is fields[n - 3].
    let state = fields.first()?.as_bytes().first().copied()?;
    let parent = fields.get(1)?.parse().ok()?;
    let session = fields.get(3)?.parse().ok()?;
    let start_time = fields.get(19)?.parse().ok()?;
    Some(ProcInfo {
        pid,
        ppid: parent,
        session,
        zombie: state == b'Z' || state == b'X',
        start_time,
    })
}

/// Whether jig has any child process right now (`/proc/self/task/*/children`); `None` when the
/// kernel does not provide those files. Once a command's shell has exited, every process of the
/// command that is still running descends from one of jig's children (orphans re-parent to jig,
/// the subreaper), so "no children" means nothing survived and the full scan can be skipped.
#[cfg(target_os = "linux")]
pub fn has_children(except: Option<i32>) -> Option<bool> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    for task in tasks.flatten() {
        let children = std::fs::read_to_string(task.path().join("children")).ok()?;
        if children
            .split_ascii_whitespace()
            .any(|child| child.parse::<i32>().ok() != except)
        {
            return Some(true);
        }
    }
    Some(false)
}

#[cfg(not(target_os = "linux"))]
pub fn has_children(_except: Option<i32>) -> Option<bool> {
    None
}

/// Whether the process was started with `JIG_EXEC_TAG=<tag>` (its initial environment).
#[cfg(target_os = "linux")]
fn environ_has_tag(pid: i32, tag: &str) -> bool {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let wanted = format!("{TAG_VARIABLE}={tag}");
    environ
        .split(|&b| b == 0)
        .any(|entry| entry == wanted.as_bytes())
}

#[cfg(not(target_os = "linux"))]
fn environ_has_tag(_pid: i32, _tag: &str) -> bool {
    false
}

/// The value of [`TAG_VARIABLE`] in the process's initial environment, if it has one.
#[cfg(target_os = "linux")]
pub fn environ_tag(pid: i32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{TAG_VARIABLE}=");
    environ.split(|&b| b == 0).find_map(|entry| {
        entry
            .strip_prefix(prefix.as_bytes())
            .map(|tag| String::from_utf8_lossy(tag).into_owned())
    })
}

#[cfg(not(target_os = "linux"))]
pub fn environ_tag(_pid: i32) -> Option<String> {
    None
}

/// Whether the process's initial environment is readable and has no [`TAG_VARIABLE`] at all:
/// an orphan of jig that cleared its environment (`setsid env -i …`). Every process jig starts
/// itself carries a tag, so such an orphan can only come from a command.
#[cfg(target_os = "linux")]
fn environ_has_no_tag(pid: i32) -> bool {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let prefix = format!("{TAG_VARIABLE}=");
    !environ
        .split(|&b| b == 0)
        .any(|entry| entry.starts_with(prefix.as_bytes()))
}

#[cfg(not(target_os = "linux"))]
fn environ_has_no_tag(_pid: i32) -> bool {
    false
}

/// The start time of `pid` in clock ticks since boot, when it can be read.
pub fn start_time(pid: i32) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        read_stat(pid).map(|info| info.start_time)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// Sends `signal` to the command's process group and to every live member.
pub fn signal_all(session: i32, members: &[ProcInfo], signal: Signal) {
    if let Some(group) = Pid::from_raw(session) {
        // The group may already be empty; that is fine.
        let _ = rustix::process::kill_process_group(group, signal);
    }
    for info in members.iter().filter(|info| !info.zombie) {
        if let Some(pid) = Pid::from_raw(info.pid) {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }
}

/// Reaps members that are zombies and children of jig (orphans re-parented to jig as the child
/// subreaper), except `owned`: a child whose status another waiter (tokio) collects.
pub fn reap(members: &[ProcInfo], owned: Option<i32>) {
    let own_pid = std::process::id().cast_signed();
    for info in members {
        if info.zombie
            && info.ppid == own_pid
            && Some(info.pid) != owned
            && let Some(pid) = Pid::from_raw(info.pid)
        {
            let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
        }
    }
}

/// After SIGKILL: waits (up to `limit`, polling) for the members that are jig's children and
/// reaps them. For synchronous paths (`Drop`) where no runtime may be available.
pub fn reap_blocking(members: &[ProcInfo], limit: Duration) {
    let own_pid = std::process::id().cast_signed();
    let deadline = Instant::now() + limit;
    let mut pending: Vec<Pid> = members
        .iter()
        .filter(|info| info.ppid == own_pid)
        .filter_map(|info| Pid::from_raw(info.pid))
        .collect();
    while !pending.is_empty() {
        pending.retain(|&pid| {
            matches!(
                rustix::process::waitpid(Some(pid), WaitOptions::NOHANG),
                Ok(None)
            )
        });
        if pending.is_empty() || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Live (non-zombie) members.
pub fn live(members: &[ProcInfo]) -> impl Iterator<Item = &ProcInfo> {
    members.iter().filter(|info| !info.zombie)
}

/// Makes jig the child subreaper (Linux), once per process: orphans of the commands it runs then
/// re-parent to jig instead of init, so they stay visible and killable.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            if let Err(error) = rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
            {
                tracing::warn!(%error, "could not become child subreaper; escaped orphans of commands cannot be tracked");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_stat_handles_names_with_spaces_and_parentheses() {
        let text = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10";
        let info = parse_stat(4242, text).unwrap();
        assert_eq!(
            info,
            ProcInfo {
                pid: 4242,
                ppid: 1,
                session: 4242,
                zombie: false,
                start_time: 987_654
            }
        );
        let zombie = "7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0";
        assert!(parse_stat(7, zombie).unwrap().zombie);
        assert_eq!(parse_stat(7, "garbage"), None);
    }

    #[test]
    fn members_are_closed_under_descendants_and_remembered() {
        let own = std::process::id().cast_signed();
        let table = vec![
            ProcInfo {
                pid: 100,
                ppid: own,
                session: 100,
                zombie: false,
                start_time: 1,
            },
            ProcInfo {
                pid: 101,
                ppid: 100,
                session: 100,
                zombie: false,
                start_time: 2,
            },
            // moved to its own session, parent still a member
            ProcInfo {
                pid: 102,
                ppid: 101,
                session: 102,
                zombie: false,
                start_time: 3,
            },
            ProcInfo {
                pid: 103,
                ppid: 102,
                session: 102,
                zombie: false,
                start_time: 4,
            },
            // unrelated
            ProcInfo {
                pid: 200,
                ppid: 1,
                session: 200,
                zombie: false,
                start_time: 5,
            },
        ];
        let mut membership = Membership::new(100, "t".into());
        let mut pids: Vec<i32> = membership.members(&table).iter().map(|m| m.pid).collect();
        pids.sort_unstable();
        assert_eq!(pids, vec![100, 101, 102, 103]);
        // Later the ancestors are gone and 102 was re-parented elsewhere: still known.
        let later = vec![ProcInfo {
            pid: 102,
            ppid: 1,
            session: 102,
            zombie: false,
            start_time: 3,
        }];
        assert_eq!(membership.members(&later).len(), 1);
        // Same pid, different start time: a new process, not ours.
        let reused = vec![ProcInfo {
            pid: 102,
            ppid: 1,
            session: 102,
            zombie: false,
            start_time: 9,
        }];
        assert!(membership.members(&reused).is_empty());
    }
}
