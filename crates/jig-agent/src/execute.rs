//! Running the tool calls of one reply.

use std::sync::Arc;

use jig_protocol::{AssistantMessage, StopReason, ToolCall, ToolResult, ToolResultMessage};
use jig_tool::{BeforeToolCall, CallInfo, DynTool, ToolContext, ToolError, blocked_text};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::{ABORTED_TEXT, AgentConfig};
use crate::event::{AgentEvent, AgentObserver};

/// The results of one reply's calls, in call order.
pub(crate) struct Batch {
    pub(crate) results: Vec<ToolResultMessage>,
    /// Set when a tool failed beyond what the model can fix; the run ends after the batch.
    pub(crate) fatal: Option<String>,
}

/// The result text of a call that was not run because its reply hit the output-token limit.
pub fn truncated_call_text(name: &str) -> String {
    format!(
        "Tool call \"{name}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )
}

/// The result text of a call to a tool that does not exist.
pub fn unknown_tool_text(name: &str) -> String {
    format!("Tool {name} not found")
}

/// The result text of a call whose arguments were not JSON.
fn invalid_json_text(name: &str, raw: &str) -> String {
    format!(
        "Tool call \"{name}\" was not executed: its arguments are not valid JSON.\n\nReceived arguments:\n{raw}\n\nRe-issue the tool call with a JSON object as arguments."
    )
}

/// A call ready to run, or already answered.
enum Prepared {
    Run {
        tool: Arc<dyn DynTool>,
        arguments: Value,
        /// The call's context, as the hooks left it.
        ctx: Box<ToolContext>,
    },
    Done(ToolResult),
}

struct Finished {
    result: ToolResult,
    fatal: Option<String>,
}

pub(crate) async fn execute_calls(
    config: &AgentConfig,
    reply: &AssistantMessage,
    cancel: &CancellationToken,
    observer: &Arc<dyn AgentObserver>,
) -> Batch {
    let calls: Vec<&ToolCall> = reply.tool_calls().collect();
    let mut finished: Vec<Finished> = Vec::with_capacity(calls.len());
    if reply.stop_reason == StopReason::Length {
        for call in &calls {
            start_event(call, observer);
            let result = ToolResult::error(truncated_call_text(&call.name));
            end_event(call, &result, observer);
            finished.push(Finished {
                result,
                fatal: None,
            });
        }
    } else {
        let sequential = calls.iter().any(|call| {
            config
                .tools
                .get(&call.name)
                .is_some_and(|tool| tool.sequential())
        });
        if sequential {
            for call in &calls {
                let prepared = prepare(config, call, cancel, observer).await;
                finished.push(run(config, call, prepared, cancel, observer).await);
            }
        } else {
            let mut prepared = Vec::with_capacity(calls.len());
            for call in &calls {
                prepared.push(prepare(config, call, cancel, observer).await);
            }
            let running = calls
                .iter()
                .zip(prepared)
                .map(|(call, prepared)| run(config, call, prepared, cancel, observer));
            finished = futures::future::join_all(running).await;
        }
    }
    let mut fatal = None;
    let results = calls
        .iter()
        .zip(finished)
        .map(|(call, done)| {
            if fatal.is_none() {
                fatal = done.fatal;
            }
            ToolResultMessage::new(call, done.result)
        })
        .collect();
    Batch { results, fatal }
}

fn start_event(call: &ToolCall, observer: &Arc<dyn AgentObserver>) {
    observer.on_event(&AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
    });
}

fn end_event(call: &ToolCall, result: &ToolResult, observer: &Arc<dyn AgentObserver>) {
    observer.on_event(&AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: result.clone(),
        is_error: result.is_error,
    });
}

/// Looks the tool up and asks the hook; answers at once what cannot run.
async fn prepare(
    config: &AgentConfig,
    call: &ToolCall,
    cancel: &CancellationToken,
    observer: &Arc<dyn AgentObserver>,
) -> Prepared {
    start_event(call, observer);
    let immediate = |result: ToolResult| {
        end_event(call, &result, observer);
        Prepared::Done(result)
    };
    if cancel.is_cancelled() {
        return immediate(ToolResult::error(ABORTED_TEXT));
    }
    let Some(tool) = config.tools.get(&call.name).cloned() else {
        return immediate(ToolResult::error(unknown_tool_text(&call.name)));
    };
    if let Some(raw) = &call.raw_arguments {
        return immediate(ToolResult::error(invalid_json_text(&call.name, raw)));
    }
    let mut ctx = config.tool_context.clone();
    ctx.call = Some(CallInfo::new(&call.id, &call.name));
    let arguments = match config.hooks.before_tool_call(call, &mut ctx).await {
        BeforeToolCall::Continue => call.arguments.clone(),
        BeforeToolCall::ChangeArguments(arguments) => arguments,
        BeforeToolCall::Block { reason } => {
            return immediate(ToolResult::error(blocked_text(reason)));
        }
    };
    Prepared::Run {
        tool,
        arguments,
        ctx: Box::new(ctx),
    }
}

async fn run(
    config: &AgentConfig,
    call: &ToolCall,
    prepared: Prepared,
    cancel: &CancellationToken,
    observer: &Arc<dyn AgentObserver>,
) -> Finished {
    let (tool, arguments, mut ctx) = match prepared {
        Prepared::Done(result) => {
            return Finished {
                result,
                fatal: None,
            };
        }
        Prepared::Run {
            tool,
            arguments,
            ctx,
        } => (tool, arguments, ctx),
    };
    ctx.cancel = cancel.child_token();
    let sink_observer = Arc::clone(observer);
    let (id, name) = (call.id.clone(), call.name.clone());
    ctx.updates = Some(Arc::new(move |partial_result: ToolResult| {
        sink_observer.on_event(&AgentEvent::ToolExecutionUpdate {
            tool_call_id: id.clone(),
            tool_name: name.clone(),
            partial_result,
        });
    }));
    let (result, fatal) = match tool.execute(&ctx, arguments.clone()).await {
        Ok(result) => (result, None),
        Err(ToolError::Cancelled) => (ToolResult::error(ABORTED_TEXT), None),
        Err(ToolError::Fatal(message)) => {
            let text = format!("Tool {} failed: {message}", call.name);
            (ToolResult::error(text.clone()), Some(text))
        }
        Err(error) => (error.into_result(), None),
    };
    let result = config.hooks.after_tool_call(call, &arguments, result).await;
    end_event(call, &result, observer);
    Finished { result, fatal }
}
