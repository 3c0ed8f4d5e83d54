//! Builds the environment and the [`ToolContext`] every tool-running subcommand uses.
//!
//! `jig tool`, `jig mcp` and `jig run` call [`open_env`] once and [`tool_context`] once, and
//! `ExecutionEnv::cleanup` when they are done; hosts that serve many calls clone the context per
//! call so all calls share the env's single mutation queue.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use clap::ValueEnum;
use jig_env::{ErrorKind, ExecutionEnv, FileKind};
use jig_tool::{Containment, ContainmentMode, ToolContext};

use crate::exit::CliError;

/// The `--containment` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum ContainmentArg {
    /// File tools refuse paths outside the working directory (also through symlinks).
    #[default]
    Workspace,
    /// File tools may reach any path.
    None,
}

impl From<ContainmentArg> for ContainmentMode {
    fn from(value: ContainmentArg) -> Self {
        match value {
            ContainmentArg::Workspace => Self::Workspace,
            ContainmentArg::None => Self::None,
        }
    }
}

/// The host environment (`LocalEnv`): the machine's filesystem and processes. With
/// `keep_temp_files`, the temporary files its commands leave (full-output files) survive
/// `cleanup`.
#[expect(
    clippy::unnecessary_wraps,
    reason = "opening other envs (remote, sandboxed) can fail; callers already handle it"
)]
pub(crate) fn open_env(keep_temp_files: bool) -> Result<Arc<dyn ExecutionEnv>, CliError> {
    Ok(Arc::new(local_env().keep_temp_files(keep_temp_files)))
}

/// The hidden first argument that makes `jig` run as the watchdog of another jig's commands.
pub(crate) const WATCHDOG_ARG: &str = "__watchdog";

/// This executable as the watchdog that kills what jig started (commands, extension
/// processes, hooks) if jig is killed without cleaning up. Without a path to this executable
/// there is no watchdog, and a warning says so.
pub(crate) fn watchdog_command() -> Option<jig_env_local::WatchdogCommand> {
    match std::env::current_exe() {
        Ok(program) => Some(jig_env_local::WatchdogCommand {
            program,
            args: vec![WATCHDOG_ARG.into()],
        }),
        Err(error) => {
            tracing::warn!(%error, "cannot locate the jig executable; what jig starts is not watched if jig is killed");
            None
        }
    }
}

/// Names the process's watchdog ([`watchdog_command`]) before anything is started: extension
/// processes and hooks are listed with it as commands are.
pub(crate) fn watch_processes() {
    if let Some(command) = watchdog_command() {
        jig_process::set_watchdog_command(command);
    }
}

/// The host env, its commands listed with the process's watchdog ([`watchdog_command`]).
pub(crate) fn local_env() -> jig_env_local::LocalEnv {
    let env = jig_env_local::LocalEnv::new();
    match watchdog_command() {
        Some(command) => env.with_watchdog(command),
        None => env,
    }
}

/// The context for tool calls in `cwd` (default: the process's current directory).
///
/// The cwd is canonicalised (so a cwd reached through a symlink works and relative paths
/// resolve against its real location) and is the single containment root. A cwd that does not
/// exist or is not a directory is a usage error naming `--cwd`.
pub(crate) async fn tool_context(
    env: Arc<dyn ExecutionEnv>,
    cwd: Option<&Path>,
    containment: ContainmentMode,
    sandbox: jig_env::SandboxPolicy,
) -> Result<ToolContext, CliError> {
    let canonical = directory_arg(env.as_ref(), "--cwd", cwd).await?;
    let mut ctx = ToolContext::new(env, canonical.clone());
    ctx.containment = Containment {
        mode: containment,
        roots: vec![canonical],
        read_only_roots: Vec::new(),
    };
    ctx.sandbox = sandbox;
    Ok(ctx)
}

/// The canonical form of the directory given to `flag` (default: the process's current
/// directory). A path that does not exist or is not a directory is a usage error naming `flag`.
pub(crate) async fn directory_arg(
    env: &dyn ExecutionEnv,
    flag: &str,
    dir: Option<&Path>,
) -> Result<PathBuf, CliError> {
    let requested: PathBuf = match dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .context("cannot determine the current directory")
            .map_err(CliError::Failure)?,
    };
    let shown = requested.display();
    let base = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let absolute = env.absolute_path(&base, &requested);
    let canonical = match env.canonical_path(&absolute).await {
        Ok(path) => path,
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return Err(CliError::usage(format!(
                "{flag} {shown}: no such directory"
            )));
        }
        Err(error) => return Err(CliError::usage(format!("{flag} {shown}: {error}"))),
    };
    match env.stat(&canonical).await {
        Ok(info) if info.kind == FileKind::Directory => Ok(canonical),
        Ok(_) => Err(CliError::usage(format!("{flag} {shown}: not a directory"))),
        Err(error) => Err(CliError::usage(format!("{flag} {shown}: {error}"))),
    }
}
