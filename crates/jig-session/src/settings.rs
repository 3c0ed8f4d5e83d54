//! The user's settings for `jig run`: `$XDG_CONFIG_HOME/jig/settings.json` (default
//! `~/.config/jig/settings.json`).
//!
//! ```json
//! {"provider": "openai-compatible", "model": "qwen3-coder", "baseUrl": "http://localhost:8080/v1", "thinking": "low", "contextWindow": 32768}
//! ```
//!
//! Every key is optional. The one policy for every settings file, in every face (docs/agent.md):
//! a key jig does not know is a warning naming the key and the file, and is ignored; a value
//! jig cannot use (or a file that cannot be read or is not a JSON object) is an error naming the
//! file and the key — in your settings file it stops jig (exit 2), in a project's it is a
//! warning and none of the project's settings apply (a repository cannot stop you working),
//! except its `extensions` and `hooks`, which load on their own, and its `sandbox`, whose
//! protection must not silently go (an error).
//!
//! This module is where a settings file is parsed: [`load`] reads yours once per command,
//! [`project_layer`] types a trusted project's (read once, through the trust decision's
//! handle, by `jig_project`).
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

use jig_env::SandboxMode;
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
    /// Whether a project without a saved decision is trusted: `always`, `never` or `ask` (the
    /// default; untrusted where nobody can be asked).
    pub default_project_trust: Option<TrustDefault>,
    /// More extensions to load: paths, relative ones against the settings file's directory,
    /// `~/` in the home directory.
    pub extensions: Option<Vec<String>>,
    /// Command hooks by event (a project's settings; see docs/extensions.md). Checked when
    /// they are loaded.
    pub hooks: Option<Value>,
    /// Also discover Pi's extension directories (`~/.pi/agent/extensions`, a trusted project's
    /// `.pi/extensions`).
    pub pi_extensions: Option<bool>,
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
    pub sandbox: Option<SandboxSettings>,
    /// Whether long-lived sessions keep a warm index of each workspace root for `grep` and
    /// `find` (default: yes; `jig tool` never does). See docs/agent.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_index: Option<bool>,
}

/// The `sandbox` section of a settings file. The user's may set everything; a trusted project's
/// may only add `protectedPaths` (a repository must not loosen what protects the user from it).
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxSettings {
    /// The mode when `--sandbox` is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ModeSetting>,
    /// Whether sandboxed commands may use the network when `--network` is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// More protected paths: `~/…` in the home directory, absolute paths, or names relative to
    /// each writable root (`secrets/*`, `.npmrc`); a last component ending in `*` is a prefix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_paths: Vec<String>,
}

/// A sandbox mode as the settings (and `--sandbox`) name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModeSetting {
    /// Write only inside the workspace roots and a private temporary directory.
    WorkspaceWrite,
    /// Write nothing but a private temporary directory.
    ReadOnly,
    /// No sandbox: commands run with your full rights.
    Off,
}

impl From<ModeSetting> for SandboxMode {
    fn from(value: ModeSetting) -> Self {
        match value {
            ModeSetting::WorkspaceWrite => Self::WorkspaceWrite,
            ModeSetting::ReadOnly => Self::ReadOnly,
            ModeSetting::Off => Self::Off,
        }
    }
}

/// The `defaultProjectTrust` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustDefault {
    /// Trust every project without a saved decision.
    Always,
    /// Trust no project without a saved decision.
    Never,
    /// Ask (untrusted where nobody can be asked).
    Ask,
}

impl From<TrustDefault> for jig_project::DefaultProjectTrust {
    fn from(value: TrustDefault) -> Self {
        match value {
            TrustDefault::Always => Self::Always,
            TrustDefault::Never => Self::Never,
            TrustDefault::Ask => Self::Ask,
        }
    }
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
    Some(jig_project::config_dir()?.join(jig_project::SETTINGS_FILE))
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
    "warmIndex",
];

/// A settings file's object, typed key by key: what it sets (only the keys that are valid),
/// the keys jig does not know, and the keys whose value it cannot use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// The valid keys' settings.
    pub settings: Settings,
    /// Keys jig does not know.
    pub unknown: Vec<String>,
    /// Keys whose value cannot be used, each with why.
    pub invalid: Vec<(String, String)>,
}

impl Parsed {
    /// What to say about the keys jig does not know, if there are any.
    pub fn unknown_problem(&self) -> Option<String> {
        (!self.unknown.is_empty()).then(|| {
            format!(
                "{} jig does not know, ignored: {} (keys: {})",
                if self.unknown.len() == 1 {
                    "a key"
                } else {
                    "keys"
                },
                self.unknown
                    .iter()
                    .map(|key| format!("`{key}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                KEYS.join(", ")
            )
        })
    }

    /// What is wrong with the invalid keys, one key after another.
    pub fn invalid_problem(&self) -> Option<String> {
        (!self.invalid.is_empty()).then(|| {
            self.invalid
                .iter()
                .map(|(key, why)| format!("`{key}`: {why}"))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }
}

/// Types a settings file's JSON object key by key ([`Parsed`]).
pub fn parse(object: serde_json::Map<String, Value>) -> Parsed {
    let mut parsed = Parsed::default();
    let mut valid = serde_json::Map::new();
    for (key, value) in object {
        if !KEYS.contains(&key.as_str()) {
            parsed.unknown.push(key);
            continue;
        }
        let alone = serde_json::Map::from_iter([(key.clone(), value.clone())]);
        match serde_json::from_value::<Settings>(Value::Object(alone)) {
            Ok(_) => {
                valid.insert(key, value);
            }
            Err(error) => parsed.invalid.push((key, error.to_string())),
        }
    }
    match serde_json::from_value::<Settings>(Value::Object(valid)) {
        Ok(settings) => parsed.settings = settings,
        Err(error) => parsed.invalid.push((String::new(), error.to_string())),
    }
    parsed
}

/// A trusted project's `.jig/settings.json` typed ([`parse`]); a value that is not a JSON
/// object has every key invalid. Its `extensions` and `hooks` are the extension loader's, which
/// checks them on its own (a problem there leaves the other settings in force, and the others'
/// problems leave them loading): they are never among the invalid keys here.
pub fn project_layer(project: &jig_project::ProjectSettings) -> Parsed {
    match &project.value {
        Value::Object(object) => {
            let mut parsed = parse(object.clone());
            parsed
                .invalid
                .retain(|(key, _)| !LOADER_KEYS.contains(&key.as_str()));
            parsed
        }
        other => Parsed {
            invalid: vec![(
                String::new(),
                format!("expected a JSON object, not {other}"),
            )],
            ..Parsed::default()
        },
    }
}

/// The keys of a project's settings the extension loader reads on its own.
pub const LOADER_KEYS: &[&str] = &["extensions", "hooks"];

/// The `user` settings with a trusted project's settings merged over them. Project settings
/// that are not valid settings (invalid keys in [`project_layer`], warned about at startup) are not used.
pub fn with_project(user: Settings, project: Option<&jig_project::ProjectSettings>) -> Settings {
    let Some(project) = project.filter(|project| project_layer(project).invalid.is_empty()) else {
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
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Settings::default());
        }
        Err(error) => {
            return Err(StartError::usage(format!(
                "cannot read the settings file {}: {error}",
                path.display()
            )));
        }
    };
    let object = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(object)) => object,
        Ok(other) => {
            return Err(StartError::usage(format!(
                "the settings file {} is not valid: expected a JSON object, not {other}",
                path.display()
            )));
        }
        Err(error) => {
            return Err(StartError::usage(format!(
                "the settings file {} is not valid JSON: {error}",
                path.display()
            )));
        }
    };
    let parsed = parse(object);
    if let Some(problem) = parsed.invalid_problem() {
        return Err(StartError::usage(format!(
            "the settings file {} is not valid: {problem} (keys: {})",
            path.display(),
            KEYS.join(", ")
        )));
    }
    if let Some(problem) = parsed.unknown_problem() {
        crate::warn(&format!("the settings file {}: {problem}", path.display()));
    }
    Ok(parsed.settings)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> serde_json::Map<String, Value> {
        match value {
            Value::Object(object) => object,
            _ => unreachable!(),
        }
    }

    #[test]
    fn keys_are_typed_one_by_one_unknown_ones_apart() {
        let parsed = parse(object(json!({
            "model": "m",
            "modle": "typo",
            "thinking": "extreme",
            "defaultProjectTrust": "never",
            "extensions": ["a", "~/b"],
            "sandbox": {"mode": "read-only"},
        })));
        assert_eq!(parsed.unknown, ["modle"]);
        assert_eq!(parsed.invalid.len(), 1);
        assert_eq!(parsed.invalid[0].0, "thinking");
        assert_eq!(parsed.settings.model.as_deref(), Some("m"));
        assert_eq!(parsed.settings.thinking, None);
        assert_eq!(
            parsed.settings.default_project_trust,
            Some(TrustDefault::Never)
        );
        assert_eq!(
            parsed.settings.extensions,
            Some(vec!["a".to_owned(), "~/b".to_owned()])
        );
        assert_eq!(
            parsed
                .settings
                .sandbox
                .as_ref()
                .and_then(|sandbox| sandbox.mode),
            Some(ModeSetting::ReadOnly)
        );
        insta::assert_snapshot!(parsed.unknown_problem().unwrap(), @"a key jig does not know, ignored: `modle` (keys: provider, model, baseUrl, thinking, contextWindow, permissionMode, providers, models, defaultProjectTrust, extensions, hooks, piExtensions, skills, claudeCommands, sandbox, warmIndex)");
        insta::assert_snapshot!(parsed.invalid_problem().unwrap(), @"`thinking`: unknown variant `extreme`, expected one of `off`, `low`, `medium`, `high`");
    }

    #[test]
    fn your_file_stops_on_a_bad_value_and_warns_about_an_unknown_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        assert_eq!(load_from(&path).unwrap(), Settings::default());
        std::fs::write(&path, r#"{"model": "m", "modle": 1}"#).unwrap();
        assert_eq!(load_from(&path).unwrap().model.as_deref(), Some("m"));
        for (text, problem) in [
            (
                r#"{"defaultProjectTrust": "sometimes"}"#,
                "`defaultProjectTrust`: unknown variant `sometimes`",
            ),
            (
                r#"{"extensions": ["a", 3]}"#,
                "`extensions`: invalid type: integer `3`",
            ),
            ("[1]", "expected a JSON object, not [1]"),
            ("{not json", "is not valid JSON"),
        ] {
            std::fs::write(&path, text).unwrap();
            let error = load_from(&path).unwrap_err();
            assert!(matches!(error, StartError::Usage(_)), "{error:?}");
            let message = error.to_string();
            assert!(message.contains(problem), "{message}");
            assert!(message.contains(&path.display().to_string()), "{message}");
        }
    }

    #[test]
    fn a_project_layer_leaves_the_loader_keys_to_the_loader() {
        let layer = |value: Value| {
            project_layer(&jig_project::ProjectSettings {
                path: "/p/.jig/settings.json".into(),
                value,
            })
        };
        let parsed = layer(json!({"hooks": 5, "extensions": "x", "permissionMode": "ask"}));
        assert!(parsed.invalid.is_empty(), "{:?}", parsed.invalid);
        assert_eq!(
            parsed.settings.permission_mode,
            Some(crate::policy::PermissionMode::Ask)
        );
        let parsed = layer(json!({"permissionMode": "sometimes", "skills": ["s"]}));
        assert_eq!(parsed.invalid[0].0, "permissionMode");
        assert_eq!(parsed.settings.skills, Some(vec!["s".to_owned()]));
        assert_eq!(layer(json!([1])).invalid.len(), 1);
    }
}
