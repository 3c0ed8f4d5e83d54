//! The session an app drives: one command at a time from stdin, while at most one job (a run
//! or a compaction) holds the agent in a task of its own, so `abort`, `steer`, `follow_up`,
//! `get_state` and the dialogs' answers are handled while it streams.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use jig_agent::compaction::{CompactionConfig, CompactionReason};
use jig_agent::{
    Agent, AgentConfig, AgentEvent, AgentObserver, CustomEndpoint, Session, SessionStore,
    TurnHooks, total_cost, usage_by_model,
};
use jig_extensions::{ExtensionRunner, events};
use jig_protocol::{AssistantBlock, ContentBlock, Message};
use jig_session::approval::PermissionHooks;
use jig_session::extensions::{IdleTurn, LifecycleEvents, SessionHost};
use jig_session::model::ProviderSwitch;
use jig_session::skills::Knowledge;
use jig_session::writer::SessionWriter;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::events::Events;
use crate::wire::{Command, Out, PromptFields, Reply};

mod settings;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The message queues the app fills while a run streams (`steer`, `follow_up`, a `prompt`
/// with `streamingBehavior`), and how many of each a turn takes.
pub(crate) struct Queues {
    out: Arc<Out>,
    steering: Mutex<VecDeque<Message>>,
    follow_ups: Mutex<VecDeque<Message>>,
    /// `all`: every queued steering message at once; else one per turn.
    steering_all: AtomicBool,
    /// `all`: every queued follow-up at once; else one per time the run would end.
    follow_ups_all: AtomicBool,
}

impl Queues {
    pub(crate) fn new(out: Arc<Out>) -> Arc<Self> {
        Arc::new(Self {
            out,
            steering: Mutex::new(VecDeque::new()),
            follow_ups: Mutex::new(VecDeque::new()),
            steering_all: AtomicBool::new(false),
            follow_ups_all: AtomicBool::new(false),
        })
    }

    fn push(&self, steer: bool, message: Message) {
        if steer {
            lock(&self.steering).push_back(message);
        } else {
            lock(&self.follow_ups).push_back(message);
        }
        self.changed();
    }

    fn take(&self, steer: bool) -> Vec<Message> {
        let (queue, all) = if steer {
            (&self.steering, &self.steering_all)
        } else {
            (&self.follow_ups, &self.follow_ups_all)
        };
        let taken: Vec<Message> = {
            let mut queue = lock(queue);
            if all.load(Ordering::Relaxed) {
                queue.drain(..).collect()
            } else {
                queue.pop_front().into_iter().collect()
            }
        };
        if !taken.is_empty() {
            self.changed();
        }
        taken
    }

    fn pending(&self) -> usize {
        lock(&self.steering).len() + lock(&self.follow_ups).len()
    }

    /// `queue_update`: what is still queued, as text.
    fn changed(&self) {
        let texts = |queue: &Mutex<VecDeque<Message>>| -> Vec<String> {
            lock(queue).iter().map(message_text).collect()
        };
        self.out.send(&json!({
            "type": "queue_update",
            "steering": texts(&self.steering),
            "followUp": texts(&self.follow_ups),
        }));
    }

    fn mode(all: &AtomicBool) -> &'static str {
        if all.load(Ordering::Relaxed) {
            "all"
        } else {
            "one-at-a-time"
        }
    }
}

/// The text of a user message (its text blocks, joined).
fn message_text(message: &Message) -> String {
    match message {
        Message::User(user) => ContentBlock::join_text(&user.content),
        Message::Assistant(reply) => reply.text(),
        Message::ToolResult(result) => ContentBlock::join_text(&result.content),
    }
}

/// The session's turn hooks (the extensions', or none) with the app's queues in front.
struct QueueHooks {
    inner: Arc<dyn TurnHooks>,
    queues: Arc<Queues>,
}

#[async_trait]
impl TurnHooks for QueueHooks {
    fn take_steering(&self) -> Vec<Message> {
        let mut messages = self.inner.take_steering();
        messages.extend(self.queues.take(true));
        messages
    }

    fn take_follow_ups(&self) -> Vec<Message> {
        let mut messages = self.inner.take_follow_ups();
        messages.extend(self.queues.take(false));
        messages
    }

    fn take_new_tools(&self) -> Vec<Arc<dyn jig_tool::DynTool>> {
        self.inner.take_new_tools()
    }

    fn active_tools(&self) -> Option<Vec<String>> {
        self.inner.active_tools()
    }

    async fn context(&self, messages: Vec<Message>) -> Vec<Message> {
        self.inner.context(messages).await
    }

    async fn message_end(&self, message: Message) -> Message {
        self.inner.message_end(message).await
    }

    async fn cancel_compaction(&self, reason: CompactionReason) -> bool {
        self.inner.cancel_compaction(reason).await
    }
}

/// Writes the session (a message an extension sent with its `customType` and `display`),
/// keeps the conversation the app can ask for, and sends the events.
struct Forward {
    writer: Arc<SessionWriter>,
    host: Arc<SessionHost>,
    events: Arc<Events>,
    conversation: Arc<Mutex<Vec<Message>>>,
}

impl AgentObserver for Forward {
    fn on_event(&self, event: &AgentEvent) {
        let sent = match event {
            AgentEvent::MessageEnd {
                message: message @ Message::User(_),
            } => self.host.take_sent(message).map(|sent| (message, sent)),
            _ => None,
        };
        match sent {
            Some((message, sent)) => self.writer.append_sent(message, &sent),
            None => self.writer.on_event(event),
        }
        if let AgentEvent::MessageEnd { message } = event {
            lock(&self.conversation).push(message.clone());
        }
        self.events.on_event(event);
    }
}

/// What holds the agent now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JobKind {
    Run,
    Compact,
}

struct Job {
    kind: JobKind,
    cancel: CancellationToken,
}

/// A job ended: the agent comes back.
pub(crate) struct Done {
    agent: Agent,
    /// `compact`'s response, sent once the agent is back.
    compacted: Option<(Option<Value>, Reply)>,
}

/// Everything the session was prepared with, handed to [`Server::new`].
pub(crate) struct Parts {
    pub(crate) out: Arc<Out>,
    pub(crate) events: Arc<Events>,
    pub(crate) config: AgentConfig,
    pub(crate) session: Session,
    pub(crate) hooks: Arc<PermissionHooks>,
    pub(crate) host: Arc<SessionHost>,
    pub(crate) runner: Arc<ExtensionRunner>,
    pub(crate) lifecycle: Option<LifecycleEvents>,
    pub(crate) knowledge: Knowledge,
    pub(crate) switch: ProviderSwitch,
    pub(crate) provider_name: String,
    pub(crate) session_key: PathBuf,
    pub(crate) no_session: bool,
    pub(crate) queues: Arc<Queues>,
}

/// The session an app drives.
pub(crate) struct Server {
    out: Arc<Out>,
    events: Arc<Events>,
    /// The configuration agents are built from (model, thinking, retry and compaction as last
    /// set).
    config: AgentConfig,
    /// The agent, while no job holds it.
    agent: Option<Agent>,
    job: Option<Job>,
    done: mpsc::UnboundedSender<Done>,
    writer: Arc<SessionWriter>,
    conversation: Arc<Mutex<Vec<Message>>>,
    hooks: Arc<PermissionHooks>,
    host: Arc<SessionHost>,
    runner: Arc<ExtensionRunner>,
    pub(crate) lifecycle: Option<LifecycleEvents>,
    knowledge: Knowledge,
    switch: ProviderSwitch,
    provider_name: String,
    custom_base_url: Option<String>,
    custom_endpoint: Option<CustomEndpoint>,
    store: Option<SessionStore>,
    session_key: PathBuf,
    no_session: bool,
    queues: Arc<Queues>,
    /// What `bash` commands printed since the last prompt: sent with the next one.
    bash_output: Arc<Mutex<Vec<String>>>,
    /// The running `bash` command: its token and task.
    bash: Option<(CancellationToken, tokio::task::JoinHandle<()>)>,
    session_name: Option<String>,
    /// The compaction settings while auto-compaction is off.
    compaction_off: Option<CompactionConfig>,
}

/// A `prompt` field that is not a message.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fields {
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model_id: Option<String>,
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    session_path: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    custom_instructions: Option<String>,
}

impl Server {
    pub(crate) fn new(parts: Parts, done: mpsc::UnboundedSender<Done>) -> Self {
        let Parts {
            out,
            events,
            mut config,
            session,
            hooks,
            host,
            runner,
            lifecycle,
            knowledge,
            switch,
            provider_name,
            session_key,
            no_session,
            queues,
        } = parts;
        config.turn_hooks = Arc::new(QueueHooks {
            inner: Arc::clone(&config.turn_hooks),
            queues: Arc::clone(&queues),
        });
        let cwd = config.tool_context.cwd.clone();
        let mut server = Self {
            out,
            events,
            custom_base_url: session.base_url(),
            custom_endpoint: session.custom_endpoint(),
            config,
            agent: None,
            job: None,
            done,
            writer: SessionWriter::new(Session::in_memory(&cwd)),
            conversation: Arc::new(Mutex::new(Vec::new())),
            hooks,
            host,
            runner,
            lifecycle,
            knowledge,
            switch,
            provider_name,
            store: SessionStore::from_env(),
            session_key,
            no_session,
            queues,
            bash_output: Arc::new(Mutex::new(Vec::new())),
            bash: None,
            session_name: None,
            compaction_off: None,
        };
        server.install(session);
        server
    }

    /// Makes `session` the current one: a new agent continues its conversation.
    fn install(&mut self, session: Session) {
        let (summary, history) = session.context();
        let mut config = self.config.clone();
        config.tool_context.session_env =
            session.tool_variables(&self.provider_name, &config.model, config.thinking);
        let agent = match summary {
            Some(summary) => Agent::with_summary(config, summary, history),
            None => Agent::with_messages(config, history),
        };
        *lock(&self.conversation) = agent.messages().to_vec();
        self.agent = Some(agent);
        self.session_name = session_name(&session);
        self.writer = SessionWriter::new(session);
        self.host
            .write_into(Arc::clone(&self.writer) as Arc<dyn jig_session::extensions::EntrySink>);
        self.sync_host();
    }

    /// A new agent with the current configuration, keeping the conversation.
    fn rebuild(&mut self) {
        if let Some(agent) = self.agent.take() {
            let mut config = self.config.clone();
            config.tool_context.session_env = self.writer.session().tool_variables(
                &self.provider_name,
                &config.model,
                config.thinking,
            );
            let messages = agent.messages().to_vec();
            self.agent = Some(match agent.summary() {
                Some(summary) => Agent::with_summary(config, summary.to_owned(), messages),
                None => Agent::with_messages(config, messages),
            });
        }
        self.sync_host();
    }

    /// What `getSessionInfo` answers: the current session, model and thinking level.
    fn sync_host(&self) {
        let session = self.writer.session();
        let count = lock(&self.conversation).len();
        self.host.follow(count, |info| {
            info.session_id = Some(session.id().to_owned());
            info.session_file = session.path().map(|path| path.display().to_string());
            info.model = Some(format!("{}/{}", self.provider_name, self.config.model));
            info.provider = Some(self.provider_name.clone());
            info.thinking_level = Some(self.config.thinking.as_str().to_owned());
        });
    }

    fn observer(&self) -> Arc<dyn AgentObserver> {
        let forward: Arc<dyn AgentObserver> = Arc::new(Forward {
            writer: Arc::clone(&self.writer),
            host: Arc::clone(&self.host),
            events: Arc::clone(&self.events),
            conversation: Arc::clone(&self.conversation),
        });
        match &self.lifecycle {
            Some(lifecycle) => lifecycle.observer(forward),
            None => forward,
        }
    }

    fn streaming(&self) -> bool {
        self.job
            .as_ref()
            .is_some_and(|job| job.kind == JobKind::Run)
    }

    /// Refuses a command that changes the agent while a job holds it.
    fn idle(&self, what: &str) -> Result<(), String> {
        match self.job.as_ref().map(|job| job.kind) {
            None => Ok(()),
            Some(JobKind::Run) => Err(format!(
                "cannot {what} while the agent runs: send it after agent_end, or abort first"
            )),
            Some(JobKind::Compact) => Err(format!(
                "cannot {what} while the session is being compacted: send it once compact has answered"
            )),
        }
    }

    /// Handles one line from stdin. A run that already sent `agent_end` is finished first
    /// (`done` brings its agent back at once): an app that saw `agent_end` may send what needs
    /// the agent right away.
    pub(crate) async fn handle(&mut self, line: &[u8], done: &mut mpsc::UnboundedReceiver<Done>) {
        if self.streaming()
            && self.events.run_ended()
            && let Some(finished) = done.recv().await
        {
            self.finished(finished);
        }
        let command = match Command::parse(line) {
            Ok(command) => command,
            Err(record) => {
                self.out.send(&record);
                return;
            }
        };
        if let Some(reply) = self.dispatch(&command).await {
            self.out.respond(command.id.as_ref(), &command.kind, reply);
        }
    }

    /// The command's reply, or `None` when it was (or will be) sent by the command itself.
    async fn dispatch(&mut self, command: &Command) -> Option<Reply> {
        let fields = || command.fields::<Fields>();
        Some(match command.kind.as_str() {
            "prompt" => return self.prompt(command),
            "steer" | "follow_up" => self.queue(command),
            "abort" => {
                if let Some(job) = &self.job {
                    job.cancel.cancel();
                }
                Ok(None)
            }
            "abort_retry" => {
                if self.events.retrying()
                    && let Some(job) = &self.job
                {
                    job.cancel.cancel();
                }
                Ok(None)
            }
            "new_session" => self.new_session().await,
            "switch_session" => match fields() {
                Ok(Fields {
                    session_path: Some(path),
                    ..
                }) => self.switch_session(&path).await,
                Ok(_) => Err("switch_session needs \"sessionPath\": the session file to load".to_owned()),
                Err(error) => Err(error),
            },
            "get_state" => Ok(Some(self.state())),
            "get_messages" => Ok(Some(json!({"messages": *lock(&self.conversation)}))),
            "get_last_assistant_text" => {
                let text = lock(&self.conversation)
                    .iter()
                    .rev()
                    .find_map(Message::as_assistant)
                    .map(jig_protocol::AssistantMessage::text);
                Ok(Some(json!({"text": text})))
            }
            "get_session_stats" => Ok(Some(self.stats())),
            "set_session_name" => match fields() {
                Ok(Fields {
                    name: Some(name), ..
                }) => self.set_session_name(name),
                Ok(_) => Err("set_session_name needs \"name\"".to_owned()),
                Err(error) => Err(error),
            },
            "get_commands" => Ok(Some(json!({"commands": self.commands()}))),
            "compact" => match fields() {
                Ok(fields) => return self.compact(command.id.clone(), fields.custom_instructions),
                Err(error) => Err(error),
            },
            "bash" => match fields() {
                Ok(Fields {
                    command: Some(line),
                    ..
                }) => return self.bash(command.id.clone(), line),
                Ok(_) => Err("bash needs \"command\": the shell command to run".to_owned()),
                Err(error) => Err(error),
            },
            "abort_bash" => {
                if let Some((cancel, _)) = &self.bash {
                    cancel.cancel();
                }
                Ok(None)
            }
            "extension_ui_response" => {
                // Answered on the reading thread; one that reaches here answers no dialog.
                return None;
            }
            "export_html" => Err(
                "export_html is not available in jig: sessions are JSONL files (see sessionFile in get_state)".to_owned(),
            ),
            "fork" | "clone" | "get_fork_messages" => Err(format!(
                "{} is not available in jig: sessions cannot be branched yet; start a new_session or switch_session instead",
                command.kind
            )),
            other => match self.configure(command) {
                Some(reply) => reply,
                None => Err(format!(
                    "Unknown command: {other}. See docs/rpc.md for the commands jig answers"
                )),
            },
        })
    }

    /// `prompt`: an extension's command runs at once; while the agent streams, the message
    /// is queued as its `streamingBehavior` says; else a run starts (its response first).
    fn prompt(&mut self, command: &Command) -> Option<Reply> {
        let fields: PromptFields = match command.fields() {
            Ok(fields) => fields,
            Err(error) => return Some(Err(error)),
        };
        if let Some((name, args)) = extension_command(&self.runner, &fields.message) {
            self.out.respond(command.id.as_ref(), "prompt", Ok(None));
            let runner = Arc::clone(&self.runner);
            let out = Arc::clone(&self.out);
            tokio::spawn(async move {
                match runner.run_command(&name, &args).await {
                    Ok(Some(text)) => out.send(&json!({
                        "type": "extension_ui_request",
                        "id": format!("command-{name}"),
                        "method": "notify",
                        "message": text,
                        "notifyType": "info",
                    })),
                    Ok(None) => {}
                    Err(error) => out.send(&json!({
                        "type": "extension_error",
                        "extensionPath": name,
                        "event": "command",
                        "error": error.to_string(),
                    })),
                }
            });
            return None;
        }
        let text = match self.knowledge.expand(&fields.message) {
            Some(Ok(expanded)) => expanded,
            Some(Err(error)) => return Some(Err(error.to_string())),
            None => fields.message.clone(),
        };
        let images = images(&fields);
        if self.job.is_some() {
            let steer = match fields.streaming_behavior.as_deref() {
                Some("steer") => true,
                Some("followUp") => false,
                Some(other) => {
                    return Some(Err(format!(
                        "streamingBehavior is \"steer\" or \"followUp\", not {other:?}"
                    )));
                }
                None => {
                    return Some(Err("the agent is already running: send the prompt with \"streamingBehavior\": \"steer\" or \"followUp\" (or use steer / follow_up), or abort first".to_owned()));
                }
            };
            self.queues.push(steer, user_message(text, images));
            return Some(Ok(None));
        }
        self.out.respond(command.id.as_ref(), "prompt", Ok(None));
        self.start_run(text, images, "rpc");
        None
    }

    /// `steer` / `follow_up`: queued for the running turn (or the next run when idle).
    fn queue(&self, command: &Command) -> Reply {
        let fields: PromptFields = command.fields()?;
        if extension_command(&self.runner, &fields.message).is_some() {
            return Err(format!(
                "{} cannot run an extension command: send it with prompt",
                command.kind
            ));
        }
        let text = match self.knowledge.expand(&fields.message) {
            Some(Ok(expanded)) => expanded,
            Some(Err(error)) => return Err(error.to_string()),
            None => fields.message.clone(),
        };
        let images = images(&fields);
        self.queues
            .push(command.kind == "steer", user_message(text, images));
        Ok(None)
    }

    /// Starts a run of `text` through the extensions' `input` and `before_agent_start`,
    /// with what `bash` commands printed since the last prompt before it.
    fn start_run(&mut self, text: String, images: Vec<ContentBlock>, source: &'static str) {
        let Some(mut agent) = self.agent.take() else {
            return;
        };
        let runner = Arc::clone(&self.runner);
        let base_prompt = self.config.system_prompt.clone();
        let observer = self.observer();
        let host = Arc::clone(&self.host);
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let done = self.done.clone();
        let ran: Vec<String> = std::mem::take(&mut *lock(&self.bash_output));
        self.host.set_turn_running(true);
        self.job = Some(Job {
            kind: JobKind::Run,
            cancel,
        });
        tokio::spawn(async move {
            let prepared = jig_session::startup::extension_prompt_with_images(
                &runner,
                text,
                images,
                base_prompt,
                source,
            )
            .await;
            if let Some((mut message, system_prompt)) = prepared {
                if let Message::User(user) = &mut message
                    && !ran.is_empty()
                {
                    let mut content: Vec<ContentBlock> =
                        ran.into_iter().map(ContentBlock::text).collect();
                    content.append(&mut user.content);
                    user.content = content;
                }
                agent.set_system_prompt(system_prompt);
                host.deliver_next_turn();
                agent.run(message, &token, &observer).await;
            }
            let _ = done.send(Done {
                agent,
                compacted: None,
            });
        });
    }

    /// Starts a run an extension asked for with its messages (`sendMessage` with
    /// `triggerTurn`, or messages queued too late for the run that ended).
    fn start_messages(&mut self, mut messages: Vec<Message>) {
        if messages.is_empty() {
            return;
        }
        let Some(mut agent) = self.agent.take() else {
            return;
        };
        let first = messages.remove(0);
        self.host.steer(messages);
        agent.set_system_prompt(self.config.system_prompt.clone());
        let observer = self.observer();
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let done = self.done.clone();
        self.host.set_turn_running(true);
        self.job = Some(Job {
            kind: JobKind::Run,
            cancel,
        });
        tokio::spawn(async move {
            agent.run(first, &token, &observer).await;
            let _ = done.send(Done {
                agent,
                compacted: None,
            });
        });
    }

    /// A job ended: the agent is back; `compact` is answered.
    pub(crate) fn finished(&mut self, done: Done) {
        let Done { agent, compacted } = done;
        *lock(&self.conversation) = agent.messages().to_vec();
        self.agent = Some(agent);
        if self.job.take().map(|job| job.kind) == Some(JobKind::Run) {
            self.host.set_turn_running(false);
        }
        if let Some((id, reply)) = compacted {
            self.out.respond(id.as_ref(), "compact", reply);
        }
        self.sync_host();
        if let Some(error) = self.writer.session_error() {
            jig_session::warn(&format!("the session could not be saved: {error:#}"));
        }
    }

    /// When idle: the turn an extension asked for, else what the app queued too late for the
    /// run that ended.
    pub(crate) fn start_pending(&mut self) {
        if self.job.is_some() || self.agent.is_none() {
            return;
        }
        if let Some(turn) = self.host.take_idle_turn() {
            match turn {
                IdleTurn::User(text) => self.start_run(text, Vec::new(), "extension"),
                IdleTurn::Messages(messages) => self.start_messages(messages),
            }
            return;
        }
        let mut next = self.queues.take(true);
        if next.is_empty() {
            next = self.queues.take(false);
        }
        self.start_messages(next);
    }

    /// Stops what runs (the app went away) and returns whether a job is still to be waited for.
    pub(crate) async fn stop(&mut self) -> bool {
        if let Some((cancel, task)) = self.bash.take() {
            cancel.cancel();
            let _ = task.await;
        }
        match &self.job {
            Some(job) => {
                job.cancel.cancel();
                true
            }
            None => false,
        }
    }

    fn state(&self) -> Value {
        let session = self.writer.session();
        let mut state = json!({
            "model": self.model_json(),
            "thinkingLevel": self.config.thinking.as_str(),
            "isStreaming": self.streaming(),
            "isCompacting": self.job.as_ref().is_some_and(|job| job.kind == JobKind::Compact),
            "steeringMode": Queues::mode(&self.queues.steering_all),
            "followUpMode": Queues::mode(&self.queues.follow_ups_all),
            "sessionFile": session.path(),
            "sessionId": session.id(),
            "autoCompactionEnabled": self.config.compaction.is_some(),
            "autoRetryEnabled": self.config.auto_retry,
            "permissionMode": self.hooks.mode().to_string(),
            "messageCount": lock(&self.conversation).len(),
            "pendingMessageCount": self.queues.pending(),
        });
        if let Some(name) = &self.session_name {
            state["sessionName"] = json!(name);
        }
        state
    }

    fn stats(&self) -> Value {
        let conversation = lock(&self.conversation);
        let count = |role: &str| conversation.iter().filter(|m| m.role() == role).count();
        let tool_calls: usize = conversation
            .iter()
            .filter_map(Message::as_assistant)
            .map(|reply| {
                reply
                    .content
                    .iter()
                    .filter(|block| matches!(block, AssistantBlock::ToolCall(_)))
                    .count()
            })
            .sum();
        let usage = usage_by_model(&conversation, &self.config.models);
        let sum = |pick: fn(&jig_agent::ModelUsage) -> u64| usage.iter().map(pick).sum::<u64>();
        let (input, output, cache_read, cache_write) = (
            sum(|u| u.input),
            sum(|u| u.output),
            sum(|u| u.cache_read),
            sum(|u| u.cache_write),
        );
        let window = self
            .config
            .compaction
            .or(self.compaction_off)
            .map(|compaction| compaction.context_window);
        let context_tokens = conversation
            .iter()
            .rev()
            .find_map(Message::as_assistant)
            .map(|reply| reply.usage.input + reply.usage.cache_read + reply.usage.cache_write)
            .filter(|tokens| *tokens > 0);
        let session = self.writer.session();
        let mut stats = json!({
            "sessionFile": session.path(),
            "sessionId": session.id(),
            "userMessages": count("user"),
            "assistantMessages": count("assistant"),
            "toolCalls": tool_calls,
            "toolResults": count("toolResult"),
            "totalMessages": conversation.len(),
            "tokens": {
                "input": input,
                "output": output,
                "cacheRead": cache_read,
                "cacheWrite": cache_write,
                "total": input + output + cache_read + cache_write,
            },
            "cost": total_cost(&usage),
        });
        if let Some(window) = window {
            #[expect(
                clippy::cast_precision_loss,
                reason = "a percentage of a context window: tokens are far below 2^52"
            )]
            let percent = context_tokens.map(|tokens| tokens as f64 * 100.0 / window as f64);
            stats["contextUsage"] = json!({
                "tokens": context_tokens,
                "contextWindow": window,
                "percent": percent,
            });
        }
        stats
    }

    fn set_session_name(&mut self, name: String) -> Reply {
        let written = self
            .writer
            .session()
            .append_custom(SESSION_NAME, json!({"name": name}));
        written.map_err(|error| format!("the session name could not be saved: {error}"))?;
        self.session_name = Some(name);
        Ok(None)
    }

    /// The extensions' commands, then the skills and prompt templates.
    fn commands(&self) -> Vec<Value> {
        let mut commands: Vec<Value> = self
            .runner
            .commands()
            .into_iter()
            .map(|command| {
                json!({
                    "name": command.name,
                    "description": command.description,
                    "source": "extension",
                    "path": command.path,
                })
            })
            .collect();
        commands.extend(self.knowledge.skills.iter().map(|skill| {
            json!({
                "name": format!("skill:{}", skill.name),
                "description": skill.description,
                "source": "skill",
                "path": skill.file,
            })
        }));
        commands.extend(self.knowledge.templates.iter().map(|template| {
            json!({
                "name": template.name,
                "description": template.description,
                "source": "prompt",
                "path": template.file,
            })
        }));
        commands
    }

    /// `compact`: a job of its own (`abort` stops it); answered when it is done.
    fn compact(&mut self, id: Option<Value>, instructions: Option<String>) -> Option<Reply> {
        if let Err(error) = self.idle("compact") {
            return Some(Err(error));
        }
        if instructions.is_some_and(|text| !text.trim().is_empty()) {
            return Some(Err(
                "compact's customInstructions are not supported by jig: send compact without them"
                    .to_owned(),
            ));
        }
        let mut agent = self.agent.take()?;
        let observer = self.observer();
        let events = Arc::clone(&self.events);
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let done = self.done.clone();
        self.job = Some(Job {
            kind: JobKind::Compact,
            cancel,
        });
        events.compaction_started();
        tokio::spawn(async move {
            let result = agent
                .compact(CompactionReason::Manual, &token, &observer)
                .await;
            let reply = match result {
                Ok(()) => Ok(events.last_compaction()),
                Err(error) => {
                    let aborted = token.is_cancelled();
                    events.compaction_failed(&error.to_string(), aborted);
                    Err(error.to_string())
                }
            };
            let _ = done.send(Done {
                agent,
                compacted: Some((id, reply)),
            });
        });
        None
    }

    /// `bash`: runs the app's command in the workspace with the user's rights (no sandbox, no
    /// approval: the app typed it); its output goes to the model with the next prompt.
    fn bash(&mut self, id: Option<Value>, line: String) -> Option<Reply> {
        if self
            .bash
            .as_ref()
            .is_some_and(|(_, task)| !task.is_finished())
        {
            return Some(Err(
                "a bash command is already running: wait for its response or send abort_bash"
                    .to_owned(),
            ));
        }
        let Some(tool) = self.config.tools.get("bash").cloned() else {
            return Some(Err("this session has no bash tool (see --tools)".to_owned()));
        };
        let cancel = CancellationToken::new();
        let mut ctx = self.config.tool_context.clone();
        ctx.sandbox = jig_env::SandboxPolicy::off();
        ctx.cancel = cancel.clone();
        let out = Arc::clone(&self.out);
        let ran = Arc::clone(&self.bash_output);
        let task = tokio::spawn(async move {
            let result = tool.run(&ctx, json!({ "command": line })).await;
            let output = result.text_content();
            let details = &result.details;
            let exit_code = details.get("exitCode").cloned().unwrap_or(Value::Null);
            let cancelled = details.get("aborted").and_then(Value::as_bool) == Some(true);
            let full_output = details.get("fullOutputPath").cloned();
            let data = json!({
                "output": output,
                "exitCode": exit_code,
                "cancelled": cancelled,
                "truncated": details.get("truncation").is_some_and(|t| !t.is_null()),
                "fullOutputPath": full_output,
            });
            lock(&ran).push(format!("Ran `{line}`\n```\n{output}\n```"));
            out.respond(id.as_ref(), "bash", Ok(Some(data)));
        });
        self.bash = Some((cancel, task));
        None
    }

    async fn new_session(&mut self) -> Reply {
        self.idle("start a new session")?;
        let outcome = self
            .runner
            .session_before(events::SESSION_BEFORE_SWITCH, &json!({"reason": "new"}))
            .await;
        if outcome.cancel {
            return Ok(Some(json!({"cancelled": true})));
        }
        let cwd = self.config.tool_context.cwd.clone();
        let mut session = match (&self.store, self.no_session) {
            (Some(store), false) => Session::create_in(&store.dir_for(&self.session_key), &cwd),
            _ => Session::in_memory(&cwd),
        };
        session
            .append_model_change(
                &self.provider_name,
                &self.config.model,
                self.custom_base_url.as_deref(),
                self.custom_endpoint.clone(),
            )
            .and_then(|()| session.append_thinking_level(self.config.thinking))
            .map_err(|error| format!("the new session could not be written: {error}"))?;
        self.install(session);
        Ok(Some(json!({"cancelled": false})))
    }

    async fn switch_session(&mut self, path: &str) -> Reply {
        self.idle("switch session")?;
        let session = Session::open(std::path::Path::new(path))
            .map_err(|error| format!("cannot open the session {path}: {error}"))?;
        let outcome = self
            .runner
            .session_before(
                events::SESSION_BEFORE_SWITCH,
                &json!({"reason": "resume", "targetSessionFile": path}),
            )
            .await;
        if outcome.cancel {
            return Ok(Some(json!({"cancelled": true})));
        }
        self.install(session);
        Ok(Some(json!({"cancelled": false})))
    }
}

/// The custom entry that holds a session's display name.
const SESSION_NAME: &str = "jig.session_name";

/// The name `set_session_name` last gave `session`.
fn session_name(session: &Session) -> Option<String> {
    session.branch().iter().rev().find_map(|entry| match entry {
        jig_agent::session::EntryKind::Custom { custom_type, data }
            if custom_type == SESSION_NAME =>
        {
            data.get("name").and_then(Value::as_str).map(str::to_owned)
        }
        _ => None,
    })
}

/// `/name args` when `name` is one of the extensions' commands.
fn extension_command(runner: &ExtensionRunner, text: &str) -> Option<(String, String)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    runner
        .commands()
        .iter()
        .any(|command| command.name == name)
        .then(|| (name.to_owned(), args.trim().to_owned()))
}

fn images(fields: &PromptFields) -> Vec<ContentBlock> {
    fields
        .images
        .iter()
        .map(|image| ContentBlock::Image {
            data: image.data.clone(),
            mime_type: image.mime_type.clone(),
        })
        .collect()
}

fn user_message(text: String, images: Vec<ContentBlock>) -> Message {
    let mut message = Message::user_text(text);
    if let Message::User(user) = &mut message {
        user.content.extend(images);
    }
    message
}
