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
//! - Custom providers (the settings' `providers`) are selected by name like built-in ones; their
//!   model defaults to the first of their `models`, their base URL and key variable come from
//!   the entry, and the session records kind, base URL and key variable so `--continue` reaches
//!   them even when the settings file no longer has the entry.

use std::sync::Arc;
use std::time::Duration;

use jig_agent::CustomEndpoint;
use jig_llm::{
    AnthropicProvider, Api, KnownProvider, LlmError, OpenAiProvider, Provider, ProviderConfig,
};

use jig_protocol::EnvVars;

use super::settings::{CustomProvider, ProviderKind, Providers, Settings};
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
    /// How the resumed session's provider is reached when the user defined it.
    pub(super) previous_custom: Option<CustomEndpoint>,
    /// The user's settings file.
    pub(super) settings: &'a Settings,
    /// Its custom providers.
    pub(super) providers: &'a Providers,
    /// Open without a key the provider needs (the interactive session): every request then
    /// fails saying how to configure one, and [`Resolved::setup_note`] says so at the start.
    pub(super) without_key: bool,
}

/// A ready provider.
pub(super) struct Resolved {
    pub(super) provider: Arc<dyn Provider>,
    pub(super) provider_name: String,
    pub(super) model: String,
    /// The endpoint when it is not the provider's default (what the session records).
    pub(super) custom_base_url: Option<String>,
    /// For a custom provider: what the session records to reach it again.
    pub(super) custom: Option<CustomEndpoint>,
    /// How to configure a provider, when the session opened without the key it needs.
    pub(super) setup_note: Option<String>,
}

/// A provider with no key: every request fails with `error` (how to configure one).
#[derive(Debug)]
struct NoKey {
    name: String,
    env_var: String,
}

impl NoKey {
    /// `provider`'s `model` at `custom_base_url`, with no key in `env_var`.
    fn resolved(
        provider: String,
        env_var: String,
        model: String,
        custom_base_url: Option<String>,
    ) -> Resolved {
        Resolved {
            setup_note: Some(setup_note(&provider, &env_var)),
            provider: Arc::new(Self {
                name: provider.clone(),
                env_var,
            }),
            provider_name: provider,
            model,
            custom_base_url,
            custom: None,
        }
    }
}

#[async_trait::async_trait]
impl Provider for NoKey {
    fn name(&self) -> &str {
        &self.name
    }

    async fn stream(
        &self,
        _request: jig_llm::ModelRequest,
        _cancel: tokio_util::sync::CancellationToken,
    ) -> Result<jig_llm::EventStream, LlmError> {
        Err(LlmError::MissingApiKey {
            provider: self.name.clone(),
            env_var: self.env_var.clone(),
        })
    }
}

/// What the interactive session says when it opens without a key for `provider`.
fn setup_note(provider: &str, env_var: &str) -> String {
    format!(
        "No API key for {provider}: messages cannot be sent yet. Set {env_var} (or pass \
         --api-key KEY) and start jig again; or use a local or other endpoint: jig --base-url \
         http://localhost:8080/v1 --model NAME (any OpenAI-compatible server), or --provider \
         anthropic|openrouter|…; or make it permanent in ~/.config/jig/settings.json, e.g. \
         {{\"provider\": \"openai\", \"baseUrl\": \"http://localhost:8080/v1\", \"model\": \"NAME\"}} \
         (docs/agent.md)."
    )
}

/// Where the chosen provider's defaults come from.
enum Target {
    Known(&'static KnownProvider),
    Custom(CustomProvider),
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
    if env_value(EnvVars::ANTHROPIC_API_KEY).is_some()
        && env_value(EnvVars::OPENAI_API_KEY).is_none()
    {
        "anthropic"
    } else {
        "openai"
    }
}

pub(super) fn resolve(args: &ModelArgs<'_>) -> Result<Resolved, CliError> {
    let previous = args.previous.as_ref().filter(|(name, _)| {
        KnownProvider::find(name).is_some()
            || args.providers.find(name).is_some()
            || args.providers.bad(name).is_some()
            || args.previous_custom.is_some()
    });
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
    let same_provider = previous.is_some_and(|(previous_name, _)| *previous_name == name);
    let target = target(args, &name, same_provider)?;
    let model = match (args.model, previous) {
        (Some(model), _) => model.to_owned(),
        (None, Some((_, model))) if same_provider => model.clone(),
        (None, _) => default_model_of(&target, &name, settings_model)?,
    };
    let previous_base_url = args.previous_base_url.clone().filter(|_| same_provider);
    let (base_url, default_base_url, api, key_env) = match &target {
        Target::Known(known) => (
            args.base_url
                .map(str::to_owned)
                .or(previous_base_url)
                .or_else(|| known.base_url_env.and_then(env_value))
                .or(settings_base_url)
                .or_else(|| known.base_url.map(str::to_owned)),
            known.base_url,
            known.api,
            known.api_key_env.map(str::to_owned),
        ),
        Target::Custom(custom) => (
            Some(
                args.base_url
                    .map(str::to_owned)
                    .or(previous_base_url)
                    .unwrap_or_else(|| custom.base_url.clone()),
            ),
            None,
            custom.kind.api(),
            custom.api_key_env.clone(),
        ),
    };
    let Some(base_url) = base_url else {
        return Err(CliError::usage(format!(
            "--provider {name} needs --base-url (e.g. http://localhost:8080/v1)"
        )));
    };
    let base_url = base_url.trim_end_matches('/').to_owned();
    let custom_base_url =
        Some(base_url.clone()).filter(|url| Some(url.as_str()) != default_base_url);
    let api_key = match args.api_key {
        Some(key) => Some(key.to_owned()),
        None => key_env.as_deref().and_then(env_value),
    };
    if api_key.is_none() && needs_key(&target, &name, custom_base_url.is_some()) {
        let env_var = key_env.unwrap_or_else(|| "an API key variable".to_owned());
        return if args.without_key {
            Ok(NoKey::resolved(name, env_var, model, custom_base_url))
        } else {
            Err(CliError::usage(LlmError::MissingApiKey {
                provider: name,
                env_var,
            }))
        };
    }
    let mut config = ProviderConfig::new(name.clone(), base_url, api_key);
    (config.connect_timeout, config.idle_timeout) = (args.connect_timeout, args.idle_timeout);
    let provider = provider_for(api, config);
    let custom = match target {
        Target::Known(_) => None,
        Target::Custom(custom) => Some(CustomEndpoint {
            provider_kind: custom.kind.as_str().to_owned(),
            api_key_env: custom.api_key_env,
        }),
    };
    Ok(Resolved {
        provider,
        provider_name: name,
        model,
        custom_base_url,
        custom,
        setup_note: None,
    })
}

/// Whether `target` (called `name`) cannot work without a key: hosted APIs at their own
/// endpoint (`custom_endpoint` false), and custom providers that name a key variable. Other
/// endpoints may not need one.
fn needs_key(target: &Target, name: &str, custom_endpoint: bool) -> bool {
    match target {
        Target::Known(_) => {
            matches!(name, "openai" | "anthropic" | "openrouter") && !custom_endpoint
        }
        Target::Custom(custom) => custom.api_key_env.is_some(),
    }
}

/// The provider speaking `api` to the endpoint of `config`.
fn provider_for(api: Api, config: ProviderConfig) -> Arc<dyn Provider> {
    match api {
        Api::AnthropicMessages => Arc::new(AnthropicProvider::new(config)),
        Api::OpenAiCompletions => Arc::new(OpenAiProvider::new(config)),
    }
}

/// The model when neither `--model` nor the resumed session names one: the settings file's, else
/// the provider's default (a custom provider's first model).
fn default_model_of(
    target: &Target,
    name: &str,
    settings_model: Option<&str>,
) -> Result<String, CliError> {
    let listed = match target {
        Target::Known(_) => default_model(name).map(str::to_owned),
        Target::Custom(custom) => custom.models.first().map(|model| model.id.clone()),
    };
    settings_model.map(str::to_owned).or(listed).ok_or_else(|| {
        CliError::usage(format!(
            "--provider {name} needs --model (the id of a model the server has loaded)"
        ))
    })
}

/// The built-in provider, the settings' custom provider, or the custom provider a resumed
/// session recorded, called `name`. A bad settings entry of that name is an error saying what to
/// fix.
fn target(args: &ModelArgs<'_>, name: &str, same_provider: bool) -> Result<Target, CliError> {
    if let Some(known) = KnownProvider::find(name) {
        return Ok(Target::Known(known));
    }
    if let Some(custom) = args.providers.find(name) {
        return Ok(Target::Custom(custom.clone()));
    }
    if let Some(bad) = args.providers.bad(name) {
        if let Some(extension) = &bad.extension {
            return Err(CliError::usage(format!(
                "provider `{name}` of extension {extension} cannot be used: {}; fix its registration",
                bad.problem
            )));
        }
        let file = super::settings::path().map_or_else(
            || "the settings file".to_owned(),
            |path| path.display().to_string(),
        );
        return Err(CliError::usage(format!(
            "provider `{name}` from the settings file cannot be used: {}; fix its entry in {file}",
            bad.problem
        )));
    }
    if same_provider
        && let Some(recorded) = &args.previous_custom
        && let (Some(kind), Some(base_url)) = (
            ProviderKind::parse(&recorded.provider_kind),
            args.previous_base_url.clone(),
        )
    {
        return Ok(Target::Custom(CustomProvider {
            name: name.to_owned(),
            kind,
            base_url,
            api_key_env: recorded.api_key_env.clone(),
            models: Vec::new(),
        }));
    }
    let custom: Vec<&str> = args
        .providers
        .usable
        .iter()
        .map(|provider| provider.name.as_str())
        .collect();
    let custom = if custom.is_empty() {
        String::new()
    } else {
        format!(
            "; custom providers from the settings file: {}",
            custom.join(", ")
        )
    };
    Err(CliError::usage(format!(
        "--provider {name}: unknown provider; known providers: {}{custom} (use openai-compatible with --base-url for any other OpenAI-compatible server)",
        KnownProvider::names()
    )))
}
