//! `jig acp`: jig's agent inside editors, over the Agent Client Protocol (JSON-RPC 2.0 on
//! stdio, one message per line).
//!
//! An editor (Zed, JetBrains IDEs, Neovim's CodeCompanion, Emacs' agent-shell, …) starts
//! `jig acp` and drives it: `initialize`, then `session/new` (or `session/load` of a saved jig
//! session) in a directory, then `session/prompt`s. Each session is opened by the harness
//! ([`jig_session::startup`], face [`Face::Acp`](jig_session::startup::Face::Acp)) with every
//! flag and setting `jig run` takes; what the agent does streams back as `session/update`s
//! (message and thought chunks, tool calls with their kind, locations, diffs and output); a
//! call the permission mode asks about becomes a `session/request_permission` with the answers
//! the terminal offers; `session/cancel` stops the prompt and kills its commands; session modes
//! are jig's permission modes. Project trust is decided as in print mode (an editor cannot show
//! jig's prompt) and told in the session's first update. docs/editors.md is the guide.
//!
//! The protocol is spoken here on its published schema: JSON-RPC requests both ways over one
//! writer ([`jig_session::jsonl`]).

mod client_fs;
mod rpc;
mod session;
mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use jig_session::StartError;
use jig_session::startup::RunOptions;
use serde_json::{Value, json};

use crate::rpc::{Incoming, Peer, RpcError};
use crate::session::AcpSession;

/// The protocol version jig speaks.
const PROTOCOL_VERSION: u64 = 1;

/// Serves ACP on stdin/stdout until the editor closes stdin (or SIGTERM/SIGINT): running
/// prompts are cancelled, their commands killed, every session saved and closed.
///
/// # Errors
/// The async runtime could not start.
pub fn run(options: &RunOptions, client_fs: bool) -> Result<ExitCode, StartError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(StartError::Failure)?;
    runtime.block_on(serve(options, client_fs))
}

struct Server {
    peer: Arc<Peer>,
    options: RunOptions,
    /// `--client-fs`: files are read and written by the editor when it offers to.
    client_fs: bool,
    /// The client's capabilities, from `initialize`.
    capabilities: Mutex<Value>,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
}

async fn serve(options: &RunOptions, client_fs: bool) -> Result<ExitCode, StartError> {
    let peer = Peer::new(jig_session::jsonl::Writer::new(Box::new(std::io::stdout())));
    let server = Arc::new(Server {
        peer: Arc::clone(&peer),
        options: options.clone(),
        client_fs,
        capabilities: Mutex::new(Value::Null),
        sessions: Mutex::new(HashMap::new()),
    });
    let mut lines = {
        let peer = Arc::clone(&peer);
        // The editor's answers to jig's requests go straight to the request waiting for them.
        jig_session::jsonl::read_stdin(move |record| {
            serde_json::from_slice::<Value>(record).is_ok_and(|value| peer.deliver(&value))
        })
    };
    let mut stop = stop_signals()?;
    loop {
        tokio::select! {
            line = lines.recv() => match line {
                Some(line) => Arc::clone(&server).handle(&line),
                None => break,
            },
            _ = stop.recv() => break,
        }
    }
    peer.close();
    let sessions: Vec<Arc<AcpSession>> = server
        .sessions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain()
        .map(|(_, session)| session)
        .collect();
    for session in sessions {
        session.close().await;
    }
    Ok(ExitCode::SUCCESS)
}

impl Server {
    /// Handles one line; a request is answered from a task of its own, so a long prompt never
    /// holds up `session/cancel` or the answers to jig's own requests.
    fn handle(self: Arc<Self>, line: &[u8]) {
        match rpc::parse(line) {
            Incoming::Invalid(error) => self.peer.respond(&Value::Null, Err(error)),
            Incoming::Notification { method, params } => {
                if method == "session/cancel"
                    && let Some(session) = self.session(&params).ok()
                {
                    session.cancel();
                }
            }
            Incoming::Request { id, method, params } => {
                tokio::spawn(async move {
                    let (result, opened) = match method.as_str() {
                        "session/new" => self.open(&params, None).await,
                        "session/load" => match params.get("sessionId").and_then(Value::as_str) {
                            Some(load) => self.open(&params, Some(load.to_owned())).await,
                            None => (
                                Err(RpcError::invalid_params("\"sessionId\" is missing")),
                                None,
                            ),
                        },
                        _ => (self.request(&method, params).await, None),
                    };
                    self.peer.respond(&id, result);
                    // Told after the response, once the editor knows the session.
                    if let Some((session, mcp_servers)) = opened {
                        session.announce();
                        if mcp_servers > 0 {
                            session.say(&format!(
                                "jig: the {mcp_servers} MCP server(s) the editor passed are not connected: jig does not use an editor's MCP servers yet"
                            ));
                        }
                    }
                });
            }
        }
    }

    fn session(&self, params: &Value) -> Result<Arc<AcpSession>, RpcError> {
        let id = params
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("\"sessionId\" is missing"))?;
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
            .ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "no session {id} here: create one with session/new or load it with session/load"
                ))
            })
    }

    async fn request(self: &Arc<Self>, method: &str, params: Value) -> Result<Value, RpcError> {
        match method {
            "initialize" => {
                *self
                    .capabilities
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = params
                    .get("clientCapabilities")
                    .cloned()
                    .unwrap_or_default();
                Ok(json!({
                "protocolVersion": PROTOCOL_VERSION,
                "agentCapabilities": {
                    "loadSession": true,
                    "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
                    "mcpCapabilities": {"http": false, "sse": false},
                },
                "authMethods": [],
                "agentInfo": {"name": "jig", "title": "jig", "version": env!("CARGO_PKG_VERSION")},
                }))
            }
            "authenticate" => Ok(json!({})),
            "session/prompt" => {
                let session = self.session(&params)?;
                let prompt = params
                    .get("prompt")
                    .and_then(Value::as_array)
                    .ok_or_else(|| RpcError::invalid_params("\"prompt\" is missing"))?;
                session.prompt(prompt).await
            }
            "session/set_mode" => {
                let session = self.session(&params)?;
                let mode = params
                    .get("modeId")
                    .and_then(Value::as_str)
                    .ok_or_else(|| RpcError::invalid_params("\"modeId\" is missing"))?;
                session.set_mode(mode).map(|()| json!({}))
            }
            "session/set_config_option" => {
                let session = self.session(&params)?;
                let text = |key: &str| {
                    params
                        .get(key)
                        .and_then(Value::as_str)
                        .ok_or_else(|| RpcError::invalid_params(format!("\"{key}\" is missing")))
                };
                let model = session.set_option(text("configId")?, text("value")?)?;
                Ok(json!({"configOptions": session.config_options(&model)}))
            }
            other => Err(RpcError::method_not_found(other)),
        }
    }

    /// `session/new` (`load`: `None`) or `session/load` of the jig session `load`: the
    /// response, and the session with the number of MCP servers the editor passed.
    async fn open(
        self: &Arc<Self>,
        params: &Value,
        load: Option<String>,
    ) -> (Result<Value, RpcError>, Option<(Arc<AcpSession>, usize)>) {
        let mcp_servers = params
            .get("mcpServers")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match self.open_session(params, load.as_deref()).await {
            Ok((response, session)) => (Ok(response), Some((session, mcp_servers))),
            Err(error) => (Err(error), None),
        }
    }

    async fn open_session(
        self: &Arc<Self>,
        params: &Value,
        load: Option<&str>,
    ) -> Result<(Value, Arc<AcpSession>), RpcError> {
        let cwd = params
            .get("cwd")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .filter(|cwd| cwd.is_absolute())
            .ok_or_else(|| RpcError::invalid_params("\"cwd\" must be an absolute path"))?;
        let mut options = self.options.clone();
        // The editor chooses the session: a new one, or the one it loads.
        options.session = None;
        options.continue_session = false;
        if let Some(id) = load {
            options.session = Some(id.to_owned());
            options.continue_session = false;
            options.no_session = false;
            let store = jig_agent::SessionStore::from_env().ok_or_else(|| {
                RpcError::internal("no data directory for sessions (set XDG_DATA_HOME or HOME)")
            })?;
            if store.find(&cwd, id).is_none() {
                return Err(RpcError::invalid_params(format!(
                    "no jig session {id} for {}",
                    cwd.display()
                )));
            }
        }
        let editor_files = self.client_fs.then(|| {
            let capabilities = self
                .capabilities
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let fs = &capabilities["fs"];
            fs["readTextFile"] == true && fs["writeTextFile"] == true
        });
        let session = AcpSession::open(&self.peer, &options, cwd, editor_files)
            .await
            .map_err(|error| RpcError::internal(error.to_string()))?;
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session.id.clone(), Arc::clone(&session));
        if load.is_some() {
            session.replay().await;
        }
        let model = session.current_model().await;
        let mut response = json!({
            "modes": session.modes(),
            "configOptions": session.config_options(&model),
        });
        if load.is_none() {
            response["sessionId"] = json!(session.id);
        }
        Ok((response, session))
    }
}

/// SIGTERM and SIGINT, as one stream: either ends the connection as the end of stdin does.
fn stop_signals() -> Result<tokio::sync::mpsc::UnboundedReceiver<()>, StartError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())
        .context("cannot listen for SIGTERM")
        .map_err(StartError::Failure)?;
    let mut interrupt = signal(SignalKind::interrupt())
        .context("cannot listen for SIGINT")
        .map_err(StartError::Failure)?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = interrupt.recv() => {}
        }
        let _ = tx.send(());
    });
    Ok(rx)
}
