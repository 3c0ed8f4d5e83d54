//! A tiny local HTTP server that replays recorded responses (SSE streams, error statuses) and
//! records the requests it got. Tests point a provider's base URL at it; nothing leaves the
//! machine.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jig_protocol::{AssistantBlock, AssistantMessage, StopReason};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One canned HTTP response.
#[derive(Debug, Clone)]
pub struct ReplayResponse {
    /// Status code.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// The body, written as is; the connection is closed after it.
    pub body: Vec<u8>,
    /// Pause between body lines (to let a test act while the stream is open).
    pub line_delay: Duration,
}

impl ReplayResponse {
    /// A `200` SSE response with `body`.
    pub fn sse(body: impl Into<String>) -> Self {
        Self {
            status: 200,
            headers: vec![("Content-Type".to_owned(), "text/event-stream".to_owned())],
            body: body.into().into_bytes(),
            line_delay: Duration::ZERO,
        }
    }

    /// A response with `status` and a JSON `body`.
    pub fn status(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: vec![("Content-Type".to_owned(), "application/json".to_owned())],
            body: body.into().into_bytes(),
            line_delay: Duration::ZERO,
        }
    }

    /// The same response with one more header.
    #[must_use]
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The same response written line by line with `delay` between lines.
    #[must_use]
    pub fn with_line_delay(mut self, delay: Duration) -> Self {
        self.line_delay = delay;
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`, …
    pub method: String,
    /// The path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The body parsed as JSON (`null` if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Debug, Default)]
struct Shared {
    responses: VecDeque<ReplayResponse>,
    requests: Vec<RecordedRequest>,
}

/// A local HTTP/1.1 server answering each request with the next queued response (`500` with
/// an explanation when none is left). It stops when dropped.
#[derive(Debug)]
pub struct ReplayServer {
    address: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl ReplayServer {
    /// Starts a server on 127.0.0.1 (a free port) that will answer with `responses` in order.
    pub async fn start(
        responses: impl IntoIterator<Item = ReplayResponse>,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Mutex::new(Shared {
            responses: responses.into_iter().collect(),
            requests: Vec::new(),
        }));
        let state = Arc::clone(&shared);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = Arc::clone(&state);
                tokio::spawn(async move {
                    let _ = serve(stream, &state).await;
                });
            }
        });
        Ok(Self {
            address,
            shared,
            task,
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Requests received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .requests
            .clone()
    }

    /// Queues one more response.
    pub fn push(&self, response: ReplayResponse) {
        self.shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .responses
            .push_back(response);
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut stream: TcpStream, shared: &Mutex<Shared>) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(position) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break position + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buffer[header_end..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    let response = {
        let mut state = shared.lock().unwrap_or_else(PoisonError::into_inner);
        state.requests.push(RecordedRequest {
            method,
            path,
            headers,
            body,
        });
        state.responses.pop_front()
    };
    let response = response.unwrap_or_else(|| {
        ReplayResponse::status(
            500,
            r#"{"error":{"message":"the replay server has no response left"}}"#,
        )
    });
    let mut head = format!(
        "HTTP/1.1 {} Replay\r\nConnection: close\r\n",
        response.status
    );
    for (name, value) in &response.headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    if response.line_delay.is_zero() {
        stream.write_all(&response.body).await?;
    } else {
        for line in response.body.split_inclusive(|byte| *byte == b'\n') {
            stream.write_all(line).await?;
            stream.flush().await?;
            tokio::time::sleep(response.line_delay).await;
        }
    }
    stream.flush().await?;
    stream.shutdown().await
}

/// An OpenAI Chat Completions SSE stream carrying `message` (text in two deltas, each tool
/// call's arguments in three), ending with usage and `[DONE]`.
pub fn openai_sse(message: &AssistantMessage) -> String {
    let mut chunks: Vec<Value> = Vec::new();
    let delta = |delta: Value| json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
    chunks.push(delta(json!({"role": "assistant", "content": ""})));
    let mut call_index = 0;
    for block in &message.content {
        match block {
            AssistantBlock::Text { text } => {
                let middle = (0..=text.len() / 2)
                    .rev()
                    .find(|i| text.is_char_boundary(*i))
                    .unwrap_or(0);
                chunks.push(delta(json!({"content": &text[..middle]})));
                chunks.push(delta(json!({"content": &text[middle..]})));
            }
            AssistantBlock::Thinking { thinking, .. } => {
                chunks.push(delta(json!({"reasoning_content": thinking})));
            }
            AssistantBlock::ToolCall(call) => {
                let arguments = call.arguments.to_string();
                let cuts: Vec<usize> = [
                    0,
                    arguments.len() / 3,
                    2 * arguments.len() / 3,
                    arguments.len(),
                ]
                .into_iter()
                .map(|i| {
                    (0..=i)
                        .rev()
                        .find(|j| arguments.is_char_boundary(*j))
                        .unwrap_or(0)
                })
                .collect();
                chunks.push(delta(json!({"tool_calls": [{"index": call_index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}]})));
                for window in cuts.windows(2) {
                    chunks.push(delta(json!({"tool_calls": [{"index": call_index, "function": {"arguments": &arguments[window[0]..window[1]]}}]})));
                }
                call_index += 1;
            }
        }
    }
    let finish = match message.stop_reason {
        StopReason::Length => "length",
        StopReason::ToolUse => "tool_calls",
        _ => "stop",
    };
    chunks.push(json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}));
    chunks.push(json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": message.usage.input, "completion_tokens": message.usage.output, "total_tokens": message.usage.input + message.usage.output}}));
    let mut body = String::new();
    for chunk in chunks {
        body.push_str("data: ");
        body.push_str(&chunk.to_string());
        body.push_str("\n\n");
    }
    body.push_str("data: [DONE]\n\n");
    body
}
