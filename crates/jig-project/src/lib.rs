//! What a project directory may bring into jig, and when: project trust, extension discovery and
//! the startup diagnostics that decide whether jig starts at all.
//!
//! A project can carry things that *run* or *steer* jig: extensions in `.jig/extensions/`,
//! project-defined tools in `.jig/tools/`, and a `.jig/settings.json` that names commands, hooks,
//! extensions or where prompts are sent. None of these is spawned, loaded or read as
//! configuration before the project is trusted. Context files such as `AGENTS.md` are plain text
//! for the model and are read regardless.
//!
//! - [`resources`]: what in a project requires trust ([`trust_requiring_resources`]).
//! - [`trust`]: the decision chain, one function per step, short-circuiting
//!   ([`resolve_project_trust`]): `--approve`/`--no-approve` → nothing requires trust ⇒ trusted
//!   → the pre-trust extensions' `project_trust` event ([`ProjectTrustHook`]) → the saved
//!   decision ([`TrustStore`], nearest ancestor wins) → the `defaultProjectTrust` setting →
//!   no prompt in this mode ⇒ untrusted → the prompt ([`TrustPrompt`]), whose answer is a
//!   [`TrustChoice`] (trust, trust the parent folder, trust for this session, do not trust, do
//!   not trust for this session) that says exactly what it saves.
//! - [`snapshot`]: what the decision is made on, looked at once ([`ProjectSnapshot`]): `.jig`
//!   opened as a handle and its settings read through it; a trusted project's extensions and
//!   settings come from it, so swapping `.jig` after the decision loads nothing.
//! - [`store`]: `$XDG_CONFIG_HOME/jig/trust.json`, read and written under a file lock, written
//!   atomically; keys are compared in their normal form ([`store::normal_keys`]).
//! - [`discovery`]: where extensions come from (`-e`, the trusted project's `.jig/extensions/`,
//!   the global `$XDG_CONFIG_HOME/jig/extensions/`, the user settings' `extensions`), in that
//!   order, deduplicated by canonical path. Discovery never executes anything.
//! - [`settings`]: the user settings keys read here (`defaultProjectTrust`, `extensions`) and
//!   the project settings, returned only for a trusted project.
//! - A project on another machine (`--env`) is looked at through its execution environment
//!   ([`trust_requiring_resources_in`], [`read_project_settings_in`]) and decided with
//!   [`resolve_project_trust_of`] under the name its caller gives it (its URL).
//! - [`skills`]: Agent Skills (`SKILL.md` directories) from the user's directories, `--skill`
//!   and settings, and a trusted project's `.jig/skills/` and `.agents/skills/`; the system
//!   prompt's list of them. [`prompts`]: prompt templates (`/name` commands from Markdown files).
//! - [`diagnostics`]: warnings print and startup continues; extension load errors, name
//!   conflicts and provider-registration errors stop startup with exit 1.
//!
//! ```no_run
//! # async fn example() -> Result<(), jig_project::TrustError> {
//! use std::path::Path;
//! use jig_project::{Diagnostics, TrustInputs, TrustStore, DefaultProjectTrust, resolve_project_trust};
//!
//! let mut diagnostics = Diagnostics::default();
//! let store = TrustStore::in_config_dir(Path::new("/home/me/.config/jig"));
//! let decision = resolve_project_trust(
//!     &TrustInputs {
//!         project_dir: Path::new("/home/me/src/app"),
//!         trust_override: None,
//!         hook: None,
//!         store: Some(&store),
//!         default_trust: DefaultProjectTrust::Ask,
//!         prompt: None,
//!     },
//!     &mut diagnostics,
//! )
//! .await?;
//! println!("{}", decision.describe());
//! # Ok(())
//! # }
//! ```
#![expect(
    clippy::disallowed_methods,
    reason = "host configuration: the trust store, the user's config dir and the project's .jig \
              directory are read on the host before any execution environment exists"
)]

pub mod diagnostics;
pub mod discovery;
mod front_matter;
mod json_file;
pub mod prompts;
pub mod resources;
pub mod settings;
pub mod skills;
pub mod snapshot;
pub mod store;
pub mod trust;

use std::path::PathBuf;

pub use diagnostics::{Diagnostic, DiagnosticKind, Diagnostics, Severity, StartupVerdict};
pub use discovery::{
    DiscoveredExtension, DiscoveryInputs, Entry, Origin, PI_PROJECT_DIR, discover,
    pi_user_extensions_dir,
};
pub use prompts::{PromptTemplate, TemplateInputs, TemplateSource, discover_templates};
pub use resources::{GatedResource, trust_requiring_resources_in};
pub use settings::{
    ProjectSettings, UserProjectSettings, merge_settings, read_project_settings,
    read_project_settings_in,
};
pub use skills::{
    Skill, SkillInputs, SkillSource, discover_skills, skill_invocation, skills_prompt,
};
pub use snapshot::ProjectSnapshot;
pub use snapshot::trust_requiring_resources;
pub use store::{StoredDecision, TrustStore, TrustStoreError};
pub use trust::{
    DefaultProjectTrust, ProjectTrustHook, TrustAnswer, TrustChoice, TrustDecision, TrustError,
    TrustInputs, TrustPrompt, TrustStep, TrustedProject, prompt_title, resolve_project_trust,
    resolve_project_trust_in, resolve_project_trust_of,
};

/// The project's configuration directory name: `<project>/.jig/`.
pub const PROJECT_DIR_NAME: &str = ".jig";

/// The name of a settings file: the user's in [`config_dir`], a project's in
/// [`PROJECT_DIR_NAME`]. Parsed in one place, `jig_session::settings`.
pub const SETTINGS_FILE: &str = "settings.json";

/// jig's user configuration directory: `$XDG_CONFIG_HOME/jig`, else `$HOME/.config/jig`
/// (relative values of either variable are ignored, as the XDG spec says). `None` when neither
/// gives an absolute path.
pub fn config_dir() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let config = absolute(jig_protocol::EnvVars::XDG_CONFIG_HOME)
        .or_else(|| absolute(jig_protocol::EnvVars::HOME).map(|h| h.join(".config")))?;
    Some(config.join("jig"))
}
