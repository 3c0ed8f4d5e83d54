//! `jig env serve` (serve this machine's environment over stdin/stdout), `jig env install`
//! (put this jig binary far side), and `--env URL` for `jig tool`, `jig mcp` and `jig run`.

use std::io::{self, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use clap::{Args, Subcommand};
use jig_env::ExecutionEnv;
use jig_env_remote::transport::{EnvUrl, connect_command};
use jig_env_remote::{RemoteEnv, ServeOptions};

use crate::CliResult;
use crate::exit::{self, CliError};
use crate::workspace;

/// Arguments of `jig env`.
#[derive(Debug, Args)]
pub(crate) struct EnvArgs {
    #[command(subcommand)]
    command: EnvCommand,
}

#[derive(Debug, Subcommand)]
enum EnvCommand {
    /// Serve this machine's files and processes over stdin/stdout (the env protocol of
    /// docs/env-protocol.md); what `--env URL` starts on the far side.
    Serve,
    /// Copy this jig binary to the far side of an ssh:// or k8s:// URL, as `$HOME/.jig/bin/jig`
    /// (where `--env` looks first). Refused when the CPU architectures differ. (docker:// and
    /// podman:// need no install: `--env` copies jig into the container when it has none.)
    Install {
        /// `ssh://[user@]host[:port]` or `k8s://namespace/pod[/container]`.
        url: String,
    },
}

/// Runs `jig env`.
pub(crate) fn run_env(args: &EnvArgs) -> CliResult {
    match &args.command {
        EnvCommand::Serve => serve(),
        EnvCommand::Install { url } => install(url),
    }
}

fn serve() -> CliResult {
    // stdout carries the protocol; logs go to stderr.
    let filter = tracing_subscriber::EnvFilter::try_from_env(jig_protocol::EnvVars::JIG_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(false)
        .try_init();
    if io::stdin().is_terminal() {
        let _ = writeln!(
            io::stderr().lock(),
            "jig env serve: serving this machine's environment over stdin/stdout in the binary \
             env protocol (docs/env-protocol.md); a client such as `jig tool --env ssh://…` \
             starts it. Ctrl-D quits."
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(CliError::Failure)?;
    let env: Arc<dyn ExecutionEnv> = Arc::new(workspace::local_env());
    let result = runtime.block_on(async {
        let (reader, writer) = jig_env_remote::stdio::stdio();
        jig_env_remote::serve(env, ServeOptions::default(), reader, writer).await
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    result
        .map(|()| ExitCode::from(exit::SUCCESS))
        .map_err(|error| CliError::Failure(error.into()))
}

fn far_side_output(url: &EnvUrl, script: &str) -> Result<String, CliError> {
    let argv = url
        .shell_command(script)
        .ok_or_else(|| CliError::usage("jig env install takes an ssh:// or k8s:// URL"))?;
    let output = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", argv[0]))
        .map_err(CliError::Failure)?;
    if !output.status.success() {
        return Err(CliError::Failure(anyhow!(
            "`{script}` far side failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn install(url: &str) -> CliResult {
    let url = EnvUrl::parse(url).map_err(|error| CliError::usage(error.to_string()))?;
    if matches!(url, EnvUrl::Container { .. }) {
        return Err(CliError::usage(
            "docker:// and podman:// need no install: `--env` copies jig into the container \
             (as /tmp/.jig/jig-VERSION-BUILD) when it has none",
        ));
    }
    let arch = far_side_output(&url, "uname -m")?;
    let ours = std::env::consts::ARCH;
    let same = arch == ours || (ours == "aarch64" && arch == "arm64");
    if !same {
        return Err(CliError::Failure(anyhow!(
            "the far side is {arch}, this jig is built for {ours}: build jig for {arch} and copy \
             it to $HOME/.jig/bin/jig there (or put it on PATH)"
        )));
    }
    let exe = std::env::current_exe()
        .context("cannot locate the running jig binary")
        .map_err(CliError::Failure)?;
    let binary = std::fs::File::open(&exe)
        .with_context(|| format!("cannot open {}", exe.display()))
        .map_err(CliError::Failure)?;
    let script = r#"set -e; mkdir -p "$HOME/.jig/bin"; cat > "$HOME/.jig/bin/jig.part"; chmod 755 "$HOME/.jig/bin/jig.part"; mv "$HOME/.jig/bin/jig.part" "$HOME/.jig/bin/jig"; echo "$HOME/.jig/bin/jig""#;
    let argv = url
        .shell_command(script)
        .ok_or_else(|| CliError::usage("jig env install takes an ssh:// or k8s:// URL"))?;
    let output = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(binary)
        .output()
        .with_context(|| format!("cannot run {}", argv[0]))
        .map_err(CliError::Failure)?;
    if !output.status.success() {
        return Err(CliError::Failure(anyhow!(
            "copying jig failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let installed = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let _ = writeln!(io::stdout().lock(), "installed {installed}");
    Ok(ExitCode::from(exit::SUCCESS))
}

/// The environment `--env URL` names, connected; and the working directory the URL names
/// (or the far side's home directory).
pub(crate) async fn connect(url: &str) -> Result<(Arc<RemoteEnv>, PathBuf), CliError> {
    let parsed = EnvUrl::parse(url).map_err(|error| CliError::usage(error.to_string()))?;
    let idle = idle_timeout()?;
    let env = match parsed.command() {
        Some(argv) => connect_command(url, &argv).await,
        None => container_env(url, &parsed).await,
    }
    .map_err(|error| CliError::Failure(anyhow!("--env: {error}")))?;
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
fn idle_timeout() -> Result<Option<Duration>, CliError> {
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
            CliError::usage(format!(
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
pub(crate) fn far_dir(base: &Path, dir: Option<&Path>) -> PathBuf {
    match dir {
        Some(dir) if dir.is_absolute() => dir.to_path_buf(),
        Some(dir) => base.join(dir),
        None => base.to_path_buf(),
    }
}

/// `--env` and `--audit`, shared by `jig tool`, `jig mcp` and `jig run`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct EnvFlags {
    /// Run the tools in another environment: `ssh://[user@]host[:port]/path`,
    /// `docker://container/path` and `podman://container/path` (through the engine's API
    /// socket: DOCKER_HOST, CONTAINER_HOST or the default; jig is copied into the container
    /// when absent), `k8s://namespace/pod[/container]/path` or `stdio:CMD` (see
    /// docs/env-protocol.md). The path is the working directory there; relative
    /// `--cwd`/`--root` are taken against it.
    #[arg(long = "env", value_name = "URL")]
    pub(crate) url: Option<String>,
    /// Record every environment operation (time, tool call, operation, path, bytes, duration,
    /// outcome) as one JSON line each, appended to FILE (created 0600). A record that cannot
    /// be written fails its tool call, and every later one, with an error naming FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) audit: Option<PathBuf>,
    /// With --audit: when a record cannot be written, warn and go on instead of failing.
    #[arg(long, requires = "audit")]
    pub(crate) audit_best_effort: bool,
}

/// Where the project of `dir` (the tools' working directory in `env`) is: this machine's
/// directory, or with `--env` a directory of that env.
pub(crate) fn project_place<'a>(
    flags: &'a EnvFlags,
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
pub(crate) async fn open_env(
    flags: &EnvFlags,
    local: impl FnOnce() -> Result<Arc<dyn ExecutionEnv>, CliError>,
    cwd: Option<&Path>,
) -> Result<(Arc<dyn ExecutionEnv>, Option<PathBuf>), CliError> {
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
pub(crate) fn audited(
    env: Arc<dyn ExecutionEnv>,
    audit: Option<&Path>,
    best_effort: bool,
) -> Result<Arc<dyn ExecutionEnv>, CliError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let Some(path) = audit else { return Ok(env) };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(|error| CliError::usage(format!("--audit {}: {error}", path.display())))?;
    let failure = if best_effort {
        jig_env_audit::Failure::Warn
    } else {
        jig_env_audit::Failure::Refuse
    };
    let log = jig_env_audit::AuditLog::file(file, path.display().to_string()).on_failure(
        failure,
        Arc::new(|message: &str| crate::exit::warn(message)),
    );
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
pub(crate) fn arm_audit() {
    if let Some(arm) = AUDIT_ARM.get() {
        arm.arm();
    }
}
