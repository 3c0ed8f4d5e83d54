use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the protocol this host speaks (`initialize.protocolVersion`).
pub const PROTOCOL_VERSION: u32 = 1;

/// Event names, as they appear in registrations and on the wire.
pub mod events {
    /// Startup: may this project's resources load? First decisive answer wins.
    pub const PROJECT_TRUST: &str = "project_trust";
    /// Before a tool runs: first block wins; errors and timeouts block.
    pub const TOOL_CALL: &str = "tool_call";
    /// After a tool ran: chained patches of the result.
    pub const TOOL_RESULT: &str = "tool_result";
    /// User input: transform chain, first `handled` wins.
    pub const INPUT: &str = "input";
    /// Before a run: custom messages accumulate, the system prompt is chained.
    pub const BEFORE_AGENT_START: &str = "before_agent_start";
    /// Before every model call: the message list is chained.
    pub const CONTEXT: &str = "context";
    /// A finalized message: replacements chained, the role must not change.
    pub const MESSAGE_END: &str = "message_end";
    /// The session started (notification).
    pub const SESSION_START: &str = "session_start";
    /// The session is ending (notification).
    pub const SESSION_SHUTDOWN: &str = "session_shutdown";
    /// Before switching sessions: the first `cancel` wins, else the last result.
    pub const SESSION_BEFORE_SWITCH: &str = "session_before_switch";
    /// Before forking: the first `cancel` wins, else the last result.
    pub const SESSION_BEFORE_FORK: &str = "session_before_fork";
    /// Before compaction: the first `cancel` wins, else the last result.
    pub const SESSION_BEFORE_COMPACT: &str = "session_before_compact";
    /// Before tree navigation: the first `cancel` wins, else the last result.
    pub const SESSION_BEFORE_TREE: &str = "session_before_tree";
    /// The agent loop's own events, delivered as notifications in the order they happen,
    /// without holding the run: a run begins / ends.
    pub const AGENT_START: &str = "agent_start";
    /// See [`AGENT_START`].
    pub const AGENT_END: &str = "agent_end";
    /// A model request is about to be made / a turn (reply and its tool results) is over.
    pub const TURN_START: &str = "turn_start";
    /// See [`TURN_START`].
    pub const TURN_END: &str = "turn_end";
    /// A message begins / one streamed piece of the reply.
    pub const MESSAGE_START: &str = "message_start";
    /// See [`MESSAGE_START`].
    pub const MESSAGE_UPDATE: &str = "message_update";
    /// A tool call begins / reports progress / has finished.
    pub const TOOL_EXECUTION_START: &str = "tool_execution_start";
    /// See [`TOOL_EXECUTION_START`].
    pub const TOOL_EXECUTION_UPDATE: &str = "tool_execution_update";
    /// See [`TOOL_EXECUTION_START`].
    pub const TOOL_EXECUTION_END: &str = "tool_execution_end";

    /// The agent loop's events, delivered as ordered notifications.
    pub const LIFECYCLE: &[&str] = &[
        AGENT_START,
        AGENT_END,
        TURN_START,
        TURN_END,
        MESSAGE_START,
        MESSAGE_UPDATE,
        TOOL_EXECUTION_START,
        TOOL_EXECUTION_UPDATE,
        TOOL_EXECUTION_END,
    ];

    /// Every event this host sends, in the order of the documentation.
    pub const ALL: &[&str] = &[
        PROJECT_TRUST,
        TOOL_CALL,
        TOOL_RESULT,
        INPUT,
        BEFORE_AGENT_START,
        CONTEXT,
        MESSAGE_END,
        SESSION_START,
        SESSION_SHUTDOWN,
        SESSION_BEFORE_SWITCH,
        SESSION_BEFORE_FORK,
        SESSION_BEFORE_COMPACT,
        SESSION_BEFORE_TREE,
        AGENT_START,
        AGENT_END,
        TURN_START,
        TURN_END,
        MESSAGE_START,
        MESSAGE_UPDATE,
        TOOL_EXECUTION_START,
        TOOL_EXECUTION_UPDATE,
        TOOL_EXECUTION_END,
    ];

    /// Whether `name` is an event this host sends.
    pub fn is_known(name: &str) -> bool {
        ALL.contains(&name)
    }

    /// `unknown event "<name>" (known events: project_trust, tool_call, …)`.
    pub fn unknown(name: &str) -> String {
        format!(
            "unknown event \"{name}\" (known events: {})",
            ALL.join(", ")
        )
    }
}

/// What an extension registered while loading (the `initialize` reply, camelCase on the wire).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Registrations {
    /// The protocol version the extension speaks.
    pub protocol_version: Option<u32>,
    /// A display name.
    pub name: Option<String>,
    /// Tools the extension offers.
    pub tools: Vec<ToolRegistration>,
    /// Slash commands.
    pub commands: Vec<CommandRegistration>,
    /// CLI flags (`--name`).
    pub flags: Vec<FlagRegistration>,
    /// The events the extension handles; only these are sent to it.
    pub events: Vec<String>,
    /// Provider registrations (declarative config), applied when the runtime is bound.
    pub providers: Vec<Value>,
}

/// A tool an extension offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRegistration {
    /// The wire name.
    pub name: String,
    /// A short title (defaults to the name).
    #[serde(default)]
    pub label: Option<String>,
    /// The description a model reads.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of the arguments (an object schema).
    #[serde(default = "empty_object_schema")]
    pub parameters: Value,
    /// `"sequential"` when calls must not run concurrently with others.
    #[serde(default)]
    pub execution_mode: Option<String>,
    /// `"readOnly"`, `"mutates"` or `"process"` (the default: may do anything).
    #[serde(default)]
    pub effects: Option<String>,
    /// The JSON Schema of a result's `details`, published by `jig tools --json`; any JSON when
    /// absent.
    #[serde(default)]
    pub details_schema: Option<Value>,
    /// Replaces the built-in tool of the same name (Pi's rule for extension tools; jig says
    /// so at startup). Without it, such a name is a load error.
    #[serde(default)]
    pub replaces_builtin: bool,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// A slash command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandRegistration {
    /// The name, without `/`.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: Option<String>,
}

/// A CLI flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlagRegistration {
    /// The name, without `--`.
    pub name: String,
    /// `"boolean"` or `"string"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The default value (of the flag's type), if any.
    #[serde(default)]
    pub default: Option<Value>,
    /// What it does.
    #[serde(default)]
    pub description: Option<String>,
}

/// Why an extension's registrations cannot be accepted (the reason of its load error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationError {
    /// The extension speaks another protocol version.
    #[error("unsupported protocol version {version} (this host speaks {PROTOCOL_VERSION})")]
    ProtocolVersion {
        /// The version it asked for.
        version: u32,
    },
    /// A flag's type is neither `boolean` nor `string`.
    #[error("Invalid type for flag \"{flag}\": expected boolean or string, got {kind}")]
    FlagType {
        /// The flag's name.
        flag: String,
        /// The type it gave.
        kind: String,
    },
    /// A flag's default is not of the flag's type.
    #[error("Invalid default for flag \"{flag}\": expected {expected}, got {got}")]
    FlagDefault {
        /// The flag's name.
        flag: String,
        /// The flag's type.
        expected: &'static str,
        /// The JSON type of the default.
        got: &'static str,
    },
    /// A tool's name has characters other than letters, digits, `_` and `-`, or none.
    #[error("Invalid tool name \"{name}\": use letters, digits, '_' and '-'")]
    ToolName {
        /// The name.
        name: String,
    },
}

impl Registrations {
    /// Checks what cannot be accepted: flag types and defaults, tool names. The error is the
    /// reason of a load error.
    pub fn check(&self) -> Result<(), RegistrationError> {
        if let Some(version) = self.protocol_version
            && version != PROTOCOL_VERSION
        {
            return Err(RegistrationError::ProtocolVersion { version });
        }
        for flag in &self.flags {
            let expected = match flag.kind.as_str() {
                "boolean" => "boolean",
                "string" => "string",
                other => {
                    return Err(RegistrationError::FlagType {
                        flag: flag.name.clone(),
                        kind: other.to_owned(),
                    });
                }
            };
            if let Some(default) = &flag.default {
                let got = json_type(default);
                if got != expected {
                    return Err(RegistrationError::FlagDefault {
                        flag: flag.name.clone(),
                        expected,
                        got,
                    });
                }
            }
        }
        for tool in &self.tools {
            if tool.name.is_empty()
                || !tool
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(RegistrationError::ToolName {
                    name: tool.name.clone(),
                });
            }
        }
        Ok(())
    }

    /// The events subscribed to that this host does not send (a typo, or an event of a newer
    /// host), in registration order.
    pub fn unknown_events(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(String::as_str)
            .filter(|name| !events::is_known(name))
            .collect()
    }

    /// True when the extension handles `event`.
    pub fn handles(&self, event: &str) -> bool {
        self.events.iter().any(|name| name == event)
    }
}

/// The JSON type name of a value, as JavaScript's `typeof` would say it.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) | Value::Object(_) => "object",
    }
}
