//! What a file's content may contain, in a few bytes per distinct trigram, and what a pattern
//! requires of a file that has a matching line.
//!
//! A file's summary is a Bloom filter of its trigrams (three consecutive bytes, ASCII letters
//! folded to lower case). A query's requirement is an `OR` of `AND`s of trigrams taken from the
//! literals every match must contain (`regex-syntax`'s prefix and suffix extraction). A file
//! whose filter lacks a required trigram cannot contain a match and is not searched; every
//! other file is searched by the normal searcher. False positives only cost a search; there are
//! no false negatives, which is what keeps the warm answer exact.

use jig_env::{CaseSensitivity, PatternSyntax, SearchRequest};
use regex_syntax::hir::Hir;
use regex_syntax::hir::literal::{ExtractKind, Extractor};

/// What a file's content may contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Content {
    /// Unknown (unreadable, too large, or bytes the searcher transcodes): always searched.
    Unknown,
    /// A Bloom filter of the file's folded trigrams.
    Bloom(Box<[u64]>),
}

impl Content {
    /// Bytes of memory the summary holds beyond its enum.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Self::Unknown => 0,
            Self::Bloom(words) => words.len() * 8,
        }
    }

    /// Whether a file with this content may contain `trigram` (a folded trigram).
    pub(crate) fn may_contain(&self, trigram: u32) -> bool {
        match self {
            Self::Unknown => true,
            Self::Bloom(words) => bloom_contains(words, trigram),
        }
    }

    /// Whether a file with this content may hold a match of `requirement`.
    pub(crate) fn may_match(&self, requirement: &Requirement) -> bool {
        let Self::Bloom(words) = self else {
            return true;
        };
        match requirement {
            Requirement::Anything => true,
            Requirement::AnyOf(alternatives) => alternatives.iter().any(|trigrams| {
                trigrams
                    .iter()
                    .all(|&trigram| bloom_contains(words, trigram))
            }),
            Requirement::AllOf(groups) => groups.iter().all(|alternatives| {
                alternatives.iter().any(|trigrams| {
                    trigrams
                        .iter()
                        .all(|&trigram| bloom_contains(words, trigram))
                })
            }),
        }
    }
}

/// Bits of filter per distinct trigram (rounded up to a power of two): with two hash functions
/// about 3–5 % of absent trigrams pass.
const BITS_PER_TRIGRAM: usize = 10;
/// The largest filter (128 KiB); a file with more distinct trigrams fills it more densely.
const MAX_BLOOM_BITS: usize = 1 << 20;

fn bloom_positions(trigram: u32, bits: usize) -> (usize, usize) {
    let hash = u64::from(trigram).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mask = (bits - 1) as u64;
    #[expect(
        clippy::cast_possible_truncation,
        reason = "masked to the filter's size, which is a usize"
    )]
    let positions = ((hash & mask) as usize, ((hash >> 32) & mask) as usize);
    positions
}

fn bloom_contains(words: &[u64], trigram: u32) -> bool {
    let bits = words.len() * 64;
    let (a, b) = bloom_positions(trigram, bits);
    words[a / 64] & (1 << (a % 64)) != 0 && words[b / 64] & (1 << (b % 64)) != 0
}

fn fold(byte: u8) -> u8 {
    byte.to_ascii_lowercase()
}

fn trigram_of(bytes: [u8; 3]) -> u32 {
    (u32::from(fold(bytes[0])) << 16) | (u32::from(fold(bytes[1])) << 8) | u32::from(fold(bytes[2]))
}

/// Scratch space for summarising files: a bit per possible trigram (2 MiB), reused per thread.
#[derive(Debug)]
pub(crate) struct Summarizer {
    seen: Vec<u64>,
    distinct: Vec<u32>,
}

impl Default for Summarizer {
    fn default() -> Self {
        Self {
            seen: vec![0; (1 << 24) / 64],
            distinct: Vec::new(),
        }
    }
}

impl Summarizer {
    /// The summary of a file whose whole content is `bytes`.
    pub(crate) fn summarize(&mut self, bytes: &[u8]) -> Content {
        // The searcher strips a byte-order mark and transcodes UTF-16: the bytes it matches are
        // not these, so such a file is always searched.
        if bytes.starts_with(&[0xEF, 0xBB, 0xBF])
            || bytes.starts_with(&[0xFF, 0xFE])
            || bytes.starts_with(&[0xFE, 0xFF])
        {
            return Content::Unknown;
        }
        self.distinct.clear();
        for window in bytes.windows(3) {
            let trigram = trigram_of([window[0], window[1], window[2]]);
            let (word, bit) = ((trigram / 64) as usize, trigram % 64);
            if self.seen[word] & (1 << bit) == 0 {
                self.seen[word] |= 1 << bit;
                self.distinct.push(trigram);
            }
        }
        let bits = (self.distinct.len() * BITS_PER_TRIGRAM)
            .next_power_of_two()
            .clamp(64, MAX_BLOOM_BITS);
        let mut words = vec![0_u64; bits / 64].into_boxed_slice();
        for &trigram in &self.distinct {
            self.seen[(trigram / 64) as usize] = 0;
            let (a, b) = bloom_positions(trigram, bits);
            words[a / 64] |= 1 << (a % 64);
            words[b / 64] |= 1 << (b % 64);
        }
        Content::Bloom(words)
    }
}

/// What a file must contain to hold a match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Requirement {
    /// Nothing known: every file is searched.
    Anything,
    /// One of these sets of trigrams, all of the set.
    AnyOf(Vec<Vec<u32>>),
    /// Each of these requirements (prefix and suffix).
    AllOf(Vec<Vec<Vec<u32>>>),
}

impl Requirement {
    /// The trigrams every matching file contains: those in every alternative of a group.
    /// Checking these one at a time over many files lets the filters' memory be read in
    /// parallel (each check is independent of the last), before [`Content::may_match`].
    pub(crate) fn must_contain(&self) -> Vec<u32> {
        fn common(alternatives: &[Vec<u32>]) -> Vec<u32> {
            let Some((first, rest)) = alternatives.split_first() else {
                return Vec::new();
            };
            first
                .iter()
                .copied()
                .filter(|trigram| {
                    rest.iter()
                        .all(|other| other.binary_search(trigram).is_ok())
                })
                .collect()
        }
        let mut trigrams = match self {
            Self::Anything => Vec::new(),
            Self::AnyOf(alternatives) => common(alternatives),
            Self::AllOf(groups) => groups.iter().flat_map(|group| common(group)).collect(),
        };
        trigrams.sort_unstable();
        trigrams.dedup();
        trigrams
    }
}

/// The trigram requirement of a request's pattern. Anything the extraction cannot bound (a
/// pattern that can match without three known bytes, or one that fails to parse) requires
/// nothing, so the answer stays exact.
pub(crate) fn requirement(request: &SearchRequest) -> Requirement {
    let pattern = match request.syntax {
        PatternSyntax::Regex => request.pattern.clone(),
        PatternSyntax::Literal => regex_syntax::escape(&request.pattern),
    };
    // A case-insensitive pattern is read case-sensitively and its literals cut where a letter
    // has spellings that ASCII folding does not join (below): expanding every letter's cases
    // would exceed the extractor's limits for any literal of more than a few letters.
    let insensitive = request.case == CaseSensitivity::Insensitive;
    let Ok(hir) = regex_syntax::ParserBuilder::new()
        .multi_line(true)
        .build()
        .parse(&pattern)
    else {
        return Requirement::Anything;
    };
    let groups: Vec<Vec<Vec<u32>>> = [ExtractKind::Prefix, ExtractKind::Suffix]
        .into_iter()
        .filter_map(|kind| alternatives(&hir, kind, insensitive))
        .collect();
    match groups.len() {
        0 => Requirement::Anything,
        1 => Requirement::AnyOf(groups.into_iter().flatten().collect()),
        _ => Requirement::AllOf(groups),
    }
}

/// Trigram sets, one per literal every match starts (or ends) with; `None` when some match
/// need not contain three known bytes.
///
/// With `insensitive`, a match holds each literal with its letters in any case. ASCII folding
/// joins the spellings of every ASCII letter but `k` and `s` (the Kelvin sign and the long s
/// fold to them) and of no other character, so only trigrams inside runs of the other ASCII
/// characters are required.
fn alternatives(hir: &Hir, kind: ExtractKind, insensitive: bool) -> Option<Vec<Vec<u32>>> {
    let mut extractor = Extractor::new();
    extractor.kind(kind);
    let seq = extractor.extract(hir);
    let literals = seq.literals()?;
    if literals.is_empty() {
        // No match is possible at all; searching everything is still exact.
        return None;
    }
    let mut out: Vec<Vec<u32>> = Vec::with_capacity(literals.len());
    for literal in literals {
        let bytes = literal.as_bytes();
        let runs: Vec<&[u8]> = if insensitive {
            bytes
                .split(|&byte| !byte.is_ascii() || matches!(byte, b'k' | b'K' | b's' | b'S'))
                .collect()
        } else {
            vec![bytes]
        };
        let mut trigrams: Vec<u32> = runs
            .iter()
            .flat_map(|run| run.windows(3))
            .map(|window| trigram_of([window[0], window[1], window[2]]))
            .collect();
        if trigrams.is_empty() {
            return None;
        }
        trigrams.sort_unstable();
        trigrams.dedup();
        if !out.contains(&trigrams) {
            out.push(trigrams);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(pattern: &str, syntax: PatternSyntax, case: CaseSensitivity) -> SearchRequest {
        let mut request = SearchRequest::new("/", pattern);
        request.syntax = syntax;
        request.case = case;
        request
    }

    fn may(content: &[u8], pattern: &str, syntax: PatternSyntax, case: CaseSensitivity) -> bool {
        let content = Summarizer::default().summarize(content);
        content.may_match(&requirement(&request(pattern, syntax, case)))
    }

    #[test]
    fn literal_requirements_prune_files_without_the_trigrams() {
        use CaseSensitivity::{Insensitive, Sensitive};
        use PatternSyntax::{Literal, Regex};
        assert!(may(b"a needle here", "needle", Literal, Sensitive));
        assert!(!may(b"a haystack here", "needle", Literal, Sensitive));
        assert!(may(b"a NEEDLE here", "needle", Literal, Insensitive));
        assert!(may(b"x foo y", "foo|bar", Regex, Sensitive));
        assert!(may(b"x bar y", "foo|bar", Regex, Sensitive));
        assert!(!may(b"x baz y", "foo|bar", Regex, Sensitive));
        assert!(may(b"anything", "a.", Regex, Sensitive));
        assert!(may(b"fn main() {}", r"^fn \w+\(", Regex, Sensitive));
        assert!(!may(b"let x = 1;", r"^fn \w+\(", Regex, Sensitive));
        assert!(may(b"\xEF\xBB\xBFneedle", "zzz", Literal, Sensitive));
    }

    #[test]
    fn unicode_case_folding_keeps_every_spelling() {
        // The Kelvin sign folds to `k` in case-insensitive mode.
        let kelvin = "\u{212A}ind".as_bytes();
        assert!(may(
            kelvin,
            "kind",
            PatternSyntax::Literal,
            CaseSensitivity::Insensitive
        ));
    }
}
