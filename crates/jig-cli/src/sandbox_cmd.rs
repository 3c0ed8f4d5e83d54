//! The `--sandbox`/`--network` flags of the subcommands that run commands, and `jig sandbox`,
//! which runs one command under the policy to try it out. See docs/sandbox.md.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use jig_env::{ExecRequest, ExecSink, ExecutionEnv as _, SandboxMode, SandboxPolicy};

use crate::CliResult;
use crate::exit::CliError;

/// A sandbox mode on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ModeArg {
    /// Write only inside the workspace roots and a private /tmp.
    WorkspaceWrite,
    /// Write nothing but a private /tmp.
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
    /// [default: off].
    #[arg(id = "sandbox_mode", long = "sandbox", value_enum, value_name = "MODE")]
    pub(crate) mode: Option<ModeArg>,
    /// Whether sandboxed commands may use the network [default: off].
    #[arg(
        id = "sandbox_network",
        long = "network",
        value_enum,
        value_name = "on|off"
    )]
    pub(crate) network: Option<Switch>,
}

impl SandboxFlags {
    /// The policy the flags ask for, before the workspace roots are added (the tool context
    /// adds them per call).
    pub(crate) fn policy(&self) -> SandboxPolicy {
        policy(
            self.mode.map_or(SandboxMode::Off, SandboxMode::from),
            self.network == Some(Switch::On),
            Vec::new(),
        )
    }
}

/// Fails when `policy` is on, commands run on this machine (`remote` false) and no mechanism
/// can enforce it: a server or session must not start only to fail every command.
pub(crate) fn check_enforceable(policy: &SandboxPolicy, remote: bool) -> Result<(), CliError> {
    if !policy.is_on() || remote {
        return Ok(());
    }
    match jig_env_local::sandbox::mechanism() {
        jig_env_local::sandbox::Mechanism::Unavailable(reason) => Err(CliError::usage(format!(
            "--sandbox {}: no mechanism can enforce it: {reason}. To run commands without a \
             sandbox, pass --sandbox off",
            policy.mode
        ))),
        jig_env_local::sandbox::Mechanism::Bubblewrap(_) => Ok(()),
    }
}

/// A policy with the default protected paths of this user's home.
pub(crate) fn policy(mode: SandboxMode, network: bool, roots: Vec<PathBuf>) -> SandboxPolicy {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from);
    SandboxPolicy::for_roots(mode, network, roots, home)
}

/// One line for reports: the mechanism and what the policy enforces (`remote`: the far side of
/// `--env` enforces it with its own mechanism).
pub(crate) fn report(policy: &SandboxPolicy, remote: bool) -> String {
    let mechanism = jig_env_local::sandbox::mechanism();
    if policy.is_on() && remote {
        format!("sandbox: {}; enforced by the remote env", policy.summary())
    } else if policy.is_on() {
        format!(
            "sandbox: {}; mechanism {}",
            policy.summary(),
            mechanism.describe()
        )
    } else {
        format!(
            "sandbox: off (commands run with your full rights); available mechanism: {}",
            mechanism.describe()
        )
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
        let env = crate::workspace::local_env();
        let cwd = crate::workspace::directory_arg(&env, "--cwd", args.cwd.as_deref()).await?;
        let policy = policy(
            args.mode.into(),
            args.network == Switch::On,
            vec![cwd.clone()],
        );
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
