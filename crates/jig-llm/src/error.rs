/// Why a model request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The provider answered with an error status (after any retries).
    #[error("{provider} returned HTTP {status}: {message}{}", retries_note(*.retries))]
    Http {
        /// The provider's name.
        provider: String,
        /// The HTTP status code.
        status: u16,
        /// The provider's own error message (or the start of the body).
        message: String,
        /// How many retries were made before giving up.
        retries: u32,
    },
    /// The provider reported an error inside the stream (`error` event or chunk).
    #[error("{provider} reported an error: {message}")]
    Provider {
        /// The provider's name.
        provider: String,
        /// The provider's message, with its error type when it gave one.
        message: String,
    },
    /// The connection failed or broke.
    #[error("could not reach {provider} at {url}{}: {}", retries_note(*.retries), root_cause(source))]
    Transport {
        /// The provider's name.
        provider: String,
        /// The URL requested.
        url: String,
        /// How many retries were made before giving up.
        retries: u32,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },
    /// The server did not connect, or went silent, for longer than allowed.
    #[error("{}", timeout_message(provider, url, *.kind, *.after))]
    Timeout {
        /// The provider's name.
        provider: String,
        /// The URL requested.
        url: String,
        /// Which limit was hit.
        kind: TimeoutKind,
        /// The limit.
        after: std::time::Duration,
    },
    /// The stream broke off or carried something that could not be understood.
    #[error("{provider} stream failed: {message}")]
    Stream {
        /// The provider's name.
        provider: String,
        /// What went wrong.
        message: String,
    },
    /// No API key was given and the conventional variable is unset.
    #[error("no API key for {provider}: set {env_var} or pass --api-key")]
    MissingApiKey {
        /// The provider's name.
        provider: String,
        /// The environment variable that would hold it.
        env_var: String,
    },
    /// The request was cancelled.
    #[error("request aborted")]
    Aborted,
    /// Anything else (a scripted provider running out of replies, a bad configuration).
    #[error("{0}")]
    Other(String),
}

impl LlmError {
    /// True for failures inside a started stream that are worth sending the request again for:
    /// an overloaded, rate-limited or failing server reported in the stream, or a connection that
    /// broke. (Errors before the stream started were already retried by the provider.)
    pub fn is_retryable_in_stream(&self) -> bool {
        match self {
            Self::Provider { message, .. } => {
                let message = message.to_ascii_lowercase();
                [
                    "overloaded",
                    "rate_limit",
                    "rate limit",
                    "server_error",
                    "api_error",
                    "internal server error",
                    "timeout",
                ]
                .iter()
                .any(|needle| message.contains(needle))
            }
            Self::Stream { .. } => true,
            _ => false,
        }
    }
}

/// Which timeout ended a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutKind {
    /// The connection could not be established in time.
    Connect,
    /// The server sent nothing for too long (before the headers or inside the stream).
    Idle,
}

fn seconds(duration: std::time::Duration) -> String {
    let secs = duration.as_secs_f64();
    if duration.subsec_millis() == 0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs:.1} s")
    }
}

fn timeout_message(
    provider: &str,
    url: &str,
    kind: TimeoutKind,
    after: std::time::Duration,
) -> String {
    match kind {
        TimeoutKind::Connect => format!(
            "could not connect to {provider} at {url} within {} (--connect-timeout)",
            seconds(after)
        ),
        TimeoutKind::Idle => format!(
            "{provider} at {url} sent nothing for {} (--idle-timeout): the server is stuck or overloaded",
            seconds(after)
        ),
    }
}

/// The innermost cause of `error` (`Connection refused (os error 111)` rather than reqwest's
/// `error sending request for url (…)`).
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

fn retries_note(retries: u32) -> String {
    match retries {
        0 => String::new(),
        1 => " (gave up after 1 retry)".to_owned(),
        n => format!(" (gave up after {n} retries)"),
    }
}
