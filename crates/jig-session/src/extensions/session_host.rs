//! The host side of the action API for a session: what extensions may ask of `jig run` and
//! the interactive session once the runtime is bound, and the agent's turn hooks that deliver
//! it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use async_trait::async_trait;
use jig_agent::compaction::CompactionReason;
use jig_agent::{SessionRecorder, TurnHooks};
use jig_extensions::{
    ActionError, ExtensionError, ExtensionHost, ExtensionRunner, SendMessage, SessionInfo,
    SessionRequest, UiRequest,
};
use jig_protocol::Message;
use serde_json::{Value, json};

use super::ExtensionUi;

/// Where `appendEntry` writes once the session exists: the interactive session's writer.
pub trait EntrySink: Send + Sync {
    /// Appends `{"type": "custom", "customType", "data"}` to the session.
    fn append_custom(&self, custom_type: &str, data: Value) -> Result<(), jig_agent::SessionError>;
}

/// Where `appendEntry` goes: held until the session recorder starts, then written through it
/// (`jig run`), or through the interactive session's writer.
enum Entries {
    Held(Vec<(String, Value)>),
    Recording(SessionRecorder),
    Writing(Arc<dyn EntrySink>),
    Closed,
}

/// Whether and how the actions that change the session reach an agent loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// No agent loop here (`mcp`, `tool`): they answer `<method> is not available in jig
    /// <mode> mode`.
    Unavailable,
    /// One run (`jig run`): messages are queued into it until it ends.
    Run,
    /// The interactive session: a message sent while a turn runs is queued into it; sent while
    /// the agent is idle it starts a turn (`sendUserMessage`, `triggerTurn`) or waits for the
    /// next one.
    Interactive,
}

/// How a message an extension sent into the interactive session is shown and recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// `sendMessage`'s `customType`.
    pub custom_type: Option<String>,
    /// Whether it is shown in the transcript.
    pub display: bool,
    /// Sent by `sendUserMessage` (shown like a typed message), not `sendMessage`.
    pub user: bool,
}

/// A turn an extension asked for while the interactive session was idle.
#[derive(Debug, Clone, PartialEq)]
pub enum IdleTurn {
    /// `sendUserMessage`: sent as if the user had typed it (through `input` and
    /// `before_agent_start`, source `extension`).
    User(String),
    /// `sendMessage` with `triggerTurn`, or messages queued too late for the turn that ended:
    /// the first starts the turn, the others follow it before the first request.
    Messages(Vec<Message>),
}

/// The session as extensions act on it. In a mode that runs no agent loop here (`mcp`,
/// `tool`) the actions that change the session answer `<method> is not available in jig
/// <mode> mode`; in `jig run` they reach the run ([`Delivery::Run`]), in the interactive
/// session every turn and the session file, following the session when the user switches
/// ([`Delivery::Interactive`]).
pub struct SessionHost {
    info: Mutex<SessionInfo>,
    delivery: Delivery,
    message_count: AtomicUsize,
    all_tools: Mutex<Vec<String>>,
    /// Tools extensions registered after loading, not yet taken by the agent loop.
    new_tools: Mutex<Vec<Arc<dyn jig_tool::DynTool>>>,
    /// The runner whose extensions may register tools after loading (`jig run`, interactive).
    late_tools_from: OnceLock<std::sync::Weak<ExtensionRunner>>,
    active: Mutex<Option<Vec<String>>>,
    steering: Mutex<Vec<Message>>,
    follow_ups: Mutex<Vec<Message>>,
    entries: Mutex<Entries>,
    /// Set when the run (or the interactive session) ended: no turn is left to take a message.
    finished: AtomicBool,
    /// Interactive: whether a turn runs (messages are queued into it).
    turn_running: AtomicBool,
    /// Interactive: turns to start when the agent is idle.
    idle_turns: Mutex<VecDeque<IdleTurn>>,
    /// Interactive: messages delivered with the user's next prompt.
    next_turn: Mutex<Vec<Message>>,
    /// Interactive: the messages extensions sent, not yet seen finished, with how they show.
    sent: Mutex<Vec<(Message, Sent)>>,
    /// Interactive: raised when a turn is asked for while idle (the prompt editor then stops
    /// waiting for the user).
    wake: OnceLock<Arc<AtomicBool>>,
    /// Asks the user on an extension's behalf, in a mode with a user interface.
    ui: Option<Arc<dyn ExtensionUi>>,
    /// The providers the extensions registered while loading, offered before bind.
    providers: Vec<String>,
    /// Interactive: what an extension's command asked to happen to the session once it has
    /// finished (a new session, or the end).
    session_request: Mutex<Option<SessionRequest>>,
}

impl std::fmt::Debug for SessionHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHost")
            .field("delivery", &self.delivery)
            .field("providers", &self.providers)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SessionHost {
    /// A host for `info` offering `tools`; `delivery` says whether and how the actions reach
    /// an agent loop; `ui` answers the extensions' `ui/*` requests (`hasUI` is whether there
    /// is one); `providers` are the providers the extensions registered while loading, already
    /// offered, whose registrations (applied at bind) are accepted.
    pub fn new(
        mut info: SessionInfo,
        tools: Vec<String>,
        delivery: Delivery,
        ui: Option<Arc<dyn ExtensionUi>>,
        providers: Vec<String>,
    ) -> Arc<Self> {
        info.has_ui = ui.is_some();
        Arc::new(Self {
            message_count: AtomicUsize::new(info.message_count),
            info: Mutex::new(info),
            delivery,
            all_tools: Mutex::new(tools),
            new_tools: Mutex::new(Vec::new()),
            late_tools_from: OnceLock::new(),
            active: Mutex::new(None),
            steering: Mutex::new(Vec::new()),
            follow_ups: Mutex::new(Vec::new()),
            entries: Mutex::new(Entries::Held(Vec::new())),
            finished: AtomicBool::new(false),
            turn_running: AtomicBool::new(false),
            idle_turns: Mutex::new(VecDeque::new()),
            next_turn: Mutex::new(Vec::new()),
            sent: Mutex::new(Vec::new()),
            wake: OnceLock::new(),
            ui,
            providers,
            session_request: Mutex::new(None),
        })
    }

    /// Lets `runner`'s extensions register tools after loading, which the agent loop then
    /// offers (see [`ExtensionTurnHooks`]).
    pub fn take_late_tools_from(&self, runner: &Arc<ExtensionRunner>) {
        let _ = self.late_tools_from.set(Arc::downgrade(runner));
    }

    /// From now on `appendEntry` writes through `recorder` (held entries first).
    pub fn record_into(&self, recorder: &SessionRecorder) {
        let mut entries = lock(&self.entries);
        if let Entries::Held(held) = &mut *entries {
            for (custom_type, data) in held.drain(..) {
                recorder.record_custom(custom_type, data);
            }
        }
        *entries = Entries::Recording(recorder.clone());
    }

    /// From now on `appendEntry` writes through `sink` (held entries first): the interactive
    /// session's writer, again each time the user switches session.
    pub fn write_into(&self, sink: Arc<dyn EntrySink>) {
        let mut entries = lock(&self.entries);
        if let Entries::Held(held) = &mut *entries {
            for (custom_type, data) in held.drain(..) {
                if let Err(error) = sink.append_custom(&custom_type, data) {
                    crate::warn(&format!("appendEntry: {error}"));
                }
            }
        }
        *entries = Entries::Writing(sink);
    }

    /// The session became another one (the interactive `/new`, `/resume`) or changed model:
    /// `update` changes what `getSessionInfo` answers; `message_count` is its conversation's
    /// length.
    pub fn follow(&self, message_count: usize, update: impl FnOnce(&mut SessionInfo)) {
        update(&mut lock(&self.info));
        self.message_count.store(message_count, Ordering::Relaxed);
    }

    /// The run ended: messages can no longer be delivered. Entries still are, until
    /// [`SessionHost::close`].
    pub fn finish(&self) {
        self.finished.store(true, Ordering::Release);
    }

    /// The session is being closed: entries can no longer be written.
    pub fn close(&self) {
        *lock(&self.entries) = Entries::Closed;
    }

    /// Interactive: a turn starts (`true`: messages are queued into it from now on) or ended
    /// (`false`: what was queued too late for it becomes a turn of its own).
    pub fn set_turn_running(&self, running: bool) {
        // Under the idle turns' lock, as in `deliver`: a message is queued either into the
        // turn or after it, never lost in between.
        let mut idle_turns = lock(&self.idle_turns);
        self.turn_running.store(running, Ordering::Release);
        if running {
            return;
        }
        let mut late = std::mem::take(&mut *lock(&self.steering));
        late.append(&mut lock(&self.follow_ups));
        if !late.is_empty() {
            self.push_idle_turn(&mut idle_turns, IdleTurn::Messages(late));
        }
        // A message a `message_end` handler replaced was never seen as sent: forget it.
        let next_turn = lock(&self.next_turn);
        lock(&self.sent).retain(|(message, _)| {
            next_turn.contains(message)
                || idle_turns.iter().any(|turn| match turn {
                    IdleTurn::Messages(messages) => messages.contains(message),
                    IdleTurn::User(_) => false,
                })
        });
    }

    /// Interactive: the user's prompt was sent; the messages held for it follow it before the
    /// first request.
    pub fn deliver_next_turn(&self) {
        let held = std::mem::take(&mut *lock(&self.next_turn));
        lock(&self.steering).extend(held);
    }

    /// Interactive: `flag` is raised whenever a turn is asked for while the agent is idle.
    pub fn wake_with(&self, flag: Arc<AtomicBool>) {
        let _ = self.wake.set(flag);
    }

    fn push_idle_turn(&self, idle_turns: &mut VecDeque<IdleTurn>, turn: IdleTurn) {
        match (turn, idle_turns.back_mut()) {
            (IdleTurn::Messages(mut more), Some(IdleTurn::Messages(messages))) => {
                messages.append(&mut more);
            }
            (turn, _) => idle_turns.push_back(turn),
        }
        if let Some(flag) = self.wake.get() {
            flag.store(true, Ordering::Release);
        }
    }

    /// Interactive: the next turn an extension asked for while the agent was idle.
    pub fn take_idle_turn(&self) -> Option<IdleTurn> {
        lock(&self.idle_turns).pop_front()
    }

    /// Interactive: queues `messages` to follow the message that starts a turn.
    pub fn steer(&self, messages: Vec<Message>) {
        lock(&self.steering).extend(messages);
    }

    /// How `message` shows, when an extension sent it with a `customType` or `display: false`
    /// (forgotten once asked).
    pub fn take_sent(&self, message: &Message) -> Option<Sent> {
        let mut sent = lock(&self.sent);
        let index = sent.iter().position(|(sent, _)| sent == message)?;
        Some(sent.remove(index).1)
    }

    /// What an extension asked to happen to the session (`session/new`, `session/quit`), taken
    /// once the command that asked has finished.
    pub fn take_session_request(&self) -> Option<SessionRequest> {
        lock(&self.session_request).take()
    }

    /// The tools an extension left active with `setActiveTools`; `None` when it never chose.
    pub fn chosen_tools(&self) -> Option<Vec<String>> {
        lock(&self.active).clone()
    }

    fn unavailable(&self, method: &str) -> ActionError {
        ActionError::Unavailable {
            action: method.to_owned(),
            mode: lock(&self.info).mode.clone(),
        }
    }

    /// Delivers a message an extension sent: `trigger` starts a turn when the interactive
    /// session is idle; `sent` is how it shows there.
    fn deliver(
        &self,
        method: &str,
        message: Message,
        deliver_as: Option<&str>,
        trigger: bool,
        sent: Sent,
    ) -> Result<(), ActionError> {
        match self.delivery {
            Delivery::Unavailable => return Err(self.unavailable(method)),
            Delivery::Run | Delivery::Interactive if self.finished.load(Ordering::Acquire) => {
                return Err(ActionError::Ended {
                    action: method.to_owned(),
                    reason: "the run has ended; no turn is left to take it",
                });
            }
            Delivery::Run | Delivery::Interactive => {}
        }
        let queue = match deliver_as {
            None | Some("steer") => &self.steering,
            Some("followUp") => &self.follow_ups,
            Some("nextTurn") if self.delivery == Delivery::Interactive => &self.next_turn,
            Some("nextTurn") => {
                return Err(ActionError::invalid(
                    method,
                    format!(
                        "deliverAs nextTurn needs a next prompt, and jig {} mode sends one prompt",
                        lock(&self.info).mode
                    ),
                ));
            }
            Some(other) => {
                return Err(ActionError::invalid(
                    method,
                    format!("unknown deliverAs \"{other}\" (steer, followUp or nextTurn)"),
                ));
            }
        };
        if self.delivery == Delivery::Run {
            if sent.custom_type.is_some() || !sent.display {
                // Recorded with its tag when it reaches the session.
                lock(&self.sent).push((message.clone(), sent));
            }
            lock(queue).push(message);
            return Ok(());
        }
        // The tag is known before the message can reach the agent.
        lock(&self.sent).push((message.clone(), sent));
        let next_turn = deliver_as == Some("nextTurn");
        let mut idle_turns = lock(&self.idle_turns);
        if next_turn || self.turn_running.load(Ordering::Acquire) {
            lock(queue).push(message);
        } else if trigger {
            self.push_idle_turn(&mut idle_turns, IdleTurn::Messages(vec![message]));
        } else {
            lock(&self.next_turn).push(message);
        }
        Ok(())
    }
}

#[async_trait]
impl ExtensionHost for SessionHost {
    async fn send_message(
        &self,
        _extension: &str,
        message: SendMessage,
    ) -> Result<(), ActionError> {
        let sent = Sent {
            custom_type: message.custom_type,
            display: message.display,
            user: false,
        };
        self.deliver(
            "sendMessage",
            Message::user_text(message.content),
            message.deliver_as.as_deref(),
            message.trigger_turn,
            sent,
        )
    }

    async fn send_user_message(
        &self,
        _extension: &str,
        text: String,
        deliver_as: Option<String>,
    ) -> Result<(), ActionError> {
        let idle = self.delivery == Delivery::Interactive
            && !self.finished.load(Ordering::Acquire)
            && !self.turn_running.load(Ordering::Acquire)
            && matches!(deliver_as.as_deref(), None | Some("steer" | "followUp"));
        if idle {
            // As if the user had typed it: through `input` and `before_agent_start`.
            self.push_idle_turn(&mut lock(&self.idle_turns), IdleTurn::User(text));
            return Ok(());
        }
        let sent = Sent {
            custom_type: None,
            display: true,
            user: true,
        };
        self.deliver(
            "sendUserMessage",
            Message::user_text(text),
            deliver_as.as_deref(),
            true,
            sent,
        )
    }

    async fn append_entry(
        &self,
        _extension: &str,
        custom_type: String,
        data: Value,
    ) -> Result<(), ActionError> {
        if self.delivery == Delivery::Unavailable {
            return Err(self.unavailable("appendEntry"));
        }
        match &mut *lock(&self.entries) {
            Entries::Held(held) => held.push((custom_type, data)),
            Entries::Recording(recorder) => recorder.record_custom(custom_type, data),
            Entries::Writing(sink) => {
                return sink.append_custom(&custom_type, data).map_err(|error| {
                    ActionError::Failed {
                        action: "appendEntry".to_owned(),
                        reason: error.to_string(),
                    }
                });
            }
            Entries::Closed => {
                return Err(ActionError::Ended {
                    action: "appendEntry".to_owned(),
                    reason: "the session is closed",
                });
            }
        }
        Ok(())
    }

    async fn active_tools(&self) -> Vec<String> {
        lock(&self.active)
            .clone()
            .unwrap_or_else(|| lock(&self.all_tools).clone())
    }

    async fn all_tools(&self) -> Vec<String> {
        lock(&self.all_tools).clone()
    }

    async fn set_active_tools(
        &self,
        _extension: &str,
        names: Vec<String>,
    ) -> Result<(), ActionError> {
        if self.delivery == Delivery::Unavailable {
            return Err(self.unavailable("setActiveTools"));
        }
        let all_tools = lock(&self.all_tools).clone();
        if let Some(unknown) = names.iter().find(|name| !all_tools.contains(name)) {
            return Err(ActionError::invalid(
                "setActiveTools",
                format!(
                    "unknown tool \"{unknown}\"; available tools: {}",
                    all_tools.join(", ")
                ),
            ));
        }
        *lock(&self.active) = Some(names);
        Ok(())
    }

    async fn session_info(&self) -> SessionInfo {
        SessionInfo {
            message_count: self.message_count.load(Ordering::Relaxed),
            ..lock(&self.info).clone()
        }
    }

    async fn register_tool(
        &self,
        extension: &str,
        registration: jig_extensions::ToolRegistration,
    ) -> Result<(), ActionError> {
        let runner = self
            .late_tools_from
            .get()
            .and_then(std::sync::Weak::upgrade);
        let Some(runner) = runner.filter(|_| self.delivery != Delivery::Unavailable) else {
            return Err(self.unavailable("registerTool after loading"));
        };
        let name = registration.name.clone();
        if lock(&self.all_tools).contains(&name) {
            return Err(ActionError::invalid(
                "registerTool",
                format!("a tool named \"{name}\" is already offered; register each tool once"),
            ));
        }
        let tool = runner.late_tool(extension, &registration)?;
        lock(&self.all_tools).push(name.clone());
        if let Some(active) = lock(&self.active).as_mut() {
            active.push(name);
        }
        lock(&self.new_tools).push(tool);
        Ok(())
    }

    fn request_session(
        &self,
        _extension: &str,
        request: SessionRequest,
    ) -> Result<(), ActionError> {
        if self.delivery != Delivery::Interactive {
            return Err(self.unavailable(request.method()));
        }
        *lock(&self.session_request) = Some(request);
        Ok(())
    }

    fn register_provider(&self, _extension: &str, provider: Value) -> Result<(), ActionError> {
        let name = provider.get("name").and_then(Value::as_str).unwrap_or("");
        if self.providers.iter().any(|offered| offered == name) {
            return Ok(());
        }
        Err(ActionError::ProviderAfterLoading {
            mode: lock(&self.info).mode.clone(),
        })
    }

    async fn ui(&self, extension: &str, request: UiRequest) -> Value {
        match &self.ui {
            Some(ui) => ui.ask(extension, request).await,
            None => request.no_ui_answer(),
        }
    }

    fn report_error(&self, error: &ExtensionError) {
        crate::warn(&error.to_string());
    }
}

/// The agent's turn hooks for a run with extensions: the host's queued messages and active
/// tools, and the runner's `context`, `message_end` and `session_before_compact`.
#[derive(Debug)]
pub struct ExtensionTurnHooks {
    /// The extensions' host: queued messages, active tools.
    pub host: Arc<SessionHost>,
    /// The loaded extensions.
    pub runner: Arc<ExtensionRunner>,
}

#[async_trait]
impl TurnHooks for ExtensionTurnHooks {
    fn take_steering(&self) -> Vec<Message> {
        std::mem::take(&mut *lock(&self.host.steering))
    }

    fn take_follow_ups(&self) -> Vec<Message> {
        std::mem::take(&mut *lock(&self.host.follow_ups))
    }

    fn take_new_tools(&self) -> Vec<Arc<dyn jig_tool::DynTool>> {
        std::mem::take(&mut *lock(&self.host.new_tools))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn host(delivery: Delivery) -> Arc<SessionHost> {
        let info = SessionInfo {
            mode: "interactive".to_owned(),
            ..SessionInfo::default()
        };
        SessionHost::new(
            info,
            vec!["read".to_owned(), "bash".to_owned()],
            delivery,
            None,
            Vec::new(),
        )
    }

    fn message(content: &str, deliver_as: Option<&str>, trigger_turn: bool) -> SendMessage {
        SendMessage {
            custom_type: Some("memo".to_owned()),
            content: content.to_owned(),
            display: true,
            trigger_turn,
            deliver_as: deliver_as.map(str::to_owned),
        }
    }

    fn texts(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .map(|message| match message {
                Message::User(user) => user
                    .content
                    .iter()
                    .filter_map(|block| block.as_text())
                    .collect(),
                _ => String::new(),
            })
            .collect()
    }

    #[tokio::test]
    async fn idle_interactive_messages_start_a_turn_or_wait_for_the_next() {
        let host = host(Delivery::Interactive);
        host.send_user_message("x", "typed".to_owned(), None)
            .await
            .unwrap();
        host.send_message("x", message("go", None, true))
            .await
            .unwrap();
        host.send_message("x", message("and this", None, true))
            .await
            .unwrap();
        host.send_message("x", message("later", None, false))
            .await
            .unwrap();
        host.send_message("x", message("next", Some("nextTurn"), true))
            .await
            .unwrap();
        assert_eq!(
            host.take_idle_turn(),
            Some(IdleTurn::User("typed".to_owned()))
        );
        let Some(IdleTurn::Messages(messages)) = host.take_idle_turn() else {
            panic!("a turn of messages");
        };
        assert_eq!(texts(&messages), ["go", "and this"]);
        assert_eq!(host.take_idle_turn(), None);
        // Held for the user's next prompt, then steered after it.
        let hooks = ExtensionTurnHooks {
            host: Arc::clone(&host),
            runner: Arc::new(ExtensionRunner::new(jig_extensions::Timeouts::default())),
        };
        assert!(hooks.take_steering().is_empty());
        host.deliver_next_turn();
        assert_eq!(texts(&hooks.take_steering()), ["later", "next"]);
        // The message as it was queued (a new `Message::user_text("go")` has another timestamp).
        let sent = host.take_sent(&messages[0]).unwrap();
        assert_eq!(sent.custom_type.as_deref(), Some("memo"));
        assert!(!sent.user);
    }

    #[tokio::test]
    async fn messages_sent_while_a_turn_runs_are_queued_and_late_ones_make_a_turn() {
        let host = host(Delivery::Interactive);
        let hooks = ExtensionTurnHooks {
            host: Arc::clone(&host),
            runner: Arc::new(ExtensionRunner::new(jig_extensions::Timeouts::default())),
        };
        host.set_turn_running(true);
        host.send_user_message("x", "steer".to_owned(), None)
            .await
            .unwrap();
        host.send_message("x", message("after", Some("followUp"), false))
            .await
            .unwrap();
        assert_eq!(texts(&hooks.take_steering()), ["steer"]);
        assert_eq!(texts(&hooks.take_follow_ups()), ["after"]);
        host.send_message("x", message("too late", None, false))
            .await
            .unwrap();
        host.set_turn_running(false);
        let Some(IdleTurn::Messages(messages)) = host.take_idle_turn() else {
            panic!("a turn of the late message");
        };
        assert_eq!(texts(&messages), ["too late"]);
        host.finish();
        assert_eq!(
            host.send_user_message("x", "bye".to_owned(), None)
                .await
                .map_err(|error| error.to_string()),
            Err("sendUserMessage: the run has ended; no turn is left to take it".to_owned())
        );
    }

    #[tokio::test]
    async fn print_mode_still_refuses_next_turn_and_mcp_refuses_everything() {
        let run = host(Delivery::Run);
        assert!(
            run.send_message("x", message("n", Some("nextTurn"), false))
                .await
                .unwrap_err()
                .to_string()
                .contains("deliverAs nextTurn needs a next prompt")
        );
        let none = host(Delivery::Unavailable);
        assert_eq!(
            none.send_user_message("x", "t".to_owned(), None)
                .await
                .map_err(|error| error.to_string()),
            Err("sendUserMessage is not available in jig interactive mode".to_owned())
        );
        assert_eq!(
            none.append_entry("x", "t".to_owned(), Value::Null)
                .await
                .map_err(|error| error.to_string()),
            Err("appendEntry is not available in jig interactive mode".to_owned())
        );
    }
}
