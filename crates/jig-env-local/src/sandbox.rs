//! Enforcing a [`SandboxPolicy`] on a command the local env spawns.
//!
//! Two mechanisms are built in. The first choice is **bubblewrap** (`bwrap`, Debian's `bubblewrap` package; it runs
//! unprivileged through user namespaces, no setuid helper). The command runs as
//!
//! ```text
//! bwrap --ro-bind / / --dev /dev --proc /proc --bind TMP TMP
//!       --bind ROOT ROOT …                 (workspace-write: each writable root)
//!       --ro-bind ROOT/.git ROOT/.git …    (read-only inside the roots, when present)
//!       --tmpfs P | --ro-bind /dev/null P  (each protected path that exists: hidden)
//!       --unshare-pid --unshare-ipc --unshare-uts [--unshare-net] --die-with-parent
//!       --chdir CWD -- PROGRAM ARGS…
//! ```
//!
//! so the system is read-only, writes land only in the roots and a private temporary
//! directory `TMP` (made for the command, set as `TMPDIR`, removed after it), protected
//! files read as empty, the network namespace has only a loopback of its own (no host
//! listener is reachable), jig and every other host process are invisible (no `kill`, no
//! `ptrace`), no capability is kept (no `mount`), and everything the command started dies with
//! it (a PID namespace ends when its first process does). `JIG_EXEC_TAG` passes through, so the
//! watchdog and process-tree kill find the sandboxed processes as before.
//!
//! Without a working `bwrap`, **Landlock + seccomp** (the `landlock` module) confine the command
//! from inside: no namespaces, applied in the child before `exec`.
//!
//! `JIG_SANDBOX_MECHANISM=bwrap|landlock|none` forces the choice (tests use it). With no
//! mechanism, a policy that is on fails the call with a clear error. A command never runs
//! unsandboxed in silence.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jig_env::{READ_ONLY_SUBDIRS, SandboxMode, SandboxPolicy};

#[cfg(target_os = "linux")]
pub(crate) mod landlock;

#[cfg(target_os = "linux")]
pub use landlock::{ConfinementError, FilterError};

/// The variable that forces a mechanism: `bwrap`, `landlock` or `none`.
pub const MECHANISM_VARIABLE: &str = jig_protocol::EnvVars::JIG_SANDBOX_MECHANISM;

/// The mechanism that enforces policies on this host, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// bubblewrap at this path, checked to work.
    Bubblewrap(PathBuf),
    /// Landlock with this kernel ABI version, plus a seccomp filter.
    Landlock(i32),
    /// No mechanism; the reason says why and what to do.
    Unavailable(String),
}

impl Mechanism {
    /// Whether this mechanism can enforce a policy.
    #[must_use]
    pub fn is_available(&self) -> bool {
        !matches!(self, Self::Unavailable(_))
    }

    /// The mechanism `name` (`bwrap`, `landlock` or `none`), if it works here; otherwise
    /// [`Mechanism::Unavailable`] with the reason. This is what [`MECHANISM_VARIABLE`] does.
    #[must_use]
    pub fn forced(name: &str) -> Self {
        detect(Some(name))
    }

    /// A short name for reports (`bubblewrap`, `none`).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Bubblewrap(_) => "bubblewrap",
            Self::Landlock(_) => "landlock",
            Self::Unavailable(_) => "none",
        }
    }

    /// What the mechanism enforces, or why there is none (one line, for reports).
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Bubblewrap(path) => format!(
                "bubblewrap ({}): read-only system, writable roots, private TMPDIR, protected \
                 paths hidden, own network, PID and IPC namespaces, no capabilities",
                path.display()
            ),
            #[cfg(target_os = "linux")]
            Self::Landlock(abi) => landlock::describe(*abi),
            #[cfg(not(target_os = "linux"))]
            Self::Landlock(abi) => format!("Landlock ABI {abi}"),
            Self::Unavailable(reason) => format!("none: {reason}"),
        }
    }
}

/// The mechanism of this process (detected once; honours [`MECHANISM_VARIABLE`]).
#[must_use]
pub fn mechanism() -> &'static Mechanism {
    static MECHANISM: OnceLock<Mechanism> = OnceLock::new();
    MECHANISM.get_or_init(|| detect(std::env::var(MECHANISM_VARIABLE).ok().as_deref()))
}

fn detect(forced: Option<&str>) -> Mechanism {
    match forced.map(str::trim).filter(|value| !value.is_empty()) {
        None => match find_bwrap() {
            Ok(path) => Mechanism::Bubblewrap(path),
            Err(bwrap) => match find_landlock() {
                Ok(abi) => Mechanism::Landlock(abi),
                Err(landlock) => Mechanism::Unavailable(format!("{bwrap}; and {landlock}")),
            },
        },
        Some("bwrap" | "bubblewrap") => match find_bwrap() {
            Ok(path) => Mechanism::Bubblewrap(path),
            Err(reason) => Mechanism::Unavailable(reason.to_string()),
        },
        Some("landlock") => match find_landlock() {
            Ok(abi) => Mechanism::Landlock(abi),
            Err(reason) => Mechanism::Unavailable(reason.to_string()),
        },
        Some("none") => Mechanism::Unavailable(format!(
            "{MECHANISM_VARIABLE}=none turns every sandbox mechanism off"
        )),
        Some(other) => Mechanism::Unavailable(format!(
            "{MECHANISM_VARIABLE}={other} is not a mechanism: use bwrap, landlock or none"
        )),
    }
}

/// Why Landlock cannot be used on this host.
#[derive(Debug, thiserror::Error)]
enum LandlockUnavailable {
    /// The kernel has no Landlock system calls.
    #[cfg(target_os = "linux")]
    #[error(
        "this kernel has no Landlock (Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK is needed)"
    )]
    NotInKernel,
    /// The kernel has Landlock but it is not among the enabled security modules.
    #[cfg(target_os = "linux")]
    #[error(
        "Landlock is built into this kernel but not enabled (add `landlock` to the `lsm=` boot \
         parameter)"
    )]
    NotEnabled,
    /// Asking the kernel for its Landlock ABI failed otherwise.
    #[cfg(target_os = "linux")]
    #[error("Landlock is not usable here: {0}")]
    Unusable(#[source] std::io::Error),
    /// The kernel answered with an ABI version that is not one.
    #[cfg(target_os = "linux")]
    #[error("unexpected Landlock ABI {0}")]
    UnexpectedAbi(libc::c_long),
    /// Landlock is a Linux security module; this is not Linux.
    #[cfg(not(target_os = "linux"))]
    #[error("Landlock exists only on Linux")]
    NotLinux,
}

/// Why bubblewrap cannot be used on this host.
#[derive(Debug, thiserror::Error)]
enum BwrapUnavailable {
    /// This system is not Linux, and no other mechanism exists for it.
    #[error(
        "no sandbox mechanism on this system yet (macOS Seatbelt is designed, not implemented; \
         see docs/sandbox.md)"
    )]
    UnsupportedSystem,
    /// No `bwrap` on `PATH`.
    #[error(
        "bubblewrap (`bwrap`) is not installed; install it (Debian/Ubuntu: apt-get install \
         bubblewrap)"
    )]
    NotInstalled,
    /// `bwrap` ran but its trial sandbox failed; `stderr` is what it said.
    #[error("{path} does not work here ({stderr}); user namespaces may be disabled")]
    Broken {
        /// The `bwrap` that was tried.
        path: PathBuf,
        /// Its error output, trimmed.
        stderr: String,
    },
    /// `bwrap` could not be started.
    #[error("could not run {path}: {source}")]
    CannotRun {
        /// The `bwrap` that was tried.
        path: PathBuf,
        /// Why it could not be started.
        source: std::io::Error,
    },
}

fn find_landlock() -> Result<i32, LandlockUnavailable> {
    #[cfg(target_os = "linux")]
    {
        landlock::probe()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(LandlockUnavailable::NotLinux)
    }
}

fn find_bwrap() -> Result<PathBuf, BwrapUnavailable> {
    if !cfg!(target_os = "linux") {
        return Err(BwrapUnavailable::UnsupportedSystem);
    }
    let path = std::env::var_os(jig_protocol::EnvVars::PATH)
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| candidate.is_file())
        .ok_or(BwrapUnavailable::NotInstalled)?;
    let probe = std::process::Command::new(&path)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--unshare-net",
            "--unshare-pid",
            "true",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output();
    match probe {
        Ok(output) if output.status.success() => Ok(path),
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            Err(BwrapUnavailable::Broken { path, stderr })
        }
        Err(source) => Err(BwrapUnavailable::CannotRun { path, source }),
    }
}

/// A command ready to spawn under a policy: what to run, what to add to its environment, what
/// to apply in the child before `exec`, and the private temporary directory to keep until the
/// command has ended.
#[derive(Debug)]
pub struct Prepared {
    /// The program to spawn (`bwrap`, or the command's own program).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables to set for the command.
    pub env: Vec<(OsString, OsString)>,
    /// Applied in the forked child before `exec` (Landlock + seccomp).
    #[cfg(target_os = "linux")]
    pub(crate) confinement: Option<landlock::Confinement>,
    /// The command's private temporary directory, removed when this is dropped.
    pub(crate) _tmp: Option<tempfile::TempDir>,
}

/// What every [`SandboxError`] ends with: the command did not run, and how to run it anyway.
const DID_NOT_RUN: &str =
    "The command did not run; to run commands without a sandbox, pass --sandbox off";

/// Why a command could not be run under its policy; it did not run.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// No mechanism enforces policies on this host.
    #[error("the sandbox ({mode}) cannot be enforced: {reason}. {DID_NOT_RUN}")]
    NoMechanism {
        /// The policy's mode.
        mode: SandboxMode,
        /// Why there is no mechanism, and what to do ([`Mechanism::Unavailable`]'s reason).
        reason: String,
    },
    /// The command's private temporary directory could not be made.
    #[error(
        "the sandbox ({mode}) cannot be enforced: no private temporary directory: {source}. \
         {DID_NOT_RUN}"
    )]
    NoPrivateTmp {
        /// The policy's mode.
        mode: SandboxMode,
        /// Why the directory could not be made.
        source: std::io::Error,
    },
    /// The Landlock ruleset or the seccomp filter could not be built.
    #[cfg(target_os = "linux")]
    #[error("the sandbox ({mode}) cannot be enforced: {source}. {DID_NOT_RUN}")]
    Confinement {
        /// The policy's mode.
        mode: SandboxMode,
        /// What failed.
        source: ConfinementError,
    },
    /// Landlock was asked for on a system that is not Linux.
    #[cfg(not(target_os = "linux"))]
    #[error(
        "the sandbox ({mode}) cannot be enforced: Landlock exists only on Linux. {DID_NOT_RUN}"
    )]
    LandlockNotLinux {
        /// The policy's mode.
        mode: SandboxMode,
    },
}

/// How to run `program args` under `policy` with `mechanism`.
///
/// # Errors
/// No mechanism, or the mechanism could not be set up: the error says why, and that the
/// command did not run.
pub fn prepare(
    mechanism: &Mechanism,
    policy: &SandboxPolicy,
    program: &str,
    args: &[String],
    cwd: &Path,
) -> Result<Prepared, SandboxError> {
    let mode = policy.mode;
    let private_tmp = || {
        tempfile::Builder::new()
            .prefix("jig-sandbox-")
            .tempdir()
            .map_err(|source| SandboxError::NoPrivateTmp { mode, source })
    };
    let tmp_env = |tmp: &tempfile::TempDir| -> Vec<(OsString, OsString)> {
        ["TMPDIR", "TMP", "TEMP"]
            .into_iter()
            .map(|name| (name.into(), tmp.path().as_os_str().to_os_string()))
            .collect()
    };
    match mechanism {
        Mechanism::Bubblewrap(bwrap) => {
            let tmp = private_tmp()?;
            Ok(Prepared {
                program: bwrap.as_os_str().to_os_string(),
                args: bwrap_args(policy, program, args, cwd, tmp.path()),
                env: tmp_env(&tmp),
                #[cfg(target_os = "linux")]
                confinement: None,
                _tmp: Some(tmp),
            })
        }
        #[cfg(target_os = "linux")]
        Mechanism::Landlock(abi) => {
            let tmp = private_tmp()?;
            let confinement = landlock::confinement(
                *abi,
                policy,
                &protected_existing(&policy.protected),
                tmp.path(),
            )
            .map_err(|source| SandboxError::Confinement { mode, source })?;
            Ok(Prepared {
                program: program.into(),
                args: args.iter().map(OsString::from).collect(),
                env: tmp_env(&tmp),
                confinement: Some(confinement),
                _tmp: Some(tmp),
            })
        }
        #[cfg(not(target_os = "linux"))]
        Mechanism::Landlock(_) => Err(SandboxError::LandlockNotLinux { mode }),
        Mechanism::Unavailable(reason) => Err(SandboxError::NoMechanism {
            mode,
            reason: reason.clone(),
        }),
    }
}

/// The arguments of `bwrap` that run `program args` under `policy`.
fn bwrap_args(
    policy: &SandboxPolicy,
    program: &str,
    args: &[String],
    cwd: &Path,
    tmp: &Path,
) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    let mut push = |items: &[&std::ffi::OsStr]| out.extend(items.iter().map(|i| i.to_os_string()));
    push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    push(&[
        "--dev".as_ref(),
        "/dev".as_ref(),
        "--proc".as_ref(),
        "/proc".as_ref(),
    ]);
    push(&["--bind".as_ref(), tmp.as_os_str(), tmp.as_os_str()]);
    let roots: Vec<&PathBuf> = if policy.mode == SandboxMode::WorkspaceWrite {
        policy
            .writable_roots
            .iter()
            .filter(|root| root.is_dir())
            .collect()
    } else {
        Vec::new()
    };
    for root in &roots {
        push(&["--bind".as_ref(), root.as_os_str(), root.as_os_str()]);
    }
    for root in &roots {
        for name in READ_ONLY_SUBDIRS {
            let sub = root.join(name);
            if sub.exists() {
                push(&["--ro-bind".as_ref(), sub.as_os_str(), sub.as_os_str()]);
            }
        }
    }
    for path in protected_existing(&policy.protected) {
        if path.is_dir() {
            push(&[
                "--tmpfs".as_ref(),
                path.as_os_str(),
                "--remount-ro".as_ref(),
                path.as_os_str(),
            ]);
        } else {
            push(&["--ro-bind".as_ref(), "/dev/null".as_ref(), path.as_os_str()]);
        }
    }
    push(&[
        "--unshare-pid".as_ref(),
        "--unshare-ipc".as_ref(),
        "--unshare-uts".as_ref(),
        "--die-with-parent".as_ref(),
    ]);
    if rustix::process::geteuid().is_root() {
        // bwrap keeps root's capabilities unless told otherwise (others have none).
        push(&["--cap-drop".as_ref(), "ALL".as_ref()]);
    }
    if !policy.network {
        push(&["--unshare-net".as_ref()]);
    }
    push(&[
        "--chdir".as_ref(),
        cwd.as_os_str(),
        "--".as_ref(),
        program.as_ref(),
    ]);
    out.extend(args.iter().map(OsString::from));
    out
}

/// The protected paths that exist now, with prefix patterns (a last component ending in `*`)
/// expanded against their directory; symlinks are listed as themselves (`bwrap` mounts over
/// the target, which hides it too).
fn protected_existing(patterns: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for pattern in patterns {
        let name = pattern.file_name().and_then(|name| name.to_str());
        match (
            name.and_then(|name| name.strip_suffix('*')),
            pattern.parent(),
        ) {
            (Some(prefix), Some(dir)) => {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    if entry
                        .file_name()
                        .to_str()
                        .is_some_and(|n| n.starts_with(prefix))
                    {
                        found.push(entry.path());
                    }
                }
            }
            _ => {
                if std::fs::symlink_metadata(pattern).is_ok() {
                    found.push(pattern.clone());
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_mechanisms_are_explained() {
        assert_eq!(detect(Some("none")).name(), "none");
        let unknown = detect(Some("firejail")).describe();
        assert!(unknown.contains("use bwrap, landlock or none"), "{unknown}");
    }

    #[test]
    fn no_mechanism_refuses_to_run() {
        let policy = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            ..SandboxPolicy::default()
        };
        let error = prepare(&detect(Some("none")), &policy, "true", &[], Path::new("/"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("cannot be enforced"), "{error}");
        assert!(error.contains("--sandbox off"), "{error}");
    }

    #[test]
    fn protected_prefixes_expand_to_existing_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "A=1").unwrap();
        std::fs::write(dir.path().join(".env.local"), "A=1").unwrap();
        std::fs::write(dir.path().join("env"), "").unwrap();
        let found = protected_existing(&[dir.path().join(".env*"), dir.path().join("missing")]);
        assert_eq!(
            found,
            vec![dir.path().join(".env"), dir.path().join(".env.local")]
        );
    }
}
