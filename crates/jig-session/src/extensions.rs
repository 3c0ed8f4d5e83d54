//! The loaded extensions at work in each mode: their tools in the registry, `tool_call` and
//! `tool_result` around each tool execution (as a layer of `chain`), and the host side of their
//! action API
//! ([`SessionHost`]: live in `jig run` and the interactive session, where
//! [`ExtensionTurnHooks`] deliver queued messages,
//! active tools, `context`, `message_end` and `session_before_compact` to the agent loop).
//!
//! Nothing here costs a tool call anything when no extension subscribes to `tool_call` or
//! `tool_result`: their layer is then left out of the chain.

use std::sync::Arc;

use async_trait::async_trait;
use jig_extensions::{ExtensionRunner, SessionInfo, ToolCallOutcome, UiRequest, events};
use jig_protocol::{ToolCall, ToolResult};
use jig_tool::{BeforeToolCall, ToolContext, ToolHooks, ToolRegistry};
use serde_json::Value;

mod session_host;

pub use session_host::{Delivery, EntrySink, ExtensionTurnHooks, IdleTurn, Sent, SessionHost};

/// Whether any extension sees tool calls or their results.
pub fn hooks_tools(runner: &ExtensionRunner) -> bool {
    runner.has_handlers(events::TOOL_CALL) || runner.has_handlers(events::TOOL_RESULT)
}

/// `registry` with the extensions' tools added (after the built-ins, in load order). Name
/// conflicts were refused at load, except a tool that declares it replaces a built-in (Pi's
/// rule), which takes the built-in's place here.
pub fn add_tools(registry: &mut ToolRegistry, runner: &ExtensionRunner) {
    for tool in runner.tools() {
        registry.register(tool);
    }
}

/// Asks the user on an extension's behalf (`ui/*`), in a mode with a user interface.
#[async_trait]
pub trait ExtensionUi: Send + Sync {
    /// The answer to `request` from the extension at `extension` (as `ui/*` answers it).
    async fn ask(&self, extension: &str, request: UiRequest) -> Value;
}

/// Binds `runner` for a mode without an agent loop (`mcp`, `tool`): session info and the names
/// of `registry`'s tools answer; actions that change a session say they are not available.
/// `ui` answers the extensions' `ui/*` requests (without it they are answered as without a user
/// interface, and `hasUI` is false).
pub async fn bind(
    runner: &ExtensionRunner,
    info: SessionInfo,
    registry: &ToolRegistry,
    ui: Option<Arc<dyn ExtensionUi>>,
) {
    runner
        .bind(SessionHost::new(
            info,
            tool_names(registry),
            Delivery::Unavailable,
            ui,
            // Registered while loading: accepted (this mode asks no model), not an error.
            registered_providers(runner),
        ))
        .await;
}

/// The names of the providers `runner`'s extensions registered while loading.
fn registered_providers(runner: &ExtensionRunner) -> Vec<String> {
    runner
        .extensions()
        .iter()
        .flat_map(|extension| &extension.registrations().providers)
        .filter_map(|provider| provider.get("name")?.as_str().map(str::to_owned))
        .collect()
}

/// The names of `registry`'s tools.
pub fn tool_names(registry: &ToolRegistry) -> Vec<String> {
    registry.names().iter().map(|n| (*n).to_owned()).collect()
}

/// The session info of a mode without a session (`mcp`, `tool`).
pub fn info(mode: &str, cwd: &std::path::Path) -> SessionInfo {
    SessionInfo {
        cwd: cwd.display().to_string(),
        mode: mode.to_owned(),
        ..SessionInfo::default()
    }
}

/// The extensions' `tool_call` and `tool_result` as hooks: `None` (nothing to install) when no
/// extension subscribes to either.
pub fn tool_hooks(runner: &Arc<ExtensionRunner>) -> Option<Arc<dyn ToolHooks>> {
    hooks_tools(runner).then(|| {
        Arc::new(ExtensionToolHooks {
            runner: Arc::clone(runner),
        }) as Arc<dyn ToolHooks>
    })
}

/// `tool_call` and `tool_result` as hooks (the extensions' layer of `chain`).
struct ExtensionToolHooks {
    runner: Arc<ExtensionRunner>,
}

#[async_trait]
impl ToolHooks for ExtensionToolHooks {
    async fn before_tool_call(&self, call: &ToolCall, _ctx: &mut ToolContext) -> BeforeToolCall {
        match self
            .runner
            .tool_call(&call.id, &call.name, &call.arguments)
            .await
        {
            ToolCallOutcome::Block { reason } => BeforeToolCall::Block { reason },
            ToolCallOutcome::Allow { input: Some(input) } => BeforeToolCall::ChangeArguments(input),
            ToolCallOutcome::Allow { input: None } => BeforeToolCall::Continue,
        }
    }

    async fn after_tool_call(
        &self,
        call: &ToolCall,
        arguments: &Value,
        result: ToolResult,
    ) -> ToolResult {
        self.runner
            .tool_result(&call.id, &call.name, arguments, result)
            .await
    }
}

/// Delivers the agent loop's own events (`agent_start`, `turn_end`, `tool_execution_start`, …)
/// to the extensions that subscribe to them: in the order they happen, as notifications, from a
/// task of its own so the run never waits for an extension. [`LifecycleEvents::finish`]
/// delivers what is still queued.
#[derive(Debug)]
pub struct LifecycleEvents {
    tx: tokio::sync::mpsc::UnboundedSender<Lifecycle>,
    task: tokio::task::JoinHandle<()>,
    subscribed: Vec<&'static str>,
}

/// What the forwarding task is sent.
enum Lifecycle {
    /// An event and its payload.
    Event(&'static str, Value),
    /// Answered once every event sent before it was delivered.
    Flush(tokio::sync::oneshot::Sender<()>),
}

impl LifecycleEvents {
    /// The forwarder, its task on `runtime`, or `None` when no extension subscribes to any of
    /// these events.
    pub fn start(runner: &Arc<ExtensionRunner>, runtime: &tokio::runtime::Handle) -> Option<Self> {
        let subscribed: Vec<&'static str> = events::LIFECYCLE
            .iter()
            .copied()
            .filter(|event| runner.has_handlers(event))
            .collect();
        if subscribed.is_empty() {
            return None;
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Lifecycle>();
        let runner = Arc::clone(runner);
        let task = runtime.spawn(async move {
            while let Some(message) = rx.recv().await {
                match message {
                    Lifecycle::Event(event, payload) => runner.notify(event, || payload).await,
                    Lifecycle::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        Some(Self {
            tx,
            task,
            subscribed,
        })
    }

    /// `inner` with the subscribed events also sent to the extensions.
    pub fn observer(
        &self,
        inner: Arc<dyn jig_agent::AgentObserver>,
    ) -> Arc<dyn jig_agent::AgentObserver> {
        Arc::new(LifecycleObserver {
            inner,
            tx: self.tx.clone(),
            subscribed: self.subscribed.clone(),
        })
    }

    /// Delivers every event still queued (once the runs are over); later ones are dropped.
    pub async fn finish(self) {
        let (done, delivered) = tokio::sync::oneshot::channel();
        if self.tx.send(Lifecycle::Flush(done)).is_ok() {
            let _ = delivered.await;
        }
        self.task.abort();
    }
}

struct LifecycleObserver {
    inner: Arc<dyn jig_agent::AgentObserver>,
    tx: tokio::sync::mpsc::UnboundedSender<Lifecycle>,
    subscribed: Vec<&'static str>,
}

impl jig_agent::AgentObserver for LifecycleObserver {
    fn on_event(&self, event: &jig_agent::AgentEvent) {
        use jig_agent::AgentEvent;
        self.inner.on_event(event);
        // `message_end` is not among them: it is an event of its own, answered (see
        // `ExtensionTurnHooks`).
        let name = match event {
            AgentEvent::AgentStart => events::AGENT_START,
            AgentEvent::AgentEnd { .. } => events::AGENT_END,
            AgentEvent::TurnStart { .. } => events::TURN_START,
            AgentEvent::TurnEnd { .. } => events::TURN_END,
            AgentEvent::MessageStart { .. } => events::MESSAGE_START,
            AgentEvent::MessageUpdate { .. } => events::MESSAGE_UPDATE,
            AgentEvent::ToolExecutionStart { .. } => events::TOOL_EXECUTION_START,
            AgentEvent::ToolExecutionUpdate { .. } => events::TOOL_EXECUTION_UPDATE,
            AgentEvent::ToolExecutionEnd { .. } => events::TOOL_EXECUTION_END,
            _ => return,
        };
        if !self.subscribed.contains(&name) {
            return;
        }
        let Ok(Value::Object(mut payload)) = serde_json::to_value(event) else {
            return;
        };
        payload.remove("type");
        let _ = self.tx.send(Lifecycle::Event(name, Value::Object(payload)));
    }
}
