//! Newline-delimited JSON-RPC over a byte stream (stdio), answering malformed input.
//!
//! rmcp's own stdio transport silently drops lines that are not JSON. JSON-RPC 2.0 asks for a
//! `-32700 Parse error` response (with `id: null`), and a client that sent a broken line is
//! better served by an answer than by a request that never completes, so this transport sends
//! one and keeps reading. Well-formed JSON that is not a valid message gets `-32600 Invalid
//! request`, carrying the request's `id` when it has one. Unknown notifications are ignored, as
//! JSON-RPC requires.
//!
//! The transport also keeps the session honest where rmcp alone would not:
//! - a request sent before `initialize` gets a clear error (`-32002`) naming the handshake, and
//!   a notification sent before it is dropped instead of ending the session;
//! - a request whose `id` is not a string or an integer gets `-32600` (echoing the id where it
//!   can), one whose id is already in use by a request in progress gets `-32600`, and one for a
//!   method the server serves whose `params` have the wrong shape gets `-32602`;
//! - at end of input, requests already received are answered before the input is reported
//!   closed: calls run to their end (bounded by their own timeouts), unless the client has gone
//!   away entirely (the `peer_gone` future), in which case nobody would read the answers. Then a
//!   token (the server's shutdown token) is cancelled, aborting whatever might still run.

use std::borrow::Cow;
use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::Arc;

use jig_env::CancellationToken;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ClientNotification, ClientRequest, ErrorCode, ErrorData, GetMeta as _,
    InitializeRequestParams, JsonRpcMessage, NumberOrString, PaginatedRequestParams, RequestId,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest accepted input line (one message); longer lines are answered with an error and
/// skipped without being buffered.
pub const MAX_LINE_LENGTH: usize = 16 * 1024 * 1024;

type SharedWriter<W> = Arc<Mutex<Option<W>>>;

/// Completes when the client can no longer read answers (its end of the output closed).
pub type PeerGone = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The JSON-RPC code for a request sent before the session was initialized (the code LSP uses
/// for the same situation; JSON-RPC reserves -32000 to -32099 for server errors).
pub const NOT_INITIALIZED: i32 = -32002;

/// What the transport knows of the session: whether `initialize` was seen, and the ids of the
/// requests received and not yet answered.
#[derive(Debug, Default)]
struct Session {
    initialized: bool,
    outstanding: HashSet<RequestId>,
}

/// [`Session`] shared between `receive` and the send futures.
#[derive(Debug, Default)]
struct SessionState {
    session: std::sync::Mutex<Session>,
    answered: tokio::sync::Notify,
}

impl SessionState {
    fn lock(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn answered(&self, id: &RequestId) {
        let mut session = self.lock();
        if session.outstanding.remove(id) && session.outstanding.is_empty() {
            self.answered.notify_waiters();
        }
    }

    /// Waits until every received request has been answered.
    async fn all_answered(&self) {
        loop {
            let notified = self.answered.notified();
            if self.lock().outstanding.is_empty() {
                return;
            }
            notified.await;
        }
    }
}

/// A server-side transport over a reader (requests) and a writer (responses), one JSON message
/// per line.
pub struct JsonLinesTransport<R, W> {
    reader: BufReader<R>,
    writer: SharedWriter<W>,
    /// The current line; kept across cancelled `receive` calls so no input is lost.
    line: Vec<u8>,
    /// Set while skipping the rest of an oversized line.
    discarding: bool,
    eof: CancellationToken,
    state: Arc<SessionState>,
    peer_gone: Option<PeerGone>,
}

impl<R, W> JsonLinesTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading `reader` and writing `writer`; `eof` is cancelled when the input ends.
    pub fn new(reader: R, writer: W, eof: CancellationToken) -> Self {
        Self {
            reader: BufReader::new(reader),
            writer: Arc::new(Mutex::new(Some(writer))),
            line: Vec::new(),
            discarding: false,
            eof,
            state: Arc::default(),
            peer_gone: None,
        }
    }

    /// Stops waiting for running calls at end of input once `peer_gone` completes: the client
    /// has gone away and nobody would read their answers.
    #[must_use]
    pub fn with_peer_gone(mut self, peer_gone: PeerGone) -> Self {
        self.peer_gone = Some(peer_gone);
        self
    }

    /// End of input: answer what was received, then report the input closed.
    async fn finish_input(&mut self) {
        let pending = self.state.lock().outstanding.len();
        if pending > 0 {
            tracing::info!(
                pending,
                "input closed; finishing the requests already received"
            );
            let answered = self.state.all_answered();
            let all_answered = if let Some(gone) = self.peer_gone.as_mut() {
                tokio::select! {
                    () = answered => true,
                    () = gone => {
                        tracing::info!("the client is gone; aborting running calls");
                        false
                    }
                }
            } else {
                answered.await;
                true
            };
            if all_answered {
                // The last answer's id is freed just before it is written: wait for that
                // write too.
                drop(self.writer.lock().await);
            }
        }
        self.eof.cancel();
    }

    /// Checks a well-formed message against the session, and records requests as outstanding.
    fn admit(&self, message: RxJsonRpcMessage<RoleServer>) -> Parsed {
        let mut session = self.state.lock();
        match &message {
            JsonRpcMessage::Request(request) => {
                let method = request.request.method();
                let is_initialize = matches!(request.request, ClientRequest::InitializeRequest(_));
                if !session.initialized
                    && !is_initialize
                    && !matches!(
                        request.request,
                        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
                    )
                    && request.request.get_meta().protocol_version().is_none()
                {
                    return Parsed::Reply(Box::new(TxJsonRpcMessage::<RoleServer>::error(
                        ErrorData::new(
                            ErrorCode(NOT_INITIALIZED),
                            format!(
                                "Not initialized: `{method}` was sent before `initialize`. An MCP \
                                 session starts with an `initialize` request, answered by the \
                                 server, then a `notifications/initialized` notification; send \
                                 those first."
                            ),
                            None,
                        ),
                        Some(request.id.clone()),
                    )));
                }
                if let ClientRequest::CustomRequest(custom) = &request.request
                    && let Some(problem) = params_problem(&custom.method, custom.params.as_ref())
                {
                    return Parsed::Reply(Box::new(TxJsonRpcMessage::<RoleServer>::error(
                        ErrorData::invalid_params(problem, None),
                        Some(request.id.clone()),
                    )));
                }
                if !session.outstanding.insert(request.id.clone()) {
                    return Parsed::Reply(Box::new(TxJsonRpcMessage::<RoleServer>::error(
                        ErrorData::invalid_request(
                            format!(
                                "Invalid request: id {} is already used by a request in \
                                 progress; give every request its own id",
                                request.id
                            ),
                            None,
                        ),
                        Some(request.id.clone()),
                    )));
                }
                if is_initialize {
                    session.initialized = true;
                }
            }
            JsonRpcMessage::Notification(notification) => {
                if !session.initialized {
                    // rmcp ends the session on anything but a request before `initialize`.
                    tracing::debug!("dropping a notification sent before initialize");
                    return Parsed::Ignore;
                }
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    // A cancelled request is not answered.
                    drop(session);
                    self.state.answered(id);
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
        Parsed::Message(Box::new(message))
    }

    /// Reads up to the next newline into `self.line`. Cancel-safe: bytes read before a
    /// cancellation stay in `self.line` and the next call continues the same line.
    async fn read_line(&mut self) -> io::Result<LineRead> {
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                return Ok(LineRead::Eof);
            }
            let (chunk, complete) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..=i], true),
                None => (buf, false),
            };
            let used = chunk.len();
            if !self.discarding {
                if self.line.len() + used > MAX_LINE_LENGTH {
                    self.discarding = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            self.reader.consume(used);
            if complete {
                if self.discarding {
                    self.discarding = false;
                    return Ok(LineRead::Oversized);
                }
                return Ok(LineRead::Line);
            }
        }
    }

    /// Sends an already serialised reply from a task of its own.
    fn reply_raw_in_background(&self, reply: Value) {
        let writer = Arc::clone(&self.writer);
        tokio::spawn(async move {
            if let Err(error) = write_bytes(&writer, &reply).await {
                tracing::warn!(%error, "cannot send an error response");
            }
        });
    }

    /// Sends `message` from a task of its own, so a cancelled `receive` cannot cut it short.
    fn reply_in_background(&self, message: TxJsonRpcMessage<RoleServer>) {
        let writer = Arc::clone(&self.writer);
        tokio::spawn(async move {
            if let Err(error) = write_message(&writer, &message, || {}).await {
                tracing::warn!(%error, "cannot send an error response");
            }
        });
    }
}

impl<R, W> std::fmt::Debug for JsonLinesTransport<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonLinesTransport")
            .field("buffered", &self.line.len())
            .field("discarding", &self.discarding)
            .field("session", &*self.state.lock())
            .field("watches_peer", &self.peer_gone.is_some())
            .finish_non_exhaustive()
    }
}

enum LineRead {
    Line,
    Oversized,
    Eof,
}

async fn write_bytes<W: AsyncWrite + Unpin>(
    writer: &SharedWriter<W>,
    value: &Value,
) -> io::Result<()> {
    write_line(
        writer,
        serde_json::to_vec(value).map_err(io::Error::other)?,
        || {},
    )
    .await
}

/// Writes one serialised message and its newline, and flushes.
async fn write_line<W: AsyncWrite + Unpin>(
    writer: &SharedWriter<W>,
    mut bytes: Vec<u8>,
    before_write: impl FnOnce(),
) -> io::Result<()> {
    bytes.push(b'\n');
    let mut guard = writer.lock().await;
    before_write();
    let Some(writer) = guard.as_mut() else {
        return Err(io::Error::new(
            io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    writer.write_all(&bytes).await?;
    writer.flush().await
}

/// Writes `message` as one line; `before_write` runs once the writer is held, before the bytes
/// can reach the client.
async fn write_message<W: AsyncWrite + Unpin>(
    writer: &SharedWriter<W>,
    message: &TxJsonRpcMessage<RoleServer>,
    before_write: impl FnOnce(),
) -> io::Result<()> {
    let bytes = match message {
        // JSON-RPC 2.0: an error that cannot name its request carries `"id": null` (rmcp's
        // serialisation omits the field).
        JsonRpcMessage::Error(error) if error.id.is_none() => {
            let mut value = serde_json::to_value(message).map_err(io::Error::other)?;
            if let Value::Object(map) = &mut value {
                map.insert("id".to_owned(), Value::Null);
            }
            serde_json::to_vec(&value).map_err(io::Error::other)?
        }
        _ => serde_json::to_vec(message).map_err(io::Error::other)?,
    };
    write_line(writer, bytes, before_write).await
}

/// What to do with one input line.
enum Parsed {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    Ignore,
    Reply(Box<TxJsonRpcMessage<RoleServer>>),
    /// An error reply whose `id` rmcp's types cannot hold (a float).
    RawReply(Value),
}

/// Why `params` do not fit `method`, for the methods this server serves whose request rmcp
/// could not parse (it then takes them for custom requests, which would be answered
/// "method not found").
fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    fn check<T: serde::de::DeserializeOwned>(params: Option<&Value>) -> Option<String> {
        let params = params.cloned().unwrap_or(Value::Null);
        serde_json::from_value::<T>(params)
            .err()
            .map(|e| e.to_string())
    }
    let problem = match method {
        "initialize" => check::<InitializeRequestParams>(params),
        "tools/call" => check::<CallToolRequestParams>(params),
        "tools/list" => check::<Option<PaginatedRequestParams>>(params),
        "ping" => match params {
            None | Some(Value::Object(_) | Value::Null) => None,
            Some(other) => Some(format!("expected an object, got {other}")),
        },
        _ => return None,
    };
    Some(format!(
        "Invalid params for `{method}`: {}",
        problem.unwrap_or_else(|| "they do not match the MCP schema".to_owned())
    ))
}

fn parse_line(line: &[u8]) -> Parsed {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(message) => return Parsed::Message(Box::new(message)),
        Err(error) => error,
    };
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(value) => value,
        Err(syntax) => {
            tracing::debug!(%syntax, "unparsable input line");
            return Parsed::Reply(Box::new(TxJsonRpcMessage::<RoleServer>::error(
                ErrorData::parse_error(format!("Parse error: {syntax}"), None),
                None,
            )));
        }
    };
    let id = request_id(&value);
    let method = value.get("method").and_then(Value::as_str);
    if let Some(raw_id) = value.get("id")
        && id.is_none()
    {
        // A request (or a reply) whose id is null, a float, an object…: JSON-RPC says to answer
        // with an error; MCP ids are strings or integers.
        tracing::debug!(%raw_id, "request id is not a string or an integer");
        let echoed = if raw_id.is_number() || raw_id.is_string() {
            raw_id.clone()
        } else {
            Value::Null
        };
        return Parsed::RawReply(serde_json::json!({
            "jsonrpc": "2.0",
            "id": echoed,
            "error": {
                "code": ErrorCode::INVALID_REQUEST.0,
                "message": format!(
                    "Invalid request: the id must be a string or an integer, got {raw_id}"
                ),
            },
        }));
    }
    if id.is_none() && method.is_some() && value.get("result").is_none() {
        // A notification the server does not understand: JSON-RPC forbids replying.
        tracing::debug!(?method, %error, "ignoring an unknown or malformed notification");
        return Parsed::Ignore;
    }
    if let (Some(id), Some(method)) = (&id, method)
        && let Some(problem) = params_problem(method, value.get("params"))
    {
        return Parsed::Reply(Box::new(TxJsonRpcMessage::<RoleServer>::error(
            ErrorData::invalid_params(problem, None),
            Some(id.clone()),
        )));
    }
    tracing::debug!(%error, "invalid JSON-RPC message");
    Parsed::Reply(Box::new(TxJsonRpcMessage::<RoleServer>::error(
        ErrorData::invalid_request(Cow::Owned(format!("Invalid request: {error}")), None),
        id,
    )))
}

fn request_id(value: &Value) -> Option<NumberOrString> {
    match value.get("id")? {
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        _ => None,
    }
}

impl<R, W> Transport<RoleServer> for JsonLinesTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        let state = Arc::clone(&self.state);
        async move {
            let answered = match &item {
                JsonRpcMessage::Response(response) => Some(response.id.clone()),
                JsonRpcMessage::Error(error) => error.id.clone(),
                JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
            };
            // The id is free again before the answer can reach the client, which may reuse it
            // as soon as it reads the answer.
            write_message(&writer, &item, || {
                if let Some(id) = &answered {
                    state.answered(id);
                }
            })
            .await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(LineRead::Line) => {}
                Ok(LineRead::Oversized) => {
                    tracing::warn!(
                        max = MAX_LINE_LENGTH,
                        "input line longer than the limit, skipped"
                    );
                    self.reply_in_background(TxJsonRpcMessage::<RoleServer>::error(
                        ErrorData::invalid_request(
                            format!("Invalid request: message longer than {MAX_LINE_LENGTH} bytes"),
                            None,
                        ),
                        None,
                    ));
                    continue;
                }
                Ok(LineRead::Eof) => {
                    tracing::info!("input closed");
                    self.finish_input().await;
                    return None;
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot read input");
                    self.eof.cancel();
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let trimmed = line.strip_suffix(b"\n").unwrap_or(&line);
            let trimmed = trimmed.strip_suffix(b"\r").unwrap_or(trimmed);
            if trimmed.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed = match parse_line(trimmed) {
                Parsed::Message(message) => self.admit(*message),
                other => other,
            };
            match parsed {
                Parsed::Message(message) => return Some(*message),
                Parsed::Ignore => {}
                Parsed::Reply(reply) => self.reply_in_background(*reply),
                Parsed::RawReply(reply) => self.reply_raw_in_background(reply),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut guard = self.writer.lock().await;
        if let Some(mut writer) = guard.take() {
            writer.shutdown().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply_json(parsed: Parsed) -> Value {
        match parsed {
            Parsed::Reply(reply) => serde_json::to_value(&*reply).unwrap(),
            Parsed::RawReply(value) => value,
            Parsed::Message(_) => panic!("expected a reply, got a message"),
            Parsed::Ignore => panic!("expected a reply, got nothing"),
        }
    }

    #[test]
    fn syntax_error_is_a_parse_error_without_id() {
        let reply = reply_json(parse_line(b"{not json"));
        assert_eq!(reply["error"]["code"], -32700);
        assert_eq!(reply["id"], Value::Null);
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Parse error:")
        );
    }

    #[test]
    fn wrong_shape_is_an_invalid_request_with_its_id() {
        let reply = reply_json(parse_line(br#"{"jsonrpc":"2.0","id":7,"params":3}"#));
        assert_eq!(reply["error"]["code"], -32600);
        assert_eq!(reply["id"], 7);
    }

    #[test]
    fn notifications_never_get_a_reply() {
        assert!(!matches!(
            parse_line(br#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#),
            Parsed::Reply(_)
        ));
        assert!(matches!(
            parse_line(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#),
            Parsed::Ignore
        ));
    }

    #[test]
    fn valid_request_parses_even_with_bom() {
        let line = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        assert!(matches!(parse_line(line), Parsed::Message(_)));
    }

    #[tokio::test]
    async fn keeps_serving_after_garbage_and_answers_before_eof() {
        let input = b"garbage\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".to_vec();
        let (out_writer, mut out_reader) = tokio::io::duplex(4096);
        let eof = CancellationToken::new();
        let mut transport = JsonLinesTransport::new(&input[..], out_writer, eof.clone());
        let message = transport
            .receive()
            .await
            .expect("the ping after the garbage");
        let RxJsonRpcMessage::<RoleServer>::Request(request) = message else {
            panic!("expected the ping request, got {message:?}");
        };
        // End of input waits until the ping has been answered.
        let pending =
            tokio::time::timeout(std::time::Duration::from_millis(100), transport.receive()).await;
        assert!(pending.is_err(), "end of input reported before the answer");
        assert!(!eof.is_cancelled());
        transport
            .send(TxJsonRpcMessage::<RoleServer>::response(
                rmcp::model::ServerResult::empty(()),
                request.id,
            ))
            .await
            .unwrap();
        assert!(transport.receive().await.is_none());
        assert!(eof.is_cancelled());
        transport.close().await.unwrap();
        let mut written = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut out_reader, &mut written)
            .await
            .unwrap();
        let replies: Vec<Value> = written
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(replies.len(), 2, "{written}");
        let parse_error = replies
            .iter()
            .find(|reply| reply.get("error").is_some())
            .expect("the parse error");
        assert_eq!(parse_error["error"]["code"], -32700);
        assert_eq!(parse_error.get("id"), Some(&Value::Null));
        assert!(
            replies
                .iter()
                .any(|reply| reply["id"] == 1 && reply.get("result").is_some())
        );
    }
}
