//! Frame time of the interactive renderer under a flood: a 10 MB streamed Markdown reply (prose
//! wider than the screen, lists, tables and highlighted code blocks) and a bash command printing
//! 100 000 lines.
//!
//! ```text
//! cargo bench -p jig-tui --bench render
//! ```
//!
//! A frame is what the session does about 60 times a second while a run streams: apply the
//! events that arrived since the last frame to the [`View`], then draw the finished lines and
//! the live region through [`Screen`] (into memory; a terminal's own drawing is not jig's cost).
//! The reply arrives in 16-byte deltas; a frame takes the deltas of 16 ms of a fast stream
//! (2 000 deltas, about 32 KB) — a worst case, since a real model streams far fewer. The command's
//! output arrives as the bash tool sends it: an update (the output's last 50 KB) every 1 000
//! lines. Events are generated on the fly, so the peak resident memory growth printed at the end
//! is the renderer's own.
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![expect(clippy::expect_used, reason = "drawing into memory cannot fail")]
#![expect(
    clippy::cast_precision_loss,
    reason = "durations and sizes as floating-point numbers for a report"
)]

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use jig_agent::AgentEvent;
use jig_llm::StreamEvent;
use jig_protocol::ToolResult;
use jig_tui::screen::Screen;
use jig_tui::view::{Status, View};
use serde_json::json;

const REPLY_BYTES: usize = 10 * 1024 * 1024;
const DELTA_BYTES: usize = 16;
const DELTAS_PER_FRAME: usize = 2_000;
const BASH_LINES: usize = 100_000;
const LINES_PER_UPDATE: usize = 1_000;
const TAIL_BYTES: usize = 50 * 1024;

fn main() {
    let rss_before = peak_rss_kb();
    let mut view = View::new(80, Status::default());
    let mut screen = Screen::new(Vec::with_capacity(1 << 20), 80, true);
    let mut frames = Vec::new();

    // A Markdown reply repeating one section: a heading, prose lines longer than the screen
    // (word-wrapped), a list, a table, and a Rust code block (highlighted line by line); about
    // a third of it is code.
    let section = SECTION.as_bytes();
    let mut pending = String::new();
    let mut sent = 0usize;
    let mut at = 0usize;
    while sent < REPLY_BYTES {
        let started = Instant::now();
        for _ in 0..DELTAS_PER_FRAME {
            while pending.len() < DELTA_BYTES {
                let end = (at + DELTA_BYTES).min(section.len());
                pending.push_str(std::str::from_utf8(&section[at..end]).expect("ASCII"));
                at = if end == section.len() { 0 } else { end };
            }
            let rest = pending.split_off(DELTA_BYTES);
            let delta = std::mem::replace(&mut pending, rest);
            sent += delta.len();
            view.apply(&AgentEvent::MessageUpdate {
                delta: StreamEvent::TextDelta { text: delta },
            });
        }
        frame(&mut view, &mut screen);
        frames.push(started.elapsed());
    }
    report("10 MB reply", &mut frames);

    view.apply(&AgentEvent::ToolExecutionStart {
        tool_call_id: "c".into(),
        tool_name: "bash".into(),
        args: json!({"command": "seq 100000"}),
    });
    let mut tail = String::new();
    for chunk in 0..BASH_LINES / LINES_PER_UPDATE {
        for line in chunk * LINES_PER_UPDATE..(chunk + 1) * LINES_PER_UPDATE {
            let _ = writeln!(tail, "output line {line}");
        }
        if tail.len() > TAIL_BYTES {
            let mut cut = tail.len() - TAIL_BYTES;
            while !tail.is_char_boundary(cut) {
                cut += 1;
            }
            tail.drain(..cut);
        }
        let started = Instant::now();
        view.apply(&AgentEvent::ToolExecutionUpdate {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            partial_result: ToolResult::text(tail.clone()),
        });
        frame(&mut view, &mut screen);
        frames.push(started.elapsed());
    }
    let started = Instant::now();
    view.apply(&AgentEvent::ToolExecutionEnd {
        tool_call_id: "c".into(),
        tool_name: "bash".into(),
        result: ToolResult::text(tail),
        is_error: false,
    });
    frame(&mut view, &mut screen);
    frames.push(started.elapsed());
    report("bash printing 100k lines", &mut frames);

    let rss_after = peak_rss_kb();
    match (rss_before, rss_after) {
        (Some(before), Some(after)) => println!(
            "peak resident memory: {:.1} MB before, {:.1} MB after (growth {:.1} MB)",
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            after.saturating_sub(before) as f64 / 1024.0
        ),
        _ => println!("peak resident memory: not available on this system"),
    }
}

const SECTION: &str = "## The renderer\n\
The renderer keeps only the tail of the stream in memory and prints **finished** lines once, \
word-wrapped at the terminal's width, with `code spans`, *emphasis* and [links](https://example.com) \
rendered as they arrive; a line longer than the screen is broken between words, never inside one.\n\
- a list item with `inline code`\n\
- another item, **bold**\n\
  1. a nested, numbered item\n\
\n\
| Case | Frames | Median |\n\
|:--|--:|--:|\n\
| reply | 328 | 0.7 ms |\n\
| bash | 101 | 0.02 ms |\n\
\n\
```rust\n\
/// Applies one event of a run.\n\
pub fn apply(&mut self, event: &AgentEvent) -> Result<usize, Error> {\n\
    let mut count = 0_usize;\n\
    for line in event.text().lines().filter(|l| !l.is_empty()) {\n\
        self.finished.push(Line::styled(format!(\"  {line}\"), Style::Dim));\n\
        count += 1;\n\
    }\n\
    match self.state {\n\
        State::Idle => Ok(count),\n\
        State::Busy { since } if since.elapsed().as_secs() > 10 => Err(Error::Slow),\n\
        _ => Ok(count + 1),\n\
    }\n\
}\n\
```\n\
> A quoted remark about *the* renderer.\n\
\n";

fn frame(view: &mut View, screen: &mut Screen<Vec<u8>>) {
    let finished = view.take_finished();
    let mut live = view.live();
    live.push(view.status.line(true));
    screen.draw(&finished, &live).expect("drawing into memory");
    // The terminal consumed it.
    screen.get_mut().clear();
}

fn report(name: &str, frames: &mut Vec<Duration>) {
    frames.sort();
    let at = |q: f64| {
        let index = ((frames.len() - 1) as f64 * q).round();
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "an index within the vector"
        )]
        frames[index as usize]
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name}: {} frames, frame time median {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        frames.len(),
        ms(at(0.5)),
        ms(at(0.99)),
        ms(at(1.0))
    );
    frames.clear();
}

/// `VmHWM` of this process in KB (Linux).
fn peak_rss_kb() -> Option<u64> {
    #[expect(
        clippy::disallowed_methods,
        reason = "the benchmark reads its own /proc status"
    )]
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}
