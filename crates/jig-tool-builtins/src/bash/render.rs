//! What `bash` shows: the output within the budget, the truncation notice, the status line, and
//! the details.

use std::path::PathBuf;

use jig_env::ExecOutcome;
use jig_protocol::ToolResult;
use jig_tool::ToolOutput;
use jig_truncate::{FullOutputState, format_size};

use super::accumulator::{Limits, Reserve, Shown, TextStore, Truncation};
use super::config::BashConfig;
use super::head_tail::describe_bytes;
use crate::details::{self, BashDetails, BashProgress};

/// What happened to the full raw output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum FullOutput {
    /// The output fit; no file was needed.
    NotNeeded,
    /// Saved at this path (lives until the env is cleaned up), with `dropped` bytes from the
    /// middle left out when the output was longer than the file's bound.
    Kept { path: PathBuf, dropped: u64 },
    /// Not kept by configuration.
    NotKept,
    /// Could not be written.
    Failed(String),
}

/// The whole output after the command ended.
#[derive(Debug)]
pub(super) struct FinishedOutput {
    pub(super) text: TextStore,
    pub(super) full: FullOutput,
}

/// How the command ended, as one status line (`None` for success).
pub(super) fn status_line(outcome: &ExecOutcome, timeout_shown: Option<&str>) -> Option<String> {
    if outcome.aborted {
        return Some("Command aborted".to_owned());
    }
    if outcome.timed_out {
        return Some(format!(
            "Command timed out after {} seconds",
            timeout_shown.unwrap_or("?")
        ));
    }
    if let Some(signal) = signal(outcome) {
        return Some(format!("Command terminated by signal {signal}"));
    }
    (outcome.exit_code != 0).then(|| format!("Command exited with code {}", outcome.exit_code))
}

/// Output text plus notice plus status, within the budget.
pub(super) fn render(
    store: &TextStore,
    limits: &Limits,
    full: &FullOutput,
    status: Option<&str>,
) -> (String, Option<Truncation>) {
    let status_part = status.map(|line| format!("\n\n{line}")).unwrap_or_default();
    let status_lines = if status.is_some() { 2 } else { 0 };
    let whole = Reserve {
        bytes: status_part.len(),
        lines: status_lines,
    };
    // The notice's size with the largest numbers it can print.
    let worst = Truncation {
        truncated_by: jig_truncate::TruncatedBy::Lines,
        total_lines: store.total_lines(),
        total_bytes: store.total_bytes(),
        head_lines: store.total_lines(),
        tail_lines: store.total_lines(),
        last_line_partial: false,
        tail_bytes: store.total_bytes(),
        omitted_lines: 0,
        omitted_bytes: 0,
    };
    let worst_notice = notice(&worst, limits, full)
        .len()
        .max(
            notice(
                &Truncation {
                    last_line_partial: true,
                    ..worst.clone()
                },
                limits,
                full,
            )
            .len(),
        )
        .max(
            notice(
                &Truncation {
                    truncated_by: jig_truncate::TruncatedBy::Bytes,
                    ..worst.clone()
                },
                limits,
                full,
            )
            .len(),
        );
    let cut = Reserve {
        bytes: whole.bytes + worst_notice + 2,
        lines: whole.lines + 2,
    };
    let Shown { text, truncation } = store.show(whole, cut);
    let mut out = match &truncation {
        None => text,
        Some(truncation) => {
            let mut out = text.strip_suffix('\n').unwrap_or(&text).to_owned();
            out.push_str("\n\n");
            out.push_str(&notice(truncation, limits, full));
            out
        }
    };
    if let Some(status) = status {
        if out.is_empty() {
            out.push_str(status);
        } else {
            let trimmed_len = out.trim_end_matches('\n').len();
            out.truncate(trimmed_len);
            out.push_str(&status_part);
        }
    } else if out.is_empty() {
        out.push_str("(no output)");
    }
    (out, truncation)
}

/// `[Showing lines 1-12 and 5000-6000 of 6000 (50.0KB limit). Full output: /tmp/…/bash-….log]`
fn notice(truncation: &Truncation, limits: &Limits, full: &FullOutput) -> String {
    let total = truncation.total_lines;
    let range = |first: u64, last: u64| {
        if first == last {
            first.to_string()
        } else {
            format!("{first}-{last}")
        }
    };
    let mut ranges = Vec::new();
    if truncation.head_lines > 0 {
        ranges.push(range(1, truncation.head_lines));
    }
    let partial = truncation.last_line_partial.then(|| {
        format!(
            "the last {} of line {total}",
            format_size(usize::try_from(truncation.tail_bytes).unwrap_or(usize::MAX))
        )
    });
    if partial.is_none() && truncation.tail_lines > 0 {
        ranges.push(range(total + 1 - truncation.tail_lines.min(total), total));
    }
    let word = if ranges.len() == 1 && !ranges[0].contains('-') {
        "line"
    } else {
        "lines"
    };
    let mut shown = if ranges.is_empty() {
        String::new()
    } else {
        format!("{word} {}", ranges.join(" and "))
    };
    if let Some(partial) = partial {
        if !shown.is_empty() {
            shown.push_str(" and ");
        }
        shown.push_str(&partial);
    }
    if shown.is_empty() {
        shown.push_str("no lines");
    }
    let limit = match truncation.truncated_by {
        jig_truncate::TruncatedBy::Bytes => format!("{} limit", format_size(limits.max_bytes)),
        jig_truncate::TruncatedBy::Lines => format!("{} line limit", limits.max_lines),
    };
    let full = match full {
        FullOutput::Kept { path, dropped: 0 } => format!("Full output: {}", path.display()),
        FullOutput::Kept { path, dropped } => format!(
            "Full output, without {} from the middle: {}",
            describe_bytes(*dropped),
            path.display()
        ),
        FullOutput::NotKept | FullOutput::NotNeeded => "Full output not kept.".to_owned(),
        FullOutput::Failed(reason) => format!("Full output could not be saved ({reason})."),
    };
    format!("[Showing {shown} of {total} lines ({limit}). {full}]")
}

/// The `truncation` details of a cut output.
fn truncation_details(
    truncation: &Truncation,
    limits: &Limits,
    full: &FullOutput,
) -> details::Truncation {
    details::Truncation {
        max_lines: Some(limits.max_lines as u64),
        head_lines: Some(truncation.head_lines),
        tail_lines: Some(truncation.tail_lines),
        omitted_lines: Some(truncation.omitted_lines),
        omitted_bytes: Some(truncation.omitted_bytes),
        last_line_partial: Some(truncation.last_line_partial),
        full_output: Some(match full {
            FullOutput::Kept { .. } => FullOutputState::Kept,
            FullOutput::NotKept | FullOutput::NotNeeded => FullOutputState::NotKept,
            FullOutput::Failed(_) => FullOutputState::Failed,
        }),
        full_output_error: match full {
            FullOutput::Failed(reason) => Some(reason.clone()),
            _ => None,
        },
        full_output_dropped_bytes: match full {
            FullOutput::Kept { dropped, .. } if *dropped > 0 => Some(*dropped),
            _ => None,
        },
        ..details::Truncation::new(
            truncation.truncated_by,
            truncation.total_lines,
            truncation.total_bytes,
            limits.max_bytes as u64,
        )
    }
}

/// The signal that ended the command, as the env named it.
fn signal(outcome: &ExecOutcome) -> Option<String> {
    let number = outcome.signal?;
    Some(
        outcome
            .signal_name
            .clone()
            .unwrap_or_else(|| format!("SIG{number}")),
    )
}

/// A streaming update: the output so far, cut like the final text (without a status line).
pub(super) fn progress(store: &TextStore, limits: &Limits, full: &FullOutput) -> ToolResult {
    let (text, truncation) = render(store, limits, full, None);
    let details = BashProgress {
        truncation: truncation
            .as_ref()
            .map(|truncation| truncation_details(truncation, limits, full)),
        full_output_path: match full {
            FullOutput::Kept { path, .. } => Some(path.display().to_string()),
            _ => None,
        },
    };
    let details = serde_json::to_value(details).unwrap_or_default();
    ToolResult::text(text).with_details(details)
}

/// The call's output once the command ended.
pub(super) fn final_output(
    config: &BashConfig,
    sandbox: &jig_env::SandboxPolicy,
    outcome: &ExecOutcome,
    timeout_shown: Option<&str>,
    output: &FinishedOutput,
) -> ToolOutput<BashDetails> {
    let limits = Limits {
        max_lines: config.max_lines,
        max_bytes: config.max_bytes,
    };
    let status = status_line(outcome, timeout_shown);
    let (mut text, truncation) = render(&output.text, &limits, &output.full, status.as_deref());
    let sandbox_denied = (!outcome.timed_out && !outcome.aborted)
        .then(|| super::denial::note(sandbox, outcome.exit_code, &text))
        .flatten();
    if let Some(note) = &sandbox_denied {
        text.push_str("\n\n");
        text.push_str(note);
    }
    let details = BashDetails {
        exit_code: outcome.exit_code,
        signal: signal(outcome),
        timed_out: outcome.timed_out,
        aborted: outcome.aborted,
        duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
        full_output_path: match (&output.full, &truncation) {
            (FullOutput::Kept { path, .. }, Some(_)) => Some(path.display().to_string()),
            _ => None,
        },
        truncation: truncation
            .as_ref()
            .map(|truncation| truncation_details(truncation, &limits, &output.full)),
        sandbox_denied,
    };
    ToolOutput::text(text, details).with_error(status.is_some())
}
