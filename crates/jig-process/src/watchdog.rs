//! A watchdog process that kills the commands' processes when jig dies without cleaning up
//! (SIGKILL, a crash, an out-of-memory kill).
//!
//! jig's own cleanup (timeout, cancel, an env's `cleanup`, an extension's shutdown, signals)
//! needs jig to be alive. For the rest, the host names a program that runs [`run_watchdog`]
//! (the host binary with a hidden argument) with [`set_watchdog_command`]. One watchdog serves
//! the whole jig process (commands, extension processes, hooks): it is started with the first
//! process it must watch ([`shared_watchdog`]), in its own process group (so a Ctrl-C in the terminal does not reach it), with a
//! pipe as its stdin whose write end only jig holds. jig writes one line per command —
//! `C <session> <start time> <tag>` — and `D <session>` once nothing of it runs any more.
//! When jig is gone, for whatever reason, the pipe reaches end of file and the watchdog
//! SIGKILLs every process of the commands still listed: those in a listed session that started
//! no earlier than its shell, and those carrying a listed tag (which finds the ones that left
//! the session). Then it exits. A process that left the session *and* cleared its environment
//! after jig died is not found.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, Write as _};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use rustix::process::{Pid, Signal};

use crate::procfs::{self, TAG_VARIABLE};

/// How the host starts its watchdog: a program and arguments that make it call
/// [`run_watchdog`] and nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchdogCommand {
    /// The program, usually the host's own executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
}

/// The program that runs this process's watchdog, once named.
static COMMAND: OnceLock<WatchdogCommand> = OnceLock::new();
/// This process's watchdog, once started (`None`: it could not be started).
static SHARED: OnceLock<Option<Watchdog>> = OnceLock::new();

/// Names the program that runs this process's watchdog; the first call wins. Without it,
/// nothing is watched: what jig started survives jig being killed (SIGKILL, a crash).
pub fn set_watchdog_command(command: WatchdogCommand) {
    let _ = COMMAND.set(command);
}

/// This process's watchdog, started on first use; `None` when no command was named (see
/// [`set_watchdog_command`]) or it could not be started (a warning said so).
pub fn shared_watchdog() -> Option<&'static Watchdog> {
    let command = COMMAND.get()?;
    SHARED.get_or_init(|| Watchdog::start(command)).as_ref()
}

/// This process's watchdog if it was started, without starting it.
pub fn running_watchdog() -> Option<&'static Watchdog> {
    SHARED.get().and_then(Option::as_ref)
}

/// The running watchdog, as seen from jig.
#[derive(Debug)]
pub struct Watchdog {
    state: Mutex<Option<Running>>,
}

#[derive(Debug)]
struct Running {
    child: Child,
    stdin: ChildStdin,
}

impl Watchdog {
    /// Starts `command`; `None` (with a warning) when it cannot be started.
    pub(crate) fn start(command: &WatchdogCommand) -> Option<Self> {
        use std::os::unix::process::CommandExt as _;
        let spawned = Command::new(&command.program)
            .args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .current_dir("/")
            // A tag no command has: the watchdog is never taken for a command's orphan.
            .env(TAG_VARIABLE, "watchdog")
            .process_group(0)
            .spawn();
        match spawned {
            Ok(mut child) => {
                let stdin = child.stdin.take()?;
                Some(Self {
                    state: Mutex::new(Some(Running { child, stdin })),
                })
            }
            Err(error) => {
                tracing::warn!(%error, program = %command.program.display(),
                    "could not start the watchdog; if jig is killed, its commands keep running");
                None
            }
        }
    }

    /// The watchdog's pid while it runs.
    pub fn pid(&self) -> Option<i32> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state
            .as_ref()
            .map(|running| running.child.id().cast_signed())
    }

    /// A process tree started: its first process's pid (= session), that process's start time
    /// and the tree's tag.
    pub fn started(&self, session: i32, start_time: u64, tag: &str) {
        self.send(&format!("C {session} {start_time} {tag}\n"));
    }

    /// Nothing of the tree in `session` runs any more.
    pub fn finished(&self, session: i32) {
        self.send(&format!("D {session}\n"));
    }

    fn send(&self, line: &str) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(running) = state.as_mut() else {
            return;
        };
        if let Err(error) = running.stdin.write_all(line.as_bytes()) {
            tracing::warn!(%error, "the watchdog is gone; if jig is killed, its commands keep running");
            // Reap it and stop writing.
            if let Some(mut running) = state.take() {
                let _ = running.child.kill();
                let _ = running.child.wait();
            }
        }
    }
}

/// One command the watchdog knows of.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listed {
    start_time: u64,
    tag: String,
}

/// The body of the watchdog process: reads the commands jig lists on stdin until end of file
/// (jig is gone), then kills what is left of them. Hosts call this from the program named in
/// their [`WatchdogCommand`] and exit afterwards.
pub fn run_watchdog() {
    let mut listed: HashMap<i32, Listed> = HashMap::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        apply(&mut listed, &line);
    }
    if listed.is_empty() {
        return;
    }
    // Several rounds: a process may fork between a scan and the signal.
    for _ in 0..20 {
        if kill_listed(&listed) == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Applies one line of the protocol.
fn apply(listed: &mut HashMap<i32, Listed>, line: &str) {
    let mut fields = line.split_ascii_whitespace();
    match (fields.next(), fields.next(), fields.next(), fields.next()) {
        (Some("C"), Some(session), Some(start), Some(tag)) => {
            if let (Ok(session), Ok(start_time)) = (session.parse(), start.parse()) {
                listed.insert(
                    session,
                    Listed {
                        start_time,
                        tag: tag.to_owned(),
                    },
                );
            }
        }
        (Some("D"), Some(session), None, None) => {
            if let Ok(session) = session.parse::<i32>() {
                listed.remove(&session);
            }
        }
        _ => {}
    }
}

/// SIGKILLs every live process of the listed commands; returns how many were signalled.
fn kill_listed(listed: &HashMap<i32, Listed>) -> usize {
    let own = std::process::id().cast_signed();
    let mut signalled = 0;
    for info in procfs::scan() {
        if info.pid == own || info.zombie {
            continue;
        }
        let in_session = listed
            .get(&info.session)
            .is_some_and(|command| info.start_time >= command.start_time);
        let tagged = || {
            procfs::environ_tag(info.pid)
                .is_some_and(|tag| listed.values().any(|command| command.tag == tag))
        };
        if (in_session || tagged())
            && let Some(pid) = Pid::from_raw(info.pid)
            && rustix::process::kill_process(pid, Signal::KILL).is_ok()
        {
            signalled += 1;
        }
    }
    signalled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_list_and_unlist_commands() {
        let mut listed = HashMap::new();
        apply(&mut listed, "C 100 5000 tag-a");
        apply(&mut listed, "C 200 6000 tag-b");
        apply(&mut listed, "garbage");
        apply(&mut listed, "C x 1 t");
        apply(&mut listed, "D 100");
        assert_eq!(
            listed,
            HashMap::from([(
                200,
                Listed {
                    start_time: 6000,
                    tag: "tag-b".to_owned()
                }
            )])
        );
    }
}
