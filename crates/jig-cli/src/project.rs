//! Project trust and extensions at startup, the same for `jig run`, `jig mcp` and `jig tool`.
//!
//! [`start`] runs before anything project-sourced is touched: it reads the user's
//! `defaultProjectTrust` and `extensions`, discovers the pre-trust extensions (`-e`, global,
//! settings), loads them ([`load_extensions`]), resolves the project's trust, and only for a
//! trusted project discovers and loads `.jig/extensions/` and reads `.jig/settings.json`. Then
//! it prints the diagnostics: warnings let startup go on, any error stops it with exit 1.
//!
//! Flags: `-e/--extension PATH` (repeatable), `-ne/--no-extensions`, `-a/--approve`,
//! `-na/--no-approve`. The two-letter forms and flags written before the subcommand (`jig -ne
//! run …`) are rewritten by [`normalize_args`] before clap parses.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use jig_project::{
    Diagnostics, DiscoveredExtension, DiscoveryInputs, ProjectSettings, ProjectTrustHook,
    StartupVerdict, TrustDecision, TrustInputs, TrustStore, UserProjectSettings, discover,
    read_project_settings, resolve_project_trust,
};

use crate::exit::CliError;

/// The extension and trust flags of `jig run`, `jig mcp` and `jig tool`.
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
}

impl ProjectArgs {
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

/// The subcommands that take [`ProjectArgs`].
const PROJECT_SUBCOMMANDS: &[&str] = &["run", "mcp", "tool"];

/// The command line with the two-letter flags spelled long (`-ne` → `--no-extensions`, `-na`
/// → `--no-approve`) and those flags, when written before the subcommand (`jig -ne run …`),
/// moved after it. Nothing after a `--` is touched.
pub(crate) fn normalize_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    for arg in &mut args[..end] {
        if arg == "-ne" {
            *arg = "--no-extensions".into();
        } else if arg == "-na" {
            *arg = "--no-approve".into();
        }
    }
    // Leading project flags, then a subcommand that takes them.
    let mut index = 1;
    while index < end {
        let arg = args[index].to_string_lossy();
        let takes_value = arg == "-e" || arg == "--extension";
        let is_flag = takes_value
            || arg.starts_with("--extension=")
            || matches!(
                arg.as_ref(),
                "-a" | "--approve" | "--no-approve" | "--no-extensions"
            );
        if !is_flag {
            break;
        }
        index += if takes_value { 2 } else { 1 };
    }
    if index > 1
        && index < end
        && PROJECT_SUBCOMMANDS.contains(&args[index].to_string_lossy().as_ref())
    {
        let flags: Vec<OsString> = args.drain(1..index).collect();
        let at = 2;
        for (offset, flag) in flags.into_iter().enumerate() {
            args.insert(at + offset, flag);
        }
    }
    args
}

/// What startup decided about the project.
#[derive(Debug)]
pub(crate) struct ProjectStartup {
    /// The trust decision (for `--verbose`).
    pub(crate) decision: TrustDecision,
    /// The trusted project's `.jig/settings.json`; `None` when untrusted or absent.
    pub(crate) settings: Option<ProjectSettings>,
    /// The loaded extensions.
    #[expect(dead_code, reason = "used once the extension runtime is wired in")]
    pub(crate) extensions: LoadedExtensions,
}

/// The extensions that were loaded. Empty until the extension runtime is wired in.
#[derive(Default)]
pub(crate) struct LoadedExtensions {
    /// The pre-trust extensions' `project_trust` event.
    trust_hook: Option<Arc<dyn ProjectTrustHook>>,
}

impl std::fmt::Debug for LoadedExtensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedExtensions")
            .field("trust_hook", &self.trust_hook.is_some())
            .finish()
    }
}

/// What [`load_extensions`] is asked to load.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadRequest<'a> {
    /// Extensions to load, in order.
    pub(crate) extensions: &'a [DiscoveredExtension],
    /// The trusted project's settings, whose `extensions` and `hooks` name more extensions and
    /// commands to run on events.
    pub(crate) project_settings: Option<&'a ProjectSettings>,
}

/// The reason every extension fails to load in this build.
const NOT_WIRED: &str =
    "loading extensions is not implemented in this build of jig (no extension runtime)";

/// Loads `request` into `loaded`. This build has no extension runtime: every extension, and the
/// project settings' `extensions` and `hooks`, are load errors (exit 1 with the `jig -ne` hint)
/// instead of being skipped silently. Nothing is executed.
///
/// This is the one function the extension runtime replaces.
#[expect(
    clippy::unused_async,
    reason = "loading spawns and initialises extension processes once the runtime is wired in"
)]
pub(crate) async fn load_extensions(
    request: LoadRequest<'_>,
    loaded: &mut LoadedExtensions,
    diagnostics: &mut Diagnostics,
) {
    let _ = loaded;
    for extension in request.extensions {
        diagnostics.extension_load_error(&extension.path, NOT_WIRED);
    }
    if let Some(settings) = request.project_settings {
        let keys: Vec<&str> = ["extensions", "hooks"]
            .into_iter()
            .filter(|key| settings.value.get(key).is_some())
            .collect();
        if !keys.is_empty() {
            diagnostics
                .extension_load_error(&settings.path, &format!("{}: {NOT_WIRED}", keys.join(", ")));
        }
    }
}

/// Resolves the trust of `project_dir` (canonical) and loads what it allows; prints the
/// diagnostics. An error diagnostic (or a damaged trust store) stops startup with exit 1.
pub(crate) async fn start(
    args: &ProjectArgs,
    project_dir: &Path,
) -> Result<ProjectStartup, CliError> {
    let mut diagnostics = Diagnostics::default();
    let config_dir = jig_project::config_dir();
    let user = config_dir
        .as_deref()
        .map(|dir| UserProjectSettings::load(dir, &mut diagnostics))
        .unwrap_or_default();
    let inputs = DiscoveryInputs {
        cli_paths: args.extensions.clone(),
        base_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        no_extensions: args.no_extensions,
        config_dir: config_dir.clone(),
        settings_paths: user.extensions.clone(),
    };

    // Pre-trust: everything but the project.
    let pre_trust = discover(&inputs, None, &mut diagnostics);
    let mut loaded = LoadedExtensions::default();
    load_extensions(
        LoadRequest {
            extensions: &pre_trust,
            project_settings: None,
        },
        &mut loaded,
        &mut diagnostics,
    )
    .await;

    let store = config_dir.as_deref().map(TrustStore::in_config_dir);
    let decision = resolve_project_trust(
        &TrustInputs {
            project_dir,
            trust_override: args.trust_override(),
            hook: loaded.trust_hook.as_deref(),
            store: store.as_ref(),
            default_trust: user.default_project_trust,
            prompt: None,
        },
        &mut diagnostics,
    )
    .await
    .map_err(|error| {
        let _ = diagnostics.report_to_stderr();
        CliError::Failure(anyhow::Error::new(error).context("cannot decide the project's trust"))
    })?;
    if let Some(warning) = decision.untrusted_warning() {
        diagnostics.trust_warning(warning);
    }

    // Trusted: the project's extensions and settings.
    let mut settings = None;
    if let Some(project) = decision.trusted_project() {
        let project_extensions: Vec<DiscoveredExtension> =
            discover(&inputs, Some(&project), &mut diagnostics)
                .into_iter()
                .filter(|found| !pre_trust.iter().any(|pre| pre.path == found.path))
                .collect();
        settings = read_project_settings(&project, &mut diagnostics);
        load_extensions(
            LoadRequest {
                extensions: &project_extensions,
                // `-ne` also leaves the project settings' hooks alone.
                project_settings: settings.as_ref().filter(|_| !args.no_extensions),
            },
            &mut loaded,
            &mut diagnostics,
        )
        .await;
    }

    match diagnostics.report_to_stderr() {
        StartupVerdict::Continue => Ok(ProjectStartup {
            decision,
            settings,
            extensions: loaded,
        }),
        StartupVerdict::Exit(code) => Err(CliError::Reported(code)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalized(line: &str) -> String {
        normalize_args(line.split(' ').map(OsString::from))
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn two_letter_flags_and_leading_flags_are_rewritten() {
        assert_eq!(normalized("jig run -ne hi"), "jig run --no-extensions hi");
        assert_eq!(normalized("jig mcp -na"), "jig mcp --no-approve");
        assert_eq!(
            normalized("jig -ne -e x.py -a run hi"),
            "jig run --no-extensions -e x.py -a hi"
        );
        assert_eq!(
            normalized("jig --extension=x tool read"),
            "jig tool --extension=x read"
        );
        // Not before a subcommand that takes them, or after `--`: untouched.
        assert_eq!(normalized("jig -ne tools"), "jig --no-extensions tools");
        assert_eq!(normalized("jig run -- -ne"), "jig run -- -ne");
    }
}
