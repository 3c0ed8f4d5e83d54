//! Context compaction: when a conversation nears the model's context window, its older part is
//! summarised by the model and the model is sent the summary and the recent turns from then on.
//!
//! - The context window comes from the host (which looks it up in
//!   [`ModelTable`](jig_llm::ModelTable)); unknown models use [`DEFAULT_CONTEXT_WINDOW`].
//! - The input tokens of the last reply (as the provider reports them: uncached + cache reads +
//!   cache writes) are compared with [`CompactionConfig::threshold`] × the window before each
//!   model request; crossing it compacts first.
//! - The cut is made only before a user message or an assistant reply (never before a tool
//!   result), so every tool call kept is followed by its results and every summarised call had
//!   its results summarised with it. The last [`CompactionConfig::keep_recent_turns`] assistant
//!   replies (and what follows them) are kept verbatim.
//! - A provider error saying the request was too long ([`is_context_overflow`]) compacts once and
//!   sends the request again.

use std::fmt::Write as _;

use jig_protocol::{AssistantBlock, ContentBlock, Message};

/// The window assumed for a model id that is not in the table and not configured.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// When and how a conversation is compacted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionConfig {
    /// The model's context window in tokens.
    pub context_window: u64,
    /// The fraction of the window (0 < t ≤ 1) whose crossing by the last request's input tokens
    /// compacts before the next request.
    pub threshold: f64,
    /// How many of the most recent assistant replies (with their tool results and any user
    /// messages after them) are kept verbatim.
    pub keep_recent_turns: usize,
}

impl CompactionConfig {
    /// The default threshold (80 % of the window).
    pub const DEFAULT_THRESHOLD: f64 = 0.8;
    /// The default number of replies kept verbatim.
    pub const DEFAULT_KEEP_RECENT_TURNS: usize = 4;

    /// The configuration for a window, with the default threshold and kept turns.
    pub fn for_window(context_window: u64) -> Self {
        Self {
            context_window,
            threshold: Self::DEFAULT_THRESHOLD,
            keep_recent_turns: Self::DEFAULT_KEEP_RECENT_TURNS,
        }
    }

    /// The most characters of conversation sent in one summarisation request: about half the
    /// window, at four characters per token.
    pub fn max_transcript_chars(&self) -> usize {
        usize::try_from(self.context_window.saturating_mul(2)).unwrap_or(usize::MAX)
    }

    /// The input-token count at which the conversation is compacted.
    pub fn limit(&self) -> u64 {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "a token count well inside f64's exact range"
        )]
        let limit = (self.context_window as f64 * self.threshold) as u64;
        limit.max(1)
    }
}

/// Why a compaction happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionReason {
    /// The last request's input tokens crossed the threshold.
    Threshold,
    /// The provider refused a request as too long.
    Overflow,
    /// The user asked for it.
    Manual,
}

/// True when a provider error message says the request did not fit the context window
/// (OpenAI's `context_length_exceeded` / "maximum context length", Anthropic's "prompt is too
/// long", and the wording of common OpenAI-compatible servers).
pub fn is_context_overflow(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
        "context window",
        "exceeds the context",
        "context length",
    ]
    .iter()
    .any(|needle| message.contains(needle))
}

/// Where `messages` may be cut so that the last `keep` assistant replies (and everything after
/// them) stay: the index of the first kept message. `None` when nothing would be summarised.
/// The cut is always before a user message or an assistant reply, never before a tool result.
pub fn cut_point(messages: &[Message], keep: usize) -> Option<usize> {
    let boundaries: Vec<usize> = (1..messages.len())
        .filter(|&i| !matches!(messages[i], Message::ToolResult(_)))
        .collect();
    let replies: Vec<usize> = boundaries
        .iter()
        .copied()
        .filter(|&i| matches!(messages[i], Message::Assistant(_)))
        .collect();
    let wanted = if keep == 0 || replies.len() < keep {
        // Fewer replies than asked to keep: keep from the last boundary (the latest exchange).
        *boundaries.last()?
    } else {
        replies[replies.len() - keep]
    };
    // Prefer starting at the user message that asked for the first kept reply, when it is
    // directly before it.
    let start = if wanted > 0 && matches!(messages[wanted - 1], Message::User(_)) {
        wanted - 1
    } else {
        wanted
    };
    (start > 0).then_some(start)
}

/// The longest tool result or text kept per message in the summarisation transcript.
const TRANSCRIPT_TEXT_LIMIT: usize = 2_000;

/// The instruction sent as the system prompt of a summarisation request.
pub const SUMMARY_INSTRUCTION: &str = "You summarise a conversation between a user and a coding \
agent so that the agent can continue the work with only your summary and the most recent \
messages. Write a concise, factual summary: the user's goals and requests, decisions made, files \
read or changed (with paths), commands run and their important results, errors met and how they \
were resolved, and what remains to be done. Do not call tools. Do not add anything that is not in \
the conversation. Answer with the summary only.";

/// The text the model is sent in place of the summarised messages.
pub fn summary_message(summary: &str) -> Message {
    Message::user_text(format!(
        "The earlier part of this conversation was summarised to fit the context window. \
         Summary:\n\n{summary}"
    ))
}

/// `messages` as a plain-text transcript for the summarisation request (long texts cut), after
/// the previous summary when there is one. When the messages' text is longer than `max_chars`,
/// its oldest part is left out (marked), so the request fits the window.
pub fn transcript(
    previous_summary: Option<&str>,
    messages: &[Message],
    max_chars: usize,
) -> String {
    let body = messages_text(messages);
    let length = body.chars().count();
    let body = if length > max_chars {
        let tail: String = body.chars().skip(length - max_chars).collect();
        format!(
            "[… the oldest part of the conversation was left out to fit the context window]\n{tail}"
        )
    } else {
        body
    };
    match previous_summary {
        Some(summary) => {
            format!("[summary of the conversation before this]\n{summary}\n\n{body}")
        }
        None => body,
    }
}

fn messages_text(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        match message {
            Message::User(user) => {
                out.push_str("[user]\n");
                out.push_str(&cut(&ContentBlock::join_text(&user.content)));
            }
            Message::Assistant(reply) => {
                for block in &reply.content {
                    match block {
                        AssistantBlock::Text { text } => {
                            out.push_str("[assistant]\n");
                            out.push_str(&cut(text));
                        }
                        AssistantBlock::ToolCall(call) => {
                            let _ = write!(
                                out,
                                "[assistant calls tool {} (id {})]\n{}",
                                call.name,
                                call.id,
                                cut(&call.arguments.to_string())
                            );
                        }
                        AssistantBlock::Thinking { .. } => continue,
                    }
                    out.push('\n');
                }
                continue;
            }
            Message::ToolResult(result) => {
                let _ = writeln!(
                    out,
                    "[result of {} (id {}){}]",
                    result.tool_name,
                    result.tool_call_id,
                    if result.is_error { ", failed" } else { "" }
                );
                out.push_str(&cut(&result.text()));
            }
        }
        out.push_str("\n\n");
    }
    out
}

fn cut(text: &str) -> String {
    if text.chars().count() <= TRANSCRIPT_TEXT_LIMIT {
        return text.to_owned();
    }
    let head: String = text.chars().take(TRANSCRIPT_TEXT_LIMIT).collect();
    format!("{head}… [cut]")
}
