//! Enforcing a [`SandboxPolicy`] on a command the local env spawns.
//!
//! The one mechanism built in is **bubblewrap** (`bwrap`, Debian's `bubblewrap` package; it runs
//! unprivileged through user namespaces, no setuid helper). The command runs as
//!
//! ```text
//! bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp
//!       --bind ROOT ROOT …                 (workspace-write: each writable root)
//!       --ro-bind ROOT/.git ROOT/.git …    (read-only inside the roots, when present)
//!       --tmpfs P | --ro-bind /dev/null P  (each protected path that exists: hidden)
//!       --unshare-pid --unshare-ipc --unshare-uts [--unshare-net] --die-with-parent
//!       --chdir CWD -- PROGRAM ARGS…
//! ```
//!
//! so the system is read-only, writes land only in the roots and a private `/tmp`, protected
//! files read as empty, the network namespace has only a loopback of its own (no host
//! listener is reachable), jig and every other host process are invisible (no `kill`, no
//! `ptrace`), no capability is kept (no `mount`), and everything the command started dies with
//! it (a PID namespace ends when its first process does). `JIG_EXEC_TAG` passes through, so the
//! watchdog and process-tree kill find the sandboxed processes as before.
//!
//! `JIG_SANDBOX_MECHANISM=bwrap|landlock|none` forces the choice (tests use it). Landlock is
//! not built in: forcing it, or having no working `bwrap`, makes a policy that is on fail the
//! call with a clear error. A command never runs unsandboxed in silence.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jig_env::{READ_ONLY_SUBDIRS, SandboxMode, SandboxPolicy};

/// The variable that forces a mechanism: `bwrap`, `landlock` or `none`.
pub const MECHANISM_VARIABLE: &str = "JIG_SANDBOX_MECHANISM";

/// The mechanism that enforces policies on this host, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// bubblewrap at this path, checked to work.
    Bubblewrap(PathBuf),
    /// No mechanism; the reason says why and what to do.
    Unavailable(String),
}

impl Mechanism {
    /// A short name for reports (`bubblewrap`, `none`).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Bubblewrap(_) => "bubblewrap",
            Self::Unavailable(_) => "none",
        }
    }

    /// What the mechanism enforces, or why there is none (one line, for reports).
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Bubblewrap(path) => format!(
                "bubblewrap ({}): read-only system, writable roots, private /tmp, protected \
                 paths hidden, own network, PID and IPC namespaces, no capabilities",
                path.display()
            ),
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
        None | Some("bwrap" | "bubblewrap") => match find_bwrap() {
            Ok(path) => Mechanism::Bubblewrap(path),
            Err(reason) => Mechanism::Unavailable(reason),
        },
        Some("landlock") => Mechanism::Unavailable(format!(
            "{MECHANISM_VARIABLE}=landlock, but the Landlock mechanism is not built into this \
             jig; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
        )),
        Some("none") => Mechanism::Unavailable(format!(
            "{MECHANISM_VARIABLE}=none turns every sandbox mechanism off"
        )),
        Some(other) => Mechanism::Unavailable(format!(
            "{MECHANISM_VARIABLE}={other} is not a mechanism: use bwrap, landlock or none"
        )),
    }
}

fn find_bwrap() -> Result<PathBuf, String> {
    if !cfg!(target_os = "linux") {
        return Err(
            "no sandbox mechanism on this system yet (macOS Seatbelt is designed, \
                    not implemented; see docs/sandbox.md)"
                .to_owned(),
        );
    }
    let path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            "bubblewrap (`bwrap`) is not installed; install it (Debian/Ubuntu: apt-get install \
             bubblewrap)"
                .to_owned()
        })?;
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
        Ok(output) => Err(format!(
            "{} does not work here ({}); user namespaces may be disabled",
            path.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(error) => Err(format!("could not run {}: {error}", path.display())),
    }
}

/// The program and arguments that run `program args` under `policy` with `mechanism`.
///
/// # Errors
/// No mechanism: the message says why, and that the command did not run.
pub fn wrap(
    mechanism: &Mechanism,
    policy: &SandboxPolicy,
    program: &str,
    args: &[String],
    cwd: &Path,
) -> Result<(OsString, Vec<OsString>), String> {
    let bwrap = match mechanism {
        Mechanism::Bubblewrap(path) => path,
        Mechanism::Unavailable(reason) => {
            return Err(format!(
                "the sandbox ({}) cannot be enforced: {reason}. The command did not run; \
                 to run commands without a sandbox, pass --sandbox off",
                policy.mode
            ));
        }
    };
    let mut out: Vec<OsString> = Vec::new();
    let mut push = |items: &[&std::ffi::OsStr]| out.extend(items.iter().map(|i| i.to_os_string()));
    push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    push(&[
        "--dev".as_ref(),
        "/dev".as_ref(),
        "--proc".as_ref(),
        "/proc".as_ref(),
    ]);
    push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
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
        "--setenv".as_ref(),
        "TMPDIR".as_ref(),
        "/tmp".as_ref(),
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
    Ok((bwrap.as_os_str().to_os_string(), out))
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
        let landlock = detect(Some("landlock")).describe();
        assert!(landlock.contains("not built into this jig"), "{landlock}");
        let unknown = detect(Some("firejail")).describe();
        assert!(unknown.contains("use bwrap, landlock or none"), "{unknown}");
    }

    #[test]
    fn no_mechanism_refuses_to_run() {
        let policy = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            ..SandboxPolicy::default()
        };
        let error = wrap(&detect(Some("none")), &policy, "true", &[], Path::new("/")).unwrap_err();
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
