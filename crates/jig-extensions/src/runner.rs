//! The extension runner: extensions in load order, and each event's fold rule.
#![expect(
    clippy::items_after_statements,
    reason = "each fold's reply shape sits next to the fold"
)]

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use jig_protocol::{ContentBlock, Message, ToolResult};
use jig_tool::DynTool;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{ActionError, ExtensionError, HandlerError, LoadError, format_duration};
use crate::handle::ExtensionHandle;
use crate::host::{ExtensionHost, lock};
use crate::registration::{CommandRegistration, FlagRegistration, events};
use crate::tool::ExtensionTool;

/// A slash command an extension registered, as offered to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredCommand {
    /// The name without `/` (`name:N` when several extensions register the same name).
    pub name: String,
    /// What it does, as the extension says.
    pub description: Option<String>,
    /// The extension's path.
    pub path: String,
}

/// How long the runner waits for extensions.
///
/// Defaults: 30 s for an event whose answer the host waits on (`project_trust`, `tool_call`,
/// `tool_result`, `input`, `before_agent_start`, `context`, `message_end`, `session_before_*`),
/// 5 s for a notification (`session_start`, `session_shutdown`, …), 10 minutes for a tool call.
/// A long-lived extension that misses a deadline is stopped (its state is unknown); a command
/// hook only loses that one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Events whose answer matters.
    pub decision: Duration,
    /// Notifications.
    pub notification: Duration,
    /// One tool call.
    pub tool: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            decision: Duration::from_secs(30),
            notification: Duration::from_secs(5),
            tool: Duration::from_mins(10),
        }
    }
}

/// A decisive `project_trust` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustAnswer {
    /// Trusted or not.
    pub trusted: bool,
    /// Whether the decision should be written to the trust store.
    pub remember: bool,
    /// The extension that decided.
    pub path: String,
}

/// What the `project_trust` event decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustOutcome {
    /// The first decisive answer, if any extension gave one.
    pub answer: Option<TrustAnswer>,
    /// Handlers that failed: warnings (`Extension "<path>" project_trust error: <message>`).
    pub warnings: Vec<ExtensionError>,
}

/// What the `tool_call` event decided.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCallOutcome {
    /// Run the call, with replacement arguments when a handler gave some.
    Allow {
        /// The last replacement input, `None` when no handler changed it.
        input: Option<Value>,
    },
    /// Do not run the call.
    Block {
        /// Why, for the model (`None`: the handler gave no reason).
        reason: Option<String>,
    },
}

/// What the `input` event decided.
#[derive(Debug, Clone, PartialEq)]
pub enum InputOutcome {
    /// Go on with this (possibly transformed) input.
    Continue {
        /// The text.
        text: String,
        /// The images.
        images: Vec<ContentBlock>,
    },
    /// An extension handled the input; drop the prompt.
    Handled,
}

/// A message an extension adds before a run (`before_agent_start`), sent to the model as user
/// content.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    /// The extension's type tag.
    #[serde(default)]
    pub custom_type: Option<String>,
    /// The text (a string on the wire, or content blocks).
    #[serde(deserialize_with = "text_or_blocks")]
    pub content: Vec<ContentBlock>,
    /// Whether it is shown to the user.
    #[serde(default = "default_true")]
    pub display: bool,
    /// Extension data.
    #[serde(default)]
    pub details: Value,
}

fn default_true() -> bool {
    true
}

fn text_or_blocks<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<ContentBlock>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Content {
        Text(String),
        Blocks(Vec<ContentBlock>),
    }
    Ok(match Content::deserialize(deserializer)? {
        Content::Text(text) => vec![ContentBlock::text(text)],
        Content::Blocks(blocks) => blocks,
    })
}

/// What `before_agent_start` produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeAgentStart {
    /// Every message the handlers returned, in order.
    pub messages: Vec<CustomMessage>,
    /// The system prompt after the chain, when a handler changed it (otherwise the base prompt
    /// stays for this turn).
    pub system_prompt: Option<String>,
}

/// What a `session_before_*` event decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionBeforeOutcome {
    /// A handler cancelled.
    pub cancel: bool,
    /// The cancelling result, else the last non-empty one.
    pub result: Option<Value>,
}

/// Why the command line's extension flags cannot be applied
/// ([`ExtensionRunner::apply_flag_values`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagValueError {
    /// No loaded extension registers the flag.
    #[error("Unknown flag \"--{name}\": no loaded extension registers it")]
    Unknown {
        /// The flag's name, without `--`.
        name: String,
    },
    /// A boolean flag was given a value other than `true` or `false`.
    #[error("Flag \"--{name}\" is a boolean: give true or false, not \"{value}\"")]
    NotBoolean {
        /// The flag's name, without `--`.
        name: String,
        /// The value given.
        value: String,
    },
    /// A string flag was given without a value.
    #[error("Flag \"--{name}\" needs a value: --{name}=VALUE")]
    MissingValue {
        /// The flag's name, without `--`.
        name: String,
    },
}

/// The loaded extensions in load order, and the fold rule of every event.
///
/// Build it during loading ([`add`](Self::add)), ask [`project_trust`](Self::project_trust)
/// before project resources load, [`bind`](Self::bind) a host once the session exists, then
/// emit events. Every emit first looks up the event's subscribers and returns at once when
/// there are none, with no allocation. Handlers run one at a time in load order; an extension
/// that fails is reported (to the bound host, or kept for [`take_errors`](Self::take_errors)
/// before binding), and one that crashed, broke the protocol or timed out drops out.
pub struct ExtensionRunner {
    extensions: Vec<Arc<dyn ExtensionHandle>>,
    subscribers: HashMap<String, Vec<usize>>,
    tools: Vec<Arc<ExtensionTool>>,
    timeouts: Timeouts,
    host: OnceLock<Arc<dyn ExtensionHost>>,
    errors: Mutex<Vec<ExtensionError>>,
    call_ids: Arc<AtomicU64>,
}

impl fmt::Debug for ExtensionRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionRunner")
            .field("extensions", &self.extensions)
            .field("timeouts", &self.timeouts)
            .finish_non_exhaustive()
    }
}

impl Default for ExtensionRunner {
    fn default() -> Self {
        Self::new(Timeouts::default())
    }
}

impl ExtensionRunner {
    /// A runner with no extensions.
    pub fn new(timeouts: Timeouts) -> Self {
        Self {
            extensions: Vec::new(),
            subscribers: HashMap::new(),
            tools: Vec::new(),
            timeouts,
            host: OnceLock::new(),
            errors: Mutex::new(Vec::new()),
            call_ids: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Appends an extension (load order = order of `add`). A tool or flag name an earlier
    /// extension registered is a load error (`Tool "<name>" conflicts with <path>`), and the
    /// extension is not added.
    pub fn add(&mut self, extension: Arc<dyn ExtensionHandle>) -> Result<(), LoadError> {
        self.insert(self.extensions.len(), extension)
    }

    /// Inserts an extension at `index` in load order (project extensions load after trust but
    /// come before global ones). A tool or flag name any loaded extension registered is a
    /// load error for the one being inserted (extensions loaded first keep their names).
    pub fn insert(
        &mut self,
        index: usize,
        extension: Arc<dyn ExtensionHandle>,
    ) -> Result<(), LoadError> {
        let index = index.min(self.extensions.len());
        let path = extension.path().to_owned();
        let registrations = extension.registrations();
        for earlier in &self.extensions {
            let theirs = earlier.registrations();
            if let Some(tool) = registrations
                .tools
                .iter()
                .find(|tool| theirs.tools.iter().any(|t| t.name == tool.name))
            {
                return Err(LoadError::new(
                    path,
                    format!("Tool \"{}\" conflicts with {}", tool.name, earlier.path()),
                ));
            }
            if let Some(flag) = registrations
                .flags
                .iter()
                .find(|flag| theirs.flags.iter().any(|f| f.name == flag.name))
            {
                return Err(LoadError::new(
                    path,
                    format!("Flag \"--{}\" conflicts with {}", flag.name, earlier.path()),
                ));
            }
        }
        let mut tools = Vec::new();
        for registration in &registrations.tools {
            let tool = ExtensionTool::new(
                Arc::clone(&extension),
                registration,
                self.timeouts.tool,
                Arc::clone(&self.call_ids),
            )
            .map_err(|error| LoadError::new(&path, error.to_string()))?;
            tools.push(Arc::new(tool));
        }
        self.extensions.insert(index, extension);
        self.rebuild();
        self.tools.extend(tools);
        Ok(())
    }

    fn rebuild(&mut self) {
        self.subscribers.clear();
        for (index, extension) in self.extensions.iter().enumerate() {
            for event in &extension.registrations().events {
                let list = self.subscribers.entry(event.clone()).or_default();
                if !list.contains(&index) {
                    list.push(index);
                }
            }
        }
        let order: Vec<&str> = self.extensions.iter().map(|e| e.path()).collect();
        self.tools
            .sort_by_key(|tool| order.iter().position(|path| *path == tool.extension_path()));
    }

    /// The extensions in load order.
    pub fn extensions(&self) -> &[Arc<dyn ExtensionHandle>] {
        &self.extensions
    }

    /// The tools the extensions registered, as registry tools, in load order.
    pub fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.tools
            .iter()
            .map(|tool| Arc::clone(tool) as Arc<dyn DynTool>)
            .collect()
    }

    /// A tool the extension at `path` registers after loading (`registerTool` once bound),
    /// served by that extension like the ones it registered while loading. The host decides
    /// whether the session takes it (see [`ExtensionHost::register_tool`]).
    pub fn late_tool(
        &self,
        path: &str,
        registration: &crate::ToolRegistration,
    ) -> Result<Arc<dyn DynTool>, ActionError> {
        let extension = self
            .extensions
            .iter()
            .find(|extension| extension.path() == path)
            .ok_or_else(|| {
                ActionError::invalid("registerTool", format!("no extension loaded from {path}"))
            })?;
        let tool = ExtensionTool::new(
            Arc::clone(extension),
            registration,
            self.timeouts.tool,
            Arc::clone(&self.call_ids),
        )?;
        Ok(Arc::new(tool))
    }

    /// Slash commands in load order; a name registered more than once is offered as `name:1`,
    /// `name:2`, … in load order.
    pub fn commands(&self) -> Vec<RegisteredCommand> {
        let all: Vec<(&CommandRegistration, &str)> = self
            .extensions
            .iter()
            .flat_map(|e| {
                e.registrations()
                    .commands
                    .iter()
                    .map(move |c| (c, e.path()))
            })
            .collect();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        all.iter()
            .map(|(command, path)| {
                let name = command.name.as_str();
                let count = all.iter().filter(|(c, _)| c.name == name).count();
                let name = if count > 1 {
                    let n = seen.entry(name).or_insert(0);
                    *n += 1;
                    format!("{name}:{n}")
                } else {
                    name.to_owned()
                };
                RegisteredCommand {
                    name,
                    description: command.description.clone(),
                    path: (*path).to_owned(),
                }
            })
            .collect()
    }

    /// Runs a slash command by the name [`commands`](Self::commands) gives, with the text after
    /// the name as `args`; the extension's reply text, if any.
    pub async fn run_command(
        &self,
        name: &str,
        args: &str,
    ) -> Result<Option<String>, ExtensionError> {
        let commands = self.commands();
        let Some(command) = commands.iter().find(|c| c.name == name) else {
            return Err(ExtensionError {
                path: format!("command:{name}"),
                event: "command".to_owned(),
                message: format!("Unknown command: /{name}"),
            });
        };
        let base = name.split(':').next().unwrap_or(name);
        let extension = self
            .extensions
            .iter()
            .find(|e| e.path() == command.path)
            .map(Arc::clone);
        let Some(extension) = extension else {
            return Ok(None);
        };
        let outcome =
            tokio::time::timeout(self.timeouts.tool, extension.run_command(base, args)).await;
        let message = match outcome {
            Ok(Ok(text)) => return Ok(text),
            Ok(Err(error)) => error.message().to_owned(),
            Err(_) => format!("no answer within {}", format_duration(self.timeouts.tool)),
        };
        Err(ExtensionError {
            path: command.path.clone(),
            event: "command".to_owned(),
            message,
        })
    }

    /// Flags as `(flag, extension path)`, in load order.
    pub fn flags(&self) -> Vec<(&FlagRegistration, &str)> {
        self.extensions
            .iter()
            .flat_map(|e| e.registrations().flags.iter().map(move |f| (f, e.path())))
            .collect()
    }

    /// Gives every extension the values of its flags: `given` are the command line's
    /// `NAME[=VALUE]` words (a boolean flag without a value is `true`; a string flag needs
    /// one); flags not given get their defaults. Fails, naming the flag, when no extension
    /// registers it or the value does not fit its type.
    pub fn apply_flag_values(&self, given: &[String]) -> Result<(), FlagValueError> {
        let flags = self.flags();
        let mut values: HashMap<&str, serde_json::Map<String, Value>> = HashMap::new();
        for (flag, path) in &flags {
            if let Some(default) = &flag.default {
                values
                    .entry(path)
                    .or_default()
                    .insert(flag.name.clone(), default.clone());
            }
        }
        for word in given {
            let (name, value) = match word.split_once('=') {
                Some((name, value)) => (name.trim_start_matches("--"), Some(value)),
                None => (word.trim_start_matches("--"), None),
            };
            let Some((flag, path)) = flags.iter().find(|(flag, _)| flag.name == name) else {
                return Err(FlagValueError::Unknown {
                    name: name.to_owned(),
                });
            };
            let value = match (flag.kind.as_str(), value) {
                ("boolean", None | Some("true")) => Value::Bool(true),
                ("boolean", Some("false")) => Value::Bool(false),
                ("boolean", Some(other)) => {
                    return Err(FlagValueError::NotBoolean {
                        name: name.to_owned(),
                        value: other.to_owned(),
                    });
                }
                (_, Some(value)) => Value::String(value.to_owned()),
                (_, None) => {
                    return Err(FlagValueError::MissingValue {
                        name: name.to_owned(),
                    });
                }
            };
            values
                .entry(path)
                .or_default()
                .insert(flag.name.clone(), value);
        }
        for extension in &self.extensions {
            extension.set_flag_values(values.remove(extension.path()).unwrap_or_default());
        }
        Ok(())
    }

    /// True when a loaded, running extension handles `event`.
    pub fn has_handlers(&self, event: &str) -> bool {
        self.subscribers
            .get(event)
            .is_some_and(|list| list.iter().any(|&i| self.extensions[i].failure().is_none()))
    }

    /// Binds the runtime: action calls reach `host` from now on, queued provider registrations
    /// are applied (failures become errors with event `register_provider`), and errors kept
    /// while loading are handed to the host.
    pub async fn bind(&self, host: Arc<dyn ExtensionHost>) {
        if self.host.set(Arc::clone(&host)).is_err() {
            return;
        }
        for error in std::mem::take(&mut *lock(&self.errors)) {
            host.report_error(&error);
        }
        for extension in &self.extensions {
            for error in extension.bind(Arc::clone(&host)).await {
                host.report_error(&error);
            }
        }
    }

    /// Errors reported while no host was bound.
    pub fn take_errors(&self) -> Vec<ExtensionError> {
        std::mem::take(&mut *lock(&self.errors))
    }

    /// Stops every extension.
    pub async fn shutdown(&self) {
        for extension in &self.extensions {
            extension.shutdown().await;
        }
    }

    fn report(&self, error: &ExtensionError) {
        tracing::debug!("{error}");
        match self.host.get() {
            Some(host) => host.report_error(error),
            None => lock(&self.errors).push(error.clone()),
        }
    }

    fn timeout_for(&self, event: &str) -> Duration {
        match event {
            events::SESSION_START | events::SESSION_SHUTDOWN => self.timeouts.notification,
            events::PROJECT_TRUST
            | events::TOOL_CALL
            | events::TOOL_RESULT
            | events::INPUT
            | events::BEFORE_AGENT_START
            | events::CONTEXT
            | events::MESSAGE_END => self.timeouts.decision,
            name if name.starts_with("session_before_") => self.timeouts.decision,
            _ => self.timeouts.notification,
        }
    }

    /// The running subscribers of `event`, in load order; empty (and allocation-free) when
    /// none.
    fn subscribers(&self, event: &str) -> &[usize] {
        self.subscribers.get(event).map_or(&[], Vec::as_slice)
    }

    /// Delivers `event` to extension `index`, with the event's timeout.
    async fn call(
        &self,
        index: usize,
        event: &str,
        payload: &Value,
    ) -> Option<Result<Value, ExtensionError>> {
        let extension = &self.extensions[index];
        if extension.failure().is_some() {
            return None;
        }
        let limit = self.timeout_for(event);
        let message =
            match tokio::time::timeout(limit, extension.handle_event(event, payload)).await {
                Ok(Ok(value)) => return Some(Ok(value)),
                Ok(Err(HandlerError::Failed(message))) => message,
                Ok(Err(HandlerError::Gone(reason))) => {
                    format!("{reason}; its handlers are disabled")
                }
                Err(_) => {
                    extension.timed_out(event);
                    let mut message = format!("no answer within {}", format_duration(limit));
                    if extension.failure().is_some() {
                        message.push_str("; its handlers are disabled");
                    }
                    message
                }
            };
        Some(Err(ExtensionError {
            path: extension.path().to_owned(),
            event: event.to_owned(),
            message,
        }))
    }

    fn invalid(&self, index: usize, event: &str, message: String) -> ExtensionError {
        ExtensionError {
            path: self.extensions[index].path().to_owned(),
            event: event.to_owned(),
            message,
        }
    }

    /// `project_trust`: handlers in load order until the first decisive answer (`trusted`:
    /// `"yes"`/`true` or `"no"`/`false`; `"undecided"`, `null` or no answer go on). A failing
    /// handler is a warning and does not decide.
    pub async fn project_trust(&self, cwd: &Path, mode: &str, has_ui: bool) -> TrustOutcome {
        let mut outcome = TrustOutcome::default();
        let subscribers = self.subscribers(events::PROJECT_TRUST);
        if subscribers.is_empty() {
            return outcome;
        }
        let payload = json!({"cwd": cwd, "mode": mode, "hasUI": has_ui});
        for &index in subscribers {
            let reply = match self.call(index, events::PROJECT_TRUST, &payload).await {
                None => continue,
                Some(Err(error)) => {
                    outcome.warnings.push(error);
                    continue;
                }
                Some(Ok(reply)) => reply,
            };
            let trusted = match reply.get("trusted") {
                None | Some(Value::Null) => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(Value::String(s)) if s == "yes" => Some(true),
                Some(Value::String(s)) if s == "no" => Some(false),
                Some(Value::String(s)) if s == "undecided" => None,
                Some(other) => {
                    outcome.warnings.push(self.invalid(
                        index,
                        events::PROJECT_TRUST,
                        format!(
                            "invalid answer {other}: expected \"yes\", \"no\" or \"undecided\""
                        ),
                    ));
                    None
                }
            };
            if let Some(trusted) = trusted {
                outcome.answer = Some(TrustAnswer {
                    trusted,
                    remember: reply.get("remember").and_then(Value::as_bool) == Some(true),
                    path: self.extensions[index].path().to_owned(),
                });
                return outcome;
            }
        }
        outcome
    }

    /// `tool_call`: handlers in load order; each sees the input as earlier handlers left it
    /// (`{"input": …}` replaces it, not re-validated here); the first `{"block": true}` wins.
    /// A handler that fails or times out blocks the call (fail closed), with the error as the
    /// reason.
    pub async fn tool_call(
        &self,
        call_id: &str,
        tool_name: &str,
        input: &Value,
    ) -> ToolCallOutcome {
        let subscribers = self.subscribers(events::TOOL_CALL);
        if subscribers.is_empty() {
            return ToolCallOutcome::Allow { input: None };
        }
        #[derive(Deserialize)]
        struct Reply {
            #[serde(default)]
            block: Option<bool>,
            #[serde(default)]
            reason: Option<String>,
            #[serde(default)]
            input: Option<Value>,
        }
        let mut replaced: Option<Value> = None;
        for &index in subscribers {
            let payload = json!({
                "toolCallId": call_id,
                "toolName": tool_name,
                "input": replaced.as_ref().unwrap_or(input),
            });
            let reply = match self.call(index, events::TOOL_CALL, &payload).await {
                None | Some(Ok(Value::Null)) => continue,
                Some(Ok(reply)) => serde_json::from_value::<Reply>(reply).map_err(|error| {
                    self.invalid(index, events::TOOL_CALL, format!("invalid result: {error}"))
                }),
                Some(Err(error)) => Err(error),
            };
            match reply {
                Err(error) => {
                    self.report(&error);
                    return ToolCallOutcome::Block {
                        reason: Some(error.to_string()),
                    };
                }
                Ok(reply) => {
                    if let Some(input) = reply.input {
                        replaced = Some(input);
                    }
                    if reply.block == Some(true) {
                        return ToolCallOutcome::Block {
                            reason: reply.reason.filter(|r| !r.trim().is_empty()),
                        };
                    }
                }
            }
        }
        ToolCallOutcome::Allow { input: replaced }
    }

    /// `tool_result`: handlers in load order, each seeing the result as earlier ones left it;
    /// `content`, `details` and `isError` of a reply patch it field by field. A failing handler
    /// is reported and changes nothing. A patched result is bounded like every tool result
    /// (text by `jig-truncate`'s default limits, images and details by
    /// [`MAX_RESULT_IMAGE_BYTES`](crate::MAX_RESULT_IMAGE_BYTES) and
    /// [`MAX_RESULT_DETAILS_BYTES`](crate::MAX_RESULT_DETAILS_BYTES)), with a notice.
    pub async fn tool_result(
        &self,
        call_id: &str,
        tool_name: &str,
        input: &Value,
        mut result: ToolResult,
    ) -> ToolResult {
        let subscribers = self.subscribers(events::TOOL_RESULT);
        if subscribers.is_empty() {
            return result;
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Patch {
            #[serde(default)]
            content: Option<Vec<ContentBlock>>,
            #[serde(default)]
            details: Option<Value>,
            #[serde(default)]
            is_error: Option<bool>,
        }
        let mut patched = false;
        for &index in subscribers {
            let payload = json!({
                "toolCallId": call_id,
                "toolName": tool_name,
                "input": input,
                "content": result.content,
                "details": result.details,
                "isError": result.is_error,
            });
            match self.call(index, events::TOOL_RESULT, &payload).await {
                None | Some(Ok(Value::Null)) => {}
                Some(Err(error)) => self.report(&error),
                Some(Ok(reply)) => match serde_json::from_value::<Patch>(reply) {
                    Err(error) => self.report(&self.invalid(
                        index,
                        events::TOOL_RESULT,
                        format!("invalid result: {error}"),
                    )),
                    Ok(patch) => {
                        if let Some(content) = patch.content {
                            result.content = content;
                            patched = true;
                        }
                        if let Some(details) = patch.details {
                            result.details = details;
                            patched = true;
                        }
                        if let Some(is_error) = patch.is_error {
                            result.is_error = is_error;
                        }
                    }
                },
            }
        }
        if patched {
            crate::tool::bound(result)
        } else {
            result
        }
    }

    /// `input`: `{"action": "transform", "text": …}` replaces the text for later handlers
    /// (chained); the first `{"action": "handled"}` ends the chain and drops the prompt;
    /// `continue` or no answer changes nothing. A failing handler is reported and skipped.
    pub async fn input(
        &self,
        text: String,
        images: Vec<ContentBlock>,
        source: &str,
    ) -> InputOutcome {
        let subscribers = self.subscribers(events::INPUT);
        if subscribers.is_empty() {
            return InputOutcome::Continue { text, images };
        }
        #[derive(Deserialize)]
        struct Reply {
            action: String,
            #[serde(default)]
            text: Option<String>,
            #[serde(default)]
            images: Option<Vec<ContentBlock>>,
        }
        let (mut text, mut images) = (text, images);
        for &index in subscribers {
            let payload = json!({"text": text, "images": images, "source": source});
            let reply = match self.call(index, events::INPUT, &payload).await {
                None | Some(Ok(Value::Null)) => continue,
                Some(Err(error)) => {
                    self.report(&error);
                    continue;
                }
                Some(Ok(reply)) => reply,
            };
            match serde_json::from_value::<Reply>(reply) {
                Ok(reply) if reply.action == "handled" => return InputOutcome::Handled,
                Ok(reply) if reply.action == "continue" => {}
                Ok(Reply {
                    action,
                    text: Some(new_text),
                    images: new_images,
                }) if action == "transform" => {
                    text = new_text;
                    if let Some(new_images) = new_images {
                        images = new_images;
                    }
                }
                Ok(reply) => self.report(&self.invalid(
                    index,
                    events::INPUT,
                    format!(
                        "invalid result: action \"{}\" (expected continue, transform with text, or handled)",
                        reply.action
                    ),
                )),
                Err(error) => self.report(&self.invalid(
                    index,
                    events::INPUT,
                    format!("invalid result: {error}"),
                )),
            }
        }
        InputOutcome::Continue { text, images }
    }

    /// `before_agent_start`: every handler runs; each returned `message` is collected; a
    /// returned `systemPrompt` becomes the prompt later handlers see (chained).
    pub async fn before_agent_start(
        &self,
        prompt: &str,
        images: &[ContentBlock],
        system_prompt: &str,
    ) -> BeforeAgentStart {
        let mut outcome = BeforeAgentStart::default();
        let subscribers = self.subscribers(events::BEFORE_AGENT_START);
        if subscribers.is_empty() {
            return outcome;
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Reply {
            #[serde(default)]
            message: Option<CustomMessage>,
            #[serde(default)]
            system_prompt: Option<String>,
        }
        for &index in subscribers {
            let current = outcome.system_prompt.as_deref().unwrap_or(system_prompt);
            let payload = json!({"prompt": prompt, "images": images, "systemPrompt": current});
            match self.call(index, events::BEFORE_AGENT_START, &payload).await {
                None | Some(Ok(Value::Null)) => {}
                Some(Err(error)) => self.report(&error),
                Some(Ok(reply)) => match serde_json::from_value::<Reply>(reply) {
                    Ok(reply) => {
                        outcome.messages.extend(reply.message);
                        if let Some(prompt) = reply.system_prompt {
                            outcome.system_prompt = Some(prompt);
                        }
                    }
                    Err(error) => self.report(&self.invalid(
                        index,
                        events::BEFORE_AGENT_START,
                        format!("invalid result: {error}"),
                    )),
                },
            }
        }
        outcome
    }

    /// `context`: a returned `messages` list replaces the working copy for later handlers and
    /// the model call (chained).
    pub async fn context(&self, messages: Vec<Message>) -> Vec<Message> {
        let subscribers = self.subscribers(events::CONTEXT);
        if subscribers.is_empty() {
            return messages;
        }
        #[derive(Deserialize)]
        struct Reply {
            #[serde(default)]
            messages: Option<Vec<Message>>,
        }
        let mut messages = messages;
        for &index in subscribers {
            let payload = json!({"messages": messages});
            match self.call(index, events::CONTEXT, &payload).await {
                None | Some(Ok(Value::Null)) => {}
                Some(Err(error)) => self.report(&error),
                Some(Ok(reply)) => match serde_json::from_value::<Reply>(reply) {
                    Ok(Reply {
                        messages: Some(replacement),
                    }) => messages = replacement,
                    Ok(_) => {}
                    Err(error) => self.report(&self.invalid(
                        index,
                        events::CONTEXT,
                        format!("invalid result: {error}"),
                    )),
                },
            }
        }
        messages
    }

    /// `message_end`: a returned `message` replaces the finalized message (chained); one with a
    /// different role is refused with `message_end handlers must return a message with the same
    /// role`.
    pub async fn message_end(&self, message: Message) -> Message {
        let subscribers = self.subscribers(events::MESSAGE_END);
        if subscribers.is_empty() {
            return message;
        }
        #[derive(Deserialize)]
        struct Reply {
            #[serde(default)]
            message: Option<Message>,
        }
        let mut message = message;
        for &index in subscribers {
            let payload = json!({"message": message});
            match self.call(index, events::MESSAGE_END, &payload).await {
                None | Some(Ok(Value::Null)) => {}
                Some(Err(error)) => self.report(&error),
                Some(Ok(reply)) => {
                    match serde_json::from_value::<Reply>(reply) {
                        Ok(Reply {
                            message: Some(replacement),
                        }) => {
                            if replacement.role() == message.role() {
                                message = replacement;
                            } else {
                                self.report(&self.invalid(
                                index,
                                events::MESSAGE_END,
                                "message_end handlers must return a message with the same role"
                                    .to_owned(),
                            ));
                            }
                        }
                        Ok(_) => {}
                        Err(error) => self.report(&self.invalid(
                            index,
                            events::MESSAGE_END,
                            format!("invalid result: {error}"),
                        )),
                    }
                }
            }
        }
        message
    }

    /// A `session_before_*` event (`session_before_switch`, `_fork`, `_compact`, `_tree`):
    /// handlers run until one returns `{"cancel": true}` (returned at once); otherwise the last
    /// non-empty result is returned.
    pub async fn session_before(&self, event: &str, payload: &Value) -> SessionBeforeOutcome {
        let mut outcome = SessionBeforeOutcome::default();
        let subscribers = self.subscribers(event);
        if subscribers.is_empty() {
            return outcome;
        }
        for &index in subscribers {
            match self.call(index, event, payload).await {
                None | Some(Ok(Value::Null)) => {}
                Some(Err(error)) => self.report(&error),
                Some(Ok(reply)) => {
                    if reply.get("cancel").and_then(Value::as_bool) == Some(true) {
                        return SessionBeforeOutcome {
                            cancel: true,
                            result: Some(reply),
                        };
                    }
                    if reply.as_object().is_some_and(|map| !map.is_empty()) {
                        outcome.result = Some(reply);
                    }
                }
            }
        }
        outcome
    }

    /// A notification (`session_start`, `session_shutdown`, `agent_start`, `turn_end`, …): every
    /// subscriber gets it, in order; answers are ignored, failures reported. `payload` is only
    /// built when someone subscribes.
    pub async fn notify(&self, event: &str, payload: impl FnOnce() -> Value) {
        let subscribers = self.subscribers(event);
        if subscribers.is_empty() {
            return;
        }
        let payload = payload();
        for &index in subscribers {
            if let Some(Err(error)) = self.call(index, event, &payload).await {
                self.report(&error);
            }
        }
    }
}
