//! A server on a `MemoryEnv` workspace at `/ws`, an rmcp client connected to it, and a `slow`
//! test tool that streams updates until cancelled.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail loudly on purpose"
)]

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jig_env::ExecutionEnv;
use jig_env_memory::MemoryEnv;
use jig_mcp_server::{JigMcpServer, RootsSource, ServerOptions, StopReason, serve};
use jig_protocol::ToolResult;
use jig_tool::{Effects, ErasedTool, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry};
use jig_tool_builtins::{BuiltinsConfig, register_builtins};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::task::JoinHandle;

/// Arguments of the `slow` test tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SlowInput {
    /// Updates to send before finishing on its own (default: run until cancelled).
    pub steps: Option<u32>,
}

/// Streams `line N` updates every 20 ms until cancelled or `steps` is reached.
#[derive(Debug, Default)]
pub(crate) struct SlowTool {
    pub saw_cancel: Arc<AtomicBool>,
}

impl Tool for SlowTool {
    const NAME: &'static str = "slow";
    type Input = SlowInput;
    type Details = ();

    fn title(&self) -> &'static str {
        "Slow test tool"
    }
    fn description(&self) -> String {
        "Streams numbered lines until cancelled.".to_owned()
    }
    fn effects(&self) -> Effects {
        Effects::Process
    }

    async fn call(&self, ctx: &ToolContext, input: SlowInput) -> Result<ToolOutput<()>, ToolError> {
        let mut output = String::new();
        for step in 1.. {
            if input.steps.is_some_and(|steps| step > steps) {
                return Ok(ToolOutput::text(output, ()));
            }
            writeln!(output, "line {step}").unwrap();
            ctx.send_update(ToolResult::text(output.clone()));
            tokio::select! {
                () = ctx.cancel.cancelled() => {
                    self.saw_cancel.store(true, Ordering::SeqCst);
                    return Err(ToolError::Cancelled);
                }
                () = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
        }
        unreachable!()
    }
}

/// A running server and a connected client.
pub(crate) struct Harness<C: ClientHandler = TestClient> {
    pub env: Arc<MemoryEnv>,
    pub server: JigMcpServer,
    pub client: RunningService<RoleClient, C>,
    pub served: JoinHandle<Result<StopReason, jig_mcp_server::ServeError>>,
    pub saw_cancel: Arc<AtomicBool>,
}

/// A client that optionally offers roots.
#[derive(Debug, Clone, Default)]
pub(crate) struct TestClient {
    pub roots: Option<Arc<std::sync::Mutex<Vec<String>>>>,
}

impl ClientHandler for TestClient {
    #[expect(deprecated, reason = "roots are what the server under test asks for")]
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        if self.roots.is_some() {
            info.capabilities = rmcp::model::ClientCapabilities::builder()
                .enable_roots()
                .enable_roots_list_changed()
                .build();
        }
        info
    }

    #[expect(deprecated, reason = "roots are what the server under test asks for")]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let uris = self
            .roots
            .as_ref()
            .map(|roots| roots.lock().unwrap().clone())
            .unwrap_or_default();
        Ok(rmcp::model::ListRootsResult::new(
            uris.into_iter().map(rmcp::model::Root::new).collect(),
        ))
    }
}

pub(crate) struct Setup {
    pub roots_source: RootsSource,
    pub shutdown: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            roots_source: RootsSource::Fixed,
            shutdown: None,
        }
    }
}

pub(crate) async fn start(setup: Setup) -> Harness {
    start_with(setup, TestClient::default()).await
}

pub(crate) async fn start_with<C: ClientHandler>(setup: Setup, client: C) -> Harness<C> {
    let env = Arc::new(MemoryEnv::new());
    env.add_file("/ws/task.txt", "status: draft\n").unwrap();
    env.add_file("/ws/two.txt", "one\ntwo\n").unwrap();
    env.add_file("/outside/secret.txt", "secret\n").unwrap();
    env.add_file("/other/x.txt", "x\n").unwrap();
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let mut registry = ToolRegistry::new();
    register_builtins(&mut registry, &BuiltinsConfig::default());
    registry.register(ErasedTool::shared(SlowTool {
        saw_cancel: saw_cancel.clone(),
    }));
    let base = ToolContext::new(env.clone() as Arc<dyn ExecutionEnv>, PathBuf::from("/ws"));
    let server = JigMcpServer::new(
        registry,
        base,
        ServerOptions {
            roots_source: setup.roots_source,
            ..ServerOptions::default()
        },
    );
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let (reader, writer) = tokio::io::split(server_io);
    let stop = setup.shutdown;
    let serving = tokio::spawn(serve(server.clone(), reader, writer, async move {
        match stop {
            Some(rx) => {
                let _ = rx.await;
            }
            None => std::future::pending().await,
        }
    }));
    let client = client.serve(client_io).await.unwrap();
    Harness {
        env,
        server,
        client,
        served: serving,
        saw_cancel,
    }
}

pub(crate) fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    }
}

pub(crate) async fn call<C: ClientHandler>(
    harness: &Harness<C>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    harness
        .client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args(arguments)))
        .await
        .unwrap()
}

pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            rmcp::model::ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Polls `check` until it holds or two seconds pass.
pub(crate) async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    check()
}
