//! Frame time of the interactive renderer under a flood: a 10 MB streamed reply and a bash
//! command printing 100 000 lines.
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

    // A reply of prose lines of varying length, some longer than the screen.
    let words = [
        "the ",
        "renderer ",
        "keeps ",
        "only ",
        "a ",
        "tail ",
        "of ",
        "the ",
        "stream ",
        "in ",
        "memory, ",
        "and ",
        "prints ",
        "finished ",
        "lines ",
        "once.\n",
    ];
    let mut pending = String::new();
    let mut sent = 0usize;
    let mut word = 0usize;
    while sent < REPLY_BYTES {
        let started = Instant::now();
        for _ in 0..DELTAS_PER_FRAME {
            while pending.len() < DELTA_BYTES {
                pending.push_str(words[word % words.len()]);
                word += 1;
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
