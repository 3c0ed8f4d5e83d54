use std::sync::Arc;

use futures::StreamExt;
use jig_llm::{
    LlmError, MessageBuilder, ModelRequest, Provider, RetryHook, RetryNotice, RetryPolicy,
    StreamEvent, ThinkingLevel, ToolDefinition,
};
use jig_protocol::{AssistantMessage, Message, StopReason, ToolResultMessage};
use jig_tool::{ToolContext, ToolRegistry};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::event::{AgentEvent, AgentObserver, usage_by_model};
use crate::execute::execute_calls;
use crate::hooks::{NoHooks, ToolHooks};

/// The text of an aborted reply's `errorMessage` and of results of calls cut by an abort.
pub const ABORTED_TEXT: &str = "Operation aborted";

/// Everything one agent needs: the model, the prompt, the tools and how they run.
#[derive(Clone)]
pub struct AgentConfig {
    /// The model API.
    pub provider: Arc<dyn Provider>,
    /// The model id.
    pub model: String,
    /// The system prompt sent with every request.
    pub system_prompt: String,
    /// The tools the model may call (all of them are offered).
    pub tools: ToolRegistry,
    /// The context every call runs with; each call gets a clone whose `cancel` is a child of
    /// the run's token and whose `updates` feed [`AgentEvent::ToolExecutionUpdate`].
    pub tool_context: ToolContext,
    /// Hooks around each call.
    pub hooks: Arc<dyn ToolHooks>,
    /// The most model requests one run may make; `None` means no limit.
    pub max_turns: Option<u32>,
    /// Requested reasoning effort.
    pub thinking: ThinkingLevel,
    /// Output-token limit per reply; `None` uses the provider's default.
    pub max_output_tokens: Option<u32>,
    /// How often a reply whose stream failed before any content (an overloaded or rate-limited
    /// server, a broken connection) is requested again, and how long to wait in between.
    pub stream_retry: RetryPolicy,
}

impl AgentConfig {
    /// A configuration with no hooks, no turn limit, thinking off and default output limit.
    pub fn new(
        provider: Arc<dyn Provider>,
        model: impl Into<String>,
        system_prompt: impl Into<String>,
        tools: ToolRegistry,
        tool_context: ToolContext,
    ) -> Self {
        Self {
            provider,
            model: model.into(),
            system_prompt: system_prompt.into(),
            tools,
            tool_context,
            hooks: Arc::new(NoHooks),
            max_turns: None,
            thinking: ThinkingLevel::Off,
            max_output_tokens: None,
            stream_retry: RetryPolicy::default(),
        }
    }

    /// The tool definitions sent to the model.
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|tool| ToolDefinition {
                name: tool.name().to_owned(),
                description: tool.description(),
                input_schema: tool.input_schema().clone(),
            })
            .collect()
    }
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("provider", &self.provider.name())
            .field("model", &self.model)
            .field("tools", &self.tools.names())
            .field("max_turns", &self.max_turns)
            .field("thinking", &self.thinking)
            .finish_non_exhaustive()
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "camelCase")]
pub enum RunEnd {
    /// The model stopped calling tools.
    Completed,
    /// The turn limit was reached while the model still called tools.
    #[serde(rename_all = "camelCase")]
    MaxTurns {
        /// The limit.
        max_turns: u32,
    },
    /// The run was cancelled.
    Aborted,
    /// A request failed or a tool failed beyond what the model can fix.
    Error {
        /// What went wrong.
        message: String,
    },
}

impl RunEnd {
    /// True for `Completed`.
    pub fn is_success(&self) -> bool {
        *self == Self::Completed
    }
}

/// The result of [`Agent::run`].
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// How the run ended.
    pub end: RunEnd,
    /// The messages this run added (the prompt first), in order.
    pub new_messages: Vec<Message>,
    /// Model requests made.
    pub turns: u32,
}

impl RunOutcome {
    /// The last assistant reply of the run.
    pub fn final_reply(&self) -> Option<&AssistantMessage> {
        self.new_messages
            .iter()
            .rev()
            .find_map(Message::as_assistant)
    }
}

/// A conversation with a model that can call tools.
#[derive(Debug)]
pub struct Agent {
    config: AgentConfig,
    messages: Vec<Message>,
}

impl Agent {
    /// An agent with an empty conversation.
    pub fn new(config: AgentConfig) -> Self {
        Self {
            config,
            messages: Vec::new(),
        }
    }

    /// An agent continuing `messages` (a resumed session).
    pub fn with_messages(config: AgentConfig, messages: Vec<Message>) -> Self {
        Self { config, messages }
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Sends `prompt` and runs until the model stops calling tools, the turn limit is reached,
    /// a request fails, or `cancel` fires.
    ///
    /// Every tool call of a reply gets exactly one result, appended in call order, even when
    /// the run is aborted while tools run (those calls are cancelled through their context's
    /// token and answered with their aborted result). A reply cut by the output-token limit runs
    /// none of its calls; each gets an error result saying so, and the loop goes on. Errors end
    /// the run as [`RunEnd::Error`] with an assistant message whose stop reason is `error`.
    pub async fn run(
        &mut self,
        prompt: Message,
        cancel: &CancellationToken,
        observer: &Arc<dyn AgentObserver>,
    ) -> RunOutcome {
        let start = self.messages.len();
        let started_at = std::time::Instant::now();
        observer.on_event(&AgentEvent::AgentStart);
        self.push(prompt, observer);
        let mut turns = 0u32;
        let end = loop {
            observer.on_event(&AgentEvent::TurnStart { turn_index: turns });
            let reply = self.stream_reply(cancel, observer).await;
            turns += 1;
            self.messages.push(Message::Assistant(reply.clone()));
            observer.on_event(&AgentEvent::MessageEnd {
                message: Message::Assistant(reply.clone()),
            });
            let failed = match reply.stop_reason {
                StopReason::Aborted => Some(RunEnd::Aborted),
                StopReason::Error => Some(RunEnd::Error {
                    message: reply
                        .error_message
                        .clone()
                        .unwrap_or_else(|| "the model request failed".to_owned()),
                }),
                _ => None,
            };
            if let Some(end) = failed {
                Self::end_turn(turns - 1, reply, Vec::new(), observer);
                break end;
            }
            if reply.tool_calls().next().is_none() {
                Self::end_turn(turns - 1, reply, Vec::new(), observer);
                break RunEnd::Completed;
            }
            let batch = execute_calls(&self.config, &reply, cancel, observer).await;
            for result in &batch.results {
                self.push(Message::ToolResult(result.clone()), observer);
            }
            Self::end_turn(turns - 1, reply, batch.results, observer);
            if cancel.is_cancelled() {
                break RunEnd::Aborted;
            }
            if let Some(message) = batch.fatal {
                break RunEnd::Error { message };
            }
            if let Some(max_turns) = self.config.max_turns
                && turns >= max_turns
            {
                break RunEnd::MaxTurns { max_turns };
            }
        };
        let new_messages = self.messages[start..].to_vec();
        observer.on_event(&AgentEvent::AgentEnd {
            end: end.clone(),
            final_text: new_messages
                .iter()
                .rev()
                .find_map(Message::as_assistant)
                .map(AssistantMessage::text),
            turns,
            usage: usage_by_model(&new_messages),
            duration_ms: u64::try_from(started_at.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
        RunOutcome {
            end,
            new_messages,
            turns,
        }
    }

    fn push(&mut self, message: Message, observer: &Arc<dyn AgentObserver>) {
        observer.on_event(&AgentEvent::MessageStart {
            message: message.clone(),
        });
        observer.on_event(&AgentEvent::MessageEnd {
            message: message.clone(),
        });
        self.messages.push(message);
    }

    fn end_turn(
        turn_index: u32,
        message: AssistantMessage,
        tool_results: Vec<ToolResultMessage>,
        observer: &Arc<dyn AgentObserver>,
    ) {
        observer.on_event(&AgentEvent::TurnEnd {
            turn_index,
            message,
            tool_results,
        });
    }

    /// The request for the conversation so far; retries are reported to `observer`.
    fn request(&self, observer: &Arc<dyn AgentObserver>) -> ModelRequest {
        let config = &self.config;
        let retry_observer = Arc::clone(observer);
        ModelRequest {
            model: config.model.clone(),
            system_prompt: config.system_prompt.clone(),
            messages: self.messages.clone(),
            tools: config.tool_definitions(),
            thinking: config.thinking,
            max_output_tokens: config.max_output_tokens,
            on_retry: Some(RetryHook(Arc::new(move |notice: &RetryNotice| {
                retry_observer.on_event(&AgentEvent::Retry(notice.clone()));
            }))),
        }
    }

    /// Streams one reply. Never fails: errors and aborts become the reply's stop reason.
    async fn stream_reply(
        &self,
        cancel: &CancellationToken,
        observer: &Arc<dyn AgentObserver>,
    ) -> AssistantMessage {
        let config = &self.config;
        let mut builder = MessageBuilder::new(config.provider.name(), &config.model);
        observer.on_event(&AgentEvent::MessageStart {
            message: Message::Assistant(builder.partial().clone()),
        });
        if cancel.is_cancelled() {
            return finish_failed(builder, StopReason::Aborted, ABORTED_TEXT.to_owned());
        }
        let request = self.request(observer);
        let mut retries = 0u32;
        'attempt: loop {
            let started = tokio::select! {
                () = cancel.cancelled() => Err(LlmError::Aborted),
                started = config.provider.stream(request.clone(), cancel.clone()) => started,
            };
            let mut stream = match started {
                Ok(stream) => stream,
                Err(LlmError::Aborted) => {
                    return finish_failed(builder, StopReason::Aborted, ABORTED_TEXT.to_owned());
                }
                Err(error) => return finish_failed(builder, StopReason::Error, error.to_string()),
            };
            let mut received_content = false;
            loop {
                let item = tokio::select! {
                    () = cancel.cancelled() => {
                        return finish_failed(builder, StopReason::Aborted, ABORTED_TEXT.to_owned());
                    }
                    item = stream.next() => item,
                };
                match item {
                    Some(Ok(event)) => {
                        received_content |= !matches!(event, StreamEvent::Usage { .. });
                        builder.apply(&event);
                        observer.on_event(&AgentEvent::MessageUpdate { delta: event });
                    }
                    Some(Err(LlmError::Aborted)) => {
                        return finish_failed(
                            builder,
                            StopReason::Aborted,
                            ABORTED_TEXT.to_owned(),
                        );
                    }
                    Some(Err(error)) => {
                        let retry = &config.stream_retry;
                        if !received_content
                            && error.is_retryable_in_stream()
                            && retries < retry.max_retries
                        {
                            let wait = retry
                                .initial_delay
                                .saturating_mul(2u32.saturating_pow(retries))
                                .min(retry.max_delay);
                            retries += 1;
                            tracing::warn!(%error, retry = retries, "model stream failed; retrying");
                            observer.on_event(&AgentEvent::Retry(RetryNotice {
                                attempt: retries,
                                max_retries: retry.max_retries,
                                delay_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                                reason: error.to_string(),
                            }));
                            tokio::select! {
                                () = cancel.cancelled() => {
                                    return finish_failed(builder, StopReason::Aborted, ABORTED_TEXT.to_owned());
                                }
                                () = tokio::time::sleep(wait) => {}
                            }
                            builder = MessageBuilder::new(config.provider.name(), &config.model);
                            continue 'attempt;
                        }
                        let note = match retries {
                            0 => String::new(),
                            1 => " (gave up after 1 retry)".to_owned(),
                            n => format!(" (gave up after {n} retries)"),
                        };
                        return finish_failed(builder, StopReason::Error, format!("{error}{note}"));
                    }
                    None => break 'attempt,
                }
            }
        }
        if !builder.is_stopped() {
            let message = format!(
                "{} stream ended without a stop reason",
                config.provider.name()
            );
            return finish_failed(builder, StopReason::Error, message);
        }
        builder.finish()
    }
}

fn finish_failed(
    builder: MessageBuilder,
    stop_reason: StopReason,
    message: String,
) -> AssistantMessage {
    let mut reply = builder.finish();
    reply.stop_reason = stop_reason;
    reply.error_message = Some(message);
    reply
}
