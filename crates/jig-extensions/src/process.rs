//! Long-lived extension processes speaking JSON-RPC 2.0 over stdio (one JSON object per line).

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use jig_process::ProcessTree;
use jig_protocol::ToolResult;
use jig_tool::UpdateSink;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{oneshot, watch};

use crate::error::{ActionError, ExtensionError, HandlerError, LoadError};
use crate::handle::{ExtensionHandle, ToolInvocation};
use crate::host::{ActionGate, ExtensionHost, lock};
use crate::lines::{LineError, MAX_LINE_BYTES, read_line_bounded};
use crate::options::LoadOptions;
use crate::registration::{PROTOCOL_VERSION, Registrations};
use crate::spawn::spawn_piped;

/// How much of an extension's stderr is kept for messages.
const STDERR_TAIL_BYTES: usize = 2048;
/// How long a stopping extension gets between `shutdown` and being killed.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

type Reply = Result<Value, HandlerError>;

/// The host's end of one extension process.
pub(crate) struct Connection {
    path: Arc<str>,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Reply>>>,
    next_id: AtomicU64,
    gone: OnceLock<String>,
    gate: Arc<ActionGate>,
    /// The process and everything it started.
    tree: ProcessTree,
    stderr_tail: Mutex<Vec<u8>>,
    updates: Mutex<HashMap<String, UpdateSink>>,
    exited: watch::Sender<bool>,
}

#[derive(Serialize)]
struct Request<'a, P: Serialize> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
struct Notification<'a, P: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
struct EventParams<'a> {
    event: &'a str,
    #[serde(flatten)]
    payload: &'a Value,
}

/// Removes a pending request when its caller stops waiting (timeout, cancellation).
struct PendingGuard<'a> {
    connection: &'a Connection,
    id: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        lock(&self.connection.pending).remove(&self.id);
    }
}

impl Connection {
    fn reason(&self) -> String {
        self.gone
            .get()
            .cloned()
            .unwrap_or_else(|| "the extension stopped".to_owned())
    }

    /// Marks the extension gone (the first reason wins), fails every waiting request, and kills
    /// the process group at once; the rest of its tree goes with [`Self::end_tree`] or when the
    /// connection is dropped.
    pub(crate) fn fail(&self, reason: String) {
        let _ = self.gone.set(reason);
        let reason = self.reason();
        let waiting: Vec<_> = lock(&self.pending).drain().collect();
        for (_, sender) in waiting {
            let _ = sender.send(Err(HandlerError::Gone(reason.clone())));
        }
        self.kill();
    }

    fn kill(&self) {
        self.tree.kill_group();
    }

    /// Kills every process the extension started (found by session, tag and ancestry, so a
    /// `setsid` or double-forked child too) and reaps them; the process table is read on the
    /// blocking pool.
    async fn end_tree(&self) {
        self.tree.terminate(Duration::ZERO).await;
    }

    async fn write_line(&self, mut line: Vec<u8>) -> Result<(), HandlerError> {
        line.push(b'\n');
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(HandlerError::Gone(self.reason()));
        };
        let written = match pipe.write_all(&line).await {
            Ok(()) => pipe.flush().await,
            Err(error) => Err(error),
        };
        if let Err(error) = written {
            drop(stdin);
            self.fail(format!("cannot write to the process: {error}"));
            return Err(HandlerError::Gone(self.reason()));
        }
        Ok(())
    }

    fn encode(value: &impl Serialize) -> Result<Vec<u8>, HandlerError> {
        serde_json::to_vec(value)
            .map_err(|error| HandlerError::Failed(format!("cannot encode the request: {error}")))
    }

    async fn notify(&self, method: &str, params: impl Serialize) -> Result<(), HandlerError> {
        if self.gone.get().is_some() {
            return Err(HandlerError::Gone(self.reason()));
        }
        let line = Self::encode(&Notification {
            jsonrpc: "2.0",
            method,
            params,
        })?;
        self.write_line(line).await
    }

    /// Sends a request and waits for its answer. Dropping the future forgets the request.
    async fn request(&self, method: &str, params: impl Serialize) -> Reply {
        self.request_with_id(method, params, |_| ()).await
    }

    async fn request_with_id(
        &self,
        method: &str,
        params: impl Serialize,
        on_id: impl FnOnce(u64),
    ) -> Reply {
        if self.gone.get().is_some() {
            return Err(HandlerError::Gone(self.reason()));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        on_id(id);
        let line = Self::encode(&Request {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })?;
        let (sender, receiver) = oneshot::channel();
        lock(&self.pending).insert(id, sender);
        let _guard = PendingGuard {
            connection: self,
            id,
        };
        self.write_line(line).await?;
        match receiver.await {
            Ok(reply) => reply,
            Err(_) => Err(HandlerError::Gone(self.reason())),
        }
    }

    /// One line from the extension.
    fn dispatch(self: &Arc<Self>, line: &[u8]) -> Result<(), InvalidMessage> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let message: Value = serde_json::from_slice(line)?;
        let id = message.get("id").and_then(Value::as_u64);
        if let Some(method) = message.get("method").and_then(Value::as_str) {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            match message.get("id") {
                Some(raw_id) => {
                    let connection = Arc::clone(self);
                    let raw_id = raw_id.clone();
                    let method = method.to_owned();
                    tokio::spawn(async move { connection.serve(raw_id, &method, params).await });
                }
                None => self.on_notification(method, &params),
            }
            return Ok(());
        }
        let Some(id) = id else {
            return Err(InvalidMessage::NotJsonRpc {
                preview: preview(&String::from_utf8_lossy(line)),
            });
        };
        let reply = match (message.get("error"), message.get("result")) {
            (Some(error), _) => Err(HandlerError::Failed(
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| error.to_string(), str::to_owned),
            )),
            (None, Some(result)) => Ok(result.clone()),
            (None, None) => Ok(Value::Null),
        };
        if let Some(sender) = lock(&self.pending).remove(&id) {
            let _ = sender.send(reply);
        }
        Ok(())
    }

    fn on_notification(&self, method: &str, params: &Value) {
        match method {
            "tool/update" => {
                let call = params.get("toolCallId").and_then(Value::as_str);
                let sink = call.and_then(|id| lock(&self.updates).get(id).cloned());
                if let (Some(sink), Some(partial)) = (sink, params.get("partial"))
                    && let Ok(partial) = serde_json::from_value::<ToolResult>(partial.clone())
                {
                    sink(partial);
                }
            }
            "log" => {
                let message = params.get("message").and_then(Value::as_str).unwrap_or("");
                tracing::info!(extension = %self.path, "{message}");
            }
            _ => tracing::debug!(extension = %self.path, method, "ignored notification"),
        }
    }

    /// Answers one action call from the extension.
    async fn serve(&self, id: Value, method: &str, params: Value) {
        let reply = match self.gate.call(&self.path, method, params).await {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => {
                let code = if matches!(error, ActionError::UnknownMethod(_)) {
                    -32601
                } else {
                    -32000
                };
                let message = error.to_string();
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        if let Ok(line) = Self::encode(&reply) {
            let _ = self.write_line(line).await;
        }
    }

    fn stderr_text(&self) -> String {
        let tail = lock(&self.stderr_tail);
        String::from_utf8_lossy(&tail).trim().to_owned()
    }
}

/// A line on an extension's stdout that is not a protocol message; the extension is stopped.
#[derive(Debug, thiserror::Error)]
enum InvalidMessage {
    /// The line is not JSON.
    #[error("invalid JSON on stdout: {0}")]
    Json(#[from] serde_json::Error),
    /// The line is JSON but neither a request, a notification nor a reply.
    #[error("not a JSON-RPC message: {preview}")]
    NotJsonRpc {
        /// The line's first 120 bytes or so.
        preview: String,
    },
}

fn preview(text: &str) -> String {
    let end = jig_truncate::floor_char_boundary(text, 120);
    if end < text.len() {
        format!("{}…", &text[..end])
    } else {
        text.to_owned()
    }
}

/// A long-lived extension process.
pub struct ProcessExtension {
    registrations: Registrations,
    connection: Arc<Connection>,
}

impl fmt::Debug for ProcessExtension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessExtension")
            .field("path", &self.connection.path)
            .field("pid", &self.connection.tree.session())
            .field("gone", &self.connection.gone.get())
            .finish_non_exhaustive()
    }
}

impl Drop for ProcessExtension {
    fn drop(&mut self) {
        self.connection
            .fail("the extension was unloaded".to_owned());
    }
}

impl ProcessExtension {
    /// Starts `argv` in `options.cwd` and performs the `initialize` handshake; `path` names the
    /// extension in messages.
    pub async fn start(
        path: &str,
        argv: &[OsString],
        options: &LoadOptions,
    ) -> Result<Self, LoadError> {
        let fail = |reason: String| LoadError::new(path, reason);
        let Some((program, arguments)) = argv.split_first() else {
            return Err(fail("no command to run".to_owned()));
        };
        let (mut child, tree) = spawn_piped(program, arguments, &options.cwd).map_err(|error| {
            fail(format!(
                "cannot start {}: {error}",
                Path::new(program).display()
            ))
        })?;
        let (exited, _) = watch::channel(false);
        let connection = Arc::new(Connection {
            path: Arc::from(path),
            stdin: tokio::sync::Mutex::new(child.stdin.take()),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            gone: OnceLock::new(),
            gate: Arc::new(ActionGate::default()),
            tree,
            stderr_tail: Mutex::new(Vec::new()),
            updates: Mutex::new(HashMap::new()),
            exited,
        });
        if let Some(mut stderr) = child.stderr.take() {
            let connection = Arc::clone(&connection);
            tokio::spawn(async move {
                let mut chunk = vec![0_u8; 4096];
                while let Ok(n) = stderr.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    let mut tail = lock(&connection.stderr_tail);
                    tail.extend_from_slice(&chunk[..n]);
                    let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
                    tail.drain(..excess);
                }
            });
        }
        let stdout = child.stdout.take();
        {
            let connection = Arc::clone(&connection);
            tokio::spawn(async move { read_loop(connection, stdout, child).await });
        }
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "appName": "jig",
            "cwd": options.cwd,
            "mode": options.mode,
            "hasUI": options.has_ui,
        });
        let reply = tokio::time::timeout(
            options.initialize_timeout,
            connection.request("initialize", params),
        )
        .await;
        let reply = match reply {
            Err(_) => {
                connection.fail("initialize timed out".to_owned());
                return Err(fail(format!(
                    "no answer to initialize within {}",
                    crate::error::format_duration(options.initialize_timeout)
                )));
            }
            Ok(Err(HandlerError::Gone(reason))) => {
                return Err(fail(format!("during initialize: {reason}")));
            }
            Ok(Err(HandlerError::Failed(message))) => {
                connection.fail("initialize failed".to_owned());
                return Err(fail(format!("initialize failed: {message}")));
            }
            Ok(Ok(reply)) => reply,
        };
        let mut registrations: Registrations = serde_json::from_value(reply).map_err(|error| {
            connection.fail("invalid initialize reply".to_owned());
            fail(format!("invalid initialize reply: {error}"))
        })?;
        if let Err(reason) = registrations.check() {
            connection.fail("invalid registrations".to_owned());
            return Err(fail(reason.to_string()));
        }
        // `registerProvider` calls made during `initialize` count as registrations too (so
        // the host can check them all at load), then the reply's.
        let mut providers = connection.gate.take_queued_providers();
        providers.append(&mut registrations.providers);
        registrations.providers = providers;
        for provider in &registrations.providers {
            connection.gate.queue_provider(provider.clone());
        }
        Ok(Self {
            registrations,
            connection,
        })
    }
}

async fn read_loop(
    connection: Arc<Connection>,
    stdout: Option<ChildStdout>,
    mut child: tokio::process::Child,
) {
    let reason = match stdout {
        None => "no stdout".to_owned(),
        Some(stdout) => {
            let mut reader = BufReader::with_capacity(64 * 1024, stdout);
            let mut line = Vec::with_capacity(4096);
            loop {
                match read_line_bounded(&mut reader, &mut line, MAX_LINE_BYTES).await {
                    Ok(true) => {
                        if let Err(reason) = connection.dispatch(&line) {
                            break reason.to_string();
                        }
                        if line.capacity() > 1024 * 1024 {
                            line = Vec::with_capacity(4096);
                        }
                    }
                    Ok(false) => {
                        // End of output: the process exited (or closed stdout). Give it a moment
                        // so the message can carry its exit status.
                        let status =
                            tokio::time::timeout(Duration::from_millis(500), child.wait()).await;
                        // Let the stderr reader catch up with what the process wrote last.
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        let status = match status {
                            Ok(Ok(status)) => format!("the process exited ({status})"),
                            _ => "the process closed its stdout".to_owned(),
                        };
                        let stderr = connection.stderr_text();
                        break if stderr.is_empty() {
                            status
                        } else {
                            format!("{status}; stderr: {}", preview_tail(&stderr))
                        };
                    }
                    Err(LineError::TooLong(max)) => {
                        break format!(
                            "the process wrote more than {} without a newline on stdout",
                            jig_truncate::format_size(max)
                        );
                    }
                    Err(LineError::Io(error)) => break format!("cannot read stdout: {error}"),
                }
            }
        }
    };
    connection.fail(reason);
    let _ = child.start_kill();
    let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
    connection.end_tree().await;
    connection.exited.send_replace(true);
}

fn preview_tail(text: &str) -> String {
    const MAX: usize = 500;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let start = jig_truncate::ceil_char_boundary(text, text.len() - MAX);
    format!("…{}", &text[start..])
}

#[async_trait]
impl ExtensionHandle for ProcessExtension {
    fn path(&self) -> &str {
        &self.connection.path
    }

    fn registrations(&self) -> &Registrations {
        &self.registrations
    }

    async fn handle_event(&self, event: &str, payload: &Value) -> Result<Value, HandlerError> {
        self.connection
            .request("event", EventParams { event, payload })
            .await
    }

    async fn execute_tool(
        &self,
        invocation: ToolInvocation<'_>,
    ) -> Result<ToolResult, HandlerError> {
        let connection = &self.connection;
        if let Some(sink) = invocation.updates.clone() {
            lock(&connection.updates).insert(invocation.call_id.to_owned(), sink);
        }
        let mut request_id = 0;
        let params = json!({
            "toolCallId": invocation.call_id,
            "name": invocation.name,
            "params": invocation.params,
        });
        let reply = tokio::select! {
            reply = connection.request_with_id("tool/execute", params, |id| request_id = id) => reply,
            () = invocation.cancel.cancelled() => {
                let _ = connection.notify("$/cancelRequest", json!({"id": request_id})).await;
                Err(HandlerError::Failed("Operation aborted".to_owned()))
            }
        };
        lock(&connection.updates).remove(invocation.call_id);
        let value = reply?;
        serde_json::from_value(value)
            .map_err(|error| HandlerError::Failed(format!("invalid tool result: {error}")))
    }

    async fn run_command(&self, name: &str, args: &str) -> Result<Option<String>, HandlerError> {
        let reply = self
            .connection
            .request("command", json!({"name": name, "args": args}))
            .await?;
        Ok(command_text(reply))
    }

    async fn bind(&self, host: Arc<dyn ExtensionHost>) -> Vec<ExtensionError> {
        let errors = self.connection.gate.bind(&self.connection.path, &host);
        let info = host.session_info().await;
        let flags = self.connection.gate.flag_values();
        let _ = self
            .connection
            .notify("bind", json!({ "session": info, "flagValues": flags }))
            .await;
        errors
    }

    fn set_flag_values(&self, values: serde_json::Map<String, Value>) {
        self.connection.gate.set_flag_values(values);
    }

    fn timed_out(&self, event: &str) {
        self.connection
            .fail(format!("stopped after no answer to {event}"));
    }

    fn failure(&self) -> Option<String> {
        self.connection.gone.get().cloned()
    }

    async fn shutdown(&self) {
        let connection = &self.connection;
        if connection.gone.get().is_none() {
            let _ = connection.notify("shutdown", json!({})).await;
            drop(connection.stdin.lock().await.take());
            let mut exited = connection.exited.subscribe();
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, exited.wait_for(|done| *done)).await;
        }
        connection.fail("the extension was shut down".to_owned());
        // Whatever it left running in the background goes with it.
        connection.end_tree().await;
    }
}

/// A `command` reply as text: `null` is nothing to show, a string or `{"text": …}` is shown as
/// it is, anything else as JSON.
fn command_text(reply: Value) -> Option<String> {
    match reply {
        Value::Null => None,
        Value::String(text) => Some(text),
        Value::Object(object) if object.get("text").is_some_and(Value::is_string) => object
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_owned),
        other => Some(other.to_string()),
    }
}
