//! Newline-delimited JSON-RPC over a byte stream (stdio), answering malformed input.
//!
//! rmcp's own stdio transport silently drops lines that are not JSON. JSON-RPC 2.0 asks for a
//! `-32700 Parse error` response (with `id: null`), and a client that sent a broken line is
//! better served by an answer than by a request that never completes, so this transport sends
//! one and keeps reading. Well-formed JSON that is not a valid message gets `-32600 Invalid
//! request`, carrying the request's `id` when it has one. Unknown notifications are ignored, as
//! JSON-RPC requires.
//!
//! End of input cancels a token (the server's shutdown token), so running tool calls are aborted
//! at once instead of after rmcp's response-drain timeout.

use std::borrow::Cow;
use std::io;
use std::sync::Arc;

use jig_env::CancellationToken;
use rmcp::RoleServer;
use rmcp::model::{ErrorData, JsonRpcMessage, NumberOrString};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest accepted input line (one message); longer lines are answered with an error and
/// skipped without being buffered.
pub const MAX_LINE_LENGTH: usize = 16 * 1024 * 1024;

type SharedWriter<W> = Arc<Mutex<Option<W>>>;

/// A server-side transport over a reader (requests) and a writer (responses), one JSON message
/// per line.
#[derive(Debug)]
pub struct JsonLinesTransport<R, W> {
    reader: BufReader<R>,
    writer: SharedWriter<W>,
    /// The current line; kept across cancelled `receive` calls so no input is lost.
    line: Vec<u8>,
    /// Set while skipping the rest of an oversized line.
    discarding: bool,
    eof: CancellationToken,
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
        }
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

    /// Sends `message` from a task of its own, so a cancelled `receive` cannot cut it short.
    fn reply_in_background(&self, message: TxJsonRpcMessage<RoleServer>) {
        let writer = Arc::clone(&self.writer);
        tokio::spawn(async move {
            if let Err(error) = write_message(&writer, &message).await {
                tracing::warn!(%error, "cannot send an error response");
            }
        });
    }
}

enum LineRead {
    Line,
    Oversized,
    Eof,
}

async fn write_message<W: AsyncWrite + Unpin>(
    writer: &SharedWriter<W>,
    message: &TxJsonRpcMessage<RoleServer>,
) -> io::Result<()> {
    let mut bytes = match message {
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
    bytes.push(b'\n');
    let mut guard = writer.lock().await;
    let Some(writer) = guard.as_mut() else {
        return Err(io::Error::new(
            io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    writer.write_all(&bytes).await?;
    writer.flush().await
}

/// What to do with one input line.
enum Parsed {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    Ignore,
    Reply(Box<TxJsonRpcMessage<RoleServer>>),
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
    if id.is_none() && method.is_some() && value.get("result").is_none() {
        // A notification the server does not understand: JSON-RPC forbids replying.
        tracing::debug!(?method, %error, "ignoring an unknown or malformed notification");
        return Parsed::Ignore;
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
        async move { write_message(&writer, &item).await }
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
                    self.eof.cancel();
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
            match parse_line(trimmed) {
                Parsed::Message(message) => return Some(*message),
                Parsed::Ignore => {}
                Parsed::Reply(reply) => self.reply_in_background(*reply),
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
    async fn keeps_serving_after_garbage_and_cancels_on_eof() {
        let input = b"garbage\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".to_vec();
        let (out_writer, mut out_reader) = tokio::io::duplex(4096);
        let eof = CancellationToken::new();
        let mut transport = JsonLinesTransport::new(&input[..], out_writer, eof.clone());
        let message = transport
            .receive()
            .await
            .expect("the ping after the garbage");
        assert!(matches!(
            message,
            RxJsonRpcMessage::<RoleServer>::Request(_)
        ));
        assert!(transport.receive().await.is_none());
        assert!(eof.is_cancelled());
        // The error reply is written by a background task.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        transport.close().await.unwrap();
        let mut written = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut out_reader, &mut written)
            .await
            .unwrap();
        let reply: Value = serde_json::from_str(written.trim()).unwrap();
        assert_eq!(reply["error"]["code"], -32700);
        assert_eq!(reply.get("id"), Some(&Value::Null));
    }
}
