use std::collections::HashSet;

use jig_protocol::{ContentBlock, Message, StopReason, ToolResultMessage, now_millis};
use serde_json::Value;

/// The text of the result given to a tool call that has none when a request is built.
pub const NO_RESULT_TEXT: &str = "No result provided";

/// Repairs a conversation before it is sent to a model:
///
/// - assistant replies that ended in `error` or `aborted` are dropped (they may hold partial
///   tool calls no API would accept), with any results answering their calls;
/// - a tool call without a result gets an error result `No result provided`, placed after the
///   results that follow its reply;
/// - a tool result whose call is not in the conversation is dropped.
///
/// Every API requires each tool call to be answered before the next user or assistant turn, so a
/// session cut by a crash or an abort can still be resumed.
pub fn prepare_messages(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    // Calls of the latest kept assistant reply still waiting for a result, in call order.
    let mut pending: Vec<(String, String)> = Vec::new();
    let mut known_calls: HashSet<String> = HashSet::new();
    for message in messages {
        match message {
            Message::Assistant(reply) => {
                flush_pending(&mut out, &mut pending);
                if matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                for call in reply.tool_calls() {
                    known_calls.insert(call.id.clone());
                    pending.push((call.id.clone(), call.name.clone()));
                }
                out.push(message.clone());
            }
            Message::ToolResult(result) => {
                if !known_calls.contains(&result.tool_call_id) {
                    continue;
                }
                let Some(position) = pending
                    .iter()
                    .position(|(id, _)| *id == result.tool_call_id)
                else {
                    // A second result for the same call, or one arriving after a later turn.
                    continue;
                };
                pending.remove(position);
                out.push(message.clone());
            }
            Message::User(_) => {
                flush_pending(&mut out, &mut pending);
                out.push(message.clone());
            }
        }
    }
    flush_pending(&mut out, &mut pending);
    out
}

fn flush_pending(out: &mut Vec<Message>, pending: &mut Vec<(String, String)>) {
    for (id, name) in pending.drain(..) {
        out.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: id,
            tool_name: name,
            content: vec![ContentBlock::text(NO_RESULT_TEXT)],
            details: Value::Null,
            is_error: true,
            timestamp: now_millis(),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jig_protocol::{AssistantBlock, AssistantMessage, ToolCall, ToolResult};

    fn reply(stop: StopReason, calls: &[&str]) -> Message {
        let mut message = AssistantMessage::empty("p", "m");
        message.stop_reason = stop;
        for id in calls {
            message.content.push(AssistantBlock::ToolCall(ToolCall {
                id: (*id).to_owned(),
                name: "bash".into(),
                arguments: serde_json::json!({}),
                raw_arguments: None,
            }));
        }
        Message::Assistant(message)
    }

    fn result(id: &str) -> Message {
        let call = ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: Value::Null,
            raw_arguments: None,
        };
        Message::ToolResult(ToolResultMessage::new(&call, ToolResult::text("ok")))
    }

    fn shape(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .map(|m| match m {
                Message::ToolResult(r) => format!("result:{}:{}", r.tool_call_id, r.text()),
                other => other.role().to_owned(),
            })
            .collect()
    }

    #[test]
    fn missing_results_are_synthesised_and_failed_replies_dropped() {
        let messages = vec![
            Message::user_text("go"),
            reply(StopReason::ToolUse, &["a", "b"]),
            result("b"),
            reply(StopReason::Aborted, &["c"]),
            Message::user_text("again"),
            reply(StopReason::ToolUse, &["d"]),
            result("zzz"),
        ];
        assert_eq!(
            shape(&prepare_messages(&messages)),
            vec![
                "user",
                "assistant",
                "result:b:ok",
                "result:a:No result provided",
                "user",
                "assistant",
                "result:d:No result provided",
            ]
        );
    }
}
