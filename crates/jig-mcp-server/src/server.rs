//! The MCP server handler: tools/list and tools/call over a [`ToolRegistry`].

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use jig_env::CancellationToken;
use jig_protocol::{ContentBlock, ToolResult};
use jig_tool::{CallInfo, ContainmentMode, DynTool, Effects, ToolContext, ToolRegistry};
use jig_truncate::{TruncationOptions, truncate_tail};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as McpContent,
    Implementation, InitializeRequestParams, InitializeResult, JsonObject, ListToolsResult,
    MetaObject, PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool as McpTool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

use crate::roots::{self, RootsState};

/// How long a call waits for the client's answer to `roots/list` before it runs against the
/// roots known so far.
const ROOTS_WAIT: Duration = Duration::from_secs(10);

/// The most of a streamed update shown in one progress message.
const PROGRESS_TAIL: TruncationOptions = TruncationOptions {
    max_lines: 20,
    max_bytes: 4096,
};

/// Where the server's roots come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootsSource {
    /// Fixed roots given by the host (`--root`); the client's roots are never asked for.
    Fixed,
    /// The host's roots (the current directory) until the client offers its own: when the
    /// client declares the `roots` capability, they are requested after initialization and
    /// again on `notifications/roots/list_changed`.
    ClientOrDefault,
}

/// How [`JigMcpServer`] behaves.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Where roots come from.
    pub roots_source: RootsSource,
    /// The name reported in `serverInfo`.
    pub name: String,
    /// The version reported in `serverInfo`.
    pub version: String,
    /// What the command sandbox enforces and with which mechanism (one line for the
    /// instructions), when the sandbox is on.
    pub sandbox_report: Option<String>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            roots_source: RootsSource::ClientOrDefault,
            name: "jig".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            sandbox_report: None,
        }
    }
}

/// Serves a [`ToolRegistry`] as an MCP server (an rmcp [`ServerHandler`]).
///
/// Cheap to clone: clones share the registry, roots, running-call count and shutdown token.
#[derive(Debug, Clone)]
pub struct JigMcpServer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    registry: ToolRegistry,
    tools: Vec<McpTool>,
    base: ToolContext,
    options: ServerOptions,
    roots_tx: watch::Sender<RootsState>,
    /// Serialises `roots/list` round trips so answers apply in order.
    roots_refresh: tokio::sync::Mutex<()>,
    shutdown: CancellationToken,
    running_calls: AtomicUsize,
    calls_idle: Notify,
}

impl JigMcpServer {
    /// A server offering `registry`'s tools. `base` supplies the env, the working directory and
    /// the containment (mode and initial roots, which must be canonical), the session variables
    /// and the mutation queue shared by every call; each call gets its own cancellation token
    /// and update sink.
    pub fn new(registry: ToolRegistry, base: ToolContext, options: ServerOptions) -> Self {
        let tools = registry
            .iter()
            .map(|tool| mcp_tool(tool.as_ref()))
            .collect();
        let state = RootsState {
            cwd: base.cwd.clone(),
            roots: base.containment.roots.clone(),
            pending: false,
        };
        let (roots_tx, _) = watch::channel(state);
        Self {
            inner: Arc::new(Inner {
                registry,
                tools,
                base,
                options,
                roots_tx,
                roots_refresh: tokio::sync::Mutex::new(()),
                shutdown: CancellationToken::new(),
                running_calls: AtomicUsize::new(0),
                calls_idle: Notify::new(),
            }),
        }
    }

    /// The tools as `tools/list` reports them.
    pub fn tools(&self) -> &[McpTool] {
        &self.inner.tools
    }

    /// The working directory and containment roots calls currently run with.
    pub fn roots(&self) -> (PathBuf, Vec<PathBuf>) {
        let state = self.inner.roots_tx.borrow();
        (state.cwd.clone(), state.roots.clone())
    }

    /// Cancelled to abort every running call (end of input, a signal); calls started afterwards
    /// are aborted at once.
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    /// The env every call acts on.
    pub fn env(&self) -> &Arc<dyn jig_env::ExecutionEnv> {
        &self.inner.base.env
    }

    /// Waits until no call is running, or `limit` has passed; returns whether all finished.
    pub async fn wait_for_calls(&self, limit: Duration) -> bool {
        let idle = async {
            loop {
                let notified = self.inner.calls_idle.notified();
                if self.inner.running_calls.load(Ordering::SeqCst) == 0 {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(limit, idle).await.is_ok()
    }

    /// Asks the client for its roots and applies them (see [`RootsSource::ClientOrDefault`]).
    #[expect(
        deprecated,
        reason = "roots are deprecated from protocol 2026-07-28, which this server does not offer"
    )]
    async fn refresh_roots(&self, peer: Peer<RoleServer>) {
        let _serial = self.inner.roots_refresh.lock().await;
        self.inner
            .roots_tx
            .send_modify(|state| state.pending = true);
        let answer = tokio::time::timeout(ROOTS_WAIT, peer.list_roots()).await;
        let uris: Vec<String> = match answer {
            Ok(Ok(list)) => list.roots.into_iter().map(|root| root.uri).collect(),
            Ok(Err(error)) => {
                tracing::warn!(%error, "roots/list failed; keeping the current roots");
                self.inner
                    .roots_tx
                    .send_modify(|state| state.pending = false);
                return;
            }
            Err(_) => {
                tracing::warn!("the client did not answer roots/list; keeping the current roots");
                self.inner
                    .roots_tx
                    .send_modify(|state| state.pending = false);
                return;
            }
        };
        let env = &self.inner.base.env;
        let resolved = roots::resolve_client_roots(env.as_ref(), &uris).await;
        self.inner.roots_tx.send_modify(|state| {
            if let Some((cwd, roots)) = resolved {
                tracing::info!(?roots, "using the client's roots");
                state.cwd = cwd;
                state.roots = roots;
            } else {
                tracing::warn!(
                    ?uris,
                    "the client offered no usable root directory; keeping the current roots"
                );
            }
            state.pending = false;
        });
    }

    /// The context of one call: the shared base with the current roots and a fresh token (the
    /// caller names the call).
    async fn call_context(&self) -> ToolContext {
        let mut rx = self.inner.roots_tx.subscribe();
        let ready = tokio::time::timeout(ROOTS_WAIT, rx.wait_for(|state| !state.pending));
        tokio::select! {
            waited = ready => {
                if waited.is_err() {
                    tracing::warn!("roots still pending; running the call with the roots known so far");
                }
            }
            // Shutting down: the call is aborted at once anyway.
            () = self.inner.shutdown.cancelled() => {}
        }
        let state = rx.borrow().clone();
        let mut ctx = self.inner.base.clone();
        ctx.cwd = state.cwd;
        ctx.containment.roots = state.roots;
        ctx.cancel = self.inner.shutdown.child_token();
        ctx.updates = None;
        ctx
    }

    async fn run_call(
        &self,
        tool: Arc<dyn DynTool>,
        args: Value,
        context: &RequestContext<RoleServer>,
    ) -> ToolResult {
        let mut ctx = self.call_context().await;
        ctx.call = Some(CallInfo::next(tool.name()));
        let forwarder = context.meta.get_progress_token().map(|token| {
            let (sink, forwarder) =
                ProgressForwarder::start(context.peer.clone(), token, ctx.cancel.clone());
            ctx.updates = Some(sink);
            forwarder
        });
        let cancel = ctx.cancel.clone();
        let result = {
            let run = tool.run(&ctx, args);
            tokio::pin!(run);
            tokio::select! {
                result = &mut run => result,
                () = context.ct.cancelled() => {
                    tracing::info!(tool = tool.name(), "call cancelled by the client");
                    cancel.cancel();
                    run.await
                }
            }
        };
        drop(ctx);
        if let Some(forwarder) = forwarder {
            forwarder.finish().await;
        }
        result
    }
}

/// Counts a running call; decrements (and wakes `wait_for_calls`) when dropped.
struct CallGuard<'a>(&'a Inner);

impl<'a> CallGuard<'a> {
    fn new(inner: &'a Inner) -> Self {
        inner.running_calls.fetch_add(1, Ordering::SeqCst);
        Self(inner)
    }
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        if self.0.running_calls.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.calls_idle.notify_waiters();
        }
    }
}

/// Turns a tool's streamed updates into `notifications/progress`, newest first: when updates
/// arrive faster than they can be sent, intermediate ones are skipped.
struct ProgressForwarder {
    done: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl ProgressForwarder {
    /// Forwards updates for `token` until finished; stops at once when `cancel` fires (after
    /// cancellation or at shutdown nobody wants progress, and the session may no longer deliver
    /// it).
    fn start(
        peer: Peer<RoleServer>,
        token: ProgressToken,
        cancel: CancellationToken,
    ) -> (jig_tool::UpdateSink, Self) {
        let (tx, mut rx) = watch::channel::<Option<ToolResult>>(None);
        let sink: jig_tool::UpdateSink = Arc::new(move |update| {
            tx.send_replace(Some(update));
        });
        let done = CancellationToken::new();
        let finished = done.clone();
        let task = tokio::spawn(async move {
            let mut step = 0_u32;
            loop {
                let last = tokio::select! {
                    biased;
                    () = cancel.cancelled() => break,
                    changed = rx.changed() => changed.is_err(),
                    () = finished.cancelled() => true,
                };
                if last && !rx.has_changed().unwrap_or(false) {
                    break;
                }
                let update = rx.borrow_and_update().clone();
                if let Some(update) = update {
                    step += 1;
                    let param = ProgressNotificationParam::new(token.clone(), f64::from(step))
                        .with_message(progress_message(&update));
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => break,
                        sent = peer.notify_progress(param) => {
                            if let Err(error) = sent {
                                tracing::debug!(%error, "cannot send a progress notification");
                                break;
                            }
                        }
                    }
                }
                if last {
                    break;
                }
            }
        });
        (sink, Self { done, task })
    }

    /// Sends the last pending update (if any) and stops, so no progress follows the response.
    async fn finish(self) {
        self.done.cancel();
        if let Err(error) = self.task.await {
            tracing::warn!(%error, "progress forwarder failed");
        }
    }
}

/// The tail of an update's text, small enough for a progress message.
fn progress_message(update: &ToolResult) -> String {
    let text = update.text_content();
    truncate_tail(&text, PROGRESS_TAIL).content.to_owned()
}

/// The MCP description of one tool: schema, title and annotations derived from its effects.
pub fn mcp_tool(tool: &dyn DynTool) -> McpTool {
    let schema: JsonObject = match tool.input_schema() {
        Value::Object(map) => map.clone(),
        other => {
            // Tool input types are structs, so this does not happen; keep a valid schema anyway.
            tracing::error!(tool = tool.name(), schema = %other, "tool schema is not an object");
            let mut map = JsonObject::new();
            map.insert("type".to_owned(), json!("object"));
            map
        }
    };
    let effects = tool.effects();
    let annotations = ToolAnnotations::with_title(tool.title())
        .read_only(effects.is_read_only())
        .destructive(!effects.is_read_only())
        .open_world(effects == Effects::Process);
    McpTool::new(tool.name().to_owned(), tool.description(), schema)
        .with_title(tool.title())
        .with_annotations(annotations)
}

/// The `_meta` key under which a result carries the tool's machine-readable `details`.
///
/// `details` are not `structuredContent`: clients that find `structuredContent` (Claude Code,
/// Codex) hand the model that object instead of the text, and the model would never see the
/// file's lines or the command's output. `_meta` is for the client's code only, so the model
/// gets exactly the text `jig tool` prints, and a client that wants the details still has them.
pub const DETAILS_META_KEY: &str = "jig/details";

/// A jig result as an MCP `CallToolResult`: text and image blocks (what the model reads, the
/// same text `jig tool` prints), `isError`, and `details` in `_meta` under [`DETAILS_META_KEY`].
/// There is no `structuredContent` (see [`DETAILS_META_KEY`] for why).
pub fn mcp_result(result: ToolResult) -> CallToolResult {
    let content: Vec<McpContent> = result
        .content
        .into_iter()
        .map(|block| match block {
            ContentBlock::Text { text } => McpContent::text(text),
            ContentBlock::Image { data, mime_type } => McpContent::image(data, mime_type),
        })
        .collect();
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if !result.details.is_null() {
        let mut meta = JsonObject::new();
        meta.insert(DETAILS_META_KEY.to_owned(), result.details);
        out.meta = Some(MetaObject(meta));
    }
    out
}

impl ServerHandler for JigMcpServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info =
            Implementation::new(&self.inner.options.name, &self.inner.options.version)
                .with_title("jig coding tools");
        info.instructions = Some(instructions(&self.inner));
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // The stateless 2026-07-28 revision forbids server-to-client requests (roots/list);
        // clients that probe for it fall back to the initialize handshake.
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        if self.inner.options.roots_source == RootsSource::ClientOrDefault
            && request.capabilities.roots.is_some()
        {
            // Calls wait for the client's roots, requested once initialization completes.
            self.inner
                .roots_tx
                .send_modify(|state| state.pending = true);
        }
        tracing::info!(client = ?request.client_info.name, version = ?request.protocol_version, "initialize");
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.inner.roots_tx.borrow().pending {
            self.refresh_roots(context.peer).await;
        }
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        if self.inner.options.roots_source == RootsSource::ClientOrDefault {
            self.refresh_roots(context.peer).await;
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = self.inner.registry.get(&request.name).cloned() else {
            return Err(McpError::invalid_params(
                format!(
                    "Unknown tool: {}. Available tools: {}",
                    request.name,
                    self.inner.registry.names().join(", ")
                ),
                None,
            ));
        };
        let _guard = CallGuard::new(&self.inner);
        let args = request.arguments.map_or_else(|| json!({}), Value::Object);
        let result = self.run_call(tool, args, &context).await;
        Ok(mcp_result(result).into())
    }
}

fn instructions(inner: &Inner) -> String {
    let contained = inner.base.containment.mode == ContainmentMode::Workspace;
    let mut text = String::from(
        "jig's coding tools. Relative paths resolve against the first workspace root.",
    );
    if contained {
        text.push_str(
            " File tools refuse paths outside the workspace roots (also through symlinks).",
        );
    }
    if inner
        .registry
        .iter()
        .any(|tool| tool.effects() == Effects::Process)
    {
        match &inner.options.sandbox_report {
            Some(report) => {
                text.push_str(" bash runs commands in the first root in a sandbox (");
                text.push_str(report);
                text.push_str(
                    "); a command the sandbox likely blocked ends its result with a [sandbox] note.",
                );
            }
            None => text.push_str(
                " bash runs commands in the first root and is not confined to the roots.",
            ),
        }
    }
    text
}
