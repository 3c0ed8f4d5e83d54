//! The user's settings for `jig run`: `$XDG_CONFIG_HOME/jig/settings.json` (default
//! `~/.config/jig/settings.json`).
//!
//! ```json
//! {"provider": "openai-compatible", "model": "qwen3-coder", "baseUrl": "http://localhost:8080/v1", "thinking": "low", "contextWindow": 32768}
//! ```
//!
//! Every key is optional; unknown keys are an error (a typo must not be ignored silently).
//! A project's `.jig/settings.json` is merged over these only once the project is trusted
//! (`jig_project`): a repository must not choose where a user's prompts and code are sent before
//! the user has said they trust it.

use std::path::{Path, PathBuf};

use jig_llm::ThinkingLevel;
use serde::{Deserialize, Serialize};

use crate::exit::CliError;

/// What the settings file says.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Settings {
    /// The provider used when neither `--provider` nor a resumed session names one.
    pub(super) provider: Option<String>,
    /// The model for that provider.
    pub(super) model: Option<String>,
    /// The base URL for that provider.
    pub(super) base_url: Option<String>,
    /// The reasoning level when neither `--thinking` nor a resumed session sets one.
    pub(super) thinking: Option<ThinkingLevel>,
    /// The context window of the settings' model (of any model when `model` is not set).
    pub(super) context_window: Option<u64>,
    /// `defaultProjectTrust`, `extensions`, `hooks`: read by `jig_project` and the extension
    /// loader, accepted here so they are not unknown keys.
    #[serde(rename = "defaultProjectTrust")]
    _default_project_trust: Option<serde_json::Value>,
    #[serde(rename = "extensions")]
    _extensions: Option<serde_json::Value>,
    #[serde(rename = "hooks")]
    _hooks: Option<serde_json::Value>,
}

/// `$XDG_CONFIG_HOME/jig/settings.json`, or `$HOME/.config/jig/settings.json`.
pub(super) fn path() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let config =
        absolute("XDG_CONFIG_HOME").or_else(|| absolute("HOME").map(|h| h.join(".config")))?;
    Some(config.join("jig").join("settings.json"))
}

/// The user's settings; none when the file does not exist. A file that cannot be read or parsed
/// is an error naming it.
pub(super) fn load() -> Result<Settings, CliError> {
    match path() {
        Some(path) => load_from(&path),
        None => Ok(Settings::default()),
    }
}

/// The `user` settings with a trusted project's settings merged over them. Project settings
/// that are not valid settings are a warning and are not used.
pub(super) fn with_project(
    user: Settings,
    project: Option<&jig_project::ProjectSettings>,
) -> Settings {
    let Some(project) = project else {
        return user;
    };
    let valid = serde_json::from_value::<Settings>(project.value.clone()).and_then(|_| {
        let mut merged = serde_json::to_value(&user).unwrap_or_default();
        jig_project::merge_settings(&mut merged, project.value.clone());
        serde_json::from_value::<Settings>(merged)
    });
    match valid {
        Ok(merged) => merged,
        Err(error) => {
            super::output::warn(&format!(
                "Invalid settings file {}: {error}; ignoring it",
                project.path.display()
            ));
            user
        }
    }
}

fn load_from(path: &Path) -> Result<Settings, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Settings::default());
        }
        Err(error) => {
            return Err(CliError::usage(format!(
                "cannot read the settings file {}: {error}",
                path.display()
            )));
        }
    };
    serde_json::from_str(&text).map_err(|error| {
        CliError::usage(format!(
            "the settings file {} is not valid: {error} (keys: provider, model, baseUrl, thinking, contextWindow)",
            path.display()
        ))
    })
}
