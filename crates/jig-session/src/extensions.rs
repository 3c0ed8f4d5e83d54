//! The loaded extensions at work in each mode: their tools in the registry, `tool_call` and
//! `tool_result` around each tool execution, and the host side of their action API
//! ([`SessionHost`]: live in `jig run` and the interactive session, where
//! [`ExtensionTurnHooks`] deliver queued messages,
//! active tools, `context`, `message_end` and `session_before_compact` to the agent loop).
//!
//! Nothing here costs a tool call anything when no extension subscribes to `tool_call` or
//! `tool_result`: the registry's tools are then used as they are, and `jig run` keeps the
//! agent's pass-through hooks.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use jig_agent::{BLOCKED_TEXT, BeforeToolCall, ToolHooks};
use jig_extensions::{ExtensionRunner, SessionInfo, ToolCallOutcome, UiRequest, events};
use jig_protocol::{ToolCall, ToolResult};
use jig_tool::{DynTool, ToolContext, ToolError, ToolRegistry};
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

/// Every tool of `registry` wrapped so that `tool_call` and `tool_result` run around it — or
/// `registry` unchanged when no extension subscribes to either.
pub fn hooked_registry(registry: ToolRegistry, runner: &Arc<ExtensionRunner>) -> ToolRegistry {
    if !hooks_tools(runner) {
        return registry;
    }
    let call_ids = Arc::new(AtomicU64::new(1));
    let mut hooked = ToolRegistry::new();
    for tool in registry.iter() {
        hooked.register(Arc::new(HookedTool {
            inner: Arc::clone(tool),
            runner: Arc::clone(runner),
            call_ids: Arc::clone(&call_ids),
        }));
    }
    hooked
}

/// A tool with the extensions' `tool_call` before it and `tool_result` after it (`jig mcp`,
/// `jig tool`): a block is an error result with the reason; a replaced input is what runs.
#[derive(Debug)]
struct HookedTool {
    inner: Arc<dyn DynTool>,
    runner: Arc<ExtensionRunner>,
    call_ids: Arc<AtomicU64>,
}

#[async_trait]
impl DynTool for HookedTool {
    jig_tool::delegate_tool_metadata!();
    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolResult, ToolError> {
        let call_id = format!("call-{}", self.call_ids.fetch_add(1, Ordering::Relaxed));
        let name = self.inner.name();
        let args = match self.runner.tool_call(&call_id, name, &args).await {
            ToolCallOutcome::Block { reason } => {
                return Ok(ToolResult::error(
                    reason.unwrap_or_else(|| BLOCKED_TEXT.to_owned()),
                ));
            }
            ToolCallOutcome::Allow { input } => input.unwrap_or(args),
        };
        let result = self.inner.run(ctx, args.clone()).await;
        Ok(self.runner.tool_result(&call_id, name, &args, result).await)
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

/// The agent loop's hooks for `runner`: `None` (keep the pass-through hooks) when no extension
/// subscribes to `tool_call` or `tool_result`.
pub fn tool_hooks(runner: &Arc<ExtensionRunner>) -> Option<Arc<dyn ToolHooks>> {
    hooks_tools(runner).then(|| {
        Arc::new(ExtensionToolHooks {
            runner: Arc::clone(runner),
        }) as Arc<dyn ToolHooks>
    })
}

/// The permission policy's hooks, then the extensions' `tool_call` and `tool_result` (when any
/// extension subscribes): a call the policy blocks never reaches the extensions; arguments it
/// changed are what they see.
pub fn with_permissions(
    permissions: Arc<dyn ToolHooks>,
    runner: &Arc<ExtensionRunner>,
) -> Arc<dyn ToolHooks> {
    let hooks: Arc<dyn ToolHooks> = match tool_hooks(runner) {
        Some(extensions) => Arc::new(Chained {
            first: permissions,
            then: extensions,
        }),
        None => permissions,
    };
    crate::audit::hooks(hooks)
}

/// Two hooks in a row: `first` decides before `then`; results pass through `first`, then `then`.
struct Chained {
    first: Arc<dyn ToolHooks>,
    then: Arc<dyn ToolHooks>,
}

#[async_trait]
impl ToolHooks for Chained {
    async fn before_tool_call(&self, call: &ToolCall) -> BeforeToolCall {
        match self.first.before_tool_call(call).await {
            block @ BeforeToolCall::Block { .. } => block,
            BeforeToolCall::Continue => self.then.before_tool_call(call).await,
            BeforeToolCall::ChangeArguments(arguments) => {
                let changed = ToolCall {
                    arguments: arguments.clone(),
                    ..call.clone()
                };
                match self.then.before_tool_call(&changed).await {
                    BeforeToolCall::Continue => BeforeToolCall::ChangeArguments(arguments),
                    other => other,
                }
            }
        }
    }

    async fn after_tool_call(
        &self,
        call: &ToolCall,
        arguments: &Value,
        result: ToolResult,
    ) -> ToolResult {
        let result = self.first.after_tool_call(call, arguments, result).await;
        self.then.after_tool_call(call, arguments, result).await
    }
}

/// `tool_call` and `tool_result` as the agent loop's hooks (`jig run`).
struct ExtensionToolHooks {
    runner: Arc<ExtensionRunner>,
}

#[async_trait]
impl ToolHooks for ExtensionToolHooks {
    async fn before_tool_call(&self, call: &ToolCall) -> BeforeToolCall {
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;

    /// Answers `answer` and remembers the arguments it saw.
    struct Fixed {
        answer: fn() -> BeforeToolCall,
        seen: Mutex<Vec<Value>>,
    }

    impl Fixed {
        fn new(answer: fn() -> BeforeToolCall) -> Arc<Self> {
            Arc::new(Self {
                answer,
                seen: Mutex::new(Vec::new()),
            })
        }

        fn seen(&self) -> Vec<Value> {
            self.seen
                .lock()
                .map(|seen| seen.clone())
                .unwrap_or_default()
        }
    }

    #[async_trait]
    impl ToolHooks for Fixed {
        async fn before_tool_call(&self, call: &ToolCall) -> BeforeToolCall {
            if let Ok(mut seen) = self.seen.lock() {
                seen.push(call.arguments.clone());
            }
            (self.answer)()
        }
    }

    fn call() -> ToolCall {
        ToolCall {
            id: "c1".to_owned(),
            name: "bash".to_owned(),
            arguments: json!({"command": "ls"}),
            raw_arguments: None,
        }
    }

    fn chained(first: &Arc<Fixed>, then: &Arc<Fixed>) -> Chained {
        Chained {
            first: Arc::clone(first) as Arc<dyn ToolHooks>,
            then: Arc::clone(then) as Arc<dyn ToolHooks>,
        }
    }

    #[tokio::test]
    async fn a_call_the_first_blocks_never_reaches_the_second() {
        let first = Fixed::new(|| BeforeToolCall::Block {
            reason: Some("denied".to_owned()),
        });
        let then = Fixed::new(|| BeforeToolCall::Continue);
        let verdict = chained(&first, &then).before_tool_call(&call()).await;
        assert!(
            matches!(verdict, BeforeToolCall::Block { reason: Some(ref r) } if r == "denied"),
            "{verdict:?}"
        );
        assert!(then.seen().is_empty());
    }

    #[tokio::test]
    async fn an_allowed_call_is_decided_by_the_second() {
        let first = Fixed::new(|| BeforeToolCall::Continue);
        let then = Fixed::new(|| BeforeToolCall::Block { reason: None });
        let verdict = chained(&first, &then).before_tool_call(&call()).await;
        assert!(matches!(verdict, BeforeToolCall::Block { reason: None }));
        assert_eq!(then.seen(), vec![json!({"command": "ls"})]);
    }

    #[tokio::test]
    async fn changed_arguments_are_what_the_second_sees_and_what_runs() {
        let first = Fixed::new(|| BeforeToolCall::ChangeArguments(json!({"command": "pwd"})));
        let then = Fixed::new(|| BeforeToolCall::Continue);
        let verdict = chained(&first, &then).before_tool_call(&call()).await;
        assert!(
            matches!(verdict, BeforeToolCall::ChangeArguments(ref a) if *a == json!({"command": "pwd"})),
            "{verdict:?}"
        );
        assert_eq!(then.seen(), vec![json!({"command": "pwd"})]);
    }
}
