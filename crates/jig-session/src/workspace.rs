//! Builds the environment and the [`ToolContext`] every tool-running subcommand uses.
//!
//! `jig tool`, `jig mcp` and `jig run` call [`open_env`] once and [`tool_context`] once, and
//! `ExecutionEnv::cleanup` when they are done; hosts that serve many calls clone the context per
//! call so all calls share the env's single mutation queue.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::time::Duration;

use anyhow::{Context as _, anyhow};
use jig_env::{ErrorKind, ExecutionEnv, FileKind};
use jig_env_remote::RemoteEnv;
use jig_env_remote::transport::{EnvUrl, connect_command};
use jig_tool::{Containment, ContainmentMode, ToolContext};

use crate::StartError;

/// The host environment (`LocalEnv`): the machine's filesystem and processes. With
/// `keep_temp_files`, the temporary files its commands leave (full-output files) survive
/// `cleanup`.
pub fn open_env(keep_temp_files: bool) -> Result<Arc<dyn ExecutionEnv>, StartError> {
    Ok(Arc::new(local_env().keep_temp_files(keep_temp_files)))
}

/// The hidden first argument that makes `jig` run as the watchdog of another jig's commands.
pub const WATCHDOG_ARG: &str = "__watchdog";

/// This executable as the watchdog that kills what jig started (commands, extension
/// processes, hooks) if jig is killed without cleaning up. Without a path to this executable
/// there is no watchdog, and a warning says so.
pub fn watchdog_command() -> Option<jig_env_local::WatchdogCommand> {
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
pub fn watch_processes() {
    if let Some(command) = watchdog_command() {
        jig_process::set_watchdog_command(command);
    }
}

/// The host env, its commands listed with the process's watchdog ([`watchdog_command`]).
pub fn local_env() -> jig_env_local::LocalEnv {
    let env = jig_env_local::LocalEnv::new();
    match watchdog_command() {
        Some(command) => env.with_watchdog(command),
        None => env,
    }
}

/// The context for tool calls in `roots`: the first is the working directory, and all of
/// them are the containment roots (default: the process's current directory, or `far_base`
/// for a remote env). With a remote env (`far_base` its working directory) relative roots
/// are taken against `far_base`.
///
/// Each root is canonicalised (so a root reached through a symlink works and relative paths
/// resolve against its real location); one that does not exist or is not a directory is a
/// usage error naming `flag`.
pub async fn tool_context(
    env: Arc<dyn ExecutionEnv>,
    far_base: Option<&Path>,
    roots: &[PathBuf],
    flag: &str,
    containment: ContainmentMode,
    sandbox: jig_env::SandboxPolicy,
) -> Result<ToolContext, StartError> {
    let mut canonical: Vec<PathBuf> = Vec::new();
    if roots.is_empty() {
        canonical.push(directory_arg(env.as_ref(), flag, far_base).await?);
    }
    for root in roots {
        let root = match far_base {
            Some(base) => far_dir(base, Some(root)),
            None => root.clone(),
        };
        let root = directory_arg(env.as_ref(), flag, Some(&root)).await?;
        if !canonical.contains(&root) {
            canonical.push(root);
        }
    }
    let mut ctx = ToolContext::new(env, canonical[0].clone());
    ctx.containment = Containment {
        mode: containment,
        roots: canonical,
        read_only_roots: Vec::new(),
    };
    ctx.sandbox = sandbox;
    Ok(ctx)
}

/// The canonical form of the directory given to `flag` (default: the process's current
/// directory). A path that does not exist or is not a directory is a usage error naming `flag`.
pub async fn directory_arg(
    env: &dyn ExecutionEnv,
    flag: &str,
    dir: Option<&Path>,
) -> Result<PathBuf, StartError> {
    let requested: PathBuf = match dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .context("cannot determine the current directory")
            .map_err(StartError::Failure)?,
    };
    let shown = requested.display();
    let base = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let absolute = env.absolute_path(&base, &requested);
    let canonical = match env.canonical_path(&absolute).await {
        Ok(path) => path,
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return Err(StartError::usage(format!(
                "{flag} {shown}: no such directory"
            )));
        }
        Err(error) => return Err(StartError::usage(format!("{flag} {shown}: {error}"))),
    };
    match env.stat(&canonical).await {
        Ok(info) if info.kind == FileKind::Directory => Ok(canonical),
        Ok(_) => Err(StartError::usage(format!(
            "{flag} {shown}: not a directory"
        ))),
        Err(error) => Err(StartError::usage(format!("{flag} {shown}: {error}"))),
    }
}

/// Where the tools run and what is recorded: `--env URL`, `--audit FILE`, `--audit-best-effort`.
#[derive(Debug, Clone, Default)]
pub struct EnvOptions {
    /// Another environment to run the tools in (`ssh://…`, `docker://…`, `stdio:CMD`, …).
    pub url: Option<String>,
    /// Record every environment operation in this file.
    pub audit: Option<PathBuf>,
    /// A record that cannot be written is a warning instead of a failed call.
    pub audit_best_effort: bool,
}

/// The environment `--env URL` names, connected; and the working directory the URL names
/// (or the far side's home directory).
pub async fn connect(url: &str) -> Result<(Arc<RemoteEnv>, PathBuf), StartError> {
    let parsed = EnvUrl::parse(url).map_err(|error| StartError::usage(error.to_string()))?;
    let idle = idle_timeout()?;
    let env = match parsed.command() {
        Some(argv) => connect_command(url, &argv).await,
        None => container_env(url, &parsed).await,
    }
    .map_err(|error| StartError::Failure(anyhow!("--env: {error}")))?;
    env.set_idle_timeout(idle);
    let cwd = parsed
        .path()
        .cloned()
        .or_else(|| env.home_dir())
        .unwrap_or_else(|| PathBuf::from("/"));
    Ok((Arc::new(env), cwd))
}

/// How long a call through `--env` waits without a byte from the far side:
/// `JIG_ENV_IDLE_TIMEOUT` seconds (at least 2, as the far side of a running call says it is
/// alive every second; `0`: forever), or the default. Anything else is a usage error naming
/// the variable.
fn idle_timeout() -> Result<Option<Duration>, StartError> {
    let name = jig_protocol::EnvVars::JIG_ENV_IDLE_TIMEOUT;
    let Some(value) = std::env::var_os(name) else {
        return Ok(Some(jig_env_remote::DEFAULT_IDLE_TIMEOUT));
    };
    let value = value.to_string_lossy();
    if value.trim() == "0" {
        return Ok(None);
    }
    crate::project::parse_timeout(&value)
        .filter(|idle| *idle >= Duration::from_secs(2))
        .map(Some)
        .ok_or_else(|| {
            StartError::usage(format!(
                "{name}={value:?} is not an idle limit: expected a number of seconds of at least \
                 2, such as 30 or 2.5 (0 waits forever; the default is {} s)",
                jig_env_remote::DEFAULT_IDLE_TIMEOUT.as_secs()
            ))
        })
}

async fn container_env(
    url: &str,
    parsed: &EnvUrl,
) -> Result<RemoteEnv, jig_env_remote::ConnectError> {
    let EnvUrl::Container {
        engine, container, ..
    } = parsed
    else {
        return Err(jig_env_remote::ConnectError::Transport {
            target: url.to_owned(),
            reason: "not a container URL".to_owned(),
        });
    };
    jig_env_remote::container::connect_container(
        url,
        engine,
        container,
        &jig_env_remote::container::ContainerOptions::default(),
    )
    .await
}

/// A directory flag as the far side sees it: absolute as given, relative against `base`.
pub fn far_dir(base: &Path, dir: Option<&Path>) -> PathBuf {
    match dir {
        Some(dir) if dir.is_absolute() => dir.to_path_buf(),
        Some(dir) => base.join(dir),
        None => base.to_path_buf(),
    }
}

/// Where the project of `dir` (the tools' working directory in `env`) is: this machine's
/// directory, or with `--env` a directory of that env.
pub fn project_place<'a>(
    flags: &'a EnvOptions,
    env: &'a Arc<dyn ExecutionEnv>,
    dir: &'a Path,
) -> crate::project::ProjectPlace<'a> {
    match flags.url.as_deref() {
        None => crate::project::ProjectPlace::Local(dir),
        Some(url) => crate::project::ProjectPlace::Remote {
            url,
            env: env.as_ref(),
            dir,
        },
    }
}

/// The env the tools use: this machine's (from `local`) or the one `--env` names; and, for a
/// remote env, the working directory to use instead of `cwd` (`cwd` taken far side).
pub async fn open_place(
    flags: &EnvOptions,
    local: impl FnOnce() -> Result<Arc<dyn ExecutionEnv>, StartError>,
    cwd: Option<&Path>,
) -> Result<(Arc<dyn ExecutionEnv>, Option<PathBuf>), StartError> {
    let (env, cwd) = match flags.url.as_deref() {
        None => (local()?, cwd.map(Path::to_path_buf)),
        Some(url) => {
            let (env, base) = connect(url).await?;
            let env: Arc<dyn ExecutionEnv> = env;
            (env, Some(far_dir(&base, cwd)))
        }
    };
    Ok((
        audited(env, flags.audit.as_deref(), flags.audit_best_effort)?,
        cwd,
    ))
}

/// `--audit FILE`: every env operation of the tools recorded as a JSON line in FILE
/// (appended; created 0600), see `jig-env-audit`. It fails closed unless `best_effort`
/// (`--audit-best-effort`): then each record that cannot be written is a warning.
pub fn audited(
    env: Arc<dyn ExecutionEnv>,
    audit: Option<&Path>,
    best_effort: bool,
) -> Result<Arc<dyn ExecutionEnv>, StartError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let Some(path) = audit else { return Ok(env) };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(|error| StartError::usage(format!("--audit {}: {error}", path.display())))?;
    let failure = if best_effort {
        jig_env_audit::Failure::Warn
    } else {
        jig_env_audit::Failure::Refuse
    };
    let log = jig_env_audit::AuditLog::file(file, path.display().to_string())
        .on_failure(failure, Arc::new(|message: &str| crate::warn(message)));
    // Start-up operations only warn; each mode arms the log before its first tool call.
    let (log, arm) = log.armed_later();
    let _ = AUDIT_ARM.set(arm);
    let audited = jig_env_audit::AuditEnv::new(env, log);
    crate::audit::set_env(audited.clone());
    Ok(Arc::new(audited))
}

/// The `--audit` log's switch from start-up (warnings) to tool calls (failing closed).
static AUDIT_ARM: std::sync::OnceLock<jig_env_audit::AuditArm> = std::sync::OnceLock::new();

/// Called by each mode once start-up is done, right before it runs tool calls: from now on a
/// record that cannot be written fails its call (unless `--audit-best-effort`).
pub fn arm_audit() {
    if let Some(arm) = AUDIT_ARM.get() {
        arm.arm();
    }
}
