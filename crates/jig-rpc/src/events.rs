//! The agent's events as Pi's RPC clients read them: the same event names, with Pi's
//! `assistantMessageEvent` deltas (`text_start`/`text_delta`/`text_end`, `thinking_*`,
//! `toolcall_*`, `done`/`error`) in `message_update`, `auto_retry_start`/`auto_retry_end` for
//! retries, `compaction_start`/`compaction_end` for compactions, and `agent_end` with the
//! messages the run added.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use jig_agent::compaction::CompactionReason;
use jig_agent::{AgentEvent, AgentObserver};
use jig_llm::StreamEvent;
use jig_protocol::{Message, StopReason};
use serde_json::{Value, json};

use crate::wire::Out;

/// The kind of the content block being streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Thinking,
    ToolCall,
}

impl BlockKind {
    fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Thinking => "thinking",
            Self::ToolCall => "toolcall",
        }
    }
}

/// The block being streamed: its index among the reply's content, and what it holds so far.
#[derive(Debug)]
struct Block {
    kind: BlockKind,
    index: usize,
    /// Text or thinking so far; for a tool call, its arguments' JSON text so far.
    content: String,
    /// A tool call's provider index, id and name.
    call: Option<(usize, String, String)>,
}

/// What the translator remembers between events.
#[derive(Debug, Default)]
struct State {
    /// The reply's blocks so far (the last is open).
    blocks: Vec<Block>,
    /// Messages finished since `agent_start`.
    run_messages: Vec<Message>,
    /// The retry under way (its attempt), until a reply streams or the run ends.
    retrying: Option<u32>,
    /// A compaction the client asked for is running: its start was already sent.
    manual_compaction: bool,
    /// The last compaction's `result`, until the `compact` response takes it.
    last_compaction: Option<Value>,
    /// `agent_end` was sent for the run under way: its agent is about to come back.
    ended: bool,
}

/// Writes the agent's events to the app in Pi's shapes.
pub(crate) struct Events {
    out: Arc<Out>,
    state: Mutex<State>,
}

impl Events {
    pub(crate) fn new(out: Arc<Out>) -> Arc<Self> {
        Arc::new(Self {
            out,
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A compaction the client asked for starts (`compact`): its `compaction_start` is sent
    /// now, its `compaction_end` when it is done ([`Events::compaction_failed`] if it fails).
    pub(crate) fn compaction_started(&self) {
        self.state().manual_compaction = true;
        self.out
            .send(&json!({"type": "compaction_start", "reason": "manual"}));
    }

    /// The compaction the client asked for failed or was aborted.
    pub(crate) fn compaction_failed(&self, error: &str, aborted: bool) {
        self.state().manual_compaction = false;
        let mut record = json!({
            "type": "compaction_end",
            "reason": "manual",
            "result": null,
            "aborted": aborted,
            "willRetry": false,
        });
        if !aborted {
            record["errorMessage"] = Value::String(error.to_owned());
        }
        self.out.send(&record);
    }

    /// Whether the run under way has sent `agent_end` (an app that saw it may send a command
    /// that needs the agent before the run's task has handed it back).
    pub(crate) fn run_ended(&self) -> bool {
        self.state().ended
    }

    /// Whether a failed request waits to be sent again.
    pub(crate) fn retrying(&self) -> bool {
        self.state().retrying.is_some()
    }

    /// The `result` of the last compaction (the `compact` response's data).
    pub(crate) fn last_compaction(&self) -> Option<Value> {
        self.state().last_compaction.take()
    }

    fn delta(&self, event: &StreamEvent) {
        let mut state = self.state();
        let mut records = Vec::new();
        match event {
            StreamEvent::TextDelta { text } => {
                let index = open(&mut state.blocks, BlockKind::Text, None, &mut records);
                if let Some(block) = state.blocks.last_mut() {
                    block.content.push_str(text);
                }
                records.push(json!({"type": "text_delta", "contentIndex": index, "delta": text}));
            }
            StreamEvent::ThinkingDelta { text } => {
                let index = open(&mut state.blocks, BlockKind::Thinking, None, &mut records);
                if let Some(block) = state.blocks.last_mut() {
                    block.content.push_str(text);
                }
                records
                    .push(json!({"type": "thinking_delta", "contentIndex": index, "delta": text}));
            }
            StreamEvent::ToolCallStart { index, id, name } => {
                open(
                    &mut state.blocks,
                    BlockKind::ToolCall,
                    Some((*index, id.clone(), name.clone())),
                    &mut records,
                );
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                if let Some(block) = state.blocks.iter_mut().find(|block| {
                    block
                        .call
                        .as_ref()
                        .is_some_and(|(call, _, _)| call == index)
                }) {
                    block.content.push_str(arguments);
                    records.push(json!({
                        "type": "toolcall_delta",
                        "contentIndex": block.index,
                        "delta": arguments,
                    }));
                }
            }
            StreamEvent::ThinkingSignature { .. }
            | StreamEvent::Usage { .. }
            | StreamEvent::Stop { .. } => {}
        }
        drop(state);
        for record in records {
            self.update(&record);
        }
    }

    fn update(&self, assistant_event: &Value) {
        self.out.send(&json!({
            "type": "message_update",
            "assistantMessageEvent": assistant_event,
        }));
    }
}

/// Makes the last block one of `kind` (a tool call: always a new one), ending the open block
/// of another kind; returns its content index.
fn open(
    blocks: &mut Vec<Block>,
    kind: BlockKind,
    call: Option<(usize, String, String)>,
    records: &mut Vec<Value>,
) -> usize {
    if call.is_none()
        && let Some(last) = blocks.last()
        && last.kind == kind
    {
        return last.index;
    }
    if let Some(last) = blocks.last() {
        records.push(end_record(last));
    }
    let index = blocks.len();
    let mut start = json!({"type": format!("{}_start", kind.name()), "contentIndex": index});
    if let Some((_, id, name)) = &call {
        start["toolCall"] = json!({"type": "toolCall", "id": id, "name": name});
    }
    records.push(start);
    blocks.push(Block {
        kind,
        index,
        content: String::new(),
        call,
    });
    index
}

fn end_record(block: &Block) -> Value {
    match block.kind {
        BlockKind::ToolCall => {
            let (_, id, name) = block.call.clone().unwrap_or_default();
            let arguments: Value = serde_json::from_str(&block.content).unwrap_or(json!({}));
            json!({
                "type": "toolcall_end",
                "contentIndex": block.index,
                "toolCall": {"type": "toolCall", "id": id, "name": name, "arguments": arguments},
            })
        }
        kind => json!({
            "type": format!("{}_end", kind.name()),
            "contentIndex": block.index,
            "content": block.content,
        }),
    }
}

fn reason_name(reason: CompactionReason) -> &'static str {
    match reason {
        CompactionReason::Threshold => "threshold",
        CompactionReason::Overflow => "overflow",
        CompactionReason::Manual => "manual",
    }
}

impl AgentObserver for Events {
    #[expect(
        clippy::too_many_lines,
        reason = "one arm per event kind, each a record of Pi's shape"
    )]
    fn on_event(&self, event: &AgentEvent) {
        match event {
            AgentEvent::AgentStart => {
                let mut state = self.state();
                state.run_messages.clear();
                state.retrying = None;
                state.ended = false;
                drop(state);
                self.out.send(&json!({"type": "agent_start"}));
            }
            AgentEvent::MessageStart { message } => {
                let retried = match message {
                    Message::Assistant(_) => {
                        let mut state = self.state();
                        state.blocks.clear();
                        state.retrying.take()
                    }
                    _ => None,
                };
                // A reply streams again after a retry: the retry worked.
                if let Some(attempt) = retried {
                    self.out.send(
                        &json!({"type": "auto_retry_end", "success": true, "attempt": attempt}),
                    );
                }
                self.out
                    .send(&json!({"type": "message_start", "message": message}));
                if matches!(message, Message::Assistant(_)) {
                    self.update(&json!({"type": "start"}));
                }
            }
            AgentEvent::MessageUpdate { delta } => self.delta(delta),
            AgentEvent::MessageEnd { message } => {
                if let Message::Assistant(reply) = message {
                    let last = self.state().blocks.last().map(end_record);
                    if let Some(record) = last {
                        self.update(&record);
                    }
                    let finished = match reply.stop_reason {
                        StopReason::Error | StopReason::Aborted => json!({
                            "type": "error",
                            "reason": reply.stop_reason,
                            "error": reply.error_message,
                        }),
                        reason => json!({"type": "done", "reason": reason}),
                    };
                    self.update(&finished);
                }
                self.state().run_messages.push(message.clone());
                self.out
                    .send(&json!({"type": "message_end", "message": message}));
            }
            AgentEvent::Retry(notice) => {
                self.state().retrying = Some(notice.attempt);
                self.out.send(&json!({
                    "type": "auto_retry_start",
                    "attempt": notice.attempt,
                    "maxAttempts": notice.max_retries,
                    "delayMs": notice.delay_ms,
                    "errorMessage": notice.reason,
                }));
            }
            AgentEvent::Compaction {
                reason,
                summary,
                tokens_before,
                summarised_messages,
                kept_messages,
                usage,
            } => {
                let result = compaction_result(
                    summary,
                    *tokens_before,
                    *summarised_messages,
                    *kept_messages,
                    usage,
                );
                let manual = {
                    let mut state = self.state();
                    state.last_compaction = Some(result.clone());
                    std::mem::take(&mut state.manual_compaction)
                };
                if !manual {
                    self.out
                        .send(&json!({"type": "compaction_start", "reason": reason_name(*reason)}));
                }
                self.out.send(&json!({
                    "type": "compaction_end",
                    "reason": reason_name(*reason),
                    "result": result,
                    "aborted": false,
                    "willRetry": *reason == CompactionReason::Overflow,
                }));
            }
            AgentEvent::AgentEnd { .. } => {
                let mut state = self.state();
                let messages = std::mem::take(&mut state.run_messages);
                let retrying = state.retrying.take();
                state.ended = true;
                drop(state);
                if let Some(attempt) = retrying {
                    let final_error = messages
                        .iter()
                        .rev()
                        .find_map(Message::as_assistant)
                        .and_then(|reply| reply.error_message.clone());
                    self.out.send(&json!({
                        "type": "auto_retry_end",
                        "success": false,
                        "attempt": attempt,
                        "finalError": final_error,
                    }));
                }
                let mut record = serde_json::to_value(event).unwrap_or_else(|_| json!({}));
                record["messages"] = serde_json::to_value(&messages).unwrap_or_default();
                self.out.send(&record);
            }
            // Same names and fields as Pi's (jig adds `turnIndex`).
            other => {
                if let Ok(record) = serde_json::to_value(other) {
                    self.out.send(&record);
                }
            }
        }
    }
}

/// A compaction's `result`, as `compaction_end` and the `compact` response carry it.
pub(crate) fn compaction_result(
    summary: &str,
    tokens_before: Option<u64>,
    summarised_messages: usize,
    kept_messages: usize,
    usage: &jig_protocol::Usage,
) -> Value {
    json!({
        "summary": summary,
        "firstKeptEntryId": null,
        "tokensBefore": tokens_before,
        "details": {
            "summarisedMessages": summarised_messages,
            "keptMessages": kept_messages,
            "usage": usage,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jig_protocol::{AssistantBlock, AssistantMessage};

    /// Collects what was written.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn records(sink: &Sink) -> Vec<Value> {
        String::from_utf8(sink.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[test]
    fn a_streamed_reply_becomes_pis_message_updates() {
        let sink = Sink::default();
        let events = Events::new(Arc::new(Out::new(Box::new(sink.clone()))));
        let mut reply = AssistantMessage::empty("openai", "m");
        events.on_event(&AgentEvent::AgentStart);
        events.on_event(&AgentEvent::MessageStart {
            message: Message::Assistant(reply.clone()),
        });
        for delta in [
            StreamEvent::ThinkingDelta { text: "hm".into() },
            StreamEvent::TextDelta { text: "Hel".into() },
            StreamEvent::TextDelta { text: "lo".into() },
            StreamEvent::ToolCallStart {
                index: 0,
                id: "c1".into(),
                name: "read".into(),
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"path\":".into(),
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "\"a\"}".into(),
            },
        ] {
            events.on_event(&AgentEvent::MessageUpdate { delta });
        }
        reply.content = vec![AssistantBlock::Text {
            text: "Hello".into(),
        }];
        reply.stop_reason = StopReason::ToolUse;
        events.on_event(&AgentEvent::MessageEnd {
            message: Message::Assistant(reply),
        });
        let updates: Vec<Value> = records(&sink)
            .into_iter()
            .filter(|record| record["type"] == "message_update")
            .map(|record| record["assistantMessageEvent"].clone())
            .collect();
        insta::assert_json_snapshot!(updates);
    }
}
