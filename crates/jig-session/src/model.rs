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
//! - The interactive session reaches other providers through [`ProviderSwitch`]: each as
//!   `--provider NAME` alone would choose it.

use std::sync::Arc;
use std::time::Duration;

use jig_agent::CustomEndpoint;
use jig_llm::{
    AnthropicProvider, Api, KnownProvider, LlmError, ModelTable, OpenAiProvider, Provider,
    ProviderConfig,
};

use jig_protocol::EnvVars;

use crate::StartError;
use crate::settings::{CustomProvider, ProviderKind, Providers, Settings};

/// What the command line (and a resumed session) say about the model.
#[derive(Debug)]
pub struct ModelArgs<'a> {
    /// The provider's name.
    pub provider: Option<&'a str>,
    /// The model id.
    pub model: Option<&'a str>,
    /// The API key.
    pub api_key: Option<&'a str>,
    /// The provider's base URL.
    pub base_url: Option<&'a str>,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long the server may stay silent.
    pub idle_timeout: Duration,
    /// `(provider, model)` of the resumed session.
    pub previous: Option<(String, String)>,
    /// The resumed session's endpoint, when it was not the provider's default.
    pub previous_base_url: Option<String>,
    /// How the resumed session's provider is reached when the user defined it.
    pub previous_custom: Option<CustomEndpoint>,
    /// The user's settings file.
    pub settings: &'a Settings,
    /// Its custom providers.
    pub providers: &'a Providers,
    /// Open without a key the provider needs (the interactive session): every request then
    /// fails saying how to configure one, and [`Resolved::setup_note`] says so at the start.
    pub without_key: bool,
}

/// A ready provider.
#[derive(Debug)]
pub struct Resolved {
    /// Its client.
    pub provider: Arc<dyn Provider>,
    /// Its name (`openai`, a custom provider's name, …).
    pub provider_name: String,
    /// The model id.
    pub model: String,
    /// The endpoint when it is not the provider's default (what the session records).
    pub custom_base_url: Option<String>,
    /// For a custom provider: what the session records to reach it again.
    pub custom: Option<CustomEndpoint>,
    /// How to configure a provider, when the session opened without the key it needs.
    pub setup_note: Option<String>,
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
pub fn default_provider() -> &'static str {
    if env_value(EnvVars::ANTHROPIC_API_KEY).is_some()
        && env_value(EnvVars::OPENAI_API_KEY).is_none()
    {
        "anthropic"
    } else {
        "openai"
    }
}

/// Where and how a provider is reached, before its client is built.
struct Plan {
    name: String,
    target: Target,
    model: String,
    base_url: String,
    /// The endpoint when it is not the provider's default.
    custom_base_url: Option<String>,
    api: Api,
    key_env: Option<String>,
    api_key: Option<String>,
}

impl Plan {
    /// Whether the provider cannot work without the key it lacks.
    fn lacks_key(&self) -> bool {
        self.api_key.is_none()
            && needs_key(&self.target, &self.name, self.custom_base_url.is_some())
    }

    /// The variable that would hold the key, as messages name it.
    fn key_variable(&self) -> String {
        self.key_env
            .clone()
            .unwrap_or_else(|| "an API key variable".to_owned())
    }

    /// The client.
    fn build(self, connect_timeout: Duration, idle_timeout: Duration) -> Resolved {
        let mut config = ProviderConfig::new(self.name.clone(), self.base_url, self.api_key);
        (config.connect_timeout, config.idle_timeout) = (connect_timeout, idle_timeout);
        let provider = provider_for(self.api, config);
        let custom = match self.target {
            Target::Known(_) => None,
            Target::Custom(custom) => Some(CustomEndpoint {
                provider_kind: custom.kind.as_str().to_owned(),
                api_key_env: custom.api_key_env,
            }),
        };
        Resolved {
            provider,
            provider_name: self.name,
            model: self.model,
            custom_base_url: self.custom_base_url,
            custom,
            setup_note: None,
        }
    }
}

/// The provider and model `args` ask for, ready to use.
///
/// # Errors
/// An unknown provider, a missing key (unless `without_key`), a bad base URL: usage errors
/// that say what to set.
pub fn resolve(args: &ModelArgs<'_>) -> Result<Resolved, StartError> {
    let plan = plan(args)?;
    if plan.lacks_key() {
        let env_var = plan.key_variable();
        return if args.without_key {
            Ok(NoKey::resolved(
                plan.name,
                env_var,
                plan.model,
                plan.custom_base_url,
            ))
        } else {
            Err(StartError::usage(LlmError::MissingApiKey {
                provider: plan.name,
                env_var,
            }))
        };
    }
    Ok(plan.build(args.connect_timeout, args.idle_timeout))
}

/// The provider, model, endpoint and key `args` choose.
fn plan(args: &ModelArgs<'_>) -> Result<Plan, StartError> {
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
        return Err(StartError::usage(format!(
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
    Ok(Plan {
        name,
        target,
        model,
        base_url,
        custom_base_url,
        api,
        key_env,
        api_key,
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
) -> Result<String, StartError> {
    let listed = match target {
        Target::Known(_) => default_model(name).map(str::to_owned),
        Target::Custom(custom) => custom.models.first().map(|model| model.id.clone()),
    };
    settings_model.map(str::to_owned).or(listed).ok_or_else(|| {
        StartError::usage(format!(
            "--provider {name} needs --model (the id of a model the server has loaded)"
        ))
    })
}

/// The built-in provider, the settings' custom provider, or the custom provider a resumed
/// session recorded, called `name`. A bad settings entry of that name is an error saying what to
/// fix.
fn target(args: &ModelArgs<'_>, name: &str, same_provider: bool) -> Result<Target, StartError> {
    if let Some(known) = KnownProvider::find(name) {
        return Ok(Target::Known(known));
    }
    if let Some(custom) = args.providers.find(name) {
        return Ok(Target::Custom(custom.clone()));
    }
    if let Some(bad) = args.providers.bad(name) {
        if let Some(extension) = &bad.extension {
            return Err(StartError::usage(format!(
                "provider `{name}` of extension {extension} cannot be used: {}; fix its registration",
                bad.problem
            )));
        }
        let file = crate::settings::path().map_or_else(
            || "the settings file".to_owned(),
            |path| path.display().to_string(),
        );
        return Err(StartError::usage(format!(
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
    Err(StartError::usage(format!(
        "--provider {name}: unknown provider; known providers: {}{custom} (use openai-compatible with --base-url for any other OpenAI-compatible server)",
        KnownProvider::names()
    )))
}

/// A provider the interactive session talks to: its client and what the session records.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The provider's name.
    pub name: String,
    /// Its client.
    pub provider: Arc<dyn Provider>,
    /// The endpoint when it is not the provider's default.
    pub custom_base_url: Option<String>,
    /// How a provider the user defined is reached.
    pub custom: Option<CustomEndpoint>,
}

impl Endpoint {
    /// Served somewhere else than at the provider's own endpoint (a local server, a custom
    /// provider): the built-in models are not what it serves.
    pub fn elsewhere(&self) -> bool {
        self.custom_base_url.is_some() || self.custom.is_some()
    }
}

/// How the interactive session changes provider. Each provider is resolved as `jig run
/// --provider NAME` resolves it (keys from the environment, endpoints and models from the
/// settings), never with the command line's `--api-key` or `--base-url`: those were given for
/// the provider the session started with, which keeps them.
#[derive(Debug)]
pub struct ProviderSwitch {
    settings: Settings,
    providers: Providers,
    /// The model table with the built-in prices (they are left out for other endpoints).
    models: ModelTable,
    connect_timeout: Duration,
    idle_timeout: Duration,
    /// `--context-window`.
    context_window: Option<u64>,
    /// The providers reached so far: the one the session started with and those switched to.
    reached: Vec<Endpoint>,
}

/// A [`StartError`]'s message.
fn message(error: &StartError) -> String {
    match error {
        StartError::Usage(error) | StartError::Failure(error) => format!("{error:#}"),
        StartError::Reported(code) => format!("exit code {code}"),
    }
}

/// Why the session cannot switch to a provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SwitchError {
    /// It cannot be resolved as `jig run --provider NAME` would (unknown, a bad settings entry,
    /// a bad endpoint): what to fix.
    #[error("{0}")]
    Unusable(String),
    /// Its key is not in the environment.
    #[error(
        "no API key: set {variable} and start jig again (or start it with --provider {provider} --api-key KEY)"
    )]
    NoKey {
        /// The provider.
        provider: String,
        /// The variable that holds its key.
        variable: String,
    },
}

impl ProviderSwitch {
    /// The switch for a session that started with `started` (resolved from the command line).
    pub fn new(
        settings: Settings,
        providers: Providers,
        models: ModelTable,
        (connect_timeout, idle_timeout): (Duration, Duration),
        context_window: Option<u64>,
        started: &Resolved,
    ) -> Self {
        Self {
            settings,
            providers,
            models,
            connect_timeout,
            idle_timeout,
            context_window,
            reached: vec![Endpoint {
                name: started.provider_name.clone(),
                provider: Arc::clone(&started.provider),
                custom_base_url: started.custom_base_url.clone(),
                custom: started.custom.clone(),
            }],
        }
    }

    /// Every provider by name, in order: the built-in ones, then the custom ones.
    pub fn names(&self) -> Vec<String> {
        jig_llm::KNOWN_PROVIDERS
            .iter()
            .map(|known| known.name.to_owned())
            .chain(self.providers.usable.iter().map(|p| p.name.clone()))
            .collect()
    }

    /// Whether `name` names a provider (built-in, custom, or a custom entry that cannot be
    /// used).
    pub fn is_provider(&self, name: &str) -> bool {
        KnownProvider::find(name).is_some()
            || self.providers.find(name).is_some()
            || self.providers.bad(name).is_some()
    }

    /// What `jig run --provider NAME` would choose, with no other flag. The model is the
    /// caller's to choose: any id stands for it here.
    fn plan(&self, name: &str) -> Result<Plan, StartError> {
        plan(&ModelArgs {
            provider: Some(name),
            model: Some(""),
            api_key: None,
            base_url: None,
            connect_timeout: self.connect_timeout,
            idle_timeout: self.idle_timeout,
            previous: None,
            previous_base_url: None,
            previous_custom: None,
            settings: &self.settings,
            providers: &self.providers,
            without_key: false,
        })
    }

    /// `name`'s endpoint: the one reached before, else a new client built as `jig run
    /// --provider NAME` builds it. The error says what to set to use it.
    pub fn endpoint(&mut self, name: &str) -> Result<Endpoint, SwitchError> {
        if let Some(reached) = self.reached.iter().find(|e| e.name == name) {
            return Ok(reached.clone());
        }
        let plan = self
            .plan(name)
            .map_err(|error| SwitchError::Unusable(message(&error)))?;
        if plan.lacks_key() {
            return Err(SwitchError::NoKey {
                provider: name.to_owned(),
                variable: plan.key_variable(),
            });
        }
        let resolved = plan.build(self.connect_timeout, self.idle_timeout);
        let endpoint = Endpoint {
            name: resolved.provider_name,
            provider: resolved.provider,
            custom_base_url: resolved.custom_base_url,
            custom: resolved.custom,
        };
        self.reached.push(endpoint.clone());
        Ok(endpoint)
    }

    /// Whether `name` can be used now (reached before, or resolvable with its key), and if so
    /// whether it is served elsewhere than at its own endpoint ([`Endpoint::elsewhere`]); no
    /// client is built.
    pub fn served_elsewhere(&self, name: &str) -> Option<bool> {
        if let Some(reached) = self.reached.iter().find(|e| e.name == name) {
            return Some(reached.elsewhere());
        }
        let plan = self.plan(name).ok().filter(|plan| !plan.lacks_key())?;
        Some(plan.custom_base_url.is_some() || matches!(plan.target, Target::Custom(_)))
    }

    /// The models known to be served where `name` is reached: at its own endpoint its known
    /// models, elsewhere only those the settings list. Empty when it cannot be used now.
    pub fn known_models(&self, name: &str) -> Vec<String> {
        match self.served_elsewhere(name) {
            Some(false) => self.models.known_models(name),
            Some(true) => self.models.added_models(name),
            None => Vec::new(),
        }
    }

    /// The model table for the provider the session started with.
    pub fn started_table(&self) -> ModelTable {
        self.reached
            .first()
            .map_or_else(|| self.models.clone(), |started| self.table(started))
    }

    /// The model table for a session at `endpoint`: at another endpoint than the provider's
    /// own, a model's built-in price is not its price.
    pub fn table(&self, endpoint: &Endpoint) -> ModelTable {
        if endpoint.custom_base_url.is_some() {
            self.models.clone().without_builtin_prices()
        } else {
            self.models.clone()
        }
    }

    /// Points `config` at `provider`'s `model` for the next requests of a session now at
    /// `current` (a provider's name): another provider's client (built as `jig run --provider`
    /// builds it, or the one reached before), its model table, the model, the context window
    /// compaction counts against. Returns the new endpoint when the provider changed (the
    /// caller records it with the model in its session), and the model's context window.
    ///
    /// # Errors
    /// The provider cannot be used now: what to set to use it.
    pub fn point(
        &mut self,
        config: &mut jig_agent::AgentConfig,
        current: &str,
        provider: &str,
        model: &str,
    ) -> Result<(Option<Endpoint>, u64), SwitchError> {
        let changed = if provider == current {
            None
        } else {
            let endpoint = self.endpoint(provider)?;
            config.provider = Arc::clone(&endpoint.provider);
            config.models = Arc::new(self.table(&endpoint));
            Some(endpoint)
        };
        model.clone_into(&mut config.model);
        let window = self.context_window(provider, model);
        if let Some(compaction) = &mut config.compaction {
            compaction.context_window = window;
        }
        Ok((changed, window))
    }

    /// The models a client can choose from, as `provider/model`: the known models of every
    /// provider that can be used now, with `current` (`provider/model`) first in its
    /// provider's.
    pub fn choices(&self, current: (&str, &str)) -> Vec<(String, String)> {
        let mut choices = Vec::new();
        let mut names = self.names();
        if !names.iter().any(|name| name == current.0) {
            names.insert(0, current.0.to_owned());
        }
        for name in names {
            let mut known = self.known_models(&name);
            if name == current.0 && !known.iter().any(|model| model == current.1) {
                known.insert(0, current.1.to_owned());
            }
            choices.extend(known.into_iter().map(|model| (name.clone(), model)));
        }
        choices
    }

    /// The context window of `provider`'s `model`, as `jig run` finds it: `--context-window`,
    /// else the settings file's (when it names this model or none), else the model table's,
    /// else the default.
    pub fn context_window(&self, provider: &str, model: &str) -> u64 {
        context_window(
            self.context_window,
            &self.settings,
            &self.models,
            provider,
            model,
        )
    }
}

/// The context window of `provider`'s `model`: `flag` (`--context-window`), else the settings
/// file's (when its model is this one, or it names none), else the model table's (custom
/// providers' models, then the built-in table), else the default.
pub fn context_window(
    flag: Option<u64>,
    settings: &Settings,
    models: &ModelTable,
    provider: &str,
    model: &str,
) -> u64 {
    let from_settings = settings
        .context_window
        .filter(|_| settings.model.as_deref().is_none_or(|own| own == model));
    flag.or(from_settings)
        .or_else(|| models.context_window(provider, model))
        .unwrap_or(jig_agent::compaction::DEFAULT_CONTEXT_WINDOW)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeouts() -> (Duration, Duration) {
        (Duration::from_secs(1), Duration::from_secs(1))
    }

    #[test]
    fn another_provider_is_usable_with_its_key_and_offers_its_known_models() {
        let settings: Settings = serde_json::from_value(serde_json::json!({"providers": [
            {"name": "alpha", "kind": "openai", "baseUrl": "http://127.0.0.1:9/v1",
             "models": [{"id": "a1"}, {"id": "a2"}]},
            {"name": "gamma", "kind": "anthropic", "baseUrl": "http://127.0.0.1:9",
             "apiKeyEnv": "JIG_TEST_KEY_NEVER_SET", "models": [{"id": "g1"}]},
        ]}))
        .unwrap();
        let providers = settings.providers();
        let (models, problems) = settings.model_table(&providers);
        assert!(problems.is_empty(), "{problems:?}");
        let (connect_timeout, idle_timeout) = timeouts();
        let started = resolve(&ModelArgs {
            provider: Some("alpha"),
            model: None,
            api_key: None,
            base_url: None,
            connect_timeout,
            idle_timeout,
            previous: None,
            previous_base_url: None,
            previous_custom: None,
            settings: &settings,
            providers: &providers,
            without_key: false,
        })
        .unwrap();
        let mut switch = ProviderSwitch::new(
            settings.clone(),
            providers.clone(),
            models,
            timeouts(),
            None,
            &started,
        );
        // A custom provider serves the models its entry lists.
        assert_eq!(switch.served_elsewhere("alpha"), Some(true));
        assert_eq!(switch.known_models("alpha"), ["a1", "a2"]);
        // Without its key a provider cannot be used: none of its models is offered, and
        // switching to it says what to set.
        assert_eq!(switch.served_elsewhere("gamma"), None);
        assert!(switch.known_models("gamma").is_empty());
        let error = switch.endpoint("gamma").err().unwrap();
        assert!(
            error.to_string().contains("set JIG_TEST_KEY_NEVER_SET"),
            "{error}"
        );
        // A local server needs no key, but jig knows none of its models.
        assert_eq!(switch.served_elsewhere("ollama"), Some(false));
        assert!(switch.known_models("ollama").is_empty());
        let ollama = switch.endpoint("ollama").unwrap();
        assert_eq!(ollama.name, "ollama");
        assert!(!ollama.elsewhere());
        assert!(switch.is_provider("gamma") && !switch.is_provider("nope"));
        assert!(
            switch
                .names()
                .ends_with(&["alpha".to_owned(), "gamma".to_owned()])
        );
        assert_eq!(switch.context_window("openai", "gpt-4.1"), 1_047_576);
    }
}
