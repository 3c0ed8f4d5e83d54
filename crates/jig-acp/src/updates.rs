//! What an editor sees of a run: `session/update` notifications for the reply's text and
//! thoughts as they stream, and each tool call with its kind, title, locations and content
//! (an edit's diff, a command's output).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use jig_agent::{AgentEvent, AgentObserver};
use jig_llm::StreamEvent;
use jig_protocol::{ContentBlock, ToolResult};
use serde_json::{Value, json};

use crate::rpc::Peer;

/// Sends one session's updates.
pub(crate) struct Updates {
    peer: Arc<Peer>,
    session_id: String,
    cwd: PathBuf,
    /// The arguments of the calls under way (an edit's diff is shown from them).
    calls: Mutex<HashMap<String, Value>>,
}

impl Updates {
    pub(crate) fn new(peer: Arc<Peer>, session_id: String, cwd: PathBuf) -> Self {
        Self {
            peer,
            session_id,
            cwd,
            calls: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn send(&self, update: Value) {
        let mut params = json!({"sessionId": self.session_id});
        params["update"] = update;
        self.peer.notify("session/update", params);
    }
}

impl AgentObserver for Updates {
    fn on_event(&self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageUpdate {
                delta: StreamEvent::TextDelta { text },
            } => self.send(chunk("agent_message_chunk", text)),
            AgentEvent::MessageUpdate {
                delta: StreamEvent::ThinkingDelta { text },
            } => self.send(chunk("agent_thought_chunk", text)),
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                self.calls
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(tool_call_id.clone(), args.clone());
                let mut update = tool_call(tool_call_id, tool_name, args, &self.cwd);
                update["sessionUpdate"] = json!("tool_call");
                update["status"] = json!("in_progress");
                self.send(update);
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial_result,
                ..
            } => self.send(json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": tool_call_id,
                "content": [text_content(&fenced(&partial_result.text_content()))],
            })),
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => {
                let args = self
                    .calls
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(tool_call_id)
                    .unwrap_or(Value::Null);
                let mut content = if *is_error {
                    Vec::new()
                } else {
                    diffs(tool_name, &args, &self.cwd)
                };
                content.extend(result_content(tool_name, result));
                self.send(json!({
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tool_call_id,
                    "status": if *is_error { "failed" } else { "completed" },
                    "content": content,
                    "rawOutput": result.details,
                }));
            }
            _ => {}
        }
    }
}

/// A chunk of a streamed message.
pub(crate) fn chunk(kind: &str, text: &str) -> Value {
    json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
}

fn text_content(text: &str) -> Value {
    json!({"type": "content", "content": {"type": "text", "text": text}})
}

/// A command's output as the editor shows it: in a code block.
fn fenced(text: &str) -> String {
    let fence = if text.contains("```") { "````" } else { "```" };
    format!("{fence}\n{}\n{fence}", text.trim_end_matches('\n'))
}

/// A tool call as ACP describes it: id, title, kind, locations, the input (`sessionUpdate` and
/// `status` are added by the caller).
pub(crate) fn tool_call(id: &str, tool: &str, args: &Value, cwd: &Path) -> Value {
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    let path = text("path");
    let absolute = path.map(|path| cwd.join(path));
    let title = match (tool, path) {
        ("read", Some(path)) => format!("Read {path}"),
        ("write", Some(path)) => format!("Write {path}"),
        ("edit", Some(path)) => format!("Edit {path}"),
        ("ls", path) => format!("List {}", path.unwrap_or(".")),
        ("bash", _) => format!("Run `{}`", text("command").unwrap_or_default()),
        ("grep", _) => format!("Search for `{}`", text("pattern").unwrap_or_default()),
        ("find", _) => format!("Find `{}`", text("pattern").unwrap_or_default()),
        (tool, _) => tool.to_owned(),
    };
    let kind = match tool {
        "read" => "read",
        "write" | "edit" => "edit",
        "bash" => "execute",
        "grep" | "find" | "ls" => "search",
        _ => "other",
    };
    let mut location = json!({});
    if let Some(absolute) = &absolute {
        location["path"] = json!(absolute);
        if tool == "read"
            && let Some(line) = args.get("offset").and_then(Value::as_u64)
        {
            location["line"] = json!(line);
        }
    }
    let locations: Vec<Value> = absolute.iter().map(|_| location.clone()).collect();
    json!({
        "toolCallId": id,
        "title": title,
        "kind": kind,
        "locations": locations,
        "rawInput": args,
    })
}

/// The text a finished call shows: a command's output in a code block, any other result's
/// text as it is.
fn result_content(tool: &str, result: &ToolResult) -> Vec<Value> {
    let text = ContentBlock::join_text(&result.content);
    match tool {
        "bash" => vec![text_content(&fenced(&text))],
        _ => vec![text_content(&text)],
    }
}

/// The diffs an edit or a write makes, from its arguments (`None` for other tools): the edit's
/// replaced text and its replacement, per edit; for a write, the whole new content (`oldText`
/// null: what it replaced is not kept).
fn diffs(tool: &str, args: &Value, cwd: &Path) -> Vec<Value> {
    let Some(path) = args.get("path").and_then(Value::as_str) else {
        return Vec::new();
    };
    let path = cwd.join(path);
    match tool {
        "write" => args
            .get("content")
            .and_then(Value::as_str)
            .map(|content| json!({"type": "diff", "path": path, "oldText": null, "newText": content}))
            .into_iter()
            .collect(),
        "edit" => {
            let single = [args.clone()];
            let edits = match args.get("edits").and_then(Value::as_array) {
                Some(edits) => edits.as_slice(),
                None => &single,
            };
            edits
                .iter()
                .filter_map(|edit| {
                    let old = edit.get("oldText").and_then(Value::as_str)?;
                    let new = edit.get("newText").and_then(Value::as_str)?;
                    Some(json!({"type": "diff", "path": path, "oldText": old, "newText": new}))
                })
                .collect()
        }
        _ => Vec::new(),
    }
}
