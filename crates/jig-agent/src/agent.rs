//! [`Agent`]: the loop of one conversation.

use std::sync::Arc;

use futures::StreamExt;
use jig_llm::{
    LlmError, MessageBuilder, ModelRequest, RetryHook, RetryNotice, StreamEvent, ThinkingLevel,
};
use jig_protocol::{AssistantMessage, Message, StopReason, ToolResultMessage};
use tokio_util::sync::CancellationToken;

use crate::compaction::{
    CompactionConfig, CompactionReason, SUMMARY_INSTRUCTION, cut_point, is_context_overflow,
    summary_message, transcript,
};
use crate::config::{ABORTED_TEXT, AgentConfig};
use crate::event::{AgentEvent, AgentObserver, RunEnd, total_cost, usage_by_model};
use crate::execute::execute_calls;

/// Why [`Agent::compact`] did not compact; the conversation is then unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactError {
    /// [`TurnHooks::cancel_compaction`](crate::TurnHooks::cancel_compaction) cancelled it.
    #[error("the compaction was cancelled by a hook")]
    Cancelled,
    /// The conversation has no turns older than the kept ones.
    #[error(
        "nothing to compact: the conversation has no turns older than the {keep} kept verbatim"
    )]
    NothingOlder {
        /// Turns kept verbatim.
        keep: usize,
    },
    /// The summarisation request failed (or was cancelled).
    #[error(transparent)]
    Request(#[from] ReplyError),
    /// The summarisation reply had no text.
    #[error("the summarisation reply had no text")]
    EmptySummary,
}

/// Why a whole reply (a summary) could not be had from the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// The provider failed, or the request was cancelled: its message.
    #[error("{0}")]
    Provider(String),
    /// The stream ended before the model said it was done.
    #[error("{provider} stream ended without a stop reason")]
    Unfinished {
        /// The provider's name.
        provider: String,
    },
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
    /// The summary the model is sent in place of `messages[..context_start]`.
    summary: Option<String>,
    context_start: usize,
    /// Input tokens of the last reply, as the provider reported them.
    last_input_tokens: Option<u64>,
    /// Summarisation replies not yet counted in a run's usage.
    summary_replies: Vec<Message>,
    /// Every tool of the configuration; [`TurnHooks::active_tools`](crate::TurnHooks) picks
    /// the ones offered.
    all_tools: jig_tool::ToolRegistry,
}

impl Agent {
    /// An agent with an empty conversation.
    pub fn new(config: AgentConfig) -> Self {
        Self::with_messages(config, Vec::new())
    }

    /// An agent continuing `messages` (a resumed session). The input tokens of the last reply
    /// count towards the compaction threshold.
    pub fn with_messages(config: AgentConfig, messages: Vec<Message>) -> Self {
        let last_input_tokens = last_reply_input(&messages);
        let all_tools = config.tools.clone();
        Self {
            config,
            messages,
            summary: None,
            context_start: 0,
            last_input_tokens,
            summary_replies: Vec::new(),
            all_tools,
        }
    }

    /// An agent continuing a compacted session: the model is sent `summary`, then `messages`.
    /// The last reply's tokens were counted before the compaction, so they do not count.
    pub fn with_summary(config: AgentConfig, summary: String, messages: Vec<Message>) -> Self {
        let all_tools = config.tools.clone();
        Self {
            config,
            messages,
            summary: Some(summary),
            context_start: 0,
            last_input_tokens: None,
            summary_replies: Vec::new(),
            all_tools,
        }
    }

    /// The summary the model is sent in place of the older messages, after a compaction.
    pub fn summary(&self) -> Option<&str> {
        self.summary.as_deref()
    }

    /// What the model is sent as the conversation: the summary (after a compaction), then the
    /// messages after it.
    pub fn context(&self) -> Vec<Message> {
        let mut context = Vec::new();
        if let Some(summary) = &self.summary {
            context.push(summary_message(summary));
        }
        context.extend_from_slice(&self.messages[self.context_start..]);
        context
    }

    /// Input tokens of the last reply, as the provider reported them (uncached, cache reads and
    /// cache writes); `None` before the first reply and right after a compaction.
    pub fn last_input_tokens(&self) -> Option<u64> {
        self.last_input_tokens
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Replaces the system prompt sent from the next request on (an extension's
    /// `before_agent_start` may change it for one turn).
    pub fn set_system_prompt(&mut self, system_prompt: String) {
        self.config.system_prompt = system_prompt;
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
        self.push(prompt, observer).await;
        let mut turns = 0u32;
        // Messages queued for the next request (steering, or follow-ups when the run would end).
        let mut queued: Vec<Message> = Vec::new();
        let end = loop {
            if let Err(error) = self.before_request(&mut queued, cancel, observer).await {
                break Self::compaction_failed(&error.to_string(), cancel);
            }
            observer.on_event(&AgentEvent::TurnStart { turn_index: turns });
            let mut reply = self.stream_reply(cancel, observer).await;
            if reply.stop_reason == StopReason::Error
                && self.config.compaction.is_some()
                && reply
                    .error_message
                    .as_deref()
                    .is_some_and(is_context_overflow)
            {
                // One compaction and one retry: the failed reply is not part of the conversation.
                tracing::warn!(error = ?reply.error_message, "context overflow; compacting");
                if let Err(message) = self
                    .compact(CompactionReason::Overflow, cancel, observer)
                    .await
                {
                    let first = reply.error_message.take().unwrap_or_default();
                    break Self::compaction_failed(&format!("{first}; {message}"), cancel);
                }
                reply = self.stream_reply(cancel, observer).await;
            }
            turns += 1;
            let reply = self.finish_reply(reply, observer).await;
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
                // Cancelled: what is queued stays queued (the host may make it a turn of its
                // own) rather than being taken and dropped.
                queued = self.queued_after_reply_unless(cancel);
                if queued.is_empty() {
                    break RunEnd::Completed;
                }
                if let Some(max_turns) = self.config.max_turns
                    && turns >= max_turns
                {
                    break RunEnd::MaxTurns { max_turns };
                }
                continue;
            }
            let batch = execute_calls(&self.config, &reply, cancel, observer).await;
            for result in &batch.results {
                self.push(Message::ToolResult(result.clone()), observer)
                    .await;
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
        // Summarisation requests (including a compaction just before the run) count too.
        let mut counted = new_messages.clone();
        counted.append(&mut self.summary_replies);
        let usage = usage_by_model(&counted, &self.config.models);
        observer.on_event(&AgentEvent::AgentEnd {
            end: end.clone(),
            final_text: new_messages
                .iter()
                .rev()
                .find_map(Message::as_assistant)
                .map(AssistantMessage::text),
            turns,
            cost: total_cost(&usage),
            usage,
            duration_ms: u64::try_from(started_at.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
        RunOutcome {
            end,
            new_messages,
            turns,
        }
    }

    /// Before each request: the queued and steering messages join the conversation, the
    /// conversation is compacted when it reached the threshold (unless a hook cancels that),
    /// and the active tools are picked. Fails when the compaction fails.
    async fn before_request(
        &mut self,
        queued: &mut Vec<Message>,
        cancel: &CancellationToken,
        observer: &Arc<dyn AgentObserver>,
    ) -> Result<(), CompactError> {
        queued.extend(self.config.turn_hooks.take_steering());
        for message in queued.drain(..) {
            self.push(message, observer).await;
        }
        if self.needs_compaction()
            && !self
                .config
                .turn_hooks
                .cancel_compaction(CompactionReason::Threshold)
                .await
        {
            self.compact_now(CompactionReason::Threshold, cancel, observer)
                .await?;
        }
        self.select_active_tools();
        Ok(())
    }

    /// Keeps a finished reply (as the `message_end` hook leaves it) and counts its input
    /// tokens.
    async fn finish_reply(
        &mut self,
        reply: AssistantMessage,
        observer: &Arc<dyn AgentObserver>,
    ) -> AssistantMessage {
        if !matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted) {
            let usage = &reply.usage;
            self.last_input_tokens = Some(usage.input + usage.cache_read + usage.cache_write);
        }
        let reply = match self
            .config
            .turn_hooks
            .message_end(Message::Assistant(reply.clone()))
            .await
        {
            Message::Assistant(replaced) => replaced,
            other => {
                tracing::warn!(
                    role = other.role(),
                    "a message_end hook changed the role; ignored"
                );
                reply
            }
        };
        self.messages.push(Message::Assistant(reply.clone()));
        observer.on_event(&AgentEvent::MessageEnd {
            message: Message::Assistant(reply.clone()),
        });
        reply
    }

    /// When the model stopped calling tools: messages sent while it replied (steering), else
    /// the follow-ups. Any makes the run go on.
    /// [`Self::queued_after_reply`], or nothing (left queued) when the run is cancelled.
    fn queued_after_reply_unless(&self, cancel: &CancellationToken) -> Vec<Message> {
        if cancel.is_cancelled() {
            return Vec::new();
        }
        self.queued_after_reply()
    }

    fn queued_after_reply(&self) -> Vec<Message> {
        let steering = self.config.turn_hooks.take_steering();
        if steering.is_empty() {
            self.config.turn_hooks.take_follow_ups()
        } else {
            steering
        }
    }

    /// Summarises the older part of the conversation with the model and sends the model the
    /// summary and the recent turns from now on (see [`crate::compaction`]). Emits
    /// [`AgentEvent::Compaction`]. Fails when there is nothing older than the kept turns to
    /// summarise, the summarisation request fails, or the reply has no text; the conversation is
    /// then unchanged.
    ///
    /// [`TurnHooks::cancel_compaction`](crate::TurnHooks::cancel_compaction) may cancel it:
    /// it then fails with [`CompactError::Cancelled`].
    pub async fn compact(
        &mut self,
        reason: CompactionReason,
        cancel: &CancellationToken,
        observer: &Arc<dyn AgentObserver>,
    ) -> Result<(), CompactError> {
        if self.config.turn_hooks.cancel_compaction(reason).await {
            return Err(CompactError::Cancelled);
        }
        self.compact_now(reason, cancel, observer).await
    }

    async fn compact_now(
        &mut self,
        reason: CompactionReason,
        cancel: &CancellationToken,
        observer: &Arc<dyn AgentObserver>,
    ) -> Result<(), CompactError> {
        let settings = self.config.compaction.unwrap_or_else(|| {
            CompactionConfig::for_window(crate::compaction::DEFAULT_CONTEXT_WINDOW)
        });
        let keep = settings.keep_recent_turns;
        let recent = &self.messages[self.context_start..];
        let Some(cut) = cut_point(recent, keep) else {
            return Err(CompactError::NothingOlder { keep });
        };
        let text = transcript(
            self.summary.as_deref(),
            &recent[..cut],
            settings.max_transcript_chars(),
        );
        let request = ModelRequest {
            model: self.config.model.clone(),
            system_prompt: SUMMARY_INSTRUCTION.to_owned(),
            messages: vec![Message::user_text(format!(
                "{text}\n---\nSummarise the conversation above, as instructed."
            ))],
            tools: Vec::new(),
            thinking: ThinkingLevel::Off,
            max_output_tokens: self.config.max_output_tokens,
            on_retry: None,
            retry: self.config.auto_retry,
        };
        let reply = collect_reply(&self.config, request, cancel).await?;
        let summary = reply.text().trim().to_owned();
        if summary.is_empty() {
            return Err(CompactError::EmptySummary);
        }
        let tokens_before = self.last_input_tokens;
        self.summary_replies.push(Message::Assistant(reply.clone()));
        self.summary = Some(summary.clone());
        self.context_start += cut;
        self.last_input_tokens = None;
        observer.on_event(&AgentEvent::Compaction {
            reason,
            summary,
            tokens_before,
            summarised_messages: self.context_start,
            kept_messages: self.messages.len() - self.context_start,
            usage: reply.usage,
        });
        Ok(())
    }

    /// True when the last reply's input tokens reached the threshold and there are turns older
    /// than the kept ones. A conversation with nothing older goes on as it is: the provider's
    /// overflow error, if it comes, is the one to report.
    fn needs_compaction(&self) -> bool {
        self.config.compaction.is_some_and(|compaction| {
            self.last_input_tokens
                .is_some_and(|tokens| tokens >= compaction.limit())
                && cut_point(
                    &self.messages[self.context_start..],
                    compaction.keep_recent_turns,
                )
                .is_some()
        })
    }

    fn compaction_failed(message: &str, cancel: &CancellationToken) -> RunEnd {
        if cancel.is_cancelled() {
            RunEnd::Aborted
        } else {
            RunEnd::Error {
                message: format!("context compaction failed: {message}"),
            }
        }
    }

    async fn push(&mut self, message: Message, observer: &Arc<dyn AgentObserver>) {
        observer.on_event(&AgentEvent::MessageStart {
            message: message.clone(),
        });
        let message = self.config.turn_hooks.message_end(message).await;
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

    /// Offers the tools [`TurnHooks::active_tools`](crate::TurnHooks::active_tools) names (all
    /// of them when it names none).
    fn select_active_tools(&mut self) {
        for tool in self.config.turn_hooks.take_new_tools() {
            self.all_tools.register(std::sync::Arc::clone(&tool));
            self.config.tools.register(tool);
        }
        let Some(names) = self.config.turn_hooks.active_tools() else {
            return;
        };
        let mut tools = self.all_tools.clone();
        tools.retain(|tool| names.iter().any(|name| name == tool.name()));
        self.config.tools = tools;
    }

    /// The request for the conversation so far (after the context hook); retries are reported
    /// to `observer`.
    async fn request(&self, observer: &Arc<dyn AgentObserver>) -> ModelRequest {
        let config = &self.config;
        let retry_observer = Arc::clone(observer);
        ModelRequest {
            model: config.model.clone(),
            system_prompt: config.system_prompt.clone(),
            messages: config.turn_hooks.context(self.context()).await,
            tools: config.tool_definitions(),
            thinking: config.thinking,
            max_output_tokens: config.max_output_tokens,
            on_retry: Some(RetryHook(Arc::new(move |notice: &RetryNotice| {
                retry_observer.on_event(&AgentEvent::Retry(notice.clone()));
            }))),
            retry: config.auto_retry,
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
        let request = self.request(observer).await;
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
                            && config.auto_retry
                            && error.is_retryable_in_stream()
                            && retries < retry.max_retries
                        {
                            let wait = retry.backoff(retries);
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

/// Input tokens of the last successful reply in `messages`.
fn last_reply_input(messages: &[Message]) -> Option<u64> {
    messages
        .iter()
        .rev()
        .filter_map(Message::as_assistant)
        .find(|reply| !matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted))
        .map(|reply| reply.usage.input + reply.usage.cache_read + reply.usage.cache_write)
}

/// One whole reply to `request` (no tools, no events).
async fn collect_reply(
    config: &AgentConfig,
    request: ModelRequest,
    cancel: &CancellationToken,
) -> Result<AssistantMessage, ReplyError> {
    let failed = |error: LlmError| ReplyError::Provider(error.to_string());
    let mut builder = MessageBuilder::new(config.provider.name(), &config.model);
    let started = tokio::select! {
        () = cancel.cancelled() => Err(LlmError::Aborted),
        started = config.provider.stream(request, cancel.clone()) => started,
    };
    let mut stream = started.map_err(failed)?;
    loop {
        let item = tokio::select! {
            () = cancel.cancelled() => return Err(failed(LlmError::Aborted)),
            item = stream.next() => item,
        };
        match item {
            Some(Ok(event)) => builder.apply(&event),
            Some(Err(error)) => return Err(failed(error)),
            None => break,
        }
    }
    if !builder.is_stopped() {
        return Err(ReplyError::Unfinished {
            provider: config.provider.name().to_owned(),
        });
    }
    Ok(builder.finish())
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
