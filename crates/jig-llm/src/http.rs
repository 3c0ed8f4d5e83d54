use std::marker::PhantomData;
use std::time::Duration;

use eventsource_stream::{Event, Eventsource};
use futures::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::ProviderConfig;
use crate::error::{LlmError, TimeoutKind, root_cause};
use crate::provider::{EventStream, ModelRequest, Provider, RetryHook, RetryNotice, StreamEvent};

/// What one HTTP protocol adds to an [`Endpoint`]: its path, headers, body and stream parser.
/// An [`HttpProvider`] of any `Wire` is a [`Provider`]: the request, retries, timeouts and SSE
/// handling are shared.
pub(crate) trait Wire: Send + Sync + std::fmt::Debug + 'static {
    /// Parses the protocol's server-sent events.
    type Parser: SseParser;
    /// The path after the base URL (`/chat/completions`, `/v1/messages`).
    const PATH: &'static str;
    /// The headers of every request (authentication, API version).
    fn headers(config: &ProviderConfig) -> Result<HeaderMap, LlmError>;
    /// The JSON body sent for `request`.
    fn request_body(config: &ProviderConfig, request: &ModelRequest) -> Value;
}

/// A provider speaking the HTTP protocol `W` to one endpoint: [`crate::OpenAiProvider`],
/// [`crate::AnthropicProvider`].
#[derive(Debug)]
pub struct HttpProvider<W> {
    endpoint: Endpoint,
    wire: PhantomData<fn() -> W>,
}

impl<W> HttpProvider<W> {
    /// A provider for `config`.
    pub fn new(config: ProviderConfig) -> Self {
        Self {
            endpoint: Endpoint::new(config),
            wire: PhantomData,
        }
    }
}

#[async_trait::async_trait]
impl<W: Wire> Provider for HttpProvider<W> {
    fn name(&self) -> &str {
        &self.endpoint.config.name
    }

    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, LlmError> {
        let endpoint = &self.endpoint;
        let headers = W::headers(&endpoint.config)?;
        let body = W::request_body(&endpoint.config, &request);
        let parser = W::Parser::new(&endpoint.config.name);
        endpoint
            .stream(W::PATH, headers, &body, &request, &cancel, parser)
            .await
    }
}

/// One provider's HTTP endpoint: its configuration and the client that reaches it. Both
/// providers send their requests through [`Endpoint::stream`].
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) config: ProviderConfig,
    client: reqwest::Client,
}

impl Endpoint {
    pub(crate) fn new(config: ProviderConfig) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .unwrap_or_default();
        Self { config, client }
    }

    /// POSTs `body` to `{base_url}{path}` with `headers` (retrying as the configuration says)
    /// and streams the reply's server-sent events through `parser`.
    pub(crate) async fn stream<P: SseParser>(
        &self,
        path: &str,
        headers: HeaderMap,
        body: &Value,
        request: &ModelRequest,
        cancel: &CancellationToken,
        parser: P,
    ) -> Result<EventStream, LlmError> {
        let url = format!("{}{path}", self.config.base_url);
        let response = post_json(
            &self.client,
            &self.config,
            &url,
            headers,
            body,
            Retrying::of(&self.config, request),
            cancel,
        )
        .await?;
        Ok(sse_stream(response, parser, &self.config, &url))
    }
}

/// How a request is retried: the provider's policy (no retries when the request asks for
/// none), and who is told about each retry.
struct Retrying<'a> {
    policy: crate::RetryPolicy,
    hook: Option<&'a RetryHook>,
}

impl<'a> Retrying<'a> {
    fn of(config: &ProviderConfig, request: &'a ModelRequest) -> Self {
        if request.retry {
            Self {
                policy: config.retry,
                hook: request.on_retry.as_ref(),
            }
        } else {
            Self {
                policy: crate::RetryPolicy {
                    max_retries: 0,
                    ..config.retry
                },
                hook: None,
            }
        }
    }
}

/// An API key as a header value (`Bearer …` or the bare key).
pub(crate) fn key_header(value: &str) -> Result<HeaderValue, LlmError> {
    HeaderValue::from_str(value)
        .map_err(|_| LlmError::Other("the API key contains invalid characters".into()))
}

fn is_retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..=599).contains(&status)
}

/// POSTs `body` as JSON and returns the response once it has a success status, retrying as
/// `retrying` says. Response headers must arrive within `config.idle_timeout`; a connection
/// or idle timeout is reported at once (not retried: the limit is the user's).
async fn post_json(
    client: &reqwest::Client,
    config: &ProviderConfig,
    url: &str,
    headers: HeaderMap,
    body: &Value,
    retrying: Retrying<'_>,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, LlmError> {
    let provider = config.name.as_str();
    let Retrying {
        policy: retry,
        hook: on_retry,
    } = retrying;
    let timeout = |kind, after| LlmError::Timeout {
        provider: provider.to_owned(),
        url: url.to_owned(),
        kind,
        after,
    };
    let payload = serde_json::to_vec(body).map_err(|error| LlmError::Other(error.to_string()))?;
    let mut retries = 0;
    loop {
        let request = client
            .post(url)
            .headers(headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(payload.clone());
        let sent = tokio::select! {
            () = cancel.cancelled() => return Err(LlmError::Aborted),
            sent = tokio::time::timeout(config.idle_timeout, request.send()) => match sent {
                Ok(sent) => sent,
                Err(_) => return Err(timeout(TimeoutKind::Idle, config.idle_timeout)),
            },
        };
        let (wait, reason) = match sent {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| value.trim().parse::<f64>().ok())
                    .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
                    .map(Duration::from_secs_f64);
                let text = tokio::select! {
                    () = cancel.cancelled() => return Err(LlmError::Aborted),
                    text = response.text() => text.unwrap_or_default(),
                };
                if !is_retryable(status) || retries >= retry.max_retries {
                    return Err(LlmError::Http {
                        provider: provider.to_owned(),
                        status,
                        message: error_message(&text),
                        retries,
                    });
                }
                tracing::warn!(
                    provider,
                    status,
                    retry = retries + 1,
                    "retrying model request"
                );
                (
                    retry.delay(retries, retry_after),
                    format!("HTTP {status}: {}", error_message(&text)),
                )
            }
            Err(source) if source.is_connect() && source.is_timeout() => {
                return Err(timeout(TimeoutKind::Connect, config.connect_timeout));
            }
            Err(source) => {
                if retries >= retry.max_retries || !(source.is_connect() || source.is_timeout()) {
                    return Err(LlmError::Transport {
                        provider: provider.to_owned(),
                        url: url.to_owned(),
                        retries,
                        source,
                    });
                }
                tracing::warn!(provider, error = %source, retry = retries + 1, "retrying model request");
                (
                    retry.delay(retries, None),
                    format!("connection failed: {}", root_cause(&source)),
                )
            }
        };
        retries += 1;
        if let Some(hook) = on_retry {
            hook.notify(&RetryNotice {
                attempt: retries,
                max_retries: retry.max_retries,
                delay_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                reason,
            });
        }
        tokio::select! {
            () = cancel.cancelled() => return Err(LlmError::Aborted),
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// The human part of an error body: `error.message` (with `error.type`) when the body is the
/// usual JSON shape, else the body's first 500 characters.
pub(crate) fn error_message(body: &str) -> String {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        let error = value.get("error").unwrap_or(&value);
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str());
        if let Some(message) = message {
            return match error.get("type").and_then(Value::as_str) {
                Some(kind) if !message.contains(kind) => format!("{message} ({kind})"),
                _ => message.to_owned(),
            };
        }
    }
    let body = body.trim();
    if body.is_empty() {
        return "(empty response body)".to_owned();
    }
    let cut: String = body.chars().take(500).collect();
    if cut.len() < body.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Turns server-sent events into stream events.
pub(crate) trait SseParser: Send + 'static {
    /// A parser for one reply of the provider called `provider`.
    fn new(provider: &str) -> Self
    where
        Self: Sized;
    /// Handles one SSE event; may return `Stop`.
    fn event(&mut self, event: &Event) -> Result<Vec<StreamEvent>, LlmError>;
    /// Called when the byte stream ends: either the final events or an error.
    fn end(&mut self) -> Result<Vec<StreamEvent>, LlmError>;
    /// True once the reply is complete (further bytes are ignored).
    fn finished(&self) -> bool;
    /// The provider's name, for errors.
    fn provider(&self) -> &str;
}

/// The response body parsed as SSE and fed through `parser`. A silence longer than
/// `config.idle_timeout` between two events ends the stream with [`LlmError::Timeout`].
fn sse_stream<P: SseParser>(
    response: reqwest::Response,
    parser: P,
    config: &ProviderConfig,
    url: &str,
) -> EventStream {
    let idle = config.idle_timeout;
    let (name, url) = (config.name.clone(), url.to_owned());
    let events = response.bytes_stream().eventsource();
    let state = (Some(events), parser);
    let batches = futures::stream::unfold(state, move |(events, mut parser)| {
        let timeout = LlmError::Timeout {
            provider: name.clone(),
            url: url.clone(),
            kind: TimeoutKind::Idle,
            after: idle,
        };
        async move {
            let mut events = events?;
            if parser.finished() {
                return None;
            }
            let Ok(next) = tokio::time::timeout(idle, events.next()).await else {
                return Some((vec![Err(timeout)], (None, parser)));
            };
            let batch = match next {
                Some(Ok(event)) => match parser.event(&event) {
                    Ok(batch) => {
                        let done = parser.finished();
                        let batch: Vec<Result<StreamEvent, LlmError>> =
                            batch.into_iter().map(Ok).collect();
                        return Some((batch, (if done { None } else { Some(events) }, parser)));
                    }
                    Err(error) => vec![Err(error)],
                },
                Some(Err(error)) => vec![Err(LlmError::Stream {
                    provider: parser.provider().to_owned(),
                    message: format!("the connection broke: {error}"),
                })],
                None => match parser.end() {
                    Ok(batch) => batch.into_iter().map(Ok).collect(),
                    Err(error) => vec![Err(error)],
                },
            };
            Some((batch, (None, parser)))
        }
    });
    Box::pin(batches.flat_map(futures::stream::iter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_come_from_the_json_body() {
        assert_eq!(
            error_message(r#"{"error":{"message":"Rate limit reached","type":"rate_limit"}}"#),
            "Rate limit reached (rate_limit)"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded (overloaded_error)"
        );
        assert_eq!(
            error_message("<html>bad gateway</html>"),
            "<html>bad gateway</html>"
        );
        assert_eq!(error_message(""), "(empty response body)");
    }
}
