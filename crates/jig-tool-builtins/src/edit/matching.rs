//! Planning a batch of edits against the original text: every `oldText` is located in the
//! original (never incrementally), the batch is validated as a whole, and the result is a list of
//! byte spans of the original with the exact bytes to put there.

use std::borrow::Cow;

use super::closest::{Closest, find_closest};
use super::text::{LfView, LineCounter, LineEnding, Source, apply_ending, normalize_newlines};
use super::tolerant::{self, Tier, TierOutcome, find_all};

/// One requested replacement, as the model sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EditRequest {
    pub(crate) old_text: String,
    pub(crate) new_text: String,
}

/// One replacement of the plan: `original[start..end]` becomes `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replacement {
    /// The edit's index in the request (`edits[index]`).
    pub(crate) index: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// The inserted bytes, line endings already converted to the file's.
    pub(crate) text: String,
    /// The tolerant tier that located the span, `None` for an exact match.
    pub(crate) tier: Option<Tier>,
}

/// Why a batch cannot be applied. Indexes are 0-based, as in `edits[0]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PlanError {
    EmptyOldText {
        index: usize,
    },
    NotFound {
        index: usize,
        closest: Option<Closest>,
    },
    Ambiguous {
        index: usize,
        count: usize,
        saturated: bool,
        lines: Vec<usize>,
        tier: Option<Tier>,
    },
    /// A tolerant tier found the block but cannot be sure what `newText` means there.
    Refused {
        index: usize,
        tier: Tier,
        line: usize,
        reason: String,
    },
    Overlap {
        first: usize,
        second: usize,
        first_lines: (usize, usize),
        second_lines: (usize, usize),
    },
    NoChange,
}

/// Locates every edit in `text` (the file's text without BOM) and returns the replacements
/// sorted by position, or the first problem found (edits are checked in request order).
pub(crate) fn plan(
    source: Source<'_>,
    edits: &[EditRequest],
) -> Result<Vec<Replacement>, PlanError> {
    let text = source.text;
    let mut view: Option<LfView<'_>> = None;
    let mut located: Vec<Replacement> = Vec::with_capacity(edits.len());
    let mut dominant: Option<LineEnding> = None;

    for (index, edit) in edits.iter().enumerate() {
        let old = normalize_newlines(&edit.old_text);
        let new = normalize_newlines(&edit.new_text);
        if old.is_empty() {
            return Err(PlanError::EmptyOldText { index });
        }
        let (start, end, inserted, tier) = locate(source, &mut view, index, &old, &new)?;
        let ending = match source.first_break_in(start, end) {
            Some(ending) => ending,
            None => *dominant.get_or_insert_with(|| source.dominant_ending()),
        };
        let text = apply_ending(&inserted, ending).into_owned();
        located.push(Replacement {
            index,
            start,
            end,
            text,
            tier,
        });
    }

    located.sort_by_key(|r| (r.start, r.end, r.index));
    for pair in located.windows(2) {
        if pair[0].end > pair[1].start {
            let (a, b) = if pair[0].index < pair[1].index {
                (&pair[0], &pair[1])
            } else {
                (&pair[1], &pair[0])
            };
            return Err(PlanError::Overlap {
                first: a.index,
                second: b.index,
                first_lines: line_range(source, a.start, a.end),
                second_lines: line_range(source, b.start, b.end),
            });
        }
    }
    if located.iter().all(|r| text[r.start..r.end] == r.text) {
        return Err(PlanError::NoChange);
    }
    Ok(located)
}

/// 1-based first and last line of `text[start..end]`.
fn line_range(source: Source<'_>, start: usize, end: usize) -> (usize, usize) {
    let first = source.count_breaks(0, start) + 1;
    let inner_end = if end > start { end - 1 } else { end };
    (
        first,
        first + source.count_breaks(start, inner_end.max(start)),
    )
}

type Located<'n> = (usize, usize, Cow<'n, str>, Option<Tier>);

fn locate<'a, 'n>(
    source: Source<'a>,
    view: &mut Option<LfView<'a>>,
    index: usize,
    old: &str,
    new: &'n str,
) -> Result<Located<'n>, PlanError> {
    // Exact: on the original bytes when line endings cannot matter (no `\r` in the file, or no
    // line break in oldText), else on the LF view. Occurrences are counted exactly, overlaps
    // included, so tolerant tiers never decide uniqueness of an exact match.
    let direct = !source.has_cr || !old.contains('\n');
    let hay = if direct {
        source.text
    } else {
        &view.get_or_insert_with(|| LfView::new(source)).text
    };
    let (starts, count, saturated) = find_all(hay.as_bytes(), old.as_bytes());
    if count == 1 {
        let (start, end) = if direct {
            (starts[0], starts[0] + old.len())
        } else {
            let view = view_ref(view, source);
            (
                view.to_original(starts[0]),
                view.to_original(starts[0] + old.len()),
            )
        };
        return Ok((start, end, Cow::Borrowed(new), None));
    }
    if count > 1 {
        return Err(PlanError::Ambiguous {
            index,
            count,
            saturated,
            lines: if direct {
                lines_in_source(source, &starts)
            } else {
                lines_of(hay, &starts)
            },
            tier: None,
        });
    }

    let view = view.get_or_insert_with(|| LfView::new(source));
    match tolerant::locate(&view.text, old, new) {
        Some((tier, TierOutcome::Unique(found))) => Ok((
            view.to_original(found.start),
            view.to_original(found.end),
            Cow::Owned(found.new_text),
            Some(tier),
        )),
        Some((
            tier,
            TierOutcome::Ambiguous {
                starts,
                count,
                saturated,
            },
        )) => Err(PlanError::Ambiguous {
            index,
            count,
            saturated,
            lines: lines_of(&view.text, &starts),
            tier: Some(tier),
        }),
        Some((tier, TierOutcome::Refused { start, reason })) => Err(PlanError::Refused {
            index,
            tier,
            line: lines_of(&view.text, &[start])[0],
            reason,
        }),
        Some((_, TierOutcome::None)) | None => Err(PlanError::NotFound {
            index,
            closest: find_closest(&view.text, old),
        }),
    }
}

fn view_ref<'v, 'a>(view: &'v mut Option<LfView<'a>>, source: Source<'a>) -> &'v LfView<'a> {
    view.get_or_insert_with(|| LfView::new(source))
}

/// 1-based line numbers of offsets of the original text (any line endings).
fn lines_in_source(source: Source<'_>, starts: &[usize]) -> Vec<usize> {
    let mut sorted = starts.to_vec();
    sorted.sort_unstable();
    let mut line = 1;
    let mut at = 0;
    sorted
        .iter()
        .map(|&s| {
            line += source.count_breaks(at, s);
            at = s;
            line
        })
        .collect()
}

/// 1-based line numbers of offsets of an LF text.
fn lines_of(text: &str, starts: &[usize]) -> Vec<usize> {
    let mut counter = LineCounter::new(text);
    let mut sorted = starts.to_vec();
    sorted.sort_unstable();
    sorted.iter().map(|&s| counter.line_of(s)).collect()
}

/// The planned text: `original` with every replacement spliced in, appended to `out`.
pub(crate) fn splice_into(out: &mut Vec<u8>, original: &str, plan: &[Replacement]) {
    let mut copied = 0;
    for replacement in plan {
        out.extend_from_slice(&original.as_bytes()[copied..replacement.start]);
        out.extend_from_slice(replacement.text.as_bytes());
        copied = replacement.end;
    }
    out.extend_from_slice(&original.as_bytes()[copied..]);
}

/// Applies `plan` (offsets relative to `buf[offset..]`) to `buf` in place: one pass over the
/// bytes that move, no second copy of the file. Every unchanged run has a destination; runs
/// moving left are moved in increasing order and runs moving right in decreasing order, so no
/// run is overwritten before it has moved; inserted texts are written last.
pub(crate) fn splice_in_place(buf: &mut Vec<u8>, offset: usize, plan: &[Replacement]) {
    let old_len = buf.len();
    let new_len = offset + spliced_len_of(old_len - offset, plan);
    // Unchanged runs (source start, length, destination start) and insertions (destination).
    let mut runs = Vec::with_capacity(plan.len() + 1);
    let mut inserts = Vec::with_capacity(plan.len());
    let mut source = offset;
    let mut destination = offset;
    for replacement in plan {
        let start = offset + replacement.start;
        runs.push((source, start - source, destination));
        destination += start - source;
        inserts.push(destination);
        destination += replacement.text.len();
        source = offset + replacement.end;
    }
    runs.push((source, old_len - source, destination));
    if new_len > old_len {
        buf.resize(new_len, 0);
    }
    for &(from, len, to) in &runs {
        if to < from {
            buf.copy_within(from..from + len, to);
        }
    }
    for &(from, len, to) in runs.iter().rev() {
        if to > from {
            buf.copy_within(from..from + len, to);
        }
    }
    for (replacement, &at) in plan.iter().zip(&inserts) {
        buf[at..at + replacement.text.len()].copy_from_slice(replacement.text.as_bytes());
    }
    buf.truncate(new_len);
}

fn spliced_len_of(len: usize, plan: &[Replacement]) -> usize {
    let removed: usize = plan.iter().map(|r| r.end - r.start).sum();
    let added: usize = plan.iter().map(|r| r.text.len()).sum();
    len - removed + added
}

/// The size of the spliced text, to allocate once.
pub(crate) fn spliced_len(original: &str, plan: &[Replacement]) -> usize {
    spliced_len_of(original.len(), plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> EditRequest {
        EditRequest {
            old_text: old.to_owned(),
            new_text: new.to_owned(),
        }
    }

    fn apply(text: &str, edits: &[EditRequest]) -> Result<String, PlanError> {
        let plan = plan(Source::new(text), edits)?;
        let mut out = Vec::new();
        splice_into(&mut out, text, &plan);
        assert_eq!(out.len(), spliced_len(text, &plan));
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn splicing_in_place_equals_splicing_into_a_copy() {
        let text = "0123456789abcdefghij";
        let cases: &[&[(&str, &str)]] = &[
            &[("12", "XXXXXX"), ("5", ""), ("cd", "Y"), ("ij", "ZZZZ")],
            &[("0", ""), ("9", "long long long")],
            &[("abc", "")],
            &[("j", "+++")],
            &[("0123", "_"), ("efgh", "-------------")],
        ];
        for edits in cases {
            let requests: Vec<EditRequest> = edits.iter().map(|(o, n)| edit(o, n)).collect();
            let plan = plan(Source::new(text), &requests).unwrap();
            let mut copy = b"BOM".to_vec();
            splice_into(&mut copy, text, &plan);
            let mut in_place = format!("BOM{text}").into_bytes();
            splice_in_place(&mut in_place, 3, &plan);
            assert_eq!(
                String::from_utf8(in_place).unwrap(),
                String::from_utf8(copy).unwrap()
            );
        }
    }

    #[test]
    fn matches_every_edit_against_the_original() {
        let out = apply("a b c", &[edit("a", "b"), edit("b", "c")]).unwrap();
        assert_eq!(out, "b c c");
    }

    #[test]
    fn overlapping_occurrences_are_ambiguous() {
        let error = apply("aaa", &[edit("aa", "x")]).unwrap_err();
        assert!(matches!(error, PlanError::Ambiguous { count: 2, .. }));
    }

    #[test]
    fn same_same_fails() {
        let error = apply("same same", &[edit("same", "X")]).unwrap_err();
        assert_eq!(
            error,
            PlanError::Ambiguous {
                index: 0,
                count: 2,
                saturated: false,
                lines: vec![1, 1],
                tier: None
            }
        );
    }

    #[test]
    fn exact_unique_wins_over_whitespace_lookalikes() {
        // Pi rejects this: the other line differs only by trailing whitespace.
        let out = apply("foo\nfoo  \n", &[edit("foo\n", "bar\n")]).unwrap();
        assert_eq!(out, "bar\nfoo  \n");
    }

    #[test]
    fn overlap_names_both_indexes_and_touching_is_fine() {
        let error = apply("abcdef", &[edit("cde", "x"), edit("abc", "y")]).unwrap_err();
        assert!(matches!(
            error,
            PlanError::Overlap {
                first: 0,
                second: 1,
                ..
            }
        ));
        assert_eq!(
            apply("abcdef", &[edit("def", "x"), edit("abc", "y")]).unwrap(),
            "yx"
        );
    }

    #[test]
    fn crlf_file_matches_lf_old_text_and_keeps_endings() {
        let text = "\r\none\r\ntwo\r\nthree\nfour\r\n";
        let out = apply(text, &[edit("one\ntwo\n", "1\n2\n")]).unwrap();
        assert_eq!(out, "\r\n1\r\n2\r\nthree\nfour\r\n");
    }

    #[test]
    fn insertion_without_break_in_span_takes_dominant_ending() {
        let out = apply("a\r\nb\r\nc\n", &[edit("b", "b\nbb")]).unwrap();
        assert_eq!(out, "a\r\nb\r\nbb\r\nc\n");
        let out = apply("a\rb\rc", &[edit("a\nb", "x\ny")]).unwrap();
        assert_eq!(out, "x\ry\rc");
    }

    #[test]
    fn new_text_is_literal() {
        let out = apply("x", &[edit("x", "$& $1 $$ \\n")]).unwrap();
        assert_eq!(out, "$& $1 $$ \\n");
    }

    #[test]
    fn no_change_and_empty_old_text() {
        assert_eq!(
            apply("abc", &[edit("b", "b")]).unwrap_err(),
            PlanError::NoChange
        );
        assert_eq!(
            apply("abc", &[edit("", "b")]).unwrap_err(),
            PlanError::EmptyOldText { index: 0 }
        );
    }

    #[test]
    fn tolerant_span_is_spliced_into_original_bytes() {
        let text = "keep\u{A0}  \r\nfoo  \r\nbar\r\nkeep\u{2019}\r\n";
        let out = apply(text, &[edit("foo\nbar", "X")]).unwrap();
        assert_eq!(out, "keep\u{A0}  \r\nX\r\nkeep\u{2019}\r\n");
        let plan = plan(Source::new(text), &[edit("foo\nbar", "X")]).unwrap();
        assert_eq!(plan[0].tier, Some(Tier::TrailingWhitespace));
    }
}
