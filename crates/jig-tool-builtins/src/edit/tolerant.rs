//! Tolerant matching: used only when an `oldText` has no exact occurrence.
//!
//! A tier never rewrites the file. It only *locates* a span of the (LF) view whose text differs
//! from `oldText` in a way the tier forgives; the caller then splices `newText` into the
//! original bytes at that span, so every byte outside it is kept. Tiers are independent: each is
//! tried alone, in the order of [`Tier::ALL`], and each still requires a unique match. The first
//! tier that finds something decides, unless a later one finds a unique match that would write
//! other bytes: then which reading was meant is unclear and the edit is refused.
//!
//! The contract: a tolerant success writes exactly what the exact edit would have written had
//! `oldText` been typed exactly, with `newText` adapted only by the rule the tier states (the
//! indentation tier re-indents every line the same way; the line-number tier strips prefixes
//! numbered like `oldText`'s; the others keep `newText` as it is). When a tier cannot be sure, it
//! refuses. `tests/it/edit_differential.rs` checks this over thousands of generated edits.

use std::fmt;

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
    /// The block was found at `start`, but the tier cannot be sure what `newText` means there:
    /// `reason` says why (a clause for the message).
    Refused { start: usize, reason: String },
    /// Nothing (or the tier does not apply to this `oldText`).
    None,
}

/// At most this many candidate positions are kept for messages.
pub(crate) const MAX_LISTED: usize = 20;

fn run_tier(tier: Tier, view: &str, old: &str, new: &str) -> TierOutcome {
    match tier {
        Tier::TrailingWhitespace => trailing_whitespace(view, old, new),
        Tier::Unicode => unicode(view, old, new),
        Tier::Indentation => indentation(view, old, new),
        Tier::LineNumbers => line_numbers(view, old, new),
    }
}

/// Tries every tier in order and returns the first that found something. A unique match must
/// not be contradicted: when a later tier also finds a unique match but would write other bytes
/// (another span, or newText adapted otherwise), which one the caller meant is unclear, and the
/// edit is refused.
pub(crate) fn locate(view: &str, old: &str, new: &str) -> Option<(Tier, TierOutcome)> {
    let mut tiers = Tier::ALL.into_iter();
    let (tier, outcome) = tiers
        .by_ref()
        .map(|tier| (tier, run_tier(tier, view, old, new)))
        .find(|(_, outcome)| *outcome != TierOutcome::None)?;
    let TierOutcome::Unique(found) = &outcome else {
        return Some((tier, outcome));
    };
    for other in tiers {
        if let TierOutcome::Unique(alternative) = run_tier(other, view, old, new)
            && alternative != *found
        {
            return Some((
                tier,
                TierOutcome::Refused {
                    start: found.start.min(alternative.start),
                    reason: format!(
                        "it also matches {}, and the two readings would write different text",
                        other.describe()
                    ),
                },
            ));
        }
    }
    Some((tier, outcome))
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
    /// piece's start and an end to its end. At a deletion, the span takes the deleted bytes
    /// when `takes_deleted` (a start lands before them, an end after them), else leaves them
    /// out.
    fn to_source(&self, n: usize, is_end: bool, takes_deleted: bool) -> usize {
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
        } else if n == p.norm && p.norm_len == 0 && is_end != takes_deleted {
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
    if old_norm.is_empty() {
        return TierOutcome::None;
    }
    // A first line that is empty or whitespace only lets the rest match after the end of any
    // line, and whitespace-only lines then stand for blank lines anywhere: which place was
    // meant is unknown.
    // Likewise a last line of whitespace only, without its line break: it lets the block end
    // before any line, not only the one it was copied from.
    let first_line = old.split('\n').next().unwrap_or(old);
    let last_line = old.rsplit('\n').next().unwrap_or(old);
    if is_blank(first_line) || (!last_line.is_empty() && is_blank(last_line)) {
        return TierOutcome::None;
    }
    let content = strip_trailing(view);
    let last_old_line = old.rsplit('\n').next().unwrap_or(old);
    let old_ends_in_space = last_old_line.ends_with(is_horizontal_space);
    // When oldText's last line lost trailing whitespace, the match must end a line: otherwise
    // `foo ` would be allowed to match the `foo` of `foobar`.
    let bytes = content.text.as_bytes();
    let ends_line = |s: usize| matches!(bytes.get(s + old_norm.len()), None | Some(b'\n'));
    let (starts, count, saturated) = find_all_where(bytes, old_norm.as_bytes(), |s| {
        !old_ends_in_space || ends_line(s)
    });
    if count == 1 && old_norm.ends_with('\n') {
        // After a block that ends with a line break, a whitespace-only line the file has and
        // oldText lacks may or may not have been meant: the two readings write different bytes.
        // (Before the block this cannot happen: oldText's first line has text.)
        let end = starts[0] + old_norm.len();
        if content
            .pieces
            .binary_search_by_key(&end, |piece| piece.norm)
            .is_ok()
        {
            return TierOutcome::Refused {
                start: content.to_source(starts[0], false, false),
                reason: "the file has a whitespace-only line right after it that oldText lacks, \
                         so whether that line is to be replaced is unclear"
                    .to_owned(),
            };
        }
    }
    // A match that ends a line takes that line's trailing whitespace too: the exact oldText ran
    // to the end of the line, so newText's last line replaces all of it and no stray whitespace
    // is left after it.
    let takes_trailing = !old_norm.ends_with('\n') && starts.first().is_some_and(|&s| ends_line(s));
    let outcome = spans_outcome(
        &content,
        &starts,
        count,
        saturated,
        old_norm.len(),
        takes_trailing,
        new,
    );
    // A whitespace-only line of oldText that has other whitespace than the file's line is an
    // indentation difference, not a trailing one: the indentation tier decides.
    if let TierOutcome::Unique(found) = &outcome {
        let block = &view[found.start..found.end];
        let reindented = old
            .split('\n')
            .zip(block.split('\n'))
            .any(|(o, f)| !o.is_empty() && !f.is_empty() && is_blank(o) && is_blank(f) && o != f);
        if reindented {
            return TierOutcome::None;
        }
    }
    outcome
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

/// Indentation converted level for level: `old_unit` × `old_char` becomes `file_unit` ×
/// `file_char` (4 spaces → 1 tab, 1 tab → 4 spaces, 2 spaces → 4 spaces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Convert {
    old_char: char,
    old_unit: usize,
    file_char: char,
    file_unit: usize,
}

impl Convert {
    /// A plausible conversion for indentation units of `old_count` and `file_count`
    /// characters: one tab for 2 to 8 spaces (either way), or spaces for spaces with units of
    /// 2 to 8. Anything else (5 spaces for 1, 2 tabs for 1, other whitespace) is a coincidence
    /// of the text, not an indentation style.
    fn plausible(
        old_char: char,
        old_count: usize,
        file_char: char,
        file_count: usize,
    ) -> Option<Self> {
        let spaces = |n: usize| (2..=8).contains(&n);
        let (old_unit, file_unit) = match (old_char, file_char) {
            (' ', '\t') if old_count.is_multiple_of(file_count) => (old_count / file_count, 1),
            ('\t', ' ') if file_count.is_multiple_of(old_count) => (1, file_count / old_count),
            (' ', ' ') => (old_count, file_count),
            _ => return None,
        };
        let ok = match (old_char, file_char) {
            (' ', '\t') => spaces(old_unit),
            ('\t', ' ') => spaces(file_unit),
            _ => spaces(old_unit) && spaces(file_unit),
        };
        ok.then_some(Self {
            old_char,
            old_unit,
            file_char,
            file_unit,
        })
    }

    /// `indent` converted, when it is whole units of `old_char` (or empty).
    fn apply(self, indent: &str) -> Option<String> {
        if indent.is_empty() {
            return Some(String::new());
        }
        let (c, n) = uniform(indent)?;
        (c == self.old_char && n % self.old_unit == 0).then(|| {
            std::iter::repeat_n(self.file_char, n / self.old_unit * self.file_unit).collect()
        })
    }
}

/// How indentation deeper than oldText's common prefix is carried over to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Residual {
    /// Kept as it is: oldText and the file indent with the same character (`Some`), or with
    /// identical indentation altogether (`None`).
    Same(Option<char>),
    /// Converted unit for unit.
    Convert(Convert),
    /// Not determined by oldText: the two use different characters and no line shows how
    /// many of one make one of the other.
    Unknown,
}

/// How the file's indentation relates to oldText's in the located block: `old_prefix` (common
/// to oldText's lines) became `file_prefix`, deeper indentation follows `residual`, and every
/// indentation seen in oldText maps to the file's indentation of that line (`seen`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shift {
    old_prefix: String,
    file_prefix: String,
    residual: Residual,
    seen: Vec<(String, String)>,
}

impl Shift {
    fn derive(pairs: &[(&str, &str)]) -> Option<Self> {
        // One indentation of oldText stands for one indentation of the file, both ways.
        let mut seen: Vec<(String, String)> = Vec::new();
        for &(o, f) in pairs {
            match seen.iter().find(|(so, sf)| so == o || sf == f) {
                Some((so, sf)) if so != o || sf != f => return None,
                Some(_) => {}
                None => seen.push((o.to_owned(), f.to_owned())),
            }
        }
        let old_prefix = common_prefix(pairs.iter().map(|p| p.0));
        let file_prefix = common_prefix(pairs.iter().map(|p| p.1));
        let residuals: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(o, f)| (&o[old_prefix.len()..], &f[file_prefix.len()..]))
            .collect();
        let residual = if residuals.iter().all(|(o, f)| o == f) {
            Self::identical_residuals(old_prefix, file_prefix, &residuals)
        } else {
            Residual::Convert(Self::converted_residuals(&residuals)?)
        };
        Some(Self {
            old_prefix: old_prefix.to_owned(),
            file_prefix: file_prefix.to_owned(),
            residual,
            seen,
        })
    }

    /// Residuals that differ: each must be whole units of one character on each side, in the
    /// same ratio on every line.
    fn converted_residuals(residuals: &[(&str, &str)]) -> Option<Convert> {
        let mut chars = None;
        let mut old_unit = 0;
        let mut file_unit = 0;
        let mut counts = Vec::with_capacity(residuals.len());
        for (o, f) in residuals {
            match (uniform(o), uniform(f)) {
                (None, None) => counts.push((0, 0)),
                (Some((oc, on)), Some((fc, fn_))) => {
                    if *chars.get_or_insert((oc, fc)) != (oc, fc) {
                        return None;
                    }
                    old_unit = gcd(old_unit, on);
                    file_unit = gcd(file_unit, fn_);
                    counts.push((on, fn_));
                }
                _ => return None,
            }
        }
        let (old_char, file_char) = chars?;
        if counts.iter().any(|&(o, f)| o / old_unit != f / file_unit) {
            return None;
        }
        Convert::plausible(old_char, old_unit, file_char, file_unit)
    }

    /// Residuals that are identical: deeper indentation is kept when both sides indent with
    /// the same character. When they differ (spaces in oldText, tabs in the file), the two
    /// prefixes are the only evidence: `n` spaces for one tab when oldText's prefix is `n`
    /// spaces per tab of the file's, else the unit is unknown.
    fn identical_residuals(
        old_prefix: &str,
        file_prefix: &str,
        residuals: &[(&str, &str)],
    ) -> Residual {
        if old_prefix == file_prefix {
            return Residual::Same(None);
        }
        let deeper: Option<char> = residuals.iter().find_map(|(o, _)| o.chars().next());
        match (uniform(old_prefix), uniform(file_prefix)) {
            (Some((oc, on)), Some((fc, fn_))) if oc != fc => {
                Convert::plausible(oc, on, fc, fn_).map_or(Residual::Unknown, Residual::Convert)
            }
            (_, Some((fc, _))) => Residual::Same(Some(fc)),
            (Some((oc, _)), None) if file_prefix.is_empty() && deeper == Some(oc) => {
                Residual::Same(Some(oc))
            }
            _ => Residual::Unknown,
        }
    }

    /// Whether oldText's prefix is the file's prefix in another style, with no shift: then
    /// any indentation converts on its own, a line at column 0 included.
    fn is_absolute(&self) -> bool {
        match self.residual {
            Residual::Same(_) | Residual::Unknown => self.old_prefix == self.file_prefix,
            Residual::Convert(convert) => {
                convert.apply(&self.old_prefix).as_deref() == Some(self.file_prefix.as_str())
            }
        }
    }

    /// The file-style form of a newText line's indentation, or why it cannot be derived.
    fn apply(&self, indent: &str) -> Result<String, IndentError> {
        if let Some((_, file)) = self.seen.iter().find(|(old, _)| old == indent) {
            return Ok(file.clone());
        }
        // Only another style, no shift: indentation already in the file's style stays.
        if let Residual::Convert(convert) = self.residual
            && convert.old_char != convert.file_char
            && indent.starts_with(convert.file_char)
            && self.is_absolute()
        {
            return Ok(indent.to_owned());
        }
        if let Some(rest) = indent.strip_prefix(self.old_prefix.as_str()) {
            if rest.is_empty() {
                return Ok(self.file_prefix.clone());
            }
            let converted = match self.residual {
                Residual::Same(None) => Some(rest.to_owned()),
                Residual::Same(Some(c)) => rest.chars().all(|r| r == c).then(|| rest.to_owned()),
                Residual::Convert(convert) => convert.apply(rest),
                Residual::Unknown => None,
            };
            return converted
                .map(|converted| format!("{}{converted}", self.file_prefix))
                .ok_or_else(|| self.unknown_unit(indent));
        }
        if indent.is_empty() {
            // Column 0 is column 0 in every style; only a shifted block makes it ambiguous.
            return if self.is_absolute() {
                Ok(String::new())
            } else {
                Err(IndentError::ColumnZero {
                    old_prefix: self.old_prefix.clone(),
                    file_prefix: self.file_prefix.clone(),
                })
            };
        }
        if self.is_absolute()
            && let Residual::Convert(convert) = self.residual
            && let Some(converted) = convert.apply(indent)
        {
            return Ok(converted);
        }
        if let Some((old_char, _)) = uniform(&self.old_prefix)
            && !indent.contains(old_char)
        {
            return Err(IndentError::OtherCharacter {
                indent: indent.to_owned(),
                old_char,
                old_prefix: self.old_prefix.clone(),
                file_prefix: self.file_prefix.clone(),
            });
        }
        Err(IndentError::Shallower {
            indent: indent.to_owned(),
            file_prefix: self.file_prefix.clone(),
        })
    }

    fn unknown_unit(&self, indent: &str) -> IndentError {
        match self.residual {
            Residual::Convert(convert) => IndentError::PartialUnit {
                indent: indent.to_owned(),
                old_unit: std::iter::repeat_n(convert.old_char, convert.old_unit).collect(),
                file_unit: std::iter::repeat_n(convert.file_char, convert.file_unit).collect(),
            },
            _ => IndentError::DeeperUnknown {
                indent: indent.to_owned(),
                file_prefix: self.file_prefix.clone(),
            },
        }
    }
}

/// Why a newText line's indentation has no file-style form; displayed as a clause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum IndentError {
    /// The line is at column 0 while the block is shifted, and oldText does not show where
    /// column 0 lands.
    #[error(
        "it is at column 0, while oldText's lines start at {} and the file's at {}, and oldText \
         does not show these are the same level, so where column 0 belongs in the file is \
         unclear",
        describe_indent(.old_prefix),
        describe_indent(.file_prefix)
    )]
    ColumnZero {
        old_prefix: String,
        file_prefix: String,
    },
    /// The line is indented with another character than oldText's.
    #[error(
        "it is indented with {}, while oldText indents with {} and its {} are {} in the file, \
         so where the line belongs is unclear; write newText in oldText's indentation",
        describe_indent(.indent),
        if *.old_char == '\t' { "tabs" } else { "spaces" },
        describe_indent(.old_prefix),
        describe_indent(.file_prefix)
    )]
    OtherCharacter {
        indent: String,
        old_char: char,
        old_prefix: String,
        file_prefix: String,
    },
    /// The line is indented less than oldText's common prefix.
    #[error(
        "it is indented less than oldText's lines (with {}), which the file has at {}",
        describe_indent(.indent),
        describe_indent(.file_prefix)
    )]
    Shallower { indent: String, file_prefix: String },
    /// The indentation past oldText's prefix is not whole units of the conversion.
    #[error(
        "its indentation ({}) is not a whole number of oldText's indentation unit ({}), which \
         the file writes as {}",
        describe_indent(.indent),
        describe_indent(.old_unit),
        describe_indent(.file_unit)
    )]
    PartialUnit {
        indent: String,
        old_unit: String,
        file_unit: String,
    },
    /// The line is deeper than oldText's lines, and nothing shows how that converts.
    #[error(
        "it is indented deeper than oldText's lines, with {}, and oldText does not show how \
         that converts to the file's indentation there ({})",
        describe_indent(.indent),
        describe_indent(.file_prefix)
    )]
    DeeperUnknown { indent: String, file_prefix: String },
}

/// `no indentation`, `1 space`, `4 spaces`, `2 tabs`, `mixed tabs and spaces`.
fn describe_indent(indent: &str) -> String {
    if indent.is_empty() {
        return "no indentation".to_owned();
    }
    match uniform(indent) {
        Some((' ', 1)) => "1 space".to_owned(),
        Some((' ', n)) => format!("{n} spaces"),
        Some(('\t', 1)) => "1 tab".to_owned(),
        Some(('\t', n)) => format!("{n} tabs"),
        _ if indent.chars().all(|c| c == ' ' || c == '\t') => "mixed tabs and spaces".to_owned(),
        _ => format!("{indent:?}"),
    }
}

fn indentation(view: &str, old: &str, new: &str) -> TierOutcome {
    let ends_with_newline = old.ends_with('\n');
    let old_lines: Vec<&str> = old.strip_suffix('\n').unwrap_or(old).split('\n').collect();
    let Some(anchor) = old_lines.iter().position(|l| !is_blank(l)) else {
        return TierOutcome::None;
    };
    // A blank first line, or a whitespace-only last line without its line break, may be the
    // end or the start of a longer line rather than a line of its own: this tier compares
    // whole lines, so it cannot tell where such a block begins or ends.
    if anchor > 0 || (!ends_with_newline && old_lines.last().is_some_and(|l| is_blank(l))) {
        return TierOutcome::None;
    }
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
                // An empty line of oldText stands for any blank line (whitespace is often
                // dropped there); a whitespace-only one shows indentation like any other line,
                // so it must map like the rest of the block.
                if !old_line.is_empty() && is_blank(file_line) {
                    pairs.push((*old_line, file_line));
                }
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
            match reindent(shift, new) {
                Ok(new_text) => TierOutcome::Unique(Located {
                    start,
                    end,
                    new_text,
                }),
                Err(error) => TierOutcome::Refused {
                    start,
                    reason: error.to_string(),
                },
            }
        }
        _ => TierOutcome::Ambiguous {
            starts: found.iter().map(|(first, _)| line_starts[*first]).collect(),
            count,
            saturated: false,
        },
    }
}

/// A newText line that cannot be re-indented; displayed as a clause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line} of newText cannot be re-indented: {cause}")]
struct ReindentError {
    /// The line, 1-based.
    line: usize,
    /// Why.
    cause: IndentError,
}

/// newText in the file's indentation: every line's indentation (whitespace-only lines
/// included) goes through the same [`Shift`].
fn reindent(shift: &Shift, new: &str) -> Result<String, ReindentError> {
    let mut new_text = String::with_capacity(new.len() + 16);
    for (k, new_line) in new.split('\n').enumerate() {
        if k > 0 {
            new_text.push('\n');
        }
        let (indent, rest) = leading_whitespace(new_line);
        if new_line.is_empty() {
            continue;
        }
        let indent = shift
            .apply(indent)
            .map_err(|cause| ReindentError { line: k + 1, cause })?;
        new_text.push_str(&indent);
        new_text.push_str(rest);
    }
    Ok(new_text)
}

/// A line-number prefix (`   12│ `, `12|`, `12→`, `12:`, `12\t`): the number, the separator and
/// the rest of the line (one space after the separator is part of the prefix).
fn split_line_number(line: &str) -> Option<(u64, char, &str)> {
    let rest = line.trim_start_matches(' ');
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 9 {
        return None;
    }
    let number = rest[..digits].parse().ok()?;
    let rest = &rest[digits..];
    let mut chars = rest.chars();
    let separator = chars.next()?;
    if !matches!(separator, '│' | '|' | '→' | ':' | '\t') {
        return None;
    }
    let rest = chars.as_str();
    Some((number, separator, rest.strip_prefix(' ').unwrap_or(rest)))
}

/// How a text's lines are numbered: every non-empty line `k` (0-based) carries a prefix with
/// `separator` and the number `first + k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Numbering {
    first: u64,
    separator: char,
}

/// Where `text` stops following `numbering`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumberingBreak {
    /// Line `k` (0-based) carries no prefix of this kind at all.
    Missing(usize),
    /// Line `k` carries one, with another number.
    Number(usize),
}

/// `text` with the prefixes of `numbering` stripped, or where it stops following it.
fn strip_numbering(text: &str, numbering: Numbering) -> Result<String, NumberingBreak> {
    let mut out = String::with_capacity(text.len());
    for (k, line) in text.split('\n').enumerate() {
        if k > 0 {
            out.push('\n');
        }
        if line.is_empty() {
            continue;
        }
        match split_line_number(line) {
            Some((number, separator, rest)) if separator == numbering.separator => {
                if number != numbering.first + k as u64 {
                    return Err(NumberingBreak::Number(k));
                }
                out.push_str(rest);
            }
            _ => return Err(NumberingBreak::Missing(k)),
        }
    }
    Ok(out)
}

/// `old` without its line-number prefixes, when every non-empty line has one of the same kind
/// and the numbers are consecutive, as in `read` output.
fn strip_old_numbers(old: &str) -> Option<(String, Numbering)> {
    let (k, (number, separator, _)) = old
        .split('\n')
        .enumerate()
        .find_map(|(k, line)| split_line_number(line).map(|prefix| (k, prefix)))?;
    let numbering = Numbering {
        first: number.checked_sub(k as u64)?,
        separator,
    };
    let stripped = strip_numbering(old, numbering).ok()?;
    (!stripped.trim_start_matches('\n').is_empty()).then_some((stripped, numbering))
}

/// The separator of `read`'s own gutter (`   12│ `).
const GUTTER: char = '\u{2502}';

/// newText of an edit whose oldText the line-number tier matched, with the prefixes removed
/// that are not part of the text, or why that is unclear (a clause for the message).
///
/// - Numbered like oldText (same separator, same consecutive numbers): stripped.
/// - `read`'s own gutter (`│`) on every non-empty line, consecutive from any start (newText is
///   often numbered by the lines it will occupy, or as a later edit of a batch shifts them):
///   stripped. jig never writes its own gutter into a file as content.
/// - `read`'s gutter on some lines only, or out of sequence: refused.
/// - Other `digits:`-style text (grep output, map keys, times) not numbered like oldText:
///   written as typed.
fn new_text_without_numbers(new: &str, numbering: Numbering) -> Result<String, NewTextNumbers> {
    let numbering_break = match strip_numbering(new, numbering) {
        Ok(stripped) => return Ok(stripped),
        Err(numbering_break) => numbering_break,
    };
    if let Some(stripped) = strip_gutter(new)? {
        return Ok(stripped);
    }
    match numbering_break {
        NumberingBreak::Missing(0) | NumberingBreak::Number(0) => Ok(new.to_owned()),
        NumberingBreak::Missing(k) | NumberingBreak::Number(k)
            if new.split('\n').take(k).all(str::is_empty) =>
        {
            Ok(new.to_owned())
        }
        NumberingBreak::Missing(k) => Err(NewTextNumbers::Missing { line: k + 1 }),
        NumberingBreak::Number(k) => Err(NewTextNumbers::OutOfSequence {
            line: k + 1,
            expected: numbering.first + k as u64,
        }),
    }
}

/// Why it is unclear whether newText's line-number prefixes are part of the text; displayed
/// as a clause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NewTextNumbers {
    /// Numbered like oldText at first, then a line without a prefix.
    #[error(
        "newText starts with a line-number prefix like oldText's while its line {line} has \
         none, so it is unclear whether the prefixes are part of the text"
    )]
    Missing {
        /// The line without a prefix, 1-based.
        line: usize,
    },
    /// Numbered like oldText at first, then a line with another number.
    #[error(
        "newText starts with a line-number prefix like oldText's while its line {line} is \
         numbered out of sequence (expected {expected}), so it is unclear whether the prefixes \
         are part of the text"
    )]
    OutOfSequence {
        /// The line with the wrong number, 1-based.
        line: usize,
        /// The number it should carry.
        expected: u64,
    },
    /// read's gutter on some lines only, or out of sequence.
    #[error(transparent)]
    Gutter(#[from] GutterError),
}

/// Where newText stops carrying read's line-number gutter, which its first gutter line
/// carries with `number`; displayed as a clause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "newText carries read's line-number gutter (`{number:>4}{GUTTER} `) while its line {line} \
     {what}, so it is unclear which part is text"
)]
struct GutterError {
    /// The number on the first line carrying the gutter.
    number: u64,
    /// The line that does not follow, 1-based.
    line: usize,
    /// How it does not follow.
    what: GutterBreak,
}

/// How a line breaks read's gutter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GutterBreak {
    /// Its number cannot follow from line 1 (it is smaller than the line's position).
    OutOfSequence,
    /// It carries no gutter.
    Missing,
    /// It carries another number than `expected`.
    Number { expected: u64 },
}

impl fmt::Display for GutterBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfSequence => f.write_str("is numbered out of sequence"),
            Self::Missing => f.write_str("has none"),
            Self::Number { expected } => {
                write!(f, "is numbered out of sequence (expected {expected})")
            }
        }
    }
}

/// `text` without `read`'s gutter when every non-empty line carries it with consecutive
/// numbers from any start; `None` when no line carries it; an error when some do and the rest
/// do not follow.
fn strip_gutter(text: &str) -> Result<Option<String>, GutterError> {
    let Some((k, number)) = text.split('\n').enumerate().find_map(|(k, line)| {
        split_line_number(line)
            .filter(|(_, separator, _)| *separator == GUTTER)
            .map(|(number, _, _)| (k, number))
    }) else {
        return Ok(None);
    };
    let clause = |line: usize, what: GutterBreak| GutterError { number, line, what };
    let Some(first) = number.checked_sub(k as u64) else {
        return Err(clause(k + 1, GutterBreak::OutOfSequence));
    };
    match strip_numbering(
        text,
        Numbering {
            first,
            separator: GUTTER,
        },
    ) {
        Ok(stripped) => Ok(Some(stripped)),
        Err(NumberingBreak::Missing(line)) => Err(clause(line + 1, GutterBreak::Missing)),
        Err(NumberingBreak::Number(line)) => Err(clause(
            line + 1,
            GutterBreak::Number {
                expected: first + line as u64,
            },
        )),
    }
}

fn line_numbers(view: &str, old: &str, new: &str) -> TierOutcome {
    let Some((old_stripped, numbering)) = strip_old_numbers(old) else {
        return TierOutcome::None;
    };
    // read shows whole lines: the text after the first prefix starts a line.
    let bytes = view.as_bytes();
    let (starts, count, saturated) = find_all_where(bytes, old_stripped.as_bytes(), |s| {
        s == 0 || bytes[s - 1] == b'\n'
    });
    match count {
        0 => TierOutcome::None,
        1 => {
            let located = memchr_iter(b'\n', &bytes[..starts[0]]).count() as u64 + 1;
            if located != numbering.first {
                return TierOutcome::Refused {
                    start: starts[0],
                    reason: format!(
                        "oldText is numbered from line {} while the text is at line {located}, \
                         so its numbers are not the file's (perhaps from before an earlier edit)",
                        numbering.first
                    ),
                };
            }
            let new_text = match new_text_without_numbers(new, numbering) {
                Ok(text) => text,
                Err(error) => {
                    return TierOutcome::Refused {
                        start: starts[0],
                        reason: error.to_string(),
                    };
                }
            };
            TierOutcome::Unique(Located {
                start: starts[0],
                end: starts[0] + old_stripped.len(),
                new_text,
            })
        }
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
        let Some((Tier::Indentation, TierOutcome::Refused { start: 2, reason })) = outcome else {
            panic!("expected a refusal, got {outcome:?}");
        };
        assert_eq!(
            reason,
            "line 1 of newText cannot be re-indented: it is indented less than oldText's lines \
             (with 2 spaces), which the file has at 1 tab"
        );
    }

    fn refusal(view: &str, old: &str, new: &str) -> String {
        match locate(view, old, new) {
            Some((_, TierOutcome::Refused { reason, .. })) => reason,
            other => panic!("expected a refusal for {old:?} -> {new:?}, got {other:?}"),
        }
    }

    // Replayed edits once lost `57:` from `57:lexopt = "0.3.0"`: newText loses only prefixes of
    // oldText's kind and numbering.
    #[test]
    fn line_numbers_leave_unnumbered_new_text_alone() {
        let (tier, out) = unique(
            "guide\nrun:\nend\n",
            "   2│ run:",
            "run:\n57:lexopt = \"0.3.0\"",
        );
        assert_eq!(tier, Tier::LineNumbers);
        assert_eq!(out, "guide\nrun:\n57:lexopt = \"0.3.0\"\nend\n");
        let (_, out) = unique(
            "codes = {\n    404: 'Missing',\n}\n",
            "   2│     404: 'Missing',",
            "    404: 'Missing',\n    410: 'Gone',",
        );
        assert_eq!(out, "codes = {\n    404: 'Missing',\n    410: 'Gone',\n}\n");
        // Same separator, but not the numbering of oldText: text, not a prefix.
        let (_, out) = unique("log\n12:00 start\n", "2:12:00 start", "12:07 stop");
        assert_eq!(out, "log\n12:07 stop\n");
    }

    // read's own gutter is stripped from newText numbered from anywhere: by the lines it will
    // occupy, or shifted by an earlier edit of the batch.
    #[test]
    fn line_numbers_strip_read_gutter_numbered_from_any_start() {
        let (tier, out) = unique(
            "x\na\nb\n",
            "   2\u{2502} a",
            "  12\u{2502} A\n  13\u{2502} B",
        );
        assert_eq!(tier, Tier::LineNumbers);
        assert_eq!(out, "x\nA\nB\nb\n");
        // Empty lines (read shows `   4│`, models often drop even that) keep the count.
        let (_, out) = unique(
            "x\na\nb\n",
            "   2\u{2502} a",
            "   7\u{2502} A\n\n   9\u{2502} C",
        );
        assert_eq!(out, "x\nA\n\nC\nb\n");
        // A prefix of another kind after oldText's gutter is text.
        let (_, out) = unique("x\na\nb\n", "   2\u{2502} a", "12: A");
        assert_eq!(out, "x\n12: A\nb\n");
    }

    #[test]
    fn line_numbers_refuse_a_partial_or_broken_read_gutter() {
        for (new, clause) in [
            (
                "  12\u{2502} A\n  14\u{2502} B",
                "its line 2 is numbered out of sequence (expected 13)",
            ),
            (
                "  12\u{2502} A\n  11\u{2502} B",
                "its line 2 is numbered out of sequence (expected 13)",
            ),
            ("A\n  12\u{2502} B", "its line 1 has none"),
            ("  12\u{2502} A\nB", "its line 2 has none"),
            (
                "\n\n   1\u{2502} A",
                "its line 3 is numbered out of sequence",
            ),
        ] {
            let reason = refusal("x\na\nb\n", "   2\u{2502} a", new);
            assert!(reason.contains("read's line-number gutter"), "{reason}");
            assert!(reason.contains(clause), "{new:?}: {reason}");
        }
    }

    #[test]
    fn line_numbers_strip_new_text_numbered_like_old_text() {
        let (_, out) = unique(
            "x\na\nb\ny\n",
            "   2│ a\n   3│ b",
            "   2│ a\n   3│ 12: inserted\n   4│\n   5│ b",
        );
        assert_eq!(out, "x\na\n12: inserted\n\nb\ny\n");
        let reason = refusal("x\na\nb\n", "   2│ a\n   3│ b", "   2│ a\nnew");
        assert!(reason.contains("its line 2 has none"), "{reason}");
        // Numbers that are not the located lines' (a read from before an edit).
        let reason = refusal("x\na\nb\n", "   5\u{2502} a", "q");
        assert!(
            reason.contains("numbered from line 5 while the text is at line 2"),
            "{reason}"
        );
        // The text after the prefix starts a line, as read shows it.
        assert_eq!(
            line_numbers("xa\nb\n", "   1\u{2502} a", "q"),
            TierOutcome::None
        );
        let reason = refusal("x\na\nb\n", "2: a\n3: b", "2: a\n7: b");
        assert!(
            reason.contains("its line 2 is numbered out of sequence (expected 3)"),
            "{reason}"
        );
    }

    // Found by the differential test (tests/it/edit_differential.rs).
    #[test]
    fn trailing_whitespace_refuses_whitespace_at_the_edge_of_the_match() {
        // The whitespace-only line after the block may or may not belong to oldText.
        let reason = refusal("a  \nb\n\t\t\nc\n", "a\nb\n", "x\n");
        assert!(reason.contains("whitespace-only line"), "{reason}");
        // Before it, oldText would have to start with a line break: the tier does not apply.
        assert_eq!(
            trailing_whitespace("x\n\t\na \nb\n", "\na\nb", "y"),
            TierOutcome::None
        );
    }

    #[test]
    fn trailing_whitespace_needs_text_on_the_first_and_last_line() {
        // Stripped, `\t\t\n}` would match after the end of `\t}` (the exact oldText is the
        // whitespace-only line and an indented `}`).
        let view = "a {\n\tb {\n\t\t\t\n\t}\n}\n";
        assert_eq!(
            trailing_whitespace(view, "\t\t\n}\n", "x"),
            TierOutcome::None
        );
        // The same for an empty first line: `\n\n}` is not the blank line before `}` above.
        let view = "a {\n\t\n}\nb {\n\n\n\t}\n";
        assert_eq!(trailing_whitespace(view, "\n\n}", "x"), TierOutcome::None);
        // And for a whitespace-only last line without its break.
        assert_eq!(
            trailing_whitespace("x\n}\n\ny\n", "}\n\t", "q"),
            TierOutcome::None
        );
    }

    #[test]
    fn whitespace_only_lines_with_other_whitespace_are_indentation() {
        let (tier, out) = unique("a\n    \nb\n", "a\n\t\nb", "a\n\t\n\t\nb");
        assert_eq!(tier, Tier::Indentation);
        assert_eq!(out, "a\n    \n    \nb\n");
    }

    #[test]
    fn indentation_needs_a_plausible_unit() {
        // Alignment after tabs is no indentation unit: "5 spaces are 1 space" is a coincidence.
        let view = "\t\t\t * x\n\t\t\tlet a = 1;\n";
        assert_eq!(locate(view, "           * x\n      let a = 1;", "X"), None);
        // Units of 2 to 8 spaces are.
        let (_, out) = unique("a\n  b\n    c\n", "a\n    b\n        c", "a\n    b\n    b2");
        assert_eq!(out, "a\n  b\n  b2\n");
    }

    #[test]
    fn indentation_does_not_guess_where_a_blank_edge_line_ends() {
        // The exact oldText ended with the indentation of `        x`, not with the blank line.
        let view = "a\n * p\n\n * p\n        x\n";
        assert_eq!(indentation(view, " * p\n\t\t", "X"), TierOutcome::None);
        assert_eq!(indentation(view, "\n\t * p", "X"), TierOutcome::None);
    }

    #[test]
    fn whitespace_only_lines_of_old_text_must_map_like_the_rest() {
        // oldText's 8-space line is no indentation of this block, where the file's line is
        // empty (the exact oldText was a block whose whitespace-only line has 4 tabs).
        let view = "\t\t\t\t * count\n\nx\n\t\t\t\t\t * count\n\t\t\t\t\n";
        assert_eq!(
            indentation(view, "           * count\n        \n", "y\n"),
            TierOutcome::None
        );
        // An empty line of oldText still stands for any blank line.
        let (_, out) = unique(
            "\tif a {\n\t\n\t}\n",
            "    if a {\n\n    }",
            "    if b {\n\n    }",
        );
        assert_eq!(out, "\tif b {\n\n\t}\n");
    }

    #[test]
    fn a_match_another_tier_reads_differently_is_refused() {
        // Ignoring trailing whitespace, oldText is line 1; without its line-number prefix, it
        // is line 2, as numbered.
        let outcome = locate("   2\u{2502} a \na  \n", "   2\u{2502} a  ", "b");
        let Some((Tier::TrailingWhitespace, TierOutcome::Refused { reason, .. })) = outcome else {
            panic!("expected a refusal, got {outcome:?}");
        };
        assert!(
            reason.contains("also matches after stripping line-number prefixes"),
            "{reason}"
        );
    }

    // The matched block's trailing whitespace once stayed after newText.
    #[test]
    fn trailing_whitespace_match_takes_the_whole_last_line() {
        let (tier, out) = unique("a  \nb  \nc\n", "a\nb", "A  \nb  ");
        assert_eq!(tier, Tier::TrailingWhitespace);
        assert_eq!(out, "A  \nb  \nc\n");
        let (_, out) = unique("a  \nb \t\nc\n", "a\nb", "X");
        assert_eq!(out, "X\nc\n");
    }

    // Tabs and spaces were once mixed: a single indentation level in oldText still fixes the unit.
    #[test]
    fn indentation_converts_deeper_lines_without_mixing() {
        let view = "func f() {\n\tx := 1\n\ty := 2\n}\n";
        let (tier, out) = unique(
            view,
            "    x := 1\n    y := 2",
            "    x := 1\n    if x {\n        y := 2\n    }",
        );
        assert_eq!(tier, Tier::Indentation);
        assert_eq!(out, "func f() {\n\tx := 1\n\tif x {\n\t\ty := 2\n\t}\n}\n");
        // Spaces in the file, tabs in oldText.
        let (_, out) = unique(
            "fn f() {\n    a();\n}\n",
            "\ta();",
            "\tif b {\n\t\ta();\n\t}",
        );
        assert_eq!(out, "fn f() {\n    if b {\n        a();\n    }\n}\n");
        // Nothing says how deeper spaces become tabs: refused, never mixed.
        let reason = refusal("\tx\n\ty\n", "x\ny", "x\n    z");
        assert_eq!(
            reason,
            "line 2 of newText cannot be re-indented: it is indented deeper than oldText's \
             lines, with 4 spaces, and oldText does not show how that converts to the file's \
             indentation there (1 tab)"
        );
        // Not a whole number of units.
        let reason = refusal(view, "    x := 1\n    y := 2", "    x := 1\n      y := 2");
        assert!(
            reason.contains("(6 spaces) is not a whole number"),
            "{reason}"
        );
    }

    // Whitespace-only newText lines were once left unconverted.
    #[test]
    fn indentation_converts_whitespace_only_lines() {
        let (_, out) = unique(
            "a\n\tif x {\n\t\ty()\n\t}\n",
            "    if x {\n        y()\n    }",
            "    if x {\n        y()\n        \n\n        z()\n    }",
        );
        assert_eq!(out, "a\n\tif x {\n\t\ty()\n\t\t\n\n\t\tz()\n\t}\n");
    }

    // newText already in the file's style, and column 0, were once refused.
    #[test]
    fn indentation_accepts_the_files_style_and_column_zero() {
        let view = "a\n\tif x {\n\t\ty()\n\t}\n";
        let old = "    if x {\n        y()\n    }";
        let (_, out) = unique(view, old, "\tif x {\n\t\tz()\n\t}");
        assert_eq!(out, "a\n\tif x {\n\t\tz()\n\t}\n");
        // Line by line: lines in the file's style stay, lines in oldText's are converted.
        let (_, out) = unique(view, old, "    if x {\n\t\tz()\n    }");
        assert_eq!(out, "a\n\tif x {\n\t\tz()\n\t}\n");
        let (_, out) = unique(
            view,
            old,
            "#ifdef X\n    if x {\n        y()\n    }\n#endif",
        );
        assert_eq!(out, "a\n#ifdef X\n\tif x {\n\t\ty()\n\t}\n#endif\n");
        let (_, out) = unique(
            "int f() {\n\treturn 1;\n}\n",
            "    return 1;",
            "#if A\n    return 2;\n#endif",
        );
        assert_eq!(out, "int f() {\n#if A\n\treturn 2;\n#endif\n}\n");
    }

    #[test]
    fn indentation_refusals_say_what_is_wrong() {
        // oldText at 4 spaces is the file's 3 tabs: a shift, so 2 tabs in newText are unclear.
        let view = "x\n\t\t\ta\n\t\t\t\tb\n";
        let reason = refusal(view, "    a\n        b", "    a\n\t\tc");
        assert_eq!(
            reason,
            "line 2 of newText cannot be re-indented: it is indented with 2 tabs, while oldText \
             indents with spaces and its 4 spaces are 3 tabs in the file, so where the line \
             belongs is unclear; write newText in oldText's indentation"
        );
        // A shifted block (oldText at 4 spaces, the file at 8): column 0 is not certain.
        let reason = refusal("x\n        a\n        b\n", "    a\n    b", "#a\n    a");
        assert!(reason.contains("column 0"), "{reason}");
        let reason = refusal("x\n        a\n        b\n", "    a\n    b", "  a");
        assert!(
            reason.contains("indented less than oldText's lines (with 2 spaces)"),
            "{reason}"
        );
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
