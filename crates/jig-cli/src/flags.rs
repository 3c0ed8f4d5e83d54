//! Flag groups several subcommands share, and what each turns into for the harness.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use jig_session::project::ProjectOptions;
use jig_session::startup::OpenOptions;
use jig_session::workspace::EnvOptions;

use crate::sandbox_cmd::SandboxFlags;
use jig_tool::ContainmentMode;

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

/// The extension and trust flags of `jig run`, `jig mcp`, `jig tool` and `jig tools`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ProjectArgs {
    /// Load the extension at PATH (repeatable); kept with -ne.
    #[arg(short = 'e', long = "extension", value_name = "PATH")]
    pub(crate) extensions: Vec<PathBuf>,
    /// Do not discover extensions (project, global, settings); -e still loads [short: -ne].
    #[arg(long = "no-extensions")]
    pub(crate) no_extensions: bool,
    /// Trust the project for this run: load its .jig extensions and settings (nothing is saved).
    #[arg(short = 'a', long = "approve", conflicts_with = "no_approve")]
    pub(crate) approve: bool,
    /// Do not trust the project for this run (nothing is saved) [short: -na].
    #[arg(long = "no-approve")]
    pub(crate) no_approve: bool,
    /// Set a flag an extension registers: NAME=VALUE, or NAME alone for a boolean flag
    /// (repeatable). `--NAME[=VALUE]` does the same for a name jig does not use itself.
    #[arg(long = "flag", value_name = "NAME[=VALUE]")]
    pub(crate) flags: Vec<String>,
}

impl ProjectArgs {
    /// The options the harness takes.
    pub(crate) fn options(&self) -> ProjectOptions {
        ProjectOptions {
            extensions: self.extensions.clone(),
            no_extensions: self.no_extensions,
            trust: self.trust_override(),
            flags: self.flags.clone(),
            dialogs: false,
        }
    }

    fn trust_override(&self) -> Option<bool> {
        if self.approve {
            Some(true)
        } else if self.no_approve {
            Some(false)
        } else {
            None
        }
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

impl EnvFlags {
    /// The options the harness takes.
    pub(crate) fn options(&self) -> EnvOptions {
        EnvOptions {
            url: self.url.clone(),
            audit: self.audit.clone(),
            audit_best_effort: self.audit_best_effort,
        }
    }
}

/// Where a tool-running subcommand opens its session, from the flag groups they all have:
/// `roots` given with `roots_flag` (`--cwd`, `--root`), nothing said on stderr, temporary files
/// removed at the end.
pub(crate) fn open_options(
    (roots, roots_flag): (Vec<PathBuf>, &'static str),
    containment: ContainmentArg,
    project: &ProjectArgs,
    env: &EnvFlags,
    sandbox: &SandboxFlags,
) -> OpenOptions {
    OpenOptions {
        env: env.options(),
        roots,
        roots_flag,
        containment: containment.into(),
        sandbox: sandbox.request(),
        project: project.options(),
        verbose: false,
        keep_temp_files: false,
    }
}
