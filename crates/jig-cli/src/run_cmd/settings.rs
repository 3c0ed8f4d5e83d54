//! The user's settings for `jig run`: `$XDG_CONFIG_HOME/jig/settings.json` (default
//! `~/.config/jig/settings.json`).
//!
//! ```json
//! {"provider": "openai-compatible", "model": "qwen3-coder", "baseUrl": "http://localhost:8080/v1", "thinking": "low", "contextWindow": 32768}
//! ```
//!
//! Every key is optional; unknown keys are an error (a typo must not be ignored silently).
//! Project settings are not read: a repository must not choose where a user's prompts and code
//! are sent before the user has said they trust it.

use std::path::{Path, PathBuf};

use jig_llm::ThinkingLevel;
use serde::Deserialize;

use crate::exit::CliError;

/// What the settings file says.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
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
    /// The permission mode when `--permission-mode` is not given.
    pub(super) permission_mode: Option<jig_tui::policy::PermissionMode>,
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
            "the settings file {} is not valid: {error} (keys: provider, model, baseUrl, thinking, contextWindow, permissionMode)",
            path.display()
        ))
    })
}
