use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{ActionError, ExtensionError};

/// What the host knows about the running session, for `getSessionInfo` (camelCase on the wire).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session id, when a session is kept.
    pub session_id: Option<String>,
    /// The session file, when one exists.
    pub session_file: Option<String>,
    /// The working directory.
    pub cwd: String,
    /// The model in use (`provider/model`).
    pub model: Option<String>,
    /// The provider in use (`openai`, …).
    #[serde(default)]
    pub provider: Option<String>,
    /// Messages in the conversation so far.
    #[serde(default)]
    pub message_count: usize,
    /// The thinking level.
    pub thinking_level: Option<String>,
    /// `tui`, `print`, `json`, `rpc`, `mcp` or `tool`.
    pub mode: String,
    /// Whether a user interface can answer dialogs (`hasUI` on the wire, as in `initialize`).
    #[serde(rename = "hasUI")]
    pub has_ui: bool,
}

/// A message an extension asks the host to add to the conversation (`sendMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessage {
    /// The extension's own type tag for the message.
    #[serde(default)]
    pub custom_type: Option<String>,
    /// The text the model reads.
    pub content: String,
    /// Whether the message is shown to the user.
    #[serde(default = "yes")]
    pub display: bool,
    /// Start a turn when the agent is idle.
    #[serde(default)]
    pub trigger_turn: bool,
    /// `steer`, `followUp` or `nextTurn`.
    #[serde(default)]
    pub deliver_as: Option<String>,
}

fn yes() -> bool {
    true
}

/// A dialog or notice an extension asks the user interface for (`ui/*` methods).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum UiRequest {
    /// Pick one of `options`; answers the chosen string or `null`.
    Select {
        /// The question.
        title: String,
        /// The choices.
        options: Vec<String>,
    },
    /// Yes or no; answers a boolean.
    Confirm {
        /// The question.
        title: String,
        /// More detail.
        #[serde(default)]
        message: Option<String>,
    },
    /// Free text; answers a string or `null`.
    Input {
        /// The question.
        title: String,
        /// A placeholder.
        #[serde(default)]
        placeholder: Option<String>,
    },
    /// A notice; answers `null`.
    Notify {
        /// The text.
        message: String,
    },
}

impl UiRequest {
    /// What a host without a user interface answers: `null`, and `false` for a confirmation.
    pub fn no_ui_answer(&self) -> Value {
        match self {
            Self::Confirm { .. } => Value::Bool(false),
            Self::Select { .. } | Self::Input { .. } | Self::Notify { .. } => Value::Null,
        }
    }
}

/// What an extension asked to happen to the session (`session/new`, `session/quit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionRequest {
    /// Start a new session, as `/new` does.
    New,
    /// End the session, as `/quit` does.
    Quit,
}

impl SessionRequest {
    /// The action method that asks for it.
    pub fn method(self) -> &'static str {
        match self {
            Self::New => "session/new",
            Self::Quit => "session/quit",
        }
    }
}

/// The host side of the action API: what extensions may ask of jig once the runtime is bound.
///
/// The runner calls these for action methods an extension sends (JSON-RPC requests from a
/// process, or calls from an in-process handler). Before [`ExtensionRunner::bind`] no action
/// reaches the host: extensions get [`crate::NOT_INITIALIZED`].
///
/// # Implementing
/// Every method has a default: actions the host does not support fail with a message saying so,
/// `session_info` is empty, `ui` answers as a host without a user interface, and errors are
/// logged with `tracing`. `jig run` implements the session actions; `jig mcp` and `jig tool`
/// may keep the defaults.
///
/// [`ExtensionRunner::bind`]: crate::ExtensionRunner::bind
#[async_trait]
pub trait ExtensionHost: Send + Sync {
    /// Adds a message to the conversation (`sendMessage`).
    async fn send_message(&self, extension: &str, message: SendMessage) -> Result<(), ActionError> {
        let _ = (extension, message);
        Err(ActionError::unsupported("sendMessage"))
    }

    /// Sends a user message, which always starts a turn (`sendUserMessage`).
    async fn send_user_message(
        &self,
        extension: &str,
        text: String,
        deliver_as: Option<String>,
    ) -> Result<(), ActionError> {
        let _ = (extension, text, deliver_as);
        Err(ActionError::unsupported("sendUserMessage"))
    }

    /// Appends an entry of the extension's own to the session, not sent to the model
    /// (`appendEntry`).
    async fn append_entry(
        &self,
        extension: &str,
        custom_type: String,
        data: Value,
    ) -> Result<(), ActionError> {
        let _ = (extension, custom_type, data);
        Err(ActionError::unsupported("appendEntry"))
    }

    /// The names of the tools the model is offered (`getActiveTools`).
    async fn active_tools(&self) -> Vec<String> {
        Vec::new()
    }

    /// The names of all tools (`getAllTools`).
    async fn all_tools(&self) -> Vec<String> {
        self.active_tools().await
    }

    /// Changes the tools the model is offered (`setActiveTools`).
    async fn set_active_tools(
        &self,
        extension: &str,
        names: Vec<String>,
    ) -> Result<(), ActionError> {
        let _ = (extension, names);
        Err(ActionError::unsupported("setActiveTools"))
    }

    /// The session as the host sees it (`getSessionInfo`).
    async fn session_info(&self) -> SessionInfo {
        SessionInfo::default()
    }

    /// Asks the user (`ui/select`, `ui/confirm`, `ui/input`, `ui/notify`). Without a user
    /// interface: [`UiRequest::no_ui_answer`].
    async fn ui(&self, extension: &str, request: UiRequest) -> Value {
        let _ = extension;
        request.no_ui_answer()
    }

    /// Registers a model provider from its declarative config (queued during loading, applied
    /// at bind).
    fn register_provider(&self, extension: &str, provider: Value) -> Result<(), ActionError> {
        let _ = (extension, provider);
        Err(ActionError::unsupported("registering providers"))
    }

    /// Offers a tool the extension registered after loading (`registerTool` once bound); the
    /// host builds it with [`ExtensionRunner::late_tool`](crate::ExtensionRunner::late_tool).
    async fn register_tool(
        &self,
        extension: &str,
        registration: crate::ToolRegistration,
    ) -> Result<(), ActionError> {
        let _ = (extension, registration);
        Err(ActionError::unsupported("registerTool after loading"))
    }

    /// Asks the host to start a new session, or to end the session, once the command that
    /// asked has finished (`session/new`, `session/quit`: Pi's `ctx.newSession()` and
    /// `ctx.shutdown()`).
    fn request_session(&self, extension: &str, request: SessionRequest) -> Result<(), ActionError> {
        let _ = extension;
        Err(ActionError::unsupported(request.method()))
    }

    /// An extension failed while handling an event; the host shows or logs it.
    fn report_error(&self, error: &ExtensionError) {
        tracing::warn!("{error}");
    }
}

/// One action an extension asked for, as [`RecordingHost`] records it.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordedAction {
    /// `sendMessage`.
    SendMessage(String, SendMessage),
    /// `sendUserMessage`.
    SendUserMessage(String, String),
    /// `appendEntry`.
    AppendEntry(String, String, Value),
    /// `setActiveTools`.
    SetActiveTools(String, Vec<String>),
    /// `registerProvider`.
    RegisterProvider(String, Value),
    /// `ui/*`.
    Ui(String, UiRequest),
}

/// A host without a user interface that records every action and error (for tests and for
/// modes with no session: it accepts everything and changes nothing).
#[derive(Debug, Default)]
pub struct RecordingHost {
    /// What `getSessionInfo` answers.
    pub info: SessionInfo,
    actions: Mutex<Vec<RecordedAction>>,
    errors: Mutex<Vec<ExtensionError>>,
    active: Mutex<Vec<String>>,
}

impl RecordingHost {
    /// A host answering `info` for `getSessionInfo`.
    pub fn new(info: SessionInfo) -> Arc<Self> {
        Arc::new(Self {
            info,
            ..Self::default()
        })
    }

    /// The actions so far.
    pub fn actions(&self) -> Vec<RecordedAction> {
        lock(&self.actions).clone()
    }

    /// The errors reported so far.
    pub fn errors(&self) -> Vec<ExtensionError> {
        lock(&self.errors).clone()
    }

    fn record(&self, action: RecordedAction) {
        lock(&self.actions).push(action);
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[async_trait]
impl ExtensionHost for RecordingHost {
    async fn send_message(&self, extension: &str, message: SendMessage) -> Result<(), ActionError> {
        self.record(RecordedAction::SendMessage(extension.to_owned(), message));
        Ok(())
    }
    async fn send_user_message(
        &self,
        extension: &str,
        text: String,
        _deliver_as: Option<String>,
    ) -> Result<(), ActionError> {
        self.record(RecordedAction::SendUserMessage(extension.to_owned(), text));
        Ok(())
    }
    async fn append_entry(
        &self,
        extension: &str,
        custom_type: String,
        data: Value,
    ) -> Result<(), ActionError> {
        self.record(RecordedAction::AppendEntry(
            extension.to_owned(),
            custom_type,
            data,
        ));
        Ok(())
    }
    async fn active_tools(&self) -> Vec<String> {
        lock(&self.active).clone()
    }
    async fn set_active_tools(
        &self,
        extension: &str,
        names: Vec<String>,
    ) -> Result<(), ActionError> {
        lock(&self.active).clone_from(&names);
        self.record(RecordedAction::SetActiveTools(extension.to_owned(), names));
        Ok(())
    }
    async fn session_info(&self) -> SessionInfo {
        self.info.clone()
    }
    async fn ui(&self, extension: &str, request: UiRequest) -> Value {
        let answer = request.no_ui_answer();
        self.record(RecordedAction::Ui(extension.to_owned(), request));
        answer
    }
    fn register_provider(&self, extension: &str, provider: Value) -> Result<(), ActionError> {
        if provider.get("name").and_then(Value::as_str).is_none() {
            return Err(ActionError::ProviderWithoutName);
        }
        self.record(RecordedAction::RegisterProvider(
            extension.to_owned(),
            provider,
        ));
        Ok(())
    }
    fn report_error(&self, error: &ExtensionError) {
        lock(&self.errors).push(error.clone());
    }
}

struct ParamsOf<'a>(&'a str);

impl ParamsOf<'_> {
    fn get<T: serde::de::DeserializeOwned>(&self, value: Value) -> Result<T, ActionError> {
        serde_json::from_value(value).map_err(|error| ActionError::Params {
            method: self.0.to_owned(),
            reason: error.to_string(),
        })
    }
}

/// Where an extension's action calls go: refused until bound, then to the host. Shared by the
/// transports so every one answers the same way.
#[derive(Default)]
pub(crate) struct ActionGate {
    host: std::sync::OnceLock<Arc<dyn ExtensionHost>>,
    flags: std::sync::OnceLock<serde_json::Map<String, Value>>,
    queued_providers: Mutex<Vec<Value>>,
}

impl std::fmt::Debug for ActionGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionGate")
            .field("bound", &self.host.get().is_some())
            .finish_non_exhaustive()
    }
}

impl ActionGate {
    /// Binds the host and applies queued provider registrations; their failures are returned.
    pub(crate) fn bind(&self, path: &str, host: &Arc<dyn ExtensionHost>) -> Vec<ExtensionError> {
        let _ = self.host.set(Arc::clone(host));
        let queued = std::mem::take(&mut *lock(&self.queued_providers));
        queued
            .into_iter()
            .filter_map(|provider| {
                host.register_provider(path, provider)
                    .err()
                    .map(|error| ExtensionError {
                        path: path.to_owned(),
                        event: "register_provider".to_owned(),
                        message: error.to_string(),
                    })
            })
            .collect()
    }

    /// The extension's flag values (set once, after loading).
    pub(crate) fn set_flag_values(&self, values: serde_json::Map<String, Value>) {
        let _ = self.flags.set(values);
    }

    /// The extension's flag values; empty before they are set.
    pub(crate) fn flag_values(&self) -> serde_json::Map<String, Value> {
        self.flags.get().cloned().unwrap_or_default()
    }

    /// The provider registrations queued so far, taken out of the queue.
    pub(crate) fn take_queued_providers(&self) -> Vec<Value> {
        std::mem::take(&mut *lock(&self.queued_providers))
    }

    /// Queues a provider registration made while loading.
    pub(crate) fn queue_provider(&self, provider: Value) {
        lock(&self.queued_providers).push(provider);
    }

    /// Serves one action method. `Err` is the JSON-RPC error.
    pub(crate) async fn call(
        &self,
        path: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, ActionError> {
        if method == "registerProvider" {
            return match self.host.get() {
                None => {
                    self.queue_provider(params);
                    Ok(Value::Null)
                }
                Some(host) => host.register_provider(path, params).map(|()| Value::Null),
            };
        }
        if method == "getFlag" {
            // Allowed while loading too, where it answers null: values arrive after loading.
            let name = params.get("name").and_then(Value::as_str).unwrap_or("");
            return Ok(self
                .flags
                .get()
                .and_then(|flags| flags.get(name))
                .cloned()
                .unwrap_or(Value::Null));
        }
        let Some(host) = self.host.get() else {
            return Err(ActionError::NotInitialized);
        };
        let field = |name: &str| params.get(name).cloned().unwrap_or(Value::Null);
        let parse = ParamsOf(method);
        match method {
            "sendMessage" => {
                let message: SendMessage = parse.get(params.clone())?;
                host.send_message(path, message).await.map(|()| Value::Null)
            }
            "sendUserMessage" => {
                let text: String = parse.get(field("text"))?;
                let deliver_as: Option<String> = parse.get(field("deliverAs"))?;
                host.send_user_message(path, text, deliver_as)
                    .await
                    .map(|()| Value::Null)
            }
            "appendEntry" => {
                let custom_type: String = parse.get(field("customType"))?;
                host.append_entry(path, custom_type, field("data"))
                    .await
                    .map(|()| Value::Null)
            }
            "getActiveTools" => Ok(json!(host.active_tools().await)),
            "getAllTools" => Ok(json!(host.all_tools().await)),
            "setActiveTools" => {
                let names: Vec<String> = parse.get(field("names"))?;
                host.set_active_tools(path, names)
                    .await
                    .map(|()| Value::Null)
            }
            "getSessionInfo" => Ok(json!(host.session_info().await)),
            "registerTool" => {
                let registration: crate::ToolRegistration = parse.get(params.clone())?;
                host.register_tool(path, registration)
                    .await
                    .map(|()| Value::Null)
            }
            "session/new" => host
                .request_session(path, SessionRequest::New)
                .map(|()| Value::Null),
            "session/quit" => host
                .request_session(path, SessionRequest::Quit)
                .map(|()| Value::Null),
            "ui/select" | "ui/confirm" | "ui/input" | "ui/notify" => {
                let mut request = params.clone();
                if let Value::Object(map) = &mut request {
                    map.insert("kind".to_owned(), json!(&method[3..]));
                }
                let request: UiRequest = parse.get(request)?;
                Ok(host.ui(path, request).await)
            }
            other => Err(ActionError::UnknownMethod(other.to_owned())),
        }
    }
}
