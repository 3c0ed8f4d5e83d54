//! `jig env serve` (serve this machine's environment over stdin/stdout) and `jig env install`
//! (put this jig binary far side). `--env URL` itself is opened by the harness
//! (`jig_session::workspace::open_place`).

use std::io::{self, IsTerminal as _, Write as _};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use clap::{Args, Subcommand};
use jig_env::ExecutionEnv;
use jig_env_remote::ServeOptions;
use jig_env_remote::transport::EnvUrl;

use crate::CliResult;
use crate::exit::{self, CliError};
use jig_session::workspace;

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
    // A session that keeps its roots warm asks for them (`keep_warm`): indexed here, next to
    // the files, and logged with `JIG_LOG=jig_index=info`.
    let env: Arc<dyn ExecutionEnv> = Arc::new(jig_index::IndexedEnv::new(
        Arc::new(workspace::local_env()),
        jig_index::WarmIndexes::new(jig_index::IndexOptions::default()),
    ));
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
