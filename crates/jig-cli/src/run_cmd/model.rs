//! Which provider and model `jig run` talks to, where, and with which key.
//!
//! - Provider: `--provider`, else the resumed session's, else the settings file's, else
//!   `anthropic` when only `ANTHROPIC_API_KEY` is set, else `openai`. `--base-url` never changes
//!   the provider.
//! - Model: `--model`, else the resumed session's (same provider), else the settings file's
//!   (when the provider is the settings' one), else the provider's default.
//! - Base URL: `--base-url`, else the resumed session's (same provider), else the provider's
//!   variable (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`), else the settings file's (when the
//!   provider is the settings' one), else the provider's default.

use std::sync::Arc;
use std::time::Duration;

use jig_llm::{
    AnthropicProvider, Api, KnownProvider, LlmError, OpenAiProvider, Provider, ProviderConfig,
};

use super::settings::Settings;
use crate::exit::CliError;

/// What the command line (and a resumed session) say about the model.
pub(super) struct ModelArgs<'a> {
    pub(super) provider: Option<&'a str>,
    pub(super) model: Option<&'a str>,
    pub(super) api_key: Option<&'a str>,
    pub(super) base_url: Option<&'a str>,
    pub(super) connect_timeout: Duration,
    pub(super) idle_timeout: Duration,
    /// `(provider, model)` of the resumed session.
    pub(super) previous: Option<(String, String)>,
    /// The resumed session's endpoint, when it was not the provider's default.
    pub(super) previous_base_url: Option<String>,
    /// The user's settings file.
    pub(super) settings: &'a Settings,
}

/// A ready provider.
pub(super) struct Resolved {
    pub(super) provider: Arc<dyn Provider>,
    pub(super) provider_name: String,
    pub(super) model: String,
    /// The endpoint when it is not the provider's default (what the session records).
    pub(super) custom_base_url: Option<String>,
}

fn default_model(provider: &str) -> Option<&'static str> {
    match provider {
        "openai" => Some("gpt-4.1"),
        "anthropic" => Some("claude-sonnet-4-5"),
        "openrouter" => Some("anthropic/claude-sonnet-4.5"),
        _ => None,
    }
}

fn env_value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// The provider used when neither `--provider` nor a resumed session names one.
pub(super) fn default_provider() -> &'static str {
    if env_value("ANTHROPIC_API_KEY").is_some() && env_value("OPENAI_API_KEY").is_none() {
        "anthropic"
    } else {
        "openai"
    }
}

pub(super) fn resolve(args: &ModelArgs<'_>) -> Result<Resolved, CliError> {
    let previous = args
        .previous
        .as_ref()
        .filter(|(name, _)| KnownProvider::find(name).is_some());
    let name: String = match (args.provider, previous) {
        (Some(name), _) => name.to_owned(),
        (None, Some((name, _))) => name.clone(),
        (None, None) => args
            .settings
            .provider
            .clone()
            .unwrap_or_else(|| default_provider().to_owned()),
    };
    // The settings' model and base URL belong to the settings' provider (the default one when
    // the file names none).
    let settings_apply = args
        .settings
        .provider
        .as_deref()
        .unwrap_or_else(|| default_provider())
        == name;
    let settings_model = args.settings.model.as_deref().filter(|_| settings_apply);
    let settings_base_url = args.settings.base_url.clone().filter(|_| settings_apply);
    let Some(known) = KnownProvider::find(&name) else {
        return Err(CliError::usage(format!(
            "--provider {name}: unknown provider; known providers: {} (use openai-compatible with --base-url for any other OpenAI-compatible server)",
            KnownProvider::names()
        )));
    };
    let same_provider = previous.is_some_and(|(previous_name, _)| *previous_name == name);
    let model = match (args.model, previous) {
        (Some(model), _) => model.to_owned(),
        (None, Some((_, model))) if same_provider => model.clone(),
        (None, _) => match settings_model.or_else(|| default_model(&name)) {
            Some(model) => model.to_owned(),
            None => {
                return Err(CliError::usage(format!(
                    "--provider {name} needs --model (the id of a model the server has loaded)"
                )));
            }
        },
    };
    let base_url = args
        .base_url
        .map(str::to_owned)
        .or_else(|| args.previous_base_url.clone().filter(|_| same_provider))
        .or_else(|| known.base_url_env.and_then(env_value))
        .or(settings_base_url)
        .or_else(|| known.base_url.map(str::to_owned));
    let Some(base_url) = base_url else {
        return Err(CliError::usage(format!(
            "--provider {name} needs --base-url (e.g. http://localhost:8080/v1)"
        )));
    };
    let base_url = base_url.trim_end_matches('/').to_owned();
    let custom_base_url = Some(base_url.clone()).filter(|url| Some(url.as_str()) != known.base_url);
    let api_key = match args.api_key {
        Some(key) => Some(key.to_owned()),
        None => known.api_key_env.and_then(env_value),
    };
    // Hosted APIs cannot work without a key; other endpoints may not need one.
    let needs_key =
        matches!(name.as_str(), "openai" | "anthropic" | "openrouter") && custom_base_url.is_none();
    if api_key.is_none() && needs_key {
        let error = LlmError::MissingApiKey {
            provider: name.clone(),
            env_var: known
                .api_key_env
                .unwrap_or("an API key variable")
                .to_owned(),
        };
        return Err(CliError::usage(error));
    }
    let mut config = ProviderConfig::new(name.clone(), base_url, api_key);
    config.connect_timeout = args.connect_timeout;
    config.idle_timeout = args.idle_timeout;
    let provider: Arc<dyn Provider> = match known.api {
        Api::AnthropicMessages => Arc::new(AnthropicProvider::new(config)),
        Api::OpenAiCompletions => Arc::new(OpenAiProvider::new(config)),
    };
    Ok(Resolved {
        provider,
        provider_name: name,
        model,
        custom_base_url,
    })
}
