//! The `--sandbox`/`--network` flags of the subcommands that run commands, and `jig sandbox`,
//! which runs one command under the policy to try it out. See docs/sandbox.md.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use jig_env::{ExecRequest, ExecSink, ExecutionEnv as _, SandboxMode};
use jig_session::sandbox::{SandboxRequest, add_protected, policy, report};

use crate::CliResult;
use crate::exit::CliError;

/// A sandbox mode on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ModeArg {
    /// Write only inside the workspace roots and a private temporary directory.
    WorkspaceWrite,
    /// Write nothing but a private temporary directory.
    ReadOnly,
    /// No sandbox: commands run with your full rights.
    Off,
}

impl From<ModeArg> for SandboxMode {
    fn from(value: ModeArg) -> Self {
        match value {
            ModeArg::WorkspaceWrite => Self::WorkspaceWrite,
            ModeArg::ReadOnly => Self::ReadOnly,
            ModeArg::Off => Self::Off,
        }
    }
}

/// `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Switch {
    /// Allowed.
    On,
    /// Denied.
    Off,
}

/// The sandbox flags shared by `jig tool`, `jig mcp` and `jig run`.
#[derive(Debug, Clone, Args)]
pub(crate) struct SandboxFlags {
    /// Run commands (bash) in a sandbox: workspace-write, read-only or off (see docs/sandbox.md)
    /// [default: the settings' `sandbox.mode`, else workspace-write for `jig run`, the
    /// interactive session and `jig mcp` on this machine, off for `jig tool` and `--env`].
    #[arg(id = "sandbox_mode", long = "sandbox", value_enum, value_name = "MODE")]
    pub(crate) mode: Option<ModeArg>,
    /// Whether sandboxed commands may use the network [default: the settings'
    /// `sandbox.network`, else off].
    #[arg(
        id = "sandbox_network",
        long = "network",
        value_enum,
        value_name = "on|off"
    )]
    pub(crate) network: Option<Switch>,
}

impl SandboxFlags {
    /// What the flags ask of the session's sandbox.
    pub(crate) fn request(&self) -> SandboxRequest {
        SandboxRequest {
            mode: self.mode.map(Into::into),
            network: self.network.map(|switch| switch == Switch::On),
        }
    }
}

/// Arguments of `jig sandbox`.
#[derive(Debug, Args)]
pub(crate) struct SandboxArgs {
    /// The sandbox mode.
    #[arg(long, value_enum, default_value_t = ModeArg::WorkspaceWrite)]
    mode: ModeArg,
    /// Whether the command may use the network.
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::Off)]
    network: Switch,
    /// The working directory and writable root [default: the current directory].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print the mechanism and what the policy enforces to stderr before running.
    #[arg(long)]
    verbose: bool,
    /// The command and its arguments (after `--`).
    #[arg(required = true, last = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Writes the command's output to stdout as it arrives.
struct Stdout;

#[async_trait::async_trait]
impl ExecSink for Stdout {
    async fn output(&mut self, bytes: &[u8]) {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(bytes);
        let _ = out.flush();
    }
}

/// Runs `jig sandbox`: the command under the policy, its output on stdout, its exit code as
/// jig's.
pub(crate) fn run_sandbox(args: &SandboxArgs) -> CliResult {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(CliError::Failure)?;
    runtime.block_on(async {
        let env = jig_session::workspace::local_env();
        let cwd = jig_session::workspace::directory_arg(&env, "--cwd", args.cwd.as_deref()).await?;
        let mut policy = policy(
            args.mode.into(),
            args.network == Switch::On,
            vec![cwd.clone()],
        );
        add_protected(
            &mut policy,
            &jig_session::settings::load()?
                .sandbox
                .unwrap_or_default()
                .protected_paths,
            "your settings",
        )?;
        if args.verbose {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr().lock(), "jig: {}", report(&policy, false));
        }
        let (program, rest) = args
            .command
            .split_first()
            .ok_or_else(|| CliError::usage("no command given after --"))?;
        let mut request = ExecRequest::new(program.clone(), rest.to_vec(), cwd);
        request.sandbox = policy;
        let outcome = env.exec(request, &mut Stdout).await;
        env.cleanup().await;
        match outcome {
            Ok(outcome) => Ok(ExitCode::from(
                u8::try_from(outcome.exit_code.clamp(0, 255)).unwrap_or(1),
            )),
            Err(error) => Err(CliError::Failure(anyhow::anyhow!("{error}"))),
        }
    })
}
