//! Starting an extension's process or a hook: piped stdio, tracked like a `bash` command (its
//! own session, a `JIG_EXEC_TAG` its descendants inherit, listed with the watchdog), so that
//! stopping it ends everything it started, `setsid` and double-forked daemons included, and
//! nothing it started outlives jig.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;

use jig_process::ProcessTree;
use tokio::process::{Child, Command};

/// Starts `program` with `args` in `cwd`, stdin, stdout and stderr piped; the child is killed
/// when dropped, and the tree when [`ProcessTree`] is dropped or terminated.
pub(crate) fn spawn_piped<S: AsRef<OsStr>>(
    program: &OsStr,
    args: &[S],
    cwd: &Path,
) -> std::io::Result<(Child, ProcessTree)> {
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    ProcessTree::spawn(&mut command)
}
