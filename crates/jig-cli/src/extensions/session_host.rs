//! The host side of the action API for a session: what extensions may ask of `jig run` once
//! the runtime is bound, and the agent's turn hooks that deliver it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use jig_agent::compaction::CompactionReason;
use jig_agent::{SessionRecorder, TurnHooks};
use jig_extensions::{
    ExtensionError, ExtensionHost, ExtensionRunner, SendMessage, SessionInfo, UiRequest,
};
use jig_protocol::Message;
use serde_json::{Value, json};

use super::ExtensionUi;

/// Where `appendEntry` goes: held until the session recorder starts, then written through it.
enum Entries {
    Held(Vec<(String, Value)>),
    Recording(SessionRecorder),
    Closed,
}

/// The session as extensions act on it. In a mode that runs no agent loop here (`mcp`,
/// `tool`, and the interactive session for now) the actions that change the session answer
/// `<method> is not available in jig <mode> mode`.
pub(crate) struct SessionHost {
    info: SessionInfo,
    /// Whether the actions reach a run (`jig run`).
    live: bool,
    message_count: AtomicUsize,
    all_tools: Vec<String>,
    active: Mutex<Option<Vec<String>>>,
    steering: Mutex<Vec<Message>>,
    follow_ups: Mutex<Vec<Message>>,
    entries: Mutex<Entries>,
    /// Set when the run ended: no turn is left to take a message.
    finished: AtomicBool,
    /// Asks the user on an extension's behalf, in a mode with a user interface.
    ui: Option<Arc<dyn ExtensionUi>>,
    /// The providers the extensions registered while loading, offered before bind.
    providers: Vec<String>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SessionHost {
    /// A host for `info` offering `tools`; `live` when a run takes the actions; `ui` answers
    /// the extensions' `ui/*` requests (`hasUI` is whether there is one); `providers` are the
    /// providers the extensions registered while loading, already offered, whose registrations
    /// (applied at bind) are accepted.
    pub(crate) fn new(
        mut info: SessionInfo,
        tools: Vec<String>,
        live: bool,
        ui: Option<Arc<dyn ExtensionUi>>,
        providers: Vec<String>,
    ) -> Arc<Self> {
        info.has_ui = ui.is_some();
        Arc::new(Self {
            message_count: AtomicUsize::new(info.message_count),
            info,
            live,
            all_tools: tools,
            active: Mutex::new(None),
            steering: Mutex::new(Vec::new()),
            follow_ups: Mutex::new(Vec::new()),
            entries: Mutex::new(Entries::Held(Vec::new())),
            finished: AtomicBool::new(false),
            ui,
            providers,
        })
    }

    /// From now on `appendEntry` writes through `recorder` (held entries first).
    pub(crate) fn record_into(&self, recorder: &SessionRecorder) {
        let mut entries = lock(&self.entries);
        if let Entries::Held(held) = &mut *entries {
            for (custom_type, data) in held.drain(..) {
                recorder.record_custom(custom_type, data);
            }
        }
        *entries = Entries::Recording(recorder.clone());
    }

    /// The run ended: messages can no longer be delivered. Entries still are, until
    /// [`SessionHost::close`].
    pub(crate) fn finish(&self) {
        self.finished.store(true, Ordering::Release);
    }

    /// The session is being closed: entries can no longer be written.
    pub(crate) fn close(&self) {
        *lock(&self.entries) = Entries::Closed;
    }

    fn unavailable(&self, method: &str) -> String {
        format!("{method} is not available in jig {} mode", self.info.mode)
    }

    fn queue(&self, method: &str, text: String, deliver_as: Option<&str>) -> Result<(), String> {
        if !self.live {
            return Err(self.unavailable(method));
        }
        if self.finished.load(Ordering::Acquire) {
            return Err(format!(
                "{method}: the run has ended; no turn is left to take it"
            ));
        }
        let queue = match deliver_as {
            None | Some("steer") => &self.steering,
            Some("followUp") => &self.follow_ups,
            Some("nextTurn") => {
                return Err(format!(
                    "{method}: deliverAs nextTurn needs a next prompt, and jig {} mode sends one prompt",
                    self.info.mode
                ));
            }
            Some(other) => {
                return Err(format!(
                    "{method}: unknown deliverAs \"{other}\" (steer, followUp or nextTurn)"
                ));
            }
        };
        lock(queue).push(Message::user_text(text));
        Ok(())
    }
}

#[async_trait]
impl ExtensionHost for SessionHost {
    async fn send_message(&self, _extension: &str, message: SendMessage) -> Result<(), String> {
        self.queue(
            "sendMessage",
            message.content,
            message.deliver_as.as_deref(),
        )
    }

    async fn send_user_message(
        &self,
        _extension: &str,
        text: String,
        deliver_as: Option<String>,
    ) -> Result<(), String> {
        self.queue("sendUserMessage", text, deliver_as.as_deref())
    }

    async fn append_entry(
        &self,
        _extension: &str,
        custom_type: String,
        data: Value,
    ) -> Result<(), String> {
        if !self.live {
            return Err(self.unavailable("appendEntry"));
        }
        match &mut *lock(&self.entries) {
            Entries::Held(held) => held.push((custom_type, data)),
            Entries::Recording(recorder) => recorder.record_custom(custom_type, data),
            Entries::Closed => return Err("appendEntry: the session is closed".to_owned()),
        }
        Ok(())
    }

    async fn active_tools(&self) -> Vec<String> {
        lock(&self.active)
            .clone()
            .unwrap_or_else(|| self.all_tools.clone())
    }

    async fn all_tools(&self) -> Vec<String> {
        self.all_tools.clone()
    }

    async fn set_active_tools(&self, _extension: &str, names: Vec<String>) -> Result<(), String> {
        if !self.live {
            return Err(self.unavailable("setActiveTools"));
        }
        if let Some(unknown) = names.iter().find(|name| !self.all_tools.contains(name)) {
            return Err(format!(
                "setActiveTools: unknown tool \"{unknown}\"; available tools: {}",
                self.all_tools.join(", ")
            ));
        }
        *lock(&self.active) = Some(names);
        Ok(())
    }

    async fn session_info(&self) -> SessionInfo {
        SessionInfo {
            message_count: self.message_count.load(Ordering::Relaxed),
            ..self.info.clone()
        }
    }

    fn register_provider(&self, _extension: &str, provider: Value) -> Result<(), String> {
        let name = provider.get("name").and_then(Value::as_str).unwrap_or("");
        if self.providers.iter().any(|offered| offered == name) {
            return Ok(());
        }
        Err(format!(
            "registerProvider after loading is not available in jig {} mode: register providers in the initialize reply or during initialize",
            self.info.mode
        ))
    }

    async fn ui(&self, extension: &str, request: UiRequest) -> Value {
        match &self.ui {
            Some(ui) => ui.ask(extension, request).await,
            None => request.no_ui_answer(),
        }
    }

    fn report_error(&self, error: &ExtensionError) {
        crate::project::warn(&error.to_string());
    }
}

/// The agent's turn hooks for a run with extensions: the host's queued messages and active
/// tools, and the runner's `context`, `message_end` and `session_before_compact`.
pub(crate) struct ExtensionTurnHooks {
    pub(crate) host: Arc<SessionHost>,
    pub(crate) runner: Arc<ExtensionRunner>,
}

#[async_trait]
impl TurnHooks for ExtensionTurnHooks {
    fn take_steering(&self) -> Vec<Message> {
        std::mem::take(&mut *lock(&self.host.steering))
    }

    fn take_follow_ups(&self) -> Vec<Message> {
        std::mem::take(&mut *lock(&self.host.follow_ups))
    }

    fn active_tools(&self) -> Option<Vec<String>> {
        lock(&self.host.active).clone()
    }

    async fn context(&self, messages: Vec<Message>) -> Vec<Message> {
        self.runner.context(messages).await
    }

    async fn message_end(&self, message: Message) -> Message {
        self.host.message_count.fetch_add(1, Ordering::Relaxed);
        self.runner.message_end(message).await
    }

    async fn cancel_compaction(&self, reason: CompactionReason) -> bool {
        self.runner
            .session_before(
                jig_extensions::events::SESSION_BEFORE_COMPACT,
                &json!({ "reason": reason }),
            )
            .await
            .cancel
    }
}
