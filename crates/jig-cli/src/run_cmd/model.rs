//! Which provider and model `jig run` talks to, and with which key.

use std::sync::Arc;

use jig_llm::{
    AnthropicProvider, Api, KnownProvider, LlmError, OpenAiProvider, Provider, ProviderConfig,
};

use crate::exit::CliError;

/// What the command line (and a resumed session) say about the model.
pub(super) struct ModelArgs<'a> {
    pub(super) provider: Option<&'a str>,
    pub(super) model: Option<&'a str>,
    pub(super) api_key: Option<&'a str>,
    pub(super) base_url: Option<&'a str>,
    pub(super) connect_timeout: std::time::Duration,
    pub(super) idle_timeout: std::time::Duration,
    /// `(provider, model)` of the resumed session.
    pub(super) previous: Option<(String, String)>,
}

/// A ready provider.
pub(super) struct Resolved {
    pub(super) provider: Arc<dyn Provider>,
    pub(super) provider_name: String,
    pub(super) model: String,
}

fn default_model(provider: &str) -> Option<&'static str> {
    match provider {
        "openai" => Some("gpt-4.1"),
        "anthropic" => Some("claude-sonnet-4-5"),
        "openrouter" => Some("anthropic/claude-sonnet-4.5"),
        _ => None,
    }
}

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|value| !value.is_empty())
}

pub(super) fn resolve(args: &ModelArgs<'_>) -> Result<Resolved, CliError> {
    let previous = args
        .previous
        .as_ref()
        .filter(|(name, _)| KnownProvider::find(name).is_some());
    let name: String = match (args.provider, previous) {
        (Some(name), _) => name.to_owned(),
        (None, Some((name, _))) if args.model.is_none() => name.clone(),
        (None, _) if args.base_url.is_some() => "openai-compatible".to_owned(),
        (None, _) if env_set("ANTHROPIC_API_KEY") && !env_set("OPENAI_API_KEY") => {
            "anthropic".to_owned()
        }
        (None, _) => "openai".to_owned(),
    };
    let Some(known) = KnownProvider::find(&name) else {
        return Err(CliError::usage(format!(
            "--provider {name}: unknown provider; known providers: {} (use openai-compatible with --base-url for any other OpenAI-compatible server)",
            KnownProvider::names()
        )));
    };
    let model = match (args.model, previous) {
        (Some(model), _) => model.to_owned(),
        (None, Some((previous_name, model))) if *previous_name == name => model.clone(),
        (None, _) => match default_model(&name) {
            Some(model) => model.to_owned(),
            None => {
                return Err(CliError::usage(format!(
                    "--provider {name} needs --model (the id of a model the server has loaded)"
                )));
            }
        },
    };
    let base_url = match (args.base_url, known.base_url) {
        (Some(url), _) | (None, Some(url)) => url.to_owned(),
        (None, None) => {
            return Err(CliError::usage(format!(
                "--provider {name} needs --base-url (e.g. http://localhost:8080/v1)"
            )));
        }
    };
    let api_key = match args.api_key {
        Some(key) => Some(key.to_owned()),
        None => known
            .api_key_env
            .and_then(|var| std::env::var(var).ok())
            .filter(|key| !key.is_empty()),
    };
    // Hosted APIs cannot work without a key; local servers and generic endpoints may not need one.
    let needs_key =
        matches!(name.as_str(), "openai" | "anthropic" | "openrouter") && args.base_url.is_none();
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
    })
}
