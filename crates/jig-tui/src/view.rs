//! What a run looks like in the terminal, as lines: [`View`] turns [`AgentEvent`]s into lines
//! that are finished (they go to the terminal's scrollback and are forgotten) and a small live
//! region (the reply's unfinished line, the running tools with the tail of their output, the
//! status line). Replies are rendered as Markdown ([`crate::markdown`]); a tool's result is shown
//! collapsed, and [`View::expand`] shows a collapsed result whole (the last few are kept for it).
//! Memory stays bounded whatever the size of a reply or of a command's output.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::time::Duration;

use jig_agent::{AgentEvent, RunEnd};
use jig_llm::StreamEvent;
use jig_protocol::{ContentBlock, Message, ToolResult};
use serde_json::Value;
use similar::{Algorithm, ChangeTag};

use crate::markdown::Markdown;
use crate::wrap::wrap;

pub use crate::line::{Color, Line, Rich, Span, Style};

/// Lines of a running tool's output kept for its live tail.
pub const TAIL_LINES: usize = 5;
/// Lines of a finished tool's result shown.
pub const RESULT_LINES: usize = 6;
/// Lines of an edit's diff shown.
pub const DIFF_LINES: usize = 40;
/// Rows a line of a collapsed result may take once wrapped.
pub const RESULT_ROWS: usize = 4;
/// Rows of the reply's unfinished line shown in the live region.
const PARTIAL_ROWS: usize = 6;
/// An unfinished line longer than this is ended at a space (a reply without line breaks must
/// not grow the live region's work without bound).
const PARTIAL_MAX: usize = 16 * 1024;
/// Collapsed results kept for [`View::expand`].
const EXPANDABLE: usize = 20;

/// A collapsed result that [`View::expand`] can show whole.
#[derive(Debug)]
struct Expandable {
    header: Line,
    text: String,
    /// How its lines are drawn: an edit's diff in colour, other results in one style.
    shown: Shown,
}

#[derive(Debug, Clone, Copy)]
enum Shown {
    Diff,
    Text(Style),
}

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
    markdown: Markdown,
    expandable: VecDeque<Expandable>,
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
            markdown: Markdown::new(),
            expandable: VecDeque::new(),
            status,
        }
    }

    /// The terminal was resized.
    pub fn set_width(&mut self, width: u16) {
        self.width = usize::from(width.max(10));
    }

    /// Lines finished since the last call, to print above the live region (once a frame: the
    /// Markdown highlighter's time budget starts again).
    pub fn take_finished(&mut self) -> Vec<Line> {
        self.markdown.new_frame();
        std::mem::take(&mut self.finished)
    }

    /// Adds a finished line (notes, command output).
    pub fn push(&mut self, line: Line) {
        self.finished.push(line);
    }

    /// The live region: the unfinished reply line (its last rows, word-wrapped), table rows
    /// waiting for their table's end, each running tool with its output tail.
    pub fn live(&self) -> Vec<Line> {
        let columns = crate::wrap::live_columns(u16::try_from(self.width).unwrap_or(u16::MAX));
        let mut lines = Vec::new();
        let pending = self.markdown.pending();
        for row in &pending[pending.len().saturating_sub(PARTIAL_ROWS)..] {
            lines.push(Line::styled(row.as_str(), Style::Dim).truncated(columns));
        }
        if !self.partial.is_empty() {
            let rows = wrap(
                &Line::styled(self.partial.as_str(), self.partial_style),
                columns,
            );
            let skip = rows.len().saturating_sub(PARTIAL_ROWS);
            lines.extend(rows.into_iter().skip(skip).map(|(row, _)| row));
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
            self.finish_line(&text, self.partial_style);
        }
    }

    /// Ends the reply: its unfinished line, and a table or code block still open.
    fn end_reply(&mut self) {
        self.flush_partial();
        self.markdown.finish(self.width, &mut self.finished);
    }

    /// A complete line of the reply (rendered as Markdown) or of thinking (shown as written).
    fn finish_line(&mut self, text: &str, style: Style) {
        if style == Style::Plain {
            self.markdown.line(text, self.width, &mut self.finished);
        } else {
            self.finished.push(Line::styled(text, style));
        }
    }

    fn stream_text(&mut self, text: &str, style: Style) {
        if style != self.partial_style {
            self.end_reply();
            self.partial_style = style;
        }
        let mut rest = text;
        while let Some(end) = rest.find('\n') {
            self.partial.push_str(rest[..end].trim_end_matches('\r'));
            let line = std::mem::take(&mut self.partial);
            self.finish_line(&line, style);
            rest = &rest[end + 1..];
        }
        self.partial.push_str(rest);
        if self.partial.len() > PARTIAL_MAX {
            // Ended at the last space before the limit, else at a character.
            let mut cut = self.partial[..PARTIAL_MAX]
                .rfind(' ')
                .map_or(PARTIAL_MAX, |space| space + 1);
            while !self.partial.is_char_boundary(cut) {
                cut -= 1;
            }
            let rest = self.partial.split_off(cut);
            let line = std::mem::replace(&mut self.partial, rest);
            self.finish_line(line.trim_end_matches(' '), style);
        }
    }

    /// Whether a collapsed result is left for [`View::expand`].
    pub fn can_expand(&self) -> bool {
        !self.expandable.is_empty()
    }

    /// Shows the most recent collapsed result not shown whole yet, whole; false when there is
    /// none.
    pub fn expand(&mut self) -> bool {
        let Some(expandable) = self.expandable.pop_back() else {
            return false;
        };
        let Expandable {
            mut header,
            text,
            shown,
        } = expandable;
        let count = text.lines().count();
        if let Some(first) = header.0.first_mut() {
            "⤷".clone_into(&mut first.text);
            first.style = Style::Accent;
        }
        self.finished.push(header.with(
            format!(" · all {count} line{}", if count == 1 { "" } else { "s" }),
            Style::Dim,
        ));
        match shown {
            Shown::Diff => {
                let lines: Vec<&str> = text.lines().collect();
                self.finished.extend(diff_lines(&lines));
            }
            Shown::Text(style) => {
                for line in text.lines() {
                    self.finished.push(Line::styled(
                        format!("  {}", line.trim_end_matches('\r').replace('\t', "    ")),
                        style,
                    ));
                }
            }
        }
        true
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
                self.end_reply();
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
                self.end_reply();
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
                self.end_reply();
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
                self.end_reply();
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
        self.finished.push(header.clone());
        let diff = result.details.get("diff").and_then(Value::as_str);
        if let (false, Some(diff)) = (is_error, diff) {
            let lines: Vec<&str> = diff.lines().collect();
            self.finished
                .extend(diff_lines(&lines[..lines.len().min(DIFF_LINES)]));
            if lines.len() > DIFF_LINES {
                self.finished.push(Line::styled(
                    format!(
                        "  … {} more diff lines (ctrl+o shows all)",
                        lines.len() - DIFF_LINES
                    ),
                    Style::Dim,
                ));
                self.keep_expandable(header, diff.to_owned(), Shown::Diff);
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
                .map(|l| l.trim_end_matches('\r').replace('\t', "    "))
                .collect();
            (shown, all.len().saturating_sub(RESULT_LINES))
        };
        if hidden > 0 && tool == "bash" {
            self.finished.push(Line::styled(
                format!("  … {hidden} lines above (ctrl+o shows all)"),
                Style::Dim,
            ));
        }
        // A line is word-wrapped when printed; a very long one is cut to a few rows.
        let room = RESULT_ROWS * self.width.saturating_sub(1) - 2;
        let mut cut = false;
        for line in shown {
            let line = Line::styled(format!("  {line}"), style);
            cut |= line.width() > room;
            self.finished.push(line.truncated(room));
        }
        if hidden > 0 && tool != "bash" {
            self.finished.push(Line::styled(
                format!("  … {hidden} more lines (ctrl+o shows all)"),
                Style::Dim,
            ));
        } else if cut && hidden == 0 {
            self.finished
                .push(Line::styled("  (ctrl+o shows all)", Style::Dim));
        }
        if hidden > 0 || cut {
            self.keep_expandable(header, text, Shown::Text(style));
        }
    }

    fn keep_expandable(&mut self, header: Line, text: String, shown: Shown) {
        if self.expandable.len() == EXPANDABLE {
            self.expandable.pop_front();
        }
        self.expandable.push_back(Expandable {
            header,
            text,
            shown,
        });
    }
}

/// An edit's numbered diff lines (`-12 old`, `+12 new`, ` 13 same`) coloured, and where a run
/// of removed lines is followed by as many added ones, the words that changed inside each pair
/// highlighted.
fn diff_lines(lines: &[&str]) -> Vec<Line> {
    let sign = |line: &str| line.as_bytes().first().copied();
    let mut out = Vec::with_capacity(lines.len());
    let mut index = 0;
    while index < lines.len() {
        let removed = lines[index..]
            .iter()
            .take_while(|l| sign(l) == Some(b'-'))
            .count();
        let added = lines[index + removed..]
            .iter()
            .take_while(|l| sign(l) == Some(b'+'))
            .count();
        if removed > 0 && removed == added {
            let mut added_lines = Vec::with_capacity(added);
            for pair in 0..removed {
                let (old, new) = (lines[index + pair], lines[index + removed + pair]);
                let changes = similar::utils::diff_words(Algorithm::Myers, &old[1..], &new[1..]);
                out.push(changed_words(old, &changes, ChangeTag::Delete, Color::Red));
                added_lines.push(changed_words(
                    new,
                    &changes,
                    ChangeTag::Insert,
                    Color::Green,
                ));
            }
            out.extend(added_lines);
            index += removed * 2;
            continue;
        }
        // A run of another shape is coloured line by line, whole.
        for line in &lines[index..index + (removed + added).max(1)] {
            let style = match sign(line) {
                Some(b'+') => Style::Added,
                Some(b'-') => Style::Removed,
                _ => Style::Dim,
            };
            out.push(Line::styled(format!("  {line}"), style));
        }
        index += (removed + added).max(1);
    }
    out
}

/// One side of a changed pair: its sign, the words both sides share in its colour, and the
/// words only this side has (`side`) reversed.
fn changed_words(line: &str, changes: &[(ChangeTag, &str)], side: ChangeTag, color: Color) -> Line {
    let base = if side == ChangeTag::Insert {
        Style::Added
    } else {
        Style::Removed
    };
    let strong = Style::Rich(Rich {
        reverse: true,
        color: Some(color),
        ..Rich::default()
    });
    let mut out = Line::styled(format!("  {}", &line[..1]), base);
    for (tag, text) in changes {
        let style = match *tag {
            ChangeTag::Equal => base,
            tag if tag == side => strong,
            _ => continue,
        };
        match out.0.last_mut() {
            Some(last) if last.style == style => last.text.push_str(text),
            _ => out.0.push(Span {
                text: (*text).to_owned(),
                style,
            }),
        }
    }
    out
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
            view.apply(&text("abcdefgh, "));
        }
        assert!(view.partial.len() <= PARTIAL_MAX);
        let live = view.live();
        assert!(live.len() <= PARTIAL_ROWS);
        assert!(live.iter().all(|row| row.width() <= 80));
        // Lines were ended at a space: the words are whole.
        let finished = view.take_finished();
        assert!(!finished.is_empty());
        for line in &finished {
            assert!(
                line.text().ends_with(','),
                "{:?}",
                &line.text()[line.text().len() - 10..]
            );
        }
        let written: usize = finished.iter().map(|l| l.text().len() + 1).sum();
        assert_eq!(written + view.partial.len(), 100_000);
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
          … 94 lines above (ctrl+o shows all)
          95
          96
          97
          98
          99
          100
        ");
    }

    #[test]
    fn ctrl_o_shows_the_latest_collapsed_result_whole() {
        let mut view = View::new(60, Status::default());
        assert!(!view.expand());
        let output: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        for (id, command) in [("a", "first"), ("b", "second")] {
            view.apply(&AgentEvent::ToolExecutionStart {
                tool_call_id: id.into(),
                tool_name: "bash".into(),
                args: json!({ "command": command }),
            });
            view.apply(&AgentEvent::ToolExecutionEnd {
                tool_call_id: id.into(),
                tool_name: "bash".into(),
                result: ToolResult::text(output.clone()),
                is_error: false,
            });
        }
        let _ = view.take_finished();
        assert!(view.expand());
        insta::assert_snapshot!(render(&view.take_finished()), @r"
        ⤷ bash second · all 10 lines
          line 1
          line 2
          line 3
          line 4
          line 5
          line 6
          line 7
          line 8
          line 9
          line 10
        ");
        assert!(view.expand());
        assert!(view.take_finished()[0].text().starts_with("⤷ bash first"));
        assert!(!view.expand());
    }

    #[test]
    fn a_long_diff_expands_in_colour() {
        let mut view = View::new(60, Status::default());
        let diff: String = (1..=DIFF_LINES + 5)
            .map(|n| format!("-{n} old\n+{n} new\n"))
            .collect();
        view.apply(&AgentEvent::ToolExecutionEnd {
            tool_call_id: "e".into(),
            tool_name: "edit".into(),
            result: ToolResult::text("ok").with_details(json!({ "diff": diff })),
            is_error: false,
        });
        let shown = view.take_finished();
        assert!(
            shown
                .last()
                .unwrap()
                .text()
                .contains("more diff lines (ctrl+o shows all)")
        );
        assert!(view.expand());
        let expanded = view.take_finished();
        assert_eq!(expanded.len(), 1 + 2 * (DIFF_LINES + 5));
        assert_eq!(expanded[1].0[0].style, Style::Removed);
        assert_eq!(expanded.last().unwrap().0[0].style, Style::Added);
    }

    #[test]
    fn a_short_result_with_a_very_long_line_is_cut_and_expandable() {
        let mut view = View::new(20, Status::default());
        view.apply(&AgentEvent::ToolExecutionEnd {
            tool_call_id: "r".into(),
            tool_name: "read".into(),
            result: ToolResult::text("word ".repeat(100)),
            is_error: false,
        });
        let lines = view.take_finished();
        assert!(lines[1].width() <= RESULT_ROWS * 19);
        assert_eq!(lines[2].text(), "  (ctrl+o shows all)");
        assert!(view.expand());
    }

    #[test]
    fn replies_are_rendered_as_markdown_as_they_stream() {
        let mut view = View::new(40, Status::default());
        for delta in [
            "# Ti",
            "tle\nSome **bo",
            "ld** text\n| a | b |\n|---|",
            "---|\n| 1 | 2 |\n",
        ] {
            view.apply(&text(delta));
        }
        // The table waits for its end, shown as written meanwhile.
        assert_eq!(render(&view.live()), "| a | b |\n|---|---|\n| 1 | 2 |\n");
        view.apply(&text("done"));
        view.apply(&AgentEvent::MessageEnd {
            message: Message::Assistant(jig_protocol::AssistantMessage::empty("p", "m")),
        });
        insta::assert_snapshot!(render(&view.take_finished()), @r"
        Title
        Some bold text
        ┌───┬───┐
        │ a │ b │
        ├───┼───┤
        │ 1 │ 2 │
        └───┴───┘
        done
        ");
    }

    #[test]
    fn changed_words_in_a_diff_are_highlighted() {
        let lines = diff_lines(&["-3 let total = a + b;", "+3 let total = a - b;", " 4 same"]);
        let strong: Vec<(String, Style)> = lines
            .iter()
            .flat_map(|l| l.0.iter())
            .filter(|span| matches!(span.style, Style::Rich(_)))
            .map(|span| (span.text.clone(), span.style))
            .collect();
        assert_eq!(strong.len(), 2, "{strong:?}");
        assert_eq!(strong[0].0, "+");
        assert_eq!(strong[1].0, "-");
        assert_eq!(lines[0].text(), "  -3 let total = a + b;");
        assert_eq!(lines[1].text(), "  +3 let total = a - b;");
        assert_eq!(lines[2].0[0].style, Style::Dim);
        // Unpaired runs are coloured whole.
        let lines = diff_lines(&["-1 a", "-2 b", "+1 c"]);
        assert!(lines.iter().all(|l| l.0.len() == 1));
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
    }
}
