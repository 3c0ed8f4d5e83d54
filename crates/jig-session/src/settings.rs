//! The user's settings for `jig run`: `$XDG_CONFIG_HOME/jig/settings.json` (default
//! `~/.config/jig/settings.json`).
//!
//! ```json
//! {"provider": "openai-compatible", "model": "qwen3-coder", "baseUrl": "http://localhost:8080/v1", "thinking": "low", "contextWindow": 32768}
//! ```
//!
//! Every key is optional; unknown keys are an error (a typo must not be ignored silently).
//!
//! `providers` adds custom providers, `models` overrides the prices and windows of models of
//! built-in providers:
//!
//! ```json
//! {"providers": [{"name": "corp", "kind": "openai", "baseUrl": "https://llm.corp.example/v1",
//!   "apiKeyEnv": "CORP_LLM_KEY",
//!   "models": [{"id": "coder", "contextWindow": 65536,
//!     "cost": {"input": 1.0, "output": 4.0, "cacheRead": 0.1, "cacheWrite": 0}}]}],
//!  "models": [{"provider": "anthropic", "id": "claude-sonnet-4-5", "cost": {"input": 3, "output": 15}}]}
//! ```
//!
//! A bad `providers` or `models` entry is a warning and is left out — unless the run selects that
//! provider (`--provider`, the `provider` key, a resumed session): then it is an error saying
//! what to fix.
//!
//! A project's `.jig/settings.json` is merged over these only once the project is trusted
//! (`jig_project`): a repository must not choose where a user's prompts and code are sent before
//! the user has said they trust it.

use std::path::{Path, PathBuf};

use jig_llm::{Api, KnownProvider, ModelCost, ModelInfo, ModelTable, ThinkingLevel};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::StartError;

/// What the settings file says.
#[derive(Debug, Default, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// The provider used when neither `--provider` nor a resumed session names one.
    pub provider: Option<String>,
    /// The model for that provider.
    pub model: Option<String>,
    /// The base URL for that provider.
    pub base_url: Option<String>,
    /// The reasoning level when neither `--thinking` nor a resumed session sets one.
    pub thinking: Option<ThinkingLevel>,
    /// The context window of the settings' model (of any model when `model` is not set).
    pub context_window: Option<u64>,
    /// `defaultProjectTrust`, `extensions`, `hooks`: read by `jig_project` and the extension
    /// loader, accepted here so they are not unknown keys.
    #[serde(rename = "defaultProjectTrust")]
    _default_project_trust: Option<serde_json::Value>,
    #[serde(rename = "extensions")]
    _extensions: Option<serde_json::Value>,
    #[serde(rename = "hooks")]
    _hooks: Option<serde_json::Value>,
    /// `piExtensions`: read by `jig_project` (Pi's extension directories).
    #[serde(rename = "piExtensions")]
    _pi_extensions: Option<bool>,
    /// Custom providers, as written (each entry is checked on its own: see [`Settings::providers`]).
    #[serde(default)]
    providers: Vec<Value>,
    /// Overrides of built-in models' prices and windows, as written.
    #[serde(default)]
    models: Vec<Value>,
    /// The permission mode when `--permission-mode` is not given.
    pub permission_mode: Option<crate::policy::PermissionMode>,
    /// More skills: paths of skill directories, `SKILL.md` files or directories of skills
    /// (relative to the settings file's directory; `~/` is the home directory).
    pub skills: Option<Vec<String>>,
    /// Also read prompt templates from `.claude/commands/` (the project's, once trusted, and
    /// `~/.claude/commands/`).
    pub claude_commands: Option<bool>,
    /// The command sandbox (`mode`, `network`, `protectedPaths`); see docs/sandbox.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::SandboxSettings>,
}

/// The protocol a custom provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI Chat Completions.
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

impl ProviderKind {
    /// The wire protocol it speaks.
    pub fn api(self) -> Api {
        match self {
            Self::Openai => Api::OpenAiCompletions,
            Self::Anthropic => Api::AnthropicMessages,
        }
    }

    /// Its name in the settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    /// The kind a settings file names.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "openai" => Some(Self::Openai),
            "anthropic" => Some(Self::Anthropic),
            _ => None,
        }
    }
}

/// A custom provider from the settings' `providers`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CustomProvider {
    /// The name `--provider` selects (and the session records).
    pub name: String,
    /// `openai` or `anthropic`.
    pub kind: ProviderKind,
    /// The endpoint (`https://…/v1` for `openai`, the part before `/v1/messages` for
    /// `anthropic`).
    pub base_url: String,
    /// The environment variable holding the API key; none for endpoints without keys.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The models it serves; the first is the default.
    #[serde(default)]
    pub models: Vec<ModelInfo>,
}

/// An entry of the settings' `models`: a built-in provider's model with other prices or window.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ModelOverride {
    provider: String,
    id: String,
    #[serde(default)]
    context_window: Option<u64>,
    #[serde(default)]
    cost: Option<ModelCost>,
}

/// A `providers` entry that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadEntry {
    /// Its `name`, when it has one.
    pub name: Option<String>,
    /// How the warning names it: ``provider `corp` `` or `providers[2]`.
    pub label: String,
    /// What is wrong, for the user.
    pub problem: String,
    /// The extension that registered it; none for the settings file's entries.
    pub extension: Option<String>,
}

/// The settings' custom providers: the usable ones and the bad entries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Providers {
    /// The entries that can be used.
    pub usable: Vec<CustomProvider>,
    /// The entries left out, and why.
    pub bad: Vec<BadEntry>,
    /// The names of the usable ones that extensions registered.
    pub from_extensions: Vec<String>,
}

impl Providers {
    /// The usable provider called `name`.
    pub fn find(&self, name: &str) -> Option<&CustomProvider> {
        self.usable.iter().find(|provider| provider.name == name)
    }

    /// The bad entry called `name`.
    pub fn bad(&self, name: &str) -> Option<&BadEntry> {
        self.bad
            .iter()
            .find(|entry| entry.name.as_deref() == Some(name))
    }
}

impl Settings {
    /// The custom providers, each entry checked on its own: a valid name (not a built-in
    /// provider's, not used twice), `kind` `openai` or `anthropic`, an `http(s)://` base URL, a
    /// variable name for the key, models with ids.
    pub fn providers(&self) -> Providers {
        let mut providers = Providers::default();
        for (index, raw) in self.providers.iter().enumerate() {
            let name = raw.get("name").and_then(Value::as_str).map(str::to_owned);
            match check_provider(raw, &providers) {
                Ok(provider) => providers.usable.push(provider),
                Err(problem) => providers.bad.push(BadEntry {
                    label: name.as_deref().map_or_else(
                        || format!("providers[{index}]"),
                        |name| format!("provider `{name}`"),
                    ),
                    name,
                    problem,
                    extension: None,
                }),
            }
        }
        providers
    }

    /// The model table: the built-in models, the settings' `models` overrides and the custom
    /// providers' models. Bad `models` entries are returned as problems.
    pub fn model_table(&self, providers: &Providers) -> (ModelTable, Vec<String>) {
        let mut table = ModelTable::builtin();
        let mut problems = Vec::new();
        for (index, raw) in self.models.iter().enumerate() {
            match serde_json::from_value::<ModelOverride>(raw.clone()) {
                Ok(entry) => {
                    table = table.with_models(
                        &entry.provider,
                        [ModelInfo {
                            id: entry.id,
                            context_window: entry.context_window,
                            cost: entry.cost,
                        }],
                    );
                }
                Err(error) => problems.push(format!("models[{index}]: {error}")),
            }
        }
        for provider in &providers.usable {
            table = table.with_models(&provider.name, provider.models.iter().cloned());
        }
        (table, problems)
    }
}

fn check_provider(raw: &Value, known: &Providers) -> Result<CustomProvider, String> {
    let provider: CustomProvider = serde_json::from_value(raw.clone())
        .map_err(|error| format!("{error} (keys: name, kind, baseUrl, apiKeyEnv, models)"))?;
    let name = provider.name.as_str();
    if name.is_empty() || name.chars().any(char::is_whitespace) {
        return Err("`name` must be a non-empty word".to_owned());
    }
    if KnownProvider::find(name).is_some() {
        return Err(format!(
            "`{name}` is a built-in provider; give the custom provider another name"
        ));
    }
    if known.find(name).is_some() {
        return Err("the name is used by an earlier entry".to_owned());
    }
    if !(provider.base_url.starts_with("http://") || provider.base_url.starts_with("https://")) {
        return Err(format!(
            "`baseUrl` must start with http:// or https:// (got `{}`)",
            provider.base_url
        ));
    }
    if let Some(variable) = &provider.api_key_env
        && (variable.is_empty()
            || !variable
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Err(format!(
            "`apiKeyEnv` must be the name of an environment variable such as CORP_API_KEY (got `{variable}`)"
        ));
    }
    if let Some(model) = provider.models.iter().find(|model| model.id.is_empty()) {
        return Err(format!("a model has an empty `id`: {model:?}"));
    }
    Ok(provider)
}

impl Providers {
    /// These providers and those the extensions of `runner` registered while loading (in their
    /// `initialize` reply or by `registerProvider` during `initialize`). An extension's entry
    /// is read like a settings entry; `api` (`openai-completions`, `anthropic-messages`) may
    /// stand for `kind`, and a model's other fields (display name, capabilities) are ignored.
    /// An entry that cannot be used is a bad entry naming the extension.
    #[must_use]
    pub fn with_extensions(mut self, runner: &jig_extensions::ExtensionRunner) -> Self {
        for extension in runner.extensions() {
            for raw in &extension.registrations().providers {
                let name = raw.get("name").and_then(Value::as_str).map(str::to_owned);
                let checked = extension_entry(raw).and_then(|entry| check_provider(&entry, &self));
                match checked {
                    Ok(provider) => {
                        self.from_extensions.push(provider.name.clone());
                        self.usable.push(provider);
                    }
                    Err(problem) => self.bad.push(BadEntry {
                        label: format!(
                            "provider `{}` of extension {}",
                            name.as_deref().unwrap_or("?"),
                            extension.path()
                        ),
                        name,
                        problem,
                        extension: Some(extension.path().to_owned()),
                    }),
                }
            }
        }
        self
    }
}

/// An extension's provider registration as a settings `providers` entry.
fn extension_entry(raw: &Value) -> Result<Value, String> {
    let object = raw
        .as_object()
        .ok_or_else(|| format!("a provider registration must be an object, got {raw}"))?;
    if object.contains_key("apiKey") {
        return Err(
            "`apiKey` is not read: name the environment variable holding the key in `apiKeyEnv`"
                .to_owned(),
        );
    }
    let mut entry = serde_json::Map::new();
    for key in ["name", "kind", "baseUrl", "apiKeyEnv"] {
        if let Some(value) = object.get(key) {
            entry.insert(key.to_owned(), value.clone());
        }
    }
    if !entry.contains_key("kind") {
        let kind = match object.get("api").and_then(Value::as_str) {
            None | Some("openai-completions" | "openai") => "openai",
            Some("anthropic-messages" | "anthropic") => "anthropic",
            Some(other) => {
                return Err(format!(
                    "`api` `{other}` is not spoken here (openai-completions or anthropic-messages)"
                ));
            }
        };
        entry.insert("kind".to_owned(), Value::from(kind));
    }
    if let Some(models) = object.get("models").and_then(Value::as_array) {
        let models = models
            .iter()
            .map(|model| {
                let mut kept = serde_json::Map::new();
                for key in ["id", "contextWindow", "cost"] {
                    if let Some(value) = model.get(key) {
                        kept.insert(key.to_owned(), value.clone());
                    }
                }
                Value::Object(kept)
            })
            .collect();
        entry.insert("models".to_owned(), Value::Array(models));
    }
    Ok(Value::Object(entry))
}

/// `$XDG_CONFIG_HOME/jig/settings.json`, or `$HOME/.config/jig/settings.json`.
pub fn path() -> Option<PathBuf> {
    Some(jig_project::config_dir()?.join("settings.json"))
}

/// The user's settings; none when the file does not exist. A file that cannot be read or parsed
/// is an error naming it.
///
/// A trusted project's settings are merged over these by [`with_project`].
pub fn load() -> Result<Settings, StartError> {
    match path() {
        Some(path) => load_from(&path),
        None => Ok(Settings::default()),
    }
}

/// Every top-level key of a settings file, as the error about an unknown key lists them.
pub const KEYS: &[&str] = &[
    "provider",
    "model",
    "baseUrl",
    "thinking",
    "contextWindow",
    "permissionMode",
    "providers",
    "models",
    "defaultProjectTrust",
    "extensions",
    "hooks",
    "piExtensions",
    "skills",
    "claudeCommands",
    "sandbox",
];

/// Why a trusted project's `.jig/settings.json` is not valid settings (an unknown key, a value
/// of the wrong type), for the warning every mode prints at startup; `None` when it is valid.
pub fn project_problem(project: &jig_project::ProjectSettings) -> Option<String> {
    serde_json::from_value::<Settings>(project.value.clone())
        .err()
        .map(|error| format!("{error} (keys: {})", KEYS.join(", ")))
}

/// The `permissionMode` a trusted project's valid settings ask for (it may only narrow the
/// user's mode: `SettingsModes::resolve`).
pub fn project_permission_mode(
    project: &jig_project::ProjectSettings,
) -> Option<crate::policy::PermissionMode> {
    serde_json::from_value::<Settings>(project.value.clone())
        .ok()?
        .permission_mode
}

/// The `user` settings with a trusted project's settings merged over them. Project settings
/// that are not valid settings ([`project_problem`], warned about at startup) are not used.
pub fn with_project(user: Settings, project: Option<&jig_project::ProjectSettings>) -> Settings {
    let Some(project) = project.filter(|project| project_problem(project).is_none()) else {
        return user;
    };
    let mut merged = serde_json::to_value(&user).unwrap_or_default();
    jig_project::merge_settings(&mut merged, project.value.clone());
    match serde_json::from_value::<Settings>(merged) {
        Ok(merged) => merged,
        Err(error) => {
            crate::warn(&format!(
                "Invalid settings file {}: merged over yours: {error}; ignoring it",
                project.path.display()
            ));
            user
        }
    }
}

fn load_from(path: &Path) -> Result<Settings, StartError> {
    read_from(path).map_err(StartError::usage)
}

/// What is wrong with the user's settings file (unreadable, not JSON, an unknown key, a value of
/// the wrong type), for the commands that do not run a model: they read only its
/// `defaultProjectTrust` and `extensions`, so for them it is a warning, where `jig run` stops.
/// A file that is not JSON at all is left to `jig_project`, which already warns about it.
pub fn user_problem() -> Option<String> {
    let path = path()?;
    let text = std::fs::read_to_string(&path).ok()?;
    serde_json::from_str::<Value>(&text).ok()?;
    read_from(&path).err()
}

fn read_from(path: &Path) -> Result<Settings, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Settings::default());
        }
        Err(error) => {
            return Err(format!(
                "cannot read the settings file {}: {error}",
                path.display()
            ));
        }
    };
    serde_json::from_str(&text).map_err(|error| {
        format!(
            "the settings file {} is not valid: {error} (keys: {})",
            path.display(),
            KEYS.join(", ")
        )
    })
}
