//! The command sandbox a session runs with: the user's `sandbox` settings, a trusted project's
//! protected paths, whether a mechanism can enforce it here, and the one-line report.

use std::path::PathBuf;

use crate::StartError;
use crate::settings::SandboxSettings;
use jig_env::{SandboxMode, SandboxPolicy};

/// What the command line asks of the sandbox (`--sandbox`, `--network`); `None` leaves it to
/// the settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SandboxRequest {
    /// The mode.
    pub mode: Option<SandboxMode>,
    /// Whether sandboxed commands may use the network.
    pub network: Option<bool>,
}

impl SandboxRequest {
    /// The policy this asks for, over the user's `settings`, with the subcommand's `default`
    /// mode when neither names one.
    ///
    /// # Errors
    /// A protected path in the settings that is empty or climbs out with `..`.
    pub fn resolve(
        &self,
        settings: &SandboxSettings,
        default: SandboxMode,
    ) -> Result<Requested, StartError> {
        let (mode, source) = match (self.mode, settings.mode) {
            (Some(mode), _) => (mode, Source::Flag),
            (None, Some(mode)) => (mode.into(), Source::Settings),
            (None, None) => (default, Source::Default),
        };
        let network = self.network.unwrap_or(settings.network.unwrap_or(false));
        let mut policy = policy(mode, network, Vec::new());
        add_protected(&mut policy, &settings.protected_paths, "your settings")?;
        Ok(Requested { policy, source })
    }
}

/// Who turned the sandbox on (or off), for the fallback rule and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `--sandbox` or `--network` on the command line.
    Flag,
    /// The user's settings file.
    Settings,
    /// The built-in default of the subcommand.
    Default,
}

/// The sandbox a subcommand asks for, before the workspace roots are added.
#[derive(Debug, Clone)]
pub struct Requested {
    /// The policy.
    pub policy: SandboxPolicy,
    /// Where its mode came from.
    pub source: Source,
}

/// Adds `paths` (as written in the settings of `whose`) to the policy's protected paths.
pub fn add_protected(
    policy: &mut SandboxPolicy,
    paths: &[String],
    whose: &str,
) -> Result<(), StartError> {
    let home = home();
    for written in paths {
        let path = PathBuf::from(written);
        if written.trim().is_empty()
            || path
                .components()
                .any(|part| part == std::path::Component::ParentDir)
        {
            return Err(StartError::usage(format!(
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
/// The project's `sandbox` section is not valid, or a path in it is not one jig can protect:
/// protection a project asks for must not silently go.
pub fn add_project_protected(
    policy: &mut SandboxPolicy,
    project: Option<&jig_project::ProjectSettings>,
) -> Result<(), StartError> {
    let Some(project) = project else {
        return Ok(());
    };
    let whose = project.path.display().to_string();
    let layer = crate::settings::project_layer(project);
    if let Some((_, why)) = layer.invalid.iter().find(|(key, _)| key == "sandbox") {
        return Err(StartError::usage(format!(
            "the `sandbox` section of {whose} is not valid: {why}"
        )));
    }
    let Some(settings) = layer.settings.sandbox else {
        return Ok(());
    };
    if settings.mode.is_some() || settings.network.is_some() {
        crate::warn(&format!(
            "{whose}: sandbox.mode and sandbox.network are ignored in a project's settings; a project may only add sandbox.protectedPaths"
        ));
    }
    add_protected(policy, &settings.protected_paths, &whose)
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
pub fn enforce(requested: Requested, remote: bool) -> Result<SandboxPolicy, StartError> {
    let Requested { policy, source } = requested;
    if !policy.is_on() || remote {
        return Ok(policy);
    }
    match jig_env_local::sandbox::mechanism() {
        jig_env_local::sandbox::Mechanism::Unavailable(reason) if source == Source::Default => {
            crate::warn(&format!(
                "NO SANDBOX: commands run with your full rights, because no mechanism can \
                 enforce the default {} sandbox here: {reason}. Install bubblewrap, or use a \
                 kernel with Landlock; pass --sandbox off (or set sandbox.mode to \"off\" in \
                 your settings) to run without it and silence this warning",
                policy.mode
            ));
            Ok(SandboxPolicy::off())
        }
        jig_env_local::sandbox::Mechanism::Unavailable(reason) => Err(StartError::usage(format!(
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
pub fn policy(mode: SandboxMode, network: bool, roots: Vec<PathBuf>) -> SandboxPolicy {
    SandboxPolicy::for_roots(mode, network, roots, home())
}

/// One line for reports: the mechanism and what the policy enforces (`remote`: the far side of
/// `--env` enforces it with its own mechanism).
pub fn report(policy: &SandboxPolicy, remote: bool) -> String {
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
///
/// `settings`: the user's `sandbox` settings.
pub fn defaults_report(settings: &SandboxSettings) -> String {
    let (mode, from) = match settings.mode {
        Some(mode) => (SandboxMode::from(mode).to_string(), "your settings"),
        None => (
            "workspace-write (off for jig tool and --env)".to_owned(),
            "the default",
        ),
    };
    let network = settings.network;
    let network = if network == Some(true) { "on" } else { "off" };
    format!(
        "Sandbox for commands (docs/sandbox.md): {mode}, network {network}, from {from}; \
         --sandbox and --network change it. Mechanism here: {}.",
        jig_env_local::sandbox::mechanism().describe()
    )
}
