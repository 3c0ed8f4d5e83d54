use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use jig_protocol::ToolResult;
use serde_json::Value;

use crate::error::{ExtensionError, HandlerError};
use crate::handle::{ExtensionHandle, ToolInvocation};
use crate::host::{ActionGate, ExtensionHost};
use crate::registration::{FlagRegistration, Registrations, ToolRegistration};

/// A boxed future, as in-process handlers return it.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

type Handler = Arc<dyn Fn(HandlerContext, Value) -> BoxFuture<Result<Value, String>> + Send + Sync>;
type ToolFn =
    Arc<dyn Fn(HandlerContext, Value) -> BoxFuture<Result<ToolResult, String>> + Send + Sync>;

/// What an in-process handler may use: the action API, refused until the runtime is bound.
#[derive(Clone)]
pub struct HandlerContext {
    path: Arc<str>,
    gate: Arc<ActionGate>,
}

impl fmt::Debug for HandlerContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandlerContext")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl HandlerContext {
    /// Calls an action method (`sendMessage`, `appendEntry`, `getSessionInfo`, `ui/confirm`, …)
    /// exactly as a process extension would over JSON-RPC: an error is the message it would
    /// receive (an [`crate::ActionError`]'s text), as the handler's own errors are text.
    pub async fn action(&self, method: &str, params: Value) -> Result<Value, String> {
        self.gate
            .call(&self.path, method, params)
            .await
            .map_err(|error| error.to_string())
    }
}

/// An extension made of Rust closures, for built-ins and tests.
///
/// ```ignore
/// let gate = InProcessExtension::new("<inline:gate>")
///     .on("tool_call", |payload| Ok(json!({"block": true, "reason": "no"})))
///     .into_handle();
/// ```
pub struct InProcessExtension {
    path: Arc<str>,
    registrations: Registrations,
    handlers: HashMap<String, Handler>,
    tools: HashMap<String, ToolFn>,
    gate: Arc<ActionGate>,
    stopped: OnceLock<String>,
}

impl fmt::Debug for InProcessExtension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InProcessExtension")
            .field("path", &self.path)
            .field("registrations", &self.registrations)
            .finish_non_exhaustive()
    }
}

impl InProcessExtension {
    /// An extension with no handlers; `path` names it in messages (use `<inline:NAME>`).
    pub fn new(path: impl Into<String>) -> Self {
        let path: String = path.into();
        Self {
            path: path.into(),
            registrations: Registrations::default(),
            handlers: HashMap::new(),
            tools: HashMap::new(),
            gate: Arc::new(ActionGate::default()),
            stopped: OnceLock::new(),
        }
    }

    /// Handles `event` with a synchronous closure (`Ok(Value::Null)` = no opinion). One handler
    /// per event: a second one for the same event replaces the first.
    #[must_use]
    pub fn on(
        self,
        event: &str,
        handler: impl Fn(&Value) -> Result<Value, String> + Send + Sync + 'static,
    ) -> Self {
        let handler = Arc::new(handler);
        self.on_async(event, move |_, payload| {
            let handler = Arc::clone(&handler);
            async move { handler(&payload) }
        })
    }

    /// Handles `event` with an async closure that may call actions through its context.
    #[must_use]
    pub fn on_async<F>(
        mut self,
        event: &str,
        handler: impl Fn(HandlerContext, Value) -> F + Send + Sync + 'static,
    ) -> Self
    where
        F: Future<Output = Result<Value, String>> + Send + 'static,
    {
        if !self.registrations.handles(event) {
            self.registrations.events.push(event.to_owned());
        }
        self.handlers.insert(
            event.to_owned(),
            Arc::new(move |cx, payload| Box::pin(handler(cx, payload))),
        );
        self
    }

    /// Offers a tool.
    #[must_use]
    pub fn tool<F>(
        mut self,
        registration: ToolRegistration,
        run: impl Fn(HandlerContext, Value) -> F + Send + Sync + 'static,
    ) -> Self
    where
        F: Future<Output = Result<ToolResult, String>> + Send + 'static,
    {
        self.tools.insert(
            registration.name.clone(),
            Arc::new(move |cx, params| Box::pin(run(cx, params))),
        );
        self.registrations.tools.push(registration);
        self
    }

    /// Registers a command-line flag; its value is read with the `getFlag` action.
    #[must_use]
    pub fn flag(mut self, flag: FlagRegistration) -> Self {
        self.registrations.flags.push(flag);
        self
    }

    /// Registers a provider (declarative config); queued until the runtime is bound.
    #[must_use]
    pub fn provider(mut self, config: Value) -> Self {
        self.gate.queue_provider(config.clone());
        self.registrations.providers.push(config);
        self
    }

    /// The context handlers get (for calling actions outside a handler, e.g. in a test of the
    /// load phase).
    pub fn context(&self) -> HandlerContext {
        HandlerContext {
            path: Arc::clone(&self.path),
            gate: Arc::clone(&self.gate),
        }
    }

    /// The extension as a runner holds it.
    pub fn into_handle(self) -> Arc<dyn ExtensionHandle> {
        Arc::new(self)
    }
}

#[async_trait]
impl ExtensionHandle for InProcessExtension {
    fn path(&self) -> &str {
        &self.path
    }

    fn registrations(&self) -> &Registrations {
        &self.registrations
    }

    async fn handle_event(&self, event: &str, payload: &Value) -> Result<Value, HandlerError> {
        if let Some(reason) = self.stopped.get() {
            return Err(HandlerError::Gone(reason.clone()));
        }
        let Some(handler) = self.handlers.get(event) else {
            return Ok(Value::Null);
        };
        handler(self.context(), payload.clone())
            .await
            .map_err(HandlerError::Failed)
    }

    async fn execute_tool(
        &self,
        invocation: ToolInvocation<'_>,
    ) -> Result<ToolResult, HandlerError> {
        if let Some(reason) = self.stopped.get() {
            return Err(HandlerError::Gone(reason.clone()));
        }
        let Some(run) = self.tools.get(invocation.name) else {
            return Err(HandlerError::Failed(format!(
                "extension has no tool named {}",
                invocation.name
            )));
        };
        run(self.context(), invocation.params)
            .await
            .map_err(HandlerError::Failed)
    }

    async fn bind(&self, host: Arc<dyn ExtensionHost>) -> Vec<ExtensionError> {
        self.gate.bind(&self.path, &host)
    }

    fn timed_out(&self, event: &str) {
        let _ = self.stopped.set(format!("stopped after {event} timed out"));
    }

    fn failure(&self) -> Option<String> {
        self.stopped.get().cloned()
    }

    fn set_flag_values(&self, values: serde_json::Map<String, Value>) {
        self.gate.set_flag_values(values);
    }

    async fn shutdown(&self) {}
}
