//! What a run looks like in the terminal, as lines: [`View`] turns [`AgentEvent`]s into lines
//! that are finished (they go to the terminal's scrollback and are forgotten) and a small live
//! region (the reply's unfinished line, the running tools with the tail of their output, the
//! status line). Memory stays bounded whatever the size of a reply or of a command's output.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::time::Duration;

use jig_agent::{AgentEvent, RunEnd};
use jig_llm::StreamEvent;
use jig_protocol::{ContentBlock, Message, ToolResult};
use serde_json::Value;
use unicode_width::{UnicodeWidthChar as _, UnicodeWidthStr as _};

/// How a span is drawn (colours only when colour is on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Terminal default.
    Plain,
    /// Secondary text (thinking, output tails, the status line).
    Dim,
    /// Tool names and headings.
    Accent,
    /// Errors.
    Error,
    /// Added diff lines.
    Added,
    /// Removed diff lines.
    Removed,
    /// Questions waiting for the user.
    Prompt,
}

/// A piece of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The text (no line breaks).
    pub text: String,
    /// How it is drawn.
    pub style: Style,
}

/// One terminal line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line(pub Vec<Span>);

impl Line {
    /// A line of one span.
    pub fn styled(text: impl Into<String>, style: Style) -> Self {
        Self(vec![Span {
            text: text.into(),
            style,
        }])
    }

    /// A plain line.
    pub fn plain(text: impl Into<String>) -> Self {
        Self::styled(text, Style::Plain)
    }

    /// Appends a span.
    #[must_use]
    pub fn with(mut self, text: impl Into<String>, style: Style) -> Self {
        self.0.push(Span {
            text: text.into(),
            style,
        });
        self
    }

    /// The text without styles.
    pub fn text(&self) -> String {
        self.0.iter().map(|span| span.text.as_str()).collect()
    }

    /// Display columns.
    pub fn width(&self) -> usize {
        self.0.iter().map(|span| span.text.width()).sum()
    }

    /// The line cut to at most `columns` display columns (an ellipsis marks the cut).
    #[must_use]
    pub fn truncated(&self, columns: usize) -> Self {
        if self.width() <= columns {
            return self.clone();
        }
        let mut left = columns.saturating_sub(1);
        let mut out = Vec::new();
        for span in &self.0 {
            let mut text = String::new();
            for c in span.text.chars() {
                let w = c.width().unwrap_or(0);
                if w > left {
                    left = 0;
                    break;
                }
                left -= w;
                text.push(c);
            }
            out.push(Span {
                text,
                style: span.style,
            });
            if left == 0 {
                break;
            }
        }
        out.push(Span {
            text: "…".to_owned(),
            style: Style::Dim,
        });
        Self(out)
    }
}

/// Lines of a running tool's output kept for its live tail.
pub const TAIL_LINES: usize = 5;
/// Lines of a finished tool's result shown.
pub const RESULT_LINES: usize = 6;
/// Lines of an edit's diff shown.
pub const DIFF_LINES: usize = 40;

#[derive(Debug)]
struct Running {
    id: String,
    header: Line,
    tail: VecDeque<String>,
}

/// Token use and context fill for the status line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// `provider/model`.
    pub model: String,
    /// The reasoning level's name when it is not `off` (`low`, `medium`, `high`).
    pub thinking: Option<String>,
    /// The permission mode's name.
    pub mode: String,
    /// Input tokens of the session's replies (cache included).
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens of the last request.
    pub context_used: Option<u64>,
    /// The model's context window.
    pub context_window: u64,
}

impl Status {
    /// `gpt-4.1 · thinking high · ask · ↑12.3k ↓456 · context 9%` (no thinking part when it is
    /// off).
    pub fn line(&self, busy: bool) -> Line {
        let thinking = self
            .thinking
            .as_deref()
            .map(|level| format!(" · thinking {level}"))
            .unwrap_or_default();
        let mut text = format!(
            "{}{thinking} · {} · ↑{} ↓{}",
            self.model,
            self.mode,
            tokens(self.input),
            tokens(self.output)
        );
        if let Some(used) = self.context_used
            && self.context_window > 0
        {
            let percent = used.saturating_mul(100) / self.context_window;
            let _ = write!(text, " · context {percent}%");
        }
        if busy {
            text.push_str(" · Esc to interrupt");
        }
        Line::styled(text, Style::Dim)
    }

    /// The line while a turn has run for `elapsed`: a spinner and the time first, so a silent
    /// model or a long command still shows that something is going on
    /// (`⠹ 12s · gpt-4.1 · ask · … · Esc to interrupt`).
    pub fn busy_line(&self, elapsed: std::time::Duration) -> Line {
        const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
        let tenths = elapsed.as_millis() / 100;
        let frame = FRAMES[usize::try_from(tenths % 10).unwrap_or(0)];
        let seconds = elapsed.as_secs();
        let time = if seconds >= 60 {
            format!("{}m{:02}s", seconds / 60, seconds % 60)
        } else {
            format!("{seconds}s")
        };
        let rest = self.line(true).text();
        Line::styled(format!("{frame} {time} · {rest}"), Style::Dim)
    }
}

/// `12.3k`, `456`, `1.2M`.
fn tokens(count: u64) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a rounded display value")]
    let value = count as f64;
    match count {
        0..1_000 => count.to_string(),
        1_000..1_000_000 => format!("{:.1}k", value / 1e3),
        _ => format!("{:.1}M", value / 1e6),
    }
}

/// The rendering state of a session's runs.
#[derive(Debug)]
pub struct View {
    width: usize,
    /// The reply's (or thinking's) unfinished line.
    partial: String,
    partial_style: Style,
    running: Vec<Running>,
    finished: Vec<Line>,
    /// Token use for the status line.
    pub status: Status,
}

impl View {
    /// A view for a terminal `width` columns wide.
    pub fn new(width: u16, status: Status) -> Self {
        Self {
            width: usize::from(width.max(10)),
            partial: String::new(),
            partial_style: Style::Plain,
            running: Vec::new(),
            finished: Vec::new(),
            status,
        }
    }

    /// The terminal was resized.
    pub fn set_width(&mut self, width: u16) {
        self.width = usize::from(width.max(10));
    }

    /// Lines finished since the last call, to print above the live region.
    pub fn take_finished(&mut self) -> Vec<Line> {
        std::mem::take(&mut self.finished)
    }

    /// Adds a finished line (notes, command output).
    pub fn push(&mut self, line: Line) {
        self.finished.push(line);
    }

    /// The live region: the unfinished reply line, each running tool with its output tail.
    pub fn live(&self) -> Vec<Line> {
        let columns = self.width.saturating_sub(1);
        let mut lines = Vec::new();
        if !self.partial.is_empty() {
            // Only the end of a long unfinished line fits.
            let tail = tail_columns(&self.partial, columns);
            lines.push(Line::styled(tail, self.partial_style));
        }
        for running in &self.running {
            lines.push(running.header.truncated(columns));
            for line in &running.tail {
                lines.push(Line::styled(format!("  {line}"), Style::Dim).truncated(columns));
            }
        }
        lines
    }

    /// Ends the unfinished reply line (the run ended or the turn moved on).
    pub fn flush_partial(&mut self) {
        if !self.partial.is_empty() {
            let text = std::mem::take(&mut self.partial);
            self.finished.push(Line::styled(text, self.partial_style));
        }
    }

    fn stream_text(&mut self, text: &str, style: Style) {
        if style != self.partial_style {
            self.flush_partial();
            self.partial_style = style;
        }
        let mut rest = text;
        while let Some(end) = rest.find('\n') {
            self.partial.push_str(rest[..end].trim_end_matches('\r'));
            let line = std::mem::take(&mut self.partial);
            self.finished.push(Line::styled(line, style));
            rest = &rest[end + 1..];
        }
        self.partial.push_str(rest);
        // A line longer than the screen is wrapped here so the unfinished part stays small.
        let limit = self.width.max(20) * 4;
        if self.partial.len() > limit {
            let mut cut = self.partial.len() - self.width;
            while !self.partial.is_char_boundary(cut) {
                cut -= 1;
            }
            let rest = self.partial.split_off(cut);
            let line = std::mem::replace(&mut self.partial, rest);
            self.finished.push(Line::styled(line, style));
        }
    }

    /// Applies one event of a run.
    pub fn apply(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageUpdate { delta } => match delta {
                StreamEvent::TextDelta { text } => self.stream_text(text, Style::Plain),
                StreamEvent::ThinkingDelta { text } => self.stream_text(text, Style::Dim),
                _ => {}
            },
            AgentEvent::MessageEnd {
                message: Message::Assistant(reply),
            } => {
                self.flush_partial();
                let usage = &reply.usage;
                let input = usage.input + usage.cache_read + usage.cache_write;
                self.status.input += input;
                self.status.output += usage.output;
                if input > 0 {
                    self.status.context_used = Some(input);
                }
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                self.flush_partial();
                self.running.push(Running {
                    id: tool_call_id.clone(),
                    header: call_header("⋯", tool_name, args, Style::Accent),
                    tail: VecDeque::new(),
                });
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial_result,
                ..
            } => {
                if let Some(running) = self.running.iter_mut().find(|r| r.id == *tool_call_id) {
                    running.tail = last_lines(&result_text(partial_result), TAIL_LINES);
                }
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => {
                let header = match self.running.iter().position(|r| r.id == *tool_call_id) {
                    Some(index) => self.running.remove(index).header,
                    None => call_header("⋯", tool_name, &Value::Null, Style::Accent),
                };
                self.finish_call(header, tool_name, result, *is_error);
            }
            AgentEvent::Compaction {
                summarised_messages,
                kept_messages,
                ..
            } => {
                self.flush_partial();
                self.status.context_used = None;
                self.finished.push(Line::styled(
                    format!(
                        "⟳ compacted: {summarised_messages} older messages summarised, {kept_messages} kept"
                    ),
                    Style::Dim,
                ));
            }
            AgentEvent::Retry(notice) => self.finished.push(Line::styled(
                format!(
                    "↻ retry {} of {} in {:.1} s: {}",
                    notice.attempt,
                    notice.max_retries,
                    Duration::from_millis(notice.delay_ms).as_secs_f64(),
                    notice.reason
                ),
                Style::Dim,
            )),
            AgentEvent::AgentEnd { end, .. } => {
                self.flush_partial();
                self.running.clear();
                match end {
                    RunEnd::Completed => {}
                    RunEnd::Aborted => {
                        self.finished
                            .push(Line::styled("⏹ interrupted", Style::Error));
                    }
                    RunEnd::MaxTurns { max_turns } => self.finished.push(Line::styled(
                        format!("⏹ stopped after {max_turns} turns (--max-turns)"),
                        Style::Error,
                    )),
                    RunEnd::Error { message } => {
                        self.finished
                            .push(Line::styled(format!("✗ {message}"), Style::Error));
                    }
                }
            }
            _ => {}
        }
    }

    fn finish_call(&mut self, header: Line, tool: &str, result: &ToolResult, is_error: bool) {
        let mark = if is_error { "✗" } else { "✓" };
        let mut header = header;
        if let Some(first) = header.0.first_mut() {
            mark.clone_into(&mut first.text);
            first.style = if is_error { Style::Error } else { Style::Added };
        }
        self.finished.push(header);
        let diff = result.details.get("diff").and_then(Value::as_str);
        if let (false, Some(diff)) = (is_error, diff) {
            let lines: Vec<&str> = diff.lines().collect();
            for line in lines.iter().take(DIFF_LINES) {
                let style = match line.as_bytes().first() {
                    Some(b'+') => Style::Added,
                    Some(b'-') => Style::Removed,
                    _ => Style::Dim,
                };
                self.finished.push(Line::styled(format!("  {line}"), style));
            }
            if lines.len() > DIFF_LINES {
                self.finished.push(Line::styled(
                    format!("  … {} more diff lines", lines.len() - DIFF_LINES),
                    Style::Dim,
                ));
            }
            return;
        }
        let text = result_text(result);
        let style = if is_error { Style::Error } else { Style::Dim };
        // Command output is most useful at its end; other results at their start.
        let (shown, hidden) = if tool == "bash" {
            let tail = last_lines(&text, RESULT_LINES);
            let hidden = text.lines().count().saturating_sub(tail.len());
            (tail.into_iter().collect::<Vec<_>>(), hidden)
        } else {
            let all: Vec<&str> = text.lines().collect();
            let shown = all
                .iter()
                .take(RESULT_LINES)
                .map(|l| (*l).to_owned())
                .collect();
            (shown, all.len().saturating_sub(RESULT_LINES))
        };
        if hidden > 0 && tool == "bash" {
            self.finished.push(Line::styled(
                format!("  … {hidden} lines above"),
                Style::Dim,
            ));
        }
        let columns = self.width.saturating_sub(1);
        for line in shown {
            self.finished
                .push(Line::styled(format!("  {line}"), style).truncated(columns));
        }
        if hidden > 0 && tool != "bash" {
            self.finished
                .push(Line::styled(format!("  … {hidden} more lines"), Style::Dim));
        }
    }
}

/// `⋯ bash cargo test`: a mark, the tool's name and its arguments in short.
fn call_header(mark: &str, tool: &str, args: &Value, style: Style) -> Line {
    Line::styled(mark, style)
        .with(" ", Style::Plain)
        .with(tool, Style::Accent)
        .with(" ", Style::Plain)
        .with(brief(args), Style::Plain)
}

/// A call's arguments on one line: the command or path when there is one, else compact JSON;
/// at most 200 characters.
pub fn brief(args: &Value) -> String {
    let text = match args {
        Value::Null => String::new(),
        Value::Object(object) => {
            let main = ["command", "path", "pattern", "url"]
                .iter()
                .find_map(|key| object.get(*key).and_then(Value::as_str));
            match main {
                Some(text) => text.to_owned(),
                None => args.to_string(),
            }
        }
        _ => args.to_string(),
    };
    let line = text.replace(['\n', '\r'], " ");
    let cut: String = line.chars().take(200).collect();
    if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// The text blocks of a result (images as a placeholder).
pub fn result_text(result: &ToolResult) -> String {
    let mut out = String::new();
    for block in &result.content {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        match block {
            ContentBlock::Text { text } => out.push_str(text),
            ContentBlock::Image { mime_type, .. } => {
                let _ = write!(out, "[image {mime_type}]");
            }
        }
    }
    out
}

/// The last `count` non-empty-trailing lines of `text`, without scanning all of it.
fn last_lines(text: &str, count: usize) -> VecDeque<String> {
    let mut lines = VecDeque::new();
    for line in text.trim_end().rsplit('\n').take(count) {
        lines.push_front(line.trim_end_matches('\r').replace('\t', "    "));
    }
    lines
}

/// The last `columns` display columns of `text`.
fn tail_columns(text: &str, columns: usize) -> String {
    if text.width() <= columns {
        return text.to_owned();
    }
    let mut width = 1;
    let mut start = text.len();
    for (index, c) in text.char_indices().rev() {
        let w = c.width().unwrap_or(0);
        if width + w > columns {
            break;
        }
        width += w;
        start = index;
    }
    format!("…{}", &text[start..])
}

#[cfg(test)]
#[expect(clippy::format_collect, reason = "building test data")]
mod tests {
    use super::*;
    use jig_protocol::ToolResult;
    use serde_json::json;

    fn text(delta: &str) -> AgentEvent {
        AgentEvent::MessageUpdate {
            delta: StreamEvent::TextDelta {
                text: delta.to_owned(),
            },
        }
    }

    fn render(lines: &[Line]) -> String {
        lines.iter().map(|l| l.text() + "\n").collect()
    }

    #[test]
    fn streamed_text_finishes_line_by_line() {
        let mut view = View::new(80, Status::default());
        view.apply(&text("Hello, wo"));
        assert_eq!(render(&view.take_finished()), "");
        assert_eq!(render(&view.live()), "Hello, wo\n");
        view.apply(&text("rld\nsecond"));
        assert_eq!(render(&view.take_finished()), "Hello, world\n");
        assert_eq!(render(&view.live()), "second\n");
        view.flush_partial();
        assert_eq!(render(&view.take_finished()), "second\n");
        assert!(view.live().is_empty());
    }

    #[test]
    fn a_long_unfinished_line_stays_small() {
        let mut view = View::new(80, Status::default());
        for _ in 0..10_000 {
            view.apply(&text("abcdefghij"));
        }
        assert!(view.partial.len() <= 80 * 4);
        assert!(view.live()[0].width() < 80);
        let finished: usize = view.take_finished().iter().map(|l| l.text().len()).sum();
        assert_eq!(finished + view.partial.len(), 100_000);
    }

    #[test]
    fn tools_show_a_live_tail_then_their_result() {
        let mut view = View::new(60, Status::default());
        view.apply(&AgentEvent::ToolExecutionStart {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            args: json!({"command": "seq 100"}),
        });
        let output: String = (1..=100).map(|n| format!("{n}\n")).collect();
        view.apply(&AgentEvent::ToolExecutionUpdate {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            partial_result: ToolResult::text(output.clone()),
        });
        insta::assert_snapshot!(render(&view.live()), @r"
        ⋯ bash seq 100
          96
          97
          98
          99
          100
        ");
        view.apply(&AgentEvent::ToolExecutionEnd {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            result: ToolResult::text(output),
            is_error: false,
        });
        assert!(view.live().is_empty());
        insta::assert_snapshot!(render(&view.take_finished()), @r"
        ✓ bash seq 100
          … 94 lines above
          95
          96
          97
          98
          99
          100
        ");
    }

    #[test]
    fn edits_show_their_diff_and_errors_their_message() {
        let mut view = View::new(60, Status::default());
        view.apply(&AgentEvent::ToolExecutionStart {
            tool_call_id: "e".into(),
            tool_name: "edit".into(),
            args: json!({"path": "a.txt", "oldText": "x", "newText": "y"}),
        });
        view.apply(&AgentEvent::ToolExecutionEnd {
            tool_call_id: "e".into(),
            tool_name: "edit".into(),
            result: ToolResult::text("ok").with_details(json!({"diff": "-1 x\n+1 y"})),
            is_error: false,
        });
        let lines = view.take_finished();
        assert_eq!(lines[1].0[0].style, Style::Removed);
        assert_eq!(lines[2].0[0].style, Style::Added);
        view.apply(&AgentEvent::ToolExecutionEnd {
            tool_call_id: "f".into(),
            tool_name: "read".into(),
            result: ToolResult::error("no such file"),
            is_error: true,
        });
        let lines = view.take_finished();
        insta::assert_snapshot!(render(&lines), @r"
        ✗ read 
          no such file
        ");
        assert_eq!(lines[1].0[0].style, Style::Error);
    }

    #[test]
    fn status_line() {
        let status = Status {
            model: "openai/m".into(),
            thinking: None,
            mode: "ask".into(),
            input: 12_345,
            output: 456,
            context_used: Some(64_000),
            context_window: 128_000,
        };
        insta::assert_snapshot!(status.line(true).text(), @"openai/m · ask · ↑12.3k ↓456 · context 50% · Esc to interrupt");
        insta::assert_snapshot!(
            status.busy_line(std::time::Duration::from_millis(12_300)).text(),
            @"⠸ 12s · openai/m · ask · ↑12.3k ↓456 · context 50% · Esc to interrupt"
        );
        insta::assert_snapshot!(
            status.busy_line(std::time::Duration::from_secs(125)).text(),
            @"⠋ 2m05s · openai/m · ask · ↑12.3k ↓456 · context 50% · Esc to interrupt"
        );
        let thinking = Status {
            thinking: Some("high".into()),
            ..status
        };
        insta::assert_snapshot!(thinking.line(false).text(), @"openai/m · thinking high · ask · ↑12.3k ↓456 · context 50%");
    }

    #[test]
    fn truncation_counts_columns() {
        let line = Line::plain("日本語のテキスト");
        assert_eq!(line.truncated(7).text(), "日本語…");
        assert_eq!(tail_columns("abcdef", 4), "…def");
    }
}
