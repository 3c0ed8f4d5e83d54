//! Searching one file's bytes (matcher, BOM handling, binary detection, long lines) and
//! assembling per-file outcomes into an exactly limited result.

use std::io::{self, Read as _};
use std::path::PathBuf;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use jig_env::{
    CaseSensitivity, FileMatches, LineKind, PatternSyntax, SearchInputError, SearchLine,
    SearchRequest, SearchResult,
};

use crate::glob::PathGlob;

/// Checks the request's pattern and glob without searching anything.
pub fn validate(request: &SearchRequest) -> Result<(), SearchInputError> {
    build_matcher(request)?;
    if let Some(glob) = &request.glob {
        PathGlob::new(glob)?;
    }
    Ok(())
}

fn build_matcher(request: &SearchRequest) -> Result<RegexMatcher, SearchInputError> {
    // grep-regex reports syntax errors against the pattern as it rewrote it (wrapped in a
    // group); parsing the pattern as given first makes the message quote what the caller wrote.
    if request.syntax == PatternSyntax::Regex
        && let Err(error) = regex_syntax::ParserBuilder::new()
            .case_insensitive(request.case == CaseSensitivity::Insensitive)
            .multi_line(true)
            .build()
            .parse(&request.pattern)
    {
        return Err(SearchInputError::Pattern {
            message: error.to_string(),
        });
    }
    RegexMatcherBuilder::new()
        .case_insensitive(request.case == CaseSensitivity::Insensitive)
        .fixed_strings(request.syntax == PatternSyntax::Literal)
        // As ripgrep: `^` and `$` match at line boundaries, and a match never spans a NUL (so
        // the fast line-oriented search applies).
        .multi_line(true)
        .line_terminator(Some(b'\n'))
        .ban_byte(Some(0))
        .build(&request.pattern)
        .map_err(|error| SearchInputError::Pattern {
            message: error.to_string(),
        })
}

/// A compiled search request: the matcher and the searcher settings, shared by all threads.
#[derive(Debug, Clone)]
pub struct CompiledSearch {
    matcher: RegexMatcher,
    glob: Option<PathGlob>,
    context_lines: usize,
    limit: Option<usize>,
    max_line_bytes: usize,
}

impl CompiledSearch {
    /// Compiles the request's pattern and glob.
    pub fn new(request: &SearchRequest) -> Result<Self, SearchInputError> {
        let matcher = build_matcher(request)?;
        let glob = request.glob.as_deref().map(PathGlob::new).transpose()?;
        Ok(Self {
            matcher,
            glob,
            context_lines: request.context_lines,
            limit: request.limit,
            max_line_bytes: request.max_line_bytes.max(4),
        })
    }

    /// The request's glob, compiled.
    pub fn glob(&self) -> Option<&PathGlob> {
        self.glob.as_ref()
    }

    /// A searcher for one thread.
    pub fn file_searcher(&self) -> FileSearcher {
        let build = |bom_sniffing: bool| {
            SearcherBuilder::new()
                .line_number(true)
                .before_context(self.context_lines)
                .after_context(self.context_lines)
                .binary_detection(BinaryDetection::quit(0))
                .memory_map(grep_searcher::MmapChoice::never())
                .bom_sniffing(bom_sniffing)
                .build()
        };
        FileSearcher {
            matcher: self.matcher.clone(),
            plain: build(false),
            transcoding: build(true),
            head: vec![0; HEAD_BYTES],
            // No file needs to report more than limit + 1 matches: that is enough to know the
            // limit was exceeded.
            stop_after: self.limit.map(|limit| limit.saturating_add(1)),
            max_line_bytes: self.max_line_bytes,
        }
    }

    /// An assembler for the results of this search.
    pub fn assembler(&self) -> SearchAssembler {
        SearchAssembler {
            limit: self.limit,
            context_lines: self.context_lines,
            result: SearchResult::default(),
            done: false,
        }
    }
}

/// What searching one file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOutcome {
    /// A text file: its matching and context lines (empty when nothing matched).
    Text(Vec<SearchLine>),
    /// A NUL byte was found: the file is skipped.
    Binary,
}

impl FileOutcome {
    /// How many matching lines the outcome holds.
    pub fn match_count(&self) -> usize {
        match self {
            Self::Text(lines) => lines
                .iter()
                .filter(|line| line.kind == LineKind::Match)
                .count(),
            Self::Binary => 0,
        }
    }
}

/// Searches files one at a time (one per thread; cheap to create from [`CompiledSearch`]).
#[derive(Debug)]
pub struct FileSearcher {
    matcher: RegexMatcher,
    /// For files without a byte-order mark: bytes are searched as they are.
    plain: Searcher,
    /// For files starting with a UTF-8 or UTF-16 byte-order mark: the BOM is removed and UTF-16
    /// is transcoded to UTF-8 before searching (as ripgrep does).
    transcoding: Searcher,
    /// The first bytes of the current file, read once to look for a BOM.
    head: Vec<u8>,
    stop_after: Option<usize>,
    max_line_bytes: usize,
}

/// How much of a file is read up front (one `read` for most files).
const HEAD_BYTES: usize = 64 * 1024;

impl FileSearcher {
    /// Searches the bytes `reader` yields. Every implementation reads files through this (a
    /// reader over a file on disk, or over bytes already read), so BOM handling, binary
    /// detection and line handling are identical everywhere.
    pub fn search_reader<R: io::Read>(&mut self, mut reader: R) -> io::Result<FileOutcome> {
        // Reading the head ourselves lets files without a BOM skip the searcher's separate
        // BOM probe: one `read` syscall fewer per file on trees of small files.
        let mut filled = 0;
        while filled < 3 {
            match reader.read(&mut self.head[filled..]) {
                Ok(0) => break,
                Ok(read) => filled += read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        let head = &self.head[..filled];
        let has_bom = head.starts_with(&[0xEF, 0xBB, 0xBF])
            || head.starts_with(&[0xFF, 0xFE])
            || head.starts_with(&[0xFE, 0xFF]);
        let searcher = if has_bom {
            &mut self.transcoding
        } else {
            &mut self.plain
        };
        let mut sink = Collector {
            lines: Vec::new(),
            matches: 0,
            stop_after: self.stop_after,
            binary: false,
            max_line_bytes: self.max_line_bytes,
        };
        searcher.search_reader(&self.matcher, head.chain(reader), &mut sink)?;
        if sink.binary {
            return Ok(FileOutcome::Binary);
        }
        if sink.matches == 0 {
            sink.lines.clear();
        }
        Ok(FileOutcome::Text(sink.lines))
    }
}

struct Collector {
    lines: Vec<SearchLine>,
    matches: usize,
    stop_after: Option<usize>,
    binary: bool,
    max_line_bytes: usize,
}

impl Collector {
    fn push(&mut self, number: u64, kind: LineKind, bytes: &[u8]) {
        let mut bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let (bytes, truncated) = cut_line(bytes, self.max_line_bytes);
        self.lines.push(SearchLine {
            number,
            kind,
            text: String::from_utf8_lossy(bytes).into_owned(),
            truncated,
        });
    }
}

/// Cuts `bytes` to at most `max` bytes without splitting a UTF-8 sequence.
fn cut_line(bytes: &[u8], max: usize) -> (&[u8], bool) {
    if bytes.len() <= max {
        return (bytes, false);
    }
    let mut end = max;
    let mut steps = 0;
    while end > 0 && steps < 3 && (bytes[end] & 0b1100_0000) == 0b1000_0000 {
        end -= 1;
        steps += 1;
    }
    if steps == 3 && (bytes[end] & 0b1100_0000) == 0b1000_0000 {
        end = max;
    }
    (&bytes[..end], true)
}

impl Sink for &mut Collector {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = mat.line_number().unwrap_or(0);
        for (offset, line) in (0_u64..).zip(mat.lines()) {
            self.push(first + offset, LineKind::Match, line);
            self.matches += 1;
            if self.stop_after.is_some_and(|stop| self.matches >= stop) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, io::Error> {
        let number = context.line_number().unwrap_or(0);
        self.push(number, LineKind::Context, context.bytes());
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        self.lines.clear();
        Ok(false)
    }
}

/// Collects per-file outcomes, given in path order, into a [`SearchResult`] that keeps exactly
/// the first `limit` matching lines and knows whether there were more.
#[derive(Debug)]
pub struct SearchAssembler {
    limit: Option<usize>,
    context_lines: usize,
    result: SearchResult,
    done: bool,
}

impl SearchAssembler {
    /// Adds the next file in path order. Returns `false` once the result is complete (the limit
    /// was exceeded): later files cannot change it and need not be searched.
    pub fn push(&mut self, path: PathBuf, outcome: FileOutcome) -> bool {
        if self.done {
            return false;
        }
        let count = outcome.match_count();
        let FileOutcome::Text(mut lines) = outcome else {
            return true;
        };
        if count == 0 {
            return true;
        }
        let room = self
            .limit
            .map_or(usize::MAX, |limit| limit - self.result.matches);
        if count > room {
            self.done = true;
            self.result.limit_reached = true;
            if room == 0 {
                return false;
            }
            keep_first_matches(&mut lines, room, self.context_lines);
            self.result.matches += room;
        } else {
            self.result.matches += count;
        }
        self.result.files.push(FileMatches { path, lines });
        // Exactly at the limit is not "reached": only a later match proves there are more, so
        // the caller keeps going until one shows up (or none does).
        !self.done
    }

    /// The assembled result.
    pub fn finish(self) -> SearchResult {
        self.result
    }
}

/// Keeps the first `keep` matches of a file's lines and the after-context of the last kept one
/// (but not the before-context of the first dropped one).
fn keep_first_matches(lines: &mut Vec<SearchLine>, keep: usize, context_lines: usize) {
    let mut seen = 0;
    let mut last_kept_line = 0;
    let mut cut = lines.len();
    for (index, line) in lines.iter().enumerate() {
        if line.kind == LineKind::Match {
            if seen == keep {
                cut = index;
                break;
            }
            seen += 1;
            last_kept_line = line.number;
        }
    }
    lines.truncate(cut);
    let horizon = last_kept_line.saturating_add(context_lines as u64);
    while lines
        .last()
        .is_some_and(|line| line.kind == LineKind::Context && line.number > horizon)
    {
        lines.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(number: u64, kind: LineKind) -> SearchLine {
        SearchLine {
            number,
            kind,
            text: String::new(),
            truncated: false,
        }
    }

    #[test]
    fn file_searcher_reports_matches_context_and_cuts_long_lines() {
        let mut request = SearchRequest::new("/", "needle");
        request.context_lines = 1;
        request.max_line_bytes = 8;
        let compiled = CompiledSearch::new(&request).unwrap();
        let text = b"a\nneedle one\r\nb\nc\nd\nneedle\n";
        let outcome = compiled.file_searcher().search_reader(&text[..]).unwrap();
        let FileOutcome::Text(lines) = outcome else {
            panic!("binary")
        };
        let summary: Vec<(u64, LineKind, &str, bool)> = lines
            .iter()
            .map(|l| (l.number, l.kind, l.text.as_str(), l.truncated))
            .collect();
        assert_eq!(
            summary,
            vec![
                (1, LineKind::Context, "a", false),
                (2, LineKind::Match, "needle o", true),
                (3, LineKind::Context, "b", false),
                (5, LineKind::Context, "d", false),
                (6, LineKind::Match, "needle", false),
            ]
        );
    }

    #[test]
    fn file_searcher_strips_bom_and_transcodes_utf16() {
        let request = SearchRequest::new("/", "^needle");
        let compiled = CompiledSearch::new(&request).unwrap();
        let mut searcher = compiled.file_searcher();
        let utf8 = searcher
            .search_reader(&b"\xEF\xBB\xBFneedle one\n"[..])
            .unwrap();
        let FileOutcome::Text(lines) = utf8 else {
            panic!("binary")
        };
        assert_eq!(lines[0].text, "needle one");
        let mut utf16 = vec![0xFF, 0xFE];
        for unit in "x\nneedle two\n".encode_utf16() {
            utf16.extend(unit.to_le_bytes());
        }
        let FileOutcome::Text(lines) = searcher.search_reader(&utf16[..]).unwrap() else {
            panic!("UTF-16 is text, not binary")
        };
        assert_eq!((lines[0].number, lines[0].text.as_str()), (2, "needle two"));
        let FileOutcome::Text(lines) = searcher.search_reader(&b"needle"[..]).unwrap() else {
            panic!("binary")
        };
        assert_eq!(lines[0].text, "needle");
    }

    #[test]
    fn file_searcher_skips_binary_files() {
        let request = SearchRequest::new("/", "needle");
        let compiled = CompiledSearch::new(&request).unwrap();
        let outcome = compiled
            .file_searcher()
            .search_reader(&b"needle\n\0\n"[..])
            .unwrap();
        assert_eq!(outcome, FileOutcome::Binary);
    }

    #[test]
    fn assembler_keeps_exactly_the_first_matches_and_knows_there_are_more() {
        let mut request = SearchRequest::new("/", "x");
        request.limit = Some(3);
        request.context_lines = 1;
        let compiled = CompiledSearch::new(&request).unwrap();
        let mut assembler = compiled.assembler();
        let two = vec![line(1, LineKind::Match), line(2, LineKind::Match)];
        assert!(assembler.push("a".into(), FileOutcome::Text(two.clone())));
        let more = vec![
            line(4, LineKind::Match),
            line(5, LineKind::Context),
            line(6, LineKind::Context),
            line(7, LineKind::Context),
            line(8, LineKind::Match),
        ];
        assert!(!assembler.push("b".into(), FileOutcome::Text(more)));
        let result = assembler.finish();
        assert_eq!(result.matches, 3);
        assert!(result.limit_reached);
        assert_eq!(
            result.files[1].lines,
            vec![line(4, LineKind::Match), line(5, LineKind::Context)]
        );
    }

    #[test]
    fn assembler_at_exactly_the_limit_is_not_reached() {
        let mut request = SearchRequest::new("/", "x");
        request.limit = Some(2);
        let compiled = CompiledSearch::new(&request).unwrap();
        let mut assembler = compiled.assembler();
        assert!(assembler.push(
            "a".into(),
            FileOutcome::Text(vec![line(1, LineKind::Match)])
        ));
        assert!(assembler.push(
            "b".into(),
            FileOutcome::Text(vec![line(1, LineKind::Match)])
        ));
        assert!(assembler.push("c".into(), FileOutcome::Text(vec![])));
        let result = assembler.finish();
        assert_eq!(result.matches, 2);
        assert!(!result.limit_reached);
    }
}
