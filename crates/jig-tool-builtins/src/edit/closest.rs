//! Finding the region of a file that looks most like an `oldText` that matched nowhere, so the
//! not-found message can show the model what is really there.
//!
//! Bounded on big files: one linear pass scores every line against a few anchor lines of
//! `oldText` with a 256-bit bigram signature (no allocation per line); only the best few
//! windows are then compared precisely, on at most [`MAX_COMPARED_BYTES`], under a deadline.

use std::time::Duration;

use memchr::memchr_iter;
use similar::TextDiff;

/// Lines shown in the excerpt.
const EXCERPT_LINES: usize = 8;
/// Characters shown of one excerpt line.
const EXCERPT_LINE_CHARS: usize = 160;
/// Anchor lines of oldText the file is scanned for.
const ANCHORS: usize = 3;
/// Best lines kept per anchor.
const CANDIDATES_PER_ANCHOR: usize = 4;
/// Bytes of each side given to the precise comparison.
const MAX_COMPARED_BYTES: usize = 8 * 1024;
/// Below this similarity nothing is shown.
const MIN_SIMILARITY: f32 = 0.4;

/// The most similar region: 1-based inclusive line range, similarity in percent, and the first
/// lines of the region (number, text).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Closest {
    pub(crate) start_line: usize,
    pub(crate) end_line: usize,
    pub(crate) similarity_percent: u32,
    pub(crate) excerpt: Vec<(usize, String)>,
}

type Signature = [u64; 4];

fn signature(line: &str) -> Signature {
    let mut sig = [0_u64; 4];
    let bytes = line.trim().as_bytes();
    let mut set = |h: u32| {
        let bit = (h.wrapping_mul(0x9E37_79B1) >> 24) as usize;
        sig[bit / 64] |= 1 << (bit % 64);
    };
    if bytes.len() == 1 {
        set(u32::from(bytes[0]));
    }
    for pair in bytes.windows(2) {
        set(u32::from(pair[0]) << 8 | u32::from(pair[1]));
    }
    sig
}

#[expect(clippy::cast_precision_loss, reason = "bit counts are at most 256")]
fn jaccard(a: &Signature, b: &Signature) -> f32 {
    let (mut both, mut either) = (0_u32, 0_u32);
    for k in 0..4 {
        both += (a[k] & b[k]).count_ones();
        either += (a[k] | b[k]).count_ones();
    }
    if either == 0 {
        0.0
    } else {
        both as f32 / either as f32
    }
}

/// The region of `view` (LF line breaks) most similar to `old`, if any is similar enough.
pub(crate) fn find_closest(view: &str, old: &str) -> Option<Closest> {
    let old_lines: Vec<&str> = old.strip_suffix('\n').unwrap_or(old).split('\n').collect();
    let mut anchors: Vec<(usize, &str)> = old_lines
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    if anchors.is_empty() {
        return None;
    }
    anchors.sort_by_key(|(_, l)| std::cmp::Reverse(l.trim().len()));
    anchors.truncate(ANCHORS);
    let anchor_sigs: Vec<Signature> = anchors.iter().map(|(_, l)| signature(l)).collect();

    // best[k]: (score, line index) of the best lines for anchor k, best first.
    let mut best: Vec<Vec<(f32, usize)>> = vec![Vec::new(); anchors.len()];
    let mut line_starts: Vec<usize> = Vec::new();
    let bytes = view.as_bytes();
    let mut start = 0;
    let ends = memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
    for (index, end) in ends.enumerate() {
        line_starts.push(start);
        let line = &view[start..end];
        if !line.trim().is_empty() {
            let sig = signature(line);
            for (k, anchor_sig) in anchor_sigs.iter().enumerate() {
                let score = jaccard(&sig, anchor_sig);
                let list = &mut best[k];
                if list.len() < CANDIDATES_PER_ANCHOR || score > list[list.len() - 1].0 {
                    let at = list.partition_point(|&(s, _)| s >= score);
                    list.insert(at, (score, index));
                    list.truncate(CANDIDATES_PER_ANCHOR);
                }
            }
        }
        start = end + 1;
    }

    let mut windows: Vec<usize> = Vec::new();
    for (k, list) in best.iter().enumerate() {
        for &(_, line) in list {
            let first = line.saturating_sub(anchors[k].0);
            if !windows.contains(&first) {
                windows.push(first);
            }
        }
    }
    let total_lines = line_starts.len();
    let line_text = |i: usize| -> &str {
        let s = line_starts[i];
        let e = line_starts.get(i + 1).map_or(view.len(), |&n| n - 1);
        &view[s..e]
    };
    let old_compared = cut(old, MAX_COMPARED_BYTES);
    let per_window = Duration::from_millis(200 / windows.len().max(1) as u64 + 1);
    let mut winner: Option<(f32, usize, usize)> = None;
    for first in windows {
        let last = (first + old_lines.len()).min(total_lines) - 1;
        let region =
            &view[line_starts[first]..line_starts.get(last + 1).map_or(view.len(), |&n| n - 1)];
        let ratio = TextDiff::configure()
            .timeout(per_window)
            .diff_chars(old_compared, cut(region, MAX_COMPARED_BYTES))
            .ratio();
        if winner.is_none_or(|(best, ..)| ratio > best) {
            winner = Some((ratio, first, last));
        }
    }
    let (ratio, first, last) = winner?;
    if ratio < MIN_SIMILARITY {
        return None;
    }
    let excerpt = (first..=last.min(first + EXCERPT_LINES - 1))
        .map(|i| {
            let text = line_text(i);
            let shown = match text.char_indices().nth(EXCERPT_LINE_CHARS) {
                Some((at, _)) => format!("{}…", &text[..at]),
                None => text.to_owned(),
            };
            (i + 1, shown)
        })
        .collect();
    Some(Closest {
        start_line: first + 1,
        end_line: last + 1,
        similarity_percent: percent(ratio),
        excerpt,
    })
}

#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a ratio in 0..=1 times 100"
)]
fn percent(ratio: f32) -> u32 {
    (ratio.clamp(0.0, 1.0) * 100.0).round() as u32
}

fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    &text[..at]
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    #[test]
    fn finds_the_nearly_matching_block() {
        let mut view = String::new();
        for i in 0..500 {
            let _ = writeln!(view, "let value_{i} = compute({i});");
        }
        view.push_str("fn target() {\n    println!(\"hello world\");\n}\n");
        let closest =
            find_closest(&view, "fn target() {\n    println!(\"hello, world\");\n}").unwrap();
        assert_eq!((closest.start_line, closest.end_line), (501, 503));
        assert!(closest.similarity_percent > 90);
        assert_eq!(closest.excerpt[0], (501, "fn target() {".to_owned()));
    }

    #[test]
    fn nothing_similar_is_none() {
        assert_eq!(find_closest("aaaa\nbbbb\n", "zzzz qqqq xxxx"), None);
    }
}
