//! What `jig run` prints: the print face's view of a run.

use std::io::{self, Write as _};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jig_agent::session::SessionHeader;
use jig_agent::{AgentEvent, ModelUsage};
use jig_session::extensions::Sent;
use jig_session::print::PrintView;
use serde_json::Value;

use super::OutputMode;

/// Shows a print-mode run: in JSON mode every event on stdout, in text mode (with progress on)
/// one stderr line per tool call, retry and compaction, then a summary.
pub(crate) struct Printer {
    mode: OutputMode,
    /// Text mode: one stderr line per tool call and per retry.
    progress: bool,
    /// What the run is doing since when, for [`Printer::report_quiet`].
    activity: Mutex<Activity>,
}

/// What a run is waiting for.
#[derive(Debug, Clone)]
enum Activity {
    /// No run (before it, after it).
    Idle,
    /// The model, with nothing heard since `since`.
    Model { since: Instant },
    /// A tool call running since `since`.
    Tool { name: String, since: Instant },
}

/// How long a run may be silent before `--verbose` says what it waits for, and how often
/// after that.
pub(crate) const QUIET_REPORT: Duration = Duration::from_secs(15);

impl std::fmt::Debug for Printer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Printer")
            .field("mode", &self.mode)
            .field("progress", &self.progress)
            .finish_non_exhaustive()
    }
}

impl Printer {
    pub(crate) fn new(mode: OutputMode, progress: bool) -> Arc<Self> {
        Arc::new(Self {
            mode,
            progress,
            activity: Mutex::new(Activity::Idle),
        })
    }

    /// In text mode with progress lines: says what the run has waited for, when nothing
    /// happened for a multiple of [`QUIET_REPORT`] (`jig: waiting for the model: 30 s`,
    /// `jig: bash still running: 45 s`). `last` is the silence last reported, so each length is
    /// said once; returns the new one.
    pub(crate) fn report_quiet(&self, last: Duration) -> Duration {
        if self.mode == OutputMode::Json || !self.progress {
            return last;
        }
        let activity = self
            .activity
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let (what, since) = match activity {
            Activity::Idle => return Duration::ZERO,
            Activity::Model { since } => ("waiting for the model".to_owned(), since),
            Activity::Tool { name, since } => (format!("{name} still running"), since),
        };
        let quiet = since.elapsed();
        let step = quiet.as_secs() / QUIET_REPORT.as_secs() * QUIET_REPORT.as_secs();
        let step = Duration::from_secs(step);
        if step >= QUIET_REPORT && step > last {
            progress(&format!("{what}: {} s", step.as_secs()));
            return step;
        }
        if quiet < last {
            // Something happened since the last report: start counting again.
            return Duration::ZERO;
        }
        last
    }

    fn track(&self, event: &AgentEvent) {
        let now = Instant::now();
        let next = match event {
            AgentEvent::AgentEnd { .. } => Activity::Idle,
            AgentEvent::ToolExecutionStart { tool_name, .. } => Activity::Tool {
                name: tool_name.clone(),
                since: now,
            },
            AgentEvent::ToolExecutionUpdate { .. } => return,
            _ => Activity::Model { since: now },
        };
        *self.activity.lock().unwrap_or_else(PoisonError::into_inner) = next;
    }
}

impl PrintView for Printer {
    fn on_start(&self, header: &SessionHeader) {
        if self.mode == OutputMode::Json {
            print_json(&serde_json::to_value(header).unwrap_or_default());
        }
    }

    fn on_event(&self, event: &AgentEvent, sent: Option<&Sent>) {
        self.track(event);
        if self.mode == OutputMode::Json {
            let mut json = serde_json::to_value(event).unwrap_or_default();
            if let (Some(sent), Value::Object(object)) = (sent, &mut json) {
                if let Some(custom_type) = &sent.custom_type {
                    object.insert("customType".to_owned(), Value::from(custom_type.as_str()));
                }
                object.insert("display".to_owned(), Value::Bool(sent.display));
            }
            print_json(&json);
        } else if self.progress {
            match event {
                AgentEvent::ToolExecutionStart {
                    tool_name, args, ..
                } => progress(&format!("{tool_name} {}", brief(args))),
                // A call that failed, was denied or was blocked says so and why.
                AgentEvent::ToolExecutionEnd {
                    tool_name,
                    result,
                    is_error: true,
                    ..
                } => progress(&format!("{tool_name} failed: {}", first_line(result))),
                AgentEvent::Compaction {
                    tokens_before,
                    summarised_messages,
                    kept_messages,
                    ..
                } => progress(&format!(
                    "compacted the conversation: {summarised_messages} older messages summarised, {kept_messages} kept{}",
                    tokens_before
                        .map(|tokens| format!(" ({tokens} input tokens before)"))
                        .unwrap_or_default()
                )),
                AgentEvent::Retry(notice) => progress(&format!(
                    "retrying in {:.1} s (retry {} of {}): {}",
                    Duration::from_millis(notice.delay_ms).as_secs_f64(),
                    notice.attempt,
                    notice.max_retries,
                    notice.reason
                )),
                AgentEvent::AgentEnd {
                    turns,
                    usage,
                    cost,
                    duration_ms,
                    ..
                } => {
                    for line in summary(*turns, usage, *cost, *duration_ms) {
                        progress(&line);
                    }
                }
                _ => {}
            }
        }
    }
}

/// The text-mode summary of a run: turns, time and cost, then one line per model with its
/// tokens and cost. A price jig does not know is said to be unknown, never guessed.
pub(super) fn summary(
    turns: u32,
    usage: &[ModelUsage],
    cost: Option<f64>,
    duration_ms: u64,
) -> Vec<String> {
    let plural = if turns == 1 { "" } else { "s" };
    let cost = cost.map_or_else(
        || "cost unknown".to_owned(),
        |cost| format!("cost {}", dollars(cost)),
    );
    let mut lines = vec![format!(
        "{turns} model request{plural} in {:.1} s, {cost}",
        Duration::from_millis(duration_ms).as_secs_f64()
    )];
    for model in usage {
        let cost = model.cost.map_or_else(
            || "no price in the model table".to_owned(),
            |cost| dollars(cost.total),
        );
        lines.push(format!(
            "  {}/{}: {} input, {} output, {} cache read, {} cache write tokens: {cost}",
            model.provider,
            model.model,
            model.input,
            model.output,
            model.cache_read,
            model.cache_write
        ));
    }
    lines
}

/// `$0.0123`: four decimals (runs of cheap models cost fractions of a cent).
fn dollars(amount: f64) -> String {
    format!("${amount:.4}")
}

/// A tool call's arguments on one line: a single string argument as is, else compact JSON; at
/// most 100 characters.
fn brief(args: &Value) -> String {
    let text = match args.as_object() {
        Some(object) if object.len() == 1 => match object.values().next() {
            Some(Value::String(text)) => text.clone(),
            _ => args.to_string(),
        },
        _ => args.to_string(),
    };
    let line = text.replace(['\n', '\r'], " ");
    let cut: String = line.chars().take(100).collect();
    if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// `jig: …` on stderr, for progress.
/// The first line of a result's text, cut like a call's arguments.
fn first_line(result: &jig_protocol::ToolResult) -> String {
    let text = result.text_content();
    let line = text.lines().next().unwrap_or("");
    let cut: String = line.chars().take(200).collect();
    if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

fn progress(message: &str) {
    let _ = writeln!(io::stderr().lock(), "jig: {message}");
}

/// One JSON value as one line on stdout (a closed pipe is ignored: the run goes on and the
/// session is still written).
pub(crate) fn print_json(value: &Value) {
    let mut stdout = io::stdout().lock();
    let _ = writeln!(stdout, "{value}").and_then(|()| stdout.flush());
}

pub(crate) use crate::exit::warn;

/// `jig: …` on stderr.
pub(crate) fn error(message: &str) {
    let _ = writeln!(io::stderr().lock(), "jig: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use jig_llm::ModelTable;

    fn usage(provider: &str, model: &str, input: u64, output: u64, cache_read: u64) -> ModelUsage {
        let usage = jig_protocol::Usage {
            input,
            output,
            cache_read,
            cache_write: 0,
        };
        ModelUsage {
            provider: provider.into(),
            model: model.into(),
            input,
            output,
            cache_read,
            cache_write: 0,
            cost: ModelTable::builtin()
                .cost(provider, model)
                .map(|prices| prices.of(&usage)),
        }
    }

    #[test]
    fn the_summary_gives_cost_per_model_and_says_when_a_price_is_unknown() {
        let known = vec![usage("anthropic", "claude-sonnet-4-5", 12_000, 800, 30_000)];
        let total = jig_agent::total_cost(&known);
        insta::assert_snapshot!(summary(3, &known, total, 4_210).join("\n"), @r"
        3 model requests in 4.2 s, cost $0.0570
          anthropic/claude-sonnet-4-5: 12000 input, 800 output, 30000 cache read, 0 cache write tokens: $0.0570
        ");
        let mixed = vec![
            usage("openai", "gpt-4.1", 1_000, 100, 0),
            usage("openai-compatible", "qwen3-coder", 5_000, 200, 0),
        ];
        let total = jig_agent::total_cost(&mixed);
        assert_eq!(total, None);
        insta::assert_snapshot!(summary(1, &mixed, total, 900).join("\n"), @r"
        1 model request in 0.9 s, cost unknown
          openai/gpt-4.1: 1000 input, 100 output, 0 cache read, 0 cache write tokens: $0.0028
          openai-compatible/qwen3-coder: 5000 input, 200 output, 0 cache read, 0 cache write tokens: no price in the model table
        ");
    }
}
