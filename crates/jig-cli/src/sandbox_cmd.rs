//! The `--sandbox`/`--network` flags of the subcommands that run commands, and `jig sandbox`,
//! which runs one command under the policy to try it out. See docs/sandbox.md.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use jig_env::{ExecRequest, ExecSink, ExecutionEnv as _, SandboxMode, SandboxPolicy};
use serde::{Deserialize, Serialize};

use crate::CliResult;
use crate::exit::CliError;

/// A sandbox mode on the command line or in the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
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

/// The `sandbox` section of a settings file. The user's may set everything; a trusted project's
/// may only add `protectedPaths` (a repository must not loosen what protects the user from it).
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SandboxSettings {
    /// The mode when `--sandbox` is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mode: Option<ModeArg>,
    /// Whether sandboxed commands may use the network when `--network` is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) network: Option<bool>,
    /// More protected paths: `~/…` in the home directory, absolute paths, or names relative to
    /// each writable root (`secrets/*`, `.npmrc`); a last component ending in `*` is a prefix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) protected_paths: Vec<String>,
}

/// Who turned the sandbox on (or off), for the fallback rule and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `--sandbox` or `--network` on the command line.
    Flag,
    /// The user's settings file.
    Settings,
    /// The built-in default of the subcommand.
    Default,
}

/// The sandbox a subcommand asks for, before the workspace roots are added.
#[derive(Debug, Clone)]
pub(crate) struct Requested {
    /// The policy.
    pub(crate) policy: SandboxPolicy,
    /// Where its mode came from.
    pub(crate) source: Source,
}

impl SandboxFlags {
    /// The policy the flags ask for, over the user's `settings`, with the subcommand's
    /// `default` mode when neither names one.
    ///
    /// # Errors
    /// A protected path in the settings that is empty or climbs out with `..`.
    pub(crate) fn resolve(
        &self,
        settings: &SandboxSettings,
        default: SandboxMode,
    ) -> Result<Requested, CliError> {
        let (mode, source) = match (self.mode, settings.mode) {
            (Some(mode), _) => (mode.into(), Source::Flag),
            (None, Some(mode)) => (mode.into(), Source::Settings),
            (None, None) => (default, Source::Default),
        };
        let network = match self.network {
            Some(switch) => switch == Switch::On,
            None => settings.network.unwrap_or(false),
        };
        let mut policy = policy(mode, network, Vec::new());
        add_protected(&mut policy, &settings.protected_paths, "your settings")?;
        Ok(Requested { policy, source })
    }
}

/// Adds `paths` (as written in the settings of `whose`) to the policy's protected paths.
fn add_protected(
    policy: &mut SandboxPolicy,
    paths: &[String],
    whose: &str,
) -> Result<(), CliError> {
    let home = home();
    for written in paths {
        let path = PathBuf::from(written);
        if written.trim().is_empty()
            || path
                .components()
                .any(|part| part == std::path::Component::ParentDir)
        {
            return Err(CliError::usage(format!(
                "sandbox.protectedPaths in {whose}: `{written}` is not a path jig can protect; write `~/…`, an absolute path, or a name inside the workspace, without `..`"
            )));
        }
        let path = match (written.strip_prefix("~/"), &home) {
            (Some(rest), Some(home)) => home.join(rest),
            (Some(_), None) => continue,
            (None, _) => path,
        };
        if !policy.protected.contains(&path) {
            policy.protected.push(path);
        }
    }
    Ok(())
}

/// Adds what a trusted project's settings add to the protected paths; a project's `mode` or
/// `network` is ignored with a warning (only the user loosens or tightens those).
///
/// # Errors
/// The project's `sandbox` section is not valid, or a path in it is not one jig can protect.
pub(crate) fn add_project_protected(
    policy: &mut SandboxPolicy,
    project: Option<&jig_project::ProjectSettings>,
) -> Result<(), CliError> {
    let Some(project) = project else {
        return Ok(());
    };
    let Some(section) = project.value.get("sandbox") else {
        return Ok(());
    };
    let whose = project.path.display().to_string();
    let settings: SandboxSettings = serde_json::from_value(section.clone()).map_err(|error| {
        CliError::usage(format!(
            "the `sandbox` section of {whose} is not valid: {error}"
        ))
    })?;
    if settings.mode.is_some() || settings.network.is_some() {
        crate::exit::warn(&format!(
            "{whose}: sandbox.mode and sandbox.network are ignored in a project's settings; a project may only add sandbox.protectedPaths"
        ));
    }
    add_protected(policy, &settings.protected_paths, &whose)
}

/// The user's `sandbox` settings (none when there is no settings file). Read strictly whatever
/// the subcommand: a sandbox setting that cannot be understood must not be ignored.
///
/// # Errors
/// The file cannot be read, is not JSON, or its `sandbox` section is not valid.
pub(crate) fn user_settings() -> Result<SandboxSettings, CliError> {
    let Some(path) = crate::run_cmd::settings::path() else {
        return Ok(SandboxSettings::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(SandboxSettings::default());
        }
        Err(error) => {
            return Err(CliError::usage(format!(
                "cannot read the settings file {}: {error}",
                path.display()
            )));
        }
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|error| {
        CliError::usage(format!(
            "the settings file {} is not valid JSON: {error}",
            path.display()
        ))
    })?;
    match value.get("sandbox") {
        None => Ok(SandboxSettings::default()),
        Some(section) => serde_json::from_value(section.clone()).map_err(|error| {
            CliError::usage(format!(
                "the `sandbox` section of {} is not valid: {error} (keys: mode, network, \
                 protectedPaths)",
                path.display()
            ))
        }),
    }
}

/// The policy to run with, once it is known whether commands run here (`remote` false).
///
/// A sandbox asked for by a flag or the settings that no mechanism can enforce here is an
/// error. One that is on only by default runs commands unsandboxed instead, with a loud
/// warning saying so and how to fix it: a machine without bubblewrap or Landlock must not
/// lose the use of `bash`, nor hide that commands are not contained.
///
/// # Errors
/// The sandbox was asked for and cannot be enforced.
pub(crate) fn enforce(requested: Requested, remote: bool) -> Result<SandboxPolicy, CliError> {
    let Requested { policy, source } = requested;
    if !policy.is_on() || remote {
        return Ok(policy);
    }
    match jig_env_local::sandbox::mechanism() {
        jig_env_local::sandbox::Mechanism::Unavailable(reason) if source == Source::Default => {
            crate::exit::warn(&format!(
                "NO SANDBOX: commands run with your full rights, because no mechanism can \
                 enforce the default {} sandbox here: {reason}. Install bubblewrap, or use a \
                 kernel with Landlock; pass --sandbox off (or set sandbox.mode to \"off\" in \
                 your settings) to run without it and silence this warning",
                policy.mode
            ));
            Ok(SandboxPolicy::off())
        }
        jig_env_local::sandbox::Mechanism::Unavailable(reason) => Err(CliError::usage(format!(
            "the {} sandbox ({}) cannot be enforced: {reason}. To run commands without a \
             sandbox, pass --sandbox off",
            policy.mode,
            match source {
                Source::Flag => "--sandbox",
                _ => "sandbox.mode in your settings",
            }
        ))),
        jig_env_local::sandbox::Mechanism::Bubblewrap(_)
        | jig_env_local::sandbox::Mechanism::Landlock(_) => Ok(policy),
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os(jig_protocol::EnvVars::HOME)
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
}

/// A policy with the default protected paths of this user's home.
pub(crate) fn policy(mode: SandboxMode, network: bool, roots: Vec<PathBuf>) -> SandboxPolicy {
    SandboxPolicy::for_roots(mode, network, roots, home())
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

/// What `jig tools` says about the sandbox: the mode each subcommand starts with here (from the
/// user's settings or the built-in defaults) and the mechanism that would enforce it.
pub(crate) fn defaults_report() -> String {
    let settings = user_settings();
    let (mode, network, from) = match &settings {
        Ok(SandboxSettings {
            mode: Some(mode), ..
        }) => (
            SandboxMode::from(*mode).to_string(),
            settings.as_ref().ok().and_then(|s| s.network),
            "your settings",
        ),
        Ok(settings) => (
            "workspace-write (off for jig tool and --env)".to_owned(),
            settings.network,
            "the default",
        ),
        Err(_) => (
            "unknown".to_owned(),
            None,
            "your settings, which are not valid",
        ),
    };
    let network = if network == Some(true) { "on" } else { "off" };
    format!(
        "Sandbox for commands (docs/sandbox.md): {mode}, network {network}, from {from}; \
         --sandbox and --network change it. Mechanism here: {}.",
        jig_env_local::sandbox::mechanism().describe()
    )
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
        let mut policy = policy(
            args.mode.into(),
            args.network == Switch::On,
            vec![cwd.clone()],
        );
        add_protected(
            &mut policy,
            &user_settings()?.protected_paths,
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
