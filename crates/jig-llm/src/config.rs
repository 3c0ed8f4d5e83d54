use std::fmt;
use std::time::Duration;

use jig_protocol::EnvVars;

use crate::retry::RetryPolicy;

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI Chat Completions (`POST {base}/chat/completions`), also served by OpenRouter,
    /// vLLM, llama.cpp's server, Ollama and LM Studio.
    OpenAiCompletions,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    AnthropicMessages,
}

/// A provider jig knows by name: its protocol, default endpoint and key variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownProvider {
    /// The name used with `--provider`.
    pub name: &'static str,
    /// Its protocol.
    pub api: Api,
    /// The default base URL; `None` means `--base-url` is required.
    pub base_url: Option<&'static str>,
    /// The environment variable holding the API key; `None` for local servers without keys.
    pub api_key_env: Option<&'static str>,
    /// The environment variable that may override the base URL (`OPENAI_BASE_URL`,
    /// `ANTHROPIC_BASE_URL`), as the providers' own SDKs honour it.
    pub base_url_env: Option<&'static str>,
}

/// The providers jig knows by name.
pub const KNOWN_PROVIDERS: &[KnownProvider] = &[
    KnownProvider {
        name: "openai",
        api: Api::OpenAiCompletions,
        base_url: Some("https://api.openai.com/v1"),
        api_key_env: Some(EnvVars::OPENAI_API_KEY),
        base_url_env: Some(EnvVars::OPENAI_BASE_URL),
    },
    KnownProvider {
        name: "anthropic",
        api: Api::AnthropicMessages,
        base_url: Some("https://api.anthropic.com"),
        api_key_env: Some(EnvVars::ANTHROPIC_API_KEY),
        base_url_env: Some(EnvVars::ANTHROPIC_BASE_URL),
    },
    KnownProvider {
        name: "openrouter",
        api: Api::OpenAiCompletions,
        base_url: Some("https://openrouter.ai/api/v1"),
        api_key_env: Some(EnvVars::OPENROUTER_API_KEY),
        base_url_env: None,
    },
    KnownProvider {
        name: "ollama",
        api: Api::OpenAiCompletions,
        base_url: Some("http://localhost:11434/v1"),
        api_key_env: None,
        base_url_env: None,
    },
    KnownProvider {
        name: "lmstudio",
        api: Api::OpenAiCompletions,
        base_url: Some("http://localhost:1234/v1"),
        api_key_env: None,
        base_url_env: None,
    },
    KnownProvider {
        name: "llamacpp",
        api: Api::OpenAiCompletions,
        base_url: Some("http://localhost:8080/v1"),
        api_key_env: None,
        base_url_env: None,
    },
    KnownProvider {
        name: "vllm",
        api: Api::OpenAiCompletions,
        base_url: Some("http://localhost:8000/v1"),
        api_key_env: None,
        base_url_env: None,
    },
    KnownProvider {
        name: "openai-compatible",
        api: Api::OpenAiCompletions,
        base_url: None,
        api_key_env: Some(EnvVars::OPENAI_API_KEY),
        base_url_env: Some(EnvVars::OPENAI_BASE_URL),
    },
];

impl KnownProvider {
    /// The provider called `name`.
    pub fn find(name: &str) -> Option<&'static KnownProvider> {
        KNOWN_PROVIDERS
            .iter()
            .find(|provider| provider.name == name)
    }

    /// All names, comma-separated, for error messages.
    pub fn names() -> String {
        let names: Vec<&str> = KNOWN_PROVIDERS
            .iter()
            .map(|provider| provider.name)
            .collect();
        names.join(", ")
    }
}

/// How to reach one provider.
#[derive(Clone)]
pub struct ProviderConfig {
    /// The name recorded in messages (`openai`, `ollama`, …).
    pub name: String,
    /// The base URL, without a trailing slash (`https://api.openai.com/v1`).
    pub base_url: String,
    /// The API key, if the endpoint needs one.
    pub api_key: Option<String>,
    /// Retry behaviour on rate limits, server errors and connection failures.
    pub retry: RetryPolicy,
    /// Time allowed to establish a connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// The longest silence allowed from the server: before the response headers arrive, and
    /// between two pieces of the streamed body.
    pub idle_timeout: Duration,
}

/// The default [`ProviderConfig::connect_timeout`].
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default [`ProviderConfig::idle_timeout`]: long enough for a reasoning model thinking
/// before its first token.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_mins(5);

impl ProviderConfig {
    /// A configuration with the default retry policy and timeouts ([`DEFAULT_CONNECT_TIMEOUT`],
    /// [`DEFAULT_IDLE_TIMEOUT`]).
    pub fn new(
        name: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<String>,
    ) -> Self {
        let base_url: String = base_url.into();
        Self {
            name: name.into(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key,
            retry: RetryPolicy::default(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("retry", &self.retry)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}
