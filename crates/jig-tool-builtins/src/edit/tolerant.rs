//! Tolerant matching: used only when an `oldText` has no exact occurrence.
//!
//! A tier never rewrites the file. It only *locates* a span of the (LF) view whose text differs
//! from `oldText` in a way the tier forgives; the caller then splices `newText` into the
//! original bytes at that span, so every byte outside it is kept. Tiers are independent: each is
//! tried alone, in the order of [`Tier::ALL`], and each still requires a unique match.

use std::borrow::Cow;

use memchr::{memchr_iter, memmem};
use unicode_normalization::char::decompose_compatible;

/// Occurrences counted before a search stops (the message then says "more than").
pub(crate) const MAX_COUNTED: usize = 1000;

/// A tolerant matching tier, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    /// Lines differing only in trailing whitespace.
    TrailingWhitespace,
    /// Smart quotes, dashes, NBSP and other spaces, compatibility forms (NFKC/NFKD).
    Unicode,
    /// The whole block shifted by the same leading whitespace (tabs vs spaces included).
    Indentation,
    /// Line-number prefixes (`   12│ `) copied from `read` output.
    LineNumbers,
}

impl Tier {
    pub(crate) const ALL: [Self; 4] = [
        Self::TrailingWhitespace,
        Self::Unicode,
        Self::Indentation,
        Self::LineNumbers,
    ];

    /// The name used in `details.fuzzy`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::TrailingWhitespace => "trailing-whitespace",
            Self::Unicode => "unicode",
            Self::Indentation => "indentation",
            Self::LineNumbers => "line-numbers",
        }
    }

    /// What the tier forgave, for the model ("ignoring …").
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Self::TrailingWhitespace => "ignoring trailing whitespace",
            Self::Unicode => "treating Unicode quotes, dashes and spaces as their ASCII forms",
            Self::Indentation => {
                "ignoring a uniform indentation difference (newText was re-indented to match)"
            }
            Self::LineNumbers => "after stripping line-number prefixes copied from read output",
        }
    }
}

/// A located span (view offsets) and the text to put there (LF line breaks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) new_text: String,
}

/// What one tier found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TierOutcome {
    /// Exactly one span.
    Unique(Located),
    /// Several spans: their view start offsets (the first [`MAX_LISTED`]) and the count.
    Ambiguous {
        starts: Vec<usize>,
        count: usize,
        saturated: bool,
    },
    /// The block was found, but `newText` cannot be re-indented the same way.
    Unreindentable { start: usize, line: usize },
    /// Nothing (or the tier does not apply to this `oldText`).
    None,
}

/// At most this many candidate positions are kept for messages.
pub(crate) const MAX_LISTED: usize = 20;

/// Tries every tier in order and returns the first that found something.
pub(crate) fn locate(view: &str, old: &str, new: &str) -> Option<(Tier, TierOutcome)> {
    for tier in Tier::ALL {
        let outcome = match tier {
            Tier::TrailingWhitespace => trailing_whitespace(view, old, new),
            Tier::Unicode => unicode(view, old, new),
            Tier::Indentation => indentation(view, old, new),
            Tier::LineNumbers => line_numbers(view, old, new),
        };
        if outcome != TierOutcome::None {
            return Some((tier, outcome));
        }
    }
    None
}

/// Every occurrence of `needle` in `hay`, overlapping ones included (`aa` occurs twice in
/// `aaa`): the first [`MAX_LISTED`] starts, the count, and whether counting stopped at
/// [`MAX_COUNTED`].
pub(crate) fn find_all(hay: &[u8], needle: &[u8]) -> (Vec<usize>, usize, bool) {
    find_all_where(hay, needle, |_| true)
}

/// [`find_all`], counting only occurrences whose start satisfies `accept`.
fn find_all_where(
    hay: &[u8],
    needle: &[u8],
    accept: impl Fn(usize) -> bool,
) -> (Vec<usize>, usize, bool) {
    let finder = memmem::Finder::new(needle);
    let mut starts = Vec::new();
    let mut count = 0;
    let mut from = 0;
    while let Some(i) = finder.find(&hay[from..]) {
        let at = from + i;
        from = at + 1;
        if !accept(at) {
            continue;
        }
        count += 1;
        if starts.len() < MAX_LISTED {
            starts.push(at);
        }
        if count >= MAX_COUNTED {
            return (starts, count, true);
        }
    }
    (starts, count, false)
}

/// A text after a tier's normalisation, with the way back to the view's offsets.
///
/// `pieces` lists, in order, every place where the normalised text differs from the source:
/// `source[src..src + src_len]` became `text[norm..norm + norm_len]`; elsewhere the two are
/// byte-for-byte equal.
#[derive(Debug, Default)]
struct Mapped {
    text: String,
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, Copy)]
struct Piece {
    norm: usize,
    norm_len: usize,
    src: usize,
    src_len: usize,
}

impl Mapped {
    /// Source offset of normalised offset `n`. Inside a changed piece a start widens to the
    /// piece's start and an end to its end; at a deletion, a start lands after the deleted
    /// bytes and an end before them (unless `end_takes_deleted`).
    fn to_source(&self, n: usize, is_end: bool, end_takes_deleted: bool) -> usize {
        let k = self.pieces.partition_point(|p| p.norm <= n);
        if k == 0 {
            return n;
        }
        let p = self.pieces[k - 1];
        let norm_end = p.norm + p.norm_len;
        if n < norm_end {
            if n == p.norm || !is_end {
                p.src
            } else {
                p.src + p.src_len
            }
        } else if n == p.norm && p.norm_len == 0 && is_end && !end_takes_deleted {
            p.src
        } else {
            p.src + p.src_len + (n - norm_end)
        }
    }
}

fn is_horizontal_space(c: char) -> bool {
    c != '\n' && c.is_whitespace()
}

/// Each line without its trailing whitespace.
fn strip_trailing(text: &str) -> Mapped {
    let mut out = Mapped {
        text: String::with_capacity(text.len()),
        pieces: Vec::new(),
    };
    let mut line_start = 0;
    for line in text.split('\n') {
        let kept = line.trim_end_matches(is_horizontal_space);
        out.text.push_str(kept);
        if kept.len() < line.len() {
            out.pieces.push(Piece {
                norm: out.text.len(),
                norm_len: 0,
                src: line_start + kept.len(),
                src_len: line.len() - kept.len(),
            });
        }
        line_start += line.len() + 1;
        if line_start <= text.len() {
            out.text.push('\n');
        }
    }
    out
}

fn trailing_whitespace(view: &str, old: &str, new: &str) -> TierOutcome {
    let old_norm = strip_trailing(old).text;
    let content = strip_trailing(view);
    if old_norm.is_empty() {
        return TierOutcome::None;
    }
    let last_old_line = old.rsplit('\n').next().unwrap_or(old);
    let old_ends_in_space = last_old_line.ends_with(is_horizontal_space);
    // When oldText's last line lost trailing whitespace, the match must end a line: otherwise
    // `foo ` would be allowed to match the `foo` of `foobar`.
    let bytes = content.text.as_bytes();
    let (starts, count, saturated) = find_all_where(bytes, old_norm.as_bytes(), |s| {
        !old_ends_in_space || matches!(bytes.get(s + old_norm.len()), None | Some(b'\n'))
    });
    spans_outcome(
        &content,
        &starts,
        count,
        saturated,
        old_norm.len(),
        old_ends_in_space,
        new,
    )
}

fn spans_outcome(
    content: &Mapped,
    starts: &[usize],
    count: usize,
    saturated: bool,
    len: usize,
    end_takes_deleted: bool,
    new: &str,
) -> TierOutcome {
    match count {
        0 => TierOutcome::None,
        1 => TierOutcome::Unique(Located {
            start: content.to_source(starts[0], false, false),
            end: content.to_source(starts[0] + len, true, end_takes_deleted),
            new_text: new.to_owned(),
        }),
        _ => TierOutcome::Ambiguous {
            starts: starts
                .iter()
                .map(|&s| content.to_source(s, false, false))
                .collect(),
            count,
            saturated,
        },
    }
}

/// The ASCII (or compatibility) form of a character, when it has one that differs.
fn fold_char(c: char, out: &mut String) -> bool {
    let replacement = match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        '\u{2026}' => {
            out.push_str("...");
            return true;
        }
        _ => {
            let start = out.len();
            decompose_compatible(c, |d| out.push(d));
            if out[start..].chars().eq(std::iter::once(c)) {
                out.truncate(start);
                return false;
            }
            return true;
        }
    };
    out.push(replacement);
    true
}

/// The text with Unicode punctuation and spaces folded to ASCII and compatibility forms
/// decomposed (NFKD per character, so precomposed and combining spellings agree).
fn fold_unicode(text: &str) -> Mapped {
    let mut out = Mapped {
        text: String::with_capacity(text.len()),
        pieces: Vec::new(),
    };
    let mut copied = 0;
    for (i, c) in text.char_indices() {
        if c.is_ascii() {
            continue;
        }
        out.text.push_str(&text[copied..i]);
        let norm = out.text.len();
        if fold_char(c, &mut out.text) {
            out.pieces.push(Piece {
                norm,
                norm_len: out.text.len() - norm,
                src: i,
                src_len: c.len_utf8(),
            });
        } else {
            out.text.push(c);
        }
        copied = i + c.len_utf8();
    }
    out.text.push_str(&text[copied..]);
    out
}

fn unicode(view: &str, old: &str, new: &str) -> TierOutcome {
    let old_norm = fold_unicode(old).text;
    if old_norm == old && !view.bytes().any(|b| b >= 0x80) {
        return TierOutcome::None;
    }
    let content = fold_unicode(view);
    let (starts, count, saturated) = find_all(content.text.as_bytes(), old_norm.as_bytes());
    spans_outcome(
        &content,
        &starts,
        count,
        saturated,
        old_norm.len(),
        false,
        new,
    )
}

fn leading_whitespace(line: &str) -> (&str, &str) {
    let rest = line.trim_start_matches(is_horizontal_space);
    (&line[..line.len() - rest.len()], rest)
}

fn is_blank(line: &str) -> bool {
    line.chars().all(is_horizontal_space)
}

fn common_prefix<'a>(items: impl Iterator<Item = &'a str>) -> &'a str {
    let mut prefix: Option<&str> = None;
    for item in items {
        prefix = Some(match prefix {
            None => item,
            Some(p) => {
                let len = p
                    .bytes()
                    .zip(item.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                &p[..len]
            }
        });
    }
    prefix.unwrap_or("")
}

/// A residual indentation made of one repeated character: (character, count).
fn uniform(residual: &str) -> Option<(char, usize)> {
    let first = residual.chars().next()?;
    residual
        .chars()
        .all(|c| c == first)
        .then_some((first, residual.chars().count()))
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// How the file's indentation relates to oldText's: `old_prefix` became `file_prefix`, and
/// residual indentation is either identical or converted unit for unit (e.g. 4 spaces → 1 tab).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shift {
    old_prefix: String,
    file_prefix: String,
    /// (old char, old unit, file char, file unit) when residuals are converted.
    convert: Option<(char, usize, char, usize)>,
}

impl Shift {
    fn derive(pairs: &[(&str, &str)]) -> Option<Self> {
        let old_prefix = common_prefix(pairs.iter().map(|p| p.0));
        let file_prefix = common_prefix(pairs.iter().map(|p| p.1));
        let residuals: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(o, f)| (&o[old_prefix.len()..], &f[file_prefix.len()..]))
            .collect();
        let mut shift = Self {
            old_prefix: old_prefix.to_owned(),
            file_prefix: file_prefix.to_owned(),
            convert: None,
        };
        if residuals.iter().all(|(o, f)| o == f) {
            return Some(shift);
        }
        let mut old_char = None;
        let mut file_char = None;
        let mut old_unit = 0;
        let mut file_unit = 0;
        let mut counts = Vec::with_capacity(residuals.len());
        for (o, f) in &residuals {
            match (uniform(o), uniform(f)) {
                (None, None) => counts.push((0, 0)),
                (Some((oc, on)), Some((fc, fn_))) => {
                    if *old_char.get_or_insert(oc) != oc || *file_char.get_or_insert(fc) != fc {
                        return None;
                    }
                    old_unit = gcd(old_unit, on);
                    file_unit = gcd(file_unit, fn_);
                    counts.push((on, fn_));
                }
                _ => return None,
            }
        }
        let (Some(old_char), Some(file_char)) = (old_char, file_char) else {
            return None;
        };
        if counts.iter().any(|&(o, f)| o / old_unit != f / file_unit) {
            return None;
        }
        shift.convert = Some((old_char, old_unit, file_char, file_unit));
        Some(shift)
    }

    /// The file-style indentation of a newText line's indentation, if it can be derived.
    fn apply(&self, indent: &str) -> Option<String> {
        let residual = indent.strip_prefix(self.old_prefix.as_str())?;
        let converted = match (self.convert, uniform(residual)) {
            (_, None) => String::new(),
            (None, Some(_)) => residual.to_owned(),
            (Some((old_char, old_unit, file_char, file_unit)), Some((c, n))) => {
                if c != old_char || n % old_unit != 0 {
                    return None;
                }
                std::iter::repeat_n(file_char, n / old_unit * file_unit).collect()
            }
        };
        Some(format!("{}{converted}", self.file_prefix))
    }
}

fn indentation(view: &str, old: &str, new: &str) -> TierOutcome {
    let ends_with_newline = old.ends_with('\n');
    let old_lines: Vec<&str> = old.strip_suffix('\n').unwrap_or(old).split('\n').collect();
    let Some(anchor) = old_lines.iter().position(|l| !is_blank(l)) else {
        return TierOutcome::None;
    };
    let anchor_text = leading_whitespace(old_lines[anchor]).1;
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(memchr_iter(b'\n', view.as_bytes()).map(|i| i + 1))
        .collect();
    let line = |index: usize| -> &str {
        let start = line_starts[index];
        let end = line_starts
            .get(index + 1)
            .map_or(view.len(), |&next| next - 1);
        &view[start..end]
    };
    let mut found: Vec<(usize, Shift)> = Vec::new();
    let mut count = 0;
    for candidate in anchor..line_starts.len() {
        if leading_whitespace(line(candidate)).1 != anchor_text {
            continue;
        }
        let first = candidate - anchor;
        let last = first + old_lines.len() - 1;
        if last >= line_starts.len() || (ends_with_newline && last + 1 >= line_starts.len()) {
            continue;
        }
        let mut pairs = Vec::with_capacity(old_lines.len());
        let matched = old_lines.iter().enumerate().all(|(k, old_line)| {
            let file_line = line(first + k);
            if is_blank(old_line) {
                return is_blank(file_line);
            }
            let (old_indent, old_rest) = leading_whitespace(old_line);
            let (file_indent, file_rest) = leading_whitespace(file_line);
            pairs.push((old_indent, file_indent));
            old_rest == file_rest
        });
        if !matched {
            continue;
        }
        if let Some(shift) = Shift::derive(&pairs) {
            count += 1;
            if found.len() < MAX_LISTED {
                found.push((first, shift));
            }
        }
    }
    match count {
        0 => TierOutcome::None,
        1 => {
            let (first, shift) = &found[0];
            let last = first + old_lines.len() - 1;
            let start = line_starts[*first];
            let end = if ends_with_newline {
                line_starts[last + 1]
            } else {
                line_starts
                    .get(last + 1)
                    .map_or(view.len(), |&next| next - 1)
            };
            let mut new_text = String::with_capacity(new.len() + 16);
            for (k, new_line) in new.split('\n').enumerate() {
                if k > 0 {
                    new_text.push('\n');
                }
                if is_blank(new_line) {
                    new_text.push_str(new_line);
                    continue;
                }
                let (indent, rest) = leading_whitespace(new_line);
                let Some(indent) = shift.apply(indent) else {
                    return TierOutcome::Unreindentable { start, line: k + 1 };
                };
                new_text.push_str(&indent);
                new_text.push_str(rest);
            }
            TierOutcome::Unique(Located {
                start,
                end,
                new_text,
            })
        }
        _ => TierOutcome::Ambiguous {
            starts: found.iter().map(|(first, _)| line_starts[*first]).collect(),
            count,
            saturated: false,
        },
    }
}

/// `line` without a `read`-style line-number prefix (`   12│ `, `12|`, `12→`, `12:`, `12\t`).
fn strip_line_number(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches(' ');
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let rest = &rest[digits..];
    let mut chars = rest.chars();
    let separator = chars.next()?;
    if !matches!(separator, '│' | '|' | '→' | ':' | '\t') {
        return None;
    }
    let rest = chars.as_str();
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// Every non-empty line stripped of its prefix, when every non-empty line has one.
fn strip_line_numbers(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut any = false;
    for (k, line) in text.split('\n').enumerate() {
        if k > 0 {
            out.push('\n');
        }
        if line.is_empty() {
            continue;
        }
        out.push_str(strip_line_number(line)?);
        any = true;
    }
    any.then_some(out)
}

fn line_numbers(view: &str, old: &str, new: &str) -> TierOutcome {
    let Some(old_stripped) = strip_line_numbers(old) else {
        return TierOutcome::None;
    };
    if old_stripped.is_empty() {
        return TierOutcome::None;
    }
    let new_text: Cow<'_, str> = match strip_line_numbers(new) {
        Some(stripped) => Cow::Owned(stripped),
        None => Cow::Borrowed(new),
    };
    let (starts, count, saturated) = find_all(view.as_bytes(), old_stripped.as_bytes());
    match count {
        0 => TierOutcome::None,
        1 => TierOutcome::Unique(Located {
            start: starts[0],
            end: starts[0] + old_stripped.len(),
            new_text: new_text.into_owned(),
        }),
        _ => TierOutcome::Ambiguous {
            starts,
            count,
            saturated,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unique(view: &str, old: &str, new: &str) -> (Tier, String) {
        let Some((tier, TierOutcome::Unique(located))) = locate(view, old, new) else {
            panic!("expected a unique tolerant match for {old:?}");
        };
        let mut out = view.to_owned();
        out.replace_range(located.start..located.end, &located.new_text);
        (tier, out)
    }

    #[test]
    fn counts_overlapping_occurrences() {
        assert_eq!(find_all(b"aaa", b"aa"), (vec![0, 1], 2, false));
        assert_eq!(find_all(b"abc", b"x"), (vec![], 0, false));
    }

    #[test]
    fn trailing_whitespace_keeps_other_lines() {
        let (tier, out) = unique("keep  \nfoo  \nbar\t\nkeep \n", "foo\nbar\n", "X\n");
        assert_eq!(tier, Tier::TrailingWhitespace);
        assert_eq!(out, "keep  \nX\nkeep \n");
    }

    #[test]
    fn trailing_whitespace_of_old_must_end_a_line() {
        assert_eq!(locate("foobar\n", "foo  ", "x"), None);
        let (_, out) = unique("a foo \nb", "foo  ", "x");
        assert_eq!(out, "a x\nb");
    }

    #[test]
    fn unicode_folds_quotes_dashes_spaces_and_compat_forms() {
        let (tier, out) = unique(
            "say \u{201C}hi\u{201D} \u{2014} ok\u{00A0}now\n",
            "say \"hi\" - ok now",
            "Z",
        );
        assert_eq!(tier, Tier::Unicode);
        assert_eq!(out, "Z\n");
        let (_, out) = unique("caf\u{E9} \u{FB01}ne", "cafe\u{301} fine", "Y");
        assert_eq!(out, "Y");
        // A match ending inside a folded character widens to the whole character.
        let (_, out) = unique("x\u{2026}y", "x..", "Q");
        assert_eq!(out, "Qy");
    }

    #[test]
    fn indentation_shift_reindents_new_text() {
        let view = "fn main() {\n    if x {\n        y();\n    }\n}\n";
        let (tier, out) = unique(view, "if x {\n    y();\n}", "if x {\n    z();\n}");
        assert_eq!(tier, Tier::Indentation);
        assert_eq!(out, "fn main() {\n    if x {\n        z();\n    }\n}\n");
    }

    #[test]
    fn indentation_tabs_versus_spaces() {
        let view = "a\n\tif x {\n\t\ty();\n\t}\nb\n";
        let (_, out) = unique(
            view,
            "    if x {\n        y();\n    }\n",
            "    if x {\n        y();\n        w();\n    }\n",
        );
        assert_eq!(out, "a\n\tif x {\n\t\ty();\n\t\tw();\n\t}\nb\n");
    }

    #[test]
    fn indentation_refuses_what_it_cannot_reindent() {
        let view = "x\n\tif a {\n\t\tb();\n\t}\n";
        let outcome = locate(
            view,
            "    if a {\n        b();\n    }",
            "  if a {\n   b();\n  }",
        );
        assert!(matches!(
            outcome,
            Some((Tier::Indentation, TierOutcome::Unreindentable { .. }))
        ));
    }

    #[test]
    fn line_number_prefixes_are_stripped() {
        let (tier, out) = unique(
            "a\nstatus: draft\nb\n",
            "   2│ status: draft",
            "   2│ status: done",
        );
        assert_eq!(tier, Tier::LineNumbers);
        assert_eq!(out, "a\nstatus: done\nb\n");
    }

    #[test]
    fn ambiguity_is_reported_per_tier() {
        let outcome = locate("foo \nfoo\t\n", "foo  \n", "x");
        assert!(matches!(
            outcome,
            Some((
                Tier::TrailingWhitespace,
                TierOutcome::Ambiguous { count: 2, .. }
            ))
        ));
    }
}
