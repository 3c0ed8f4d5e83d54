//! Starting an extension's process: piped stdio, its own process group (so a kill reaches what
//! it starts), killed when its handle is dropped.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;

use tokio::process::{Child, Command};

/// Starts `program` with `args` in `cwd`, stdin, stdout and stderr piped.
pub(crate) fn spawn_piped<S: AsRef<OsStr>>(
    program: &OsStr,
    args: &[S],
    cwd: &Path,
) -> std::io::Result<Child> {
    Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0)
        .spawn()
}
