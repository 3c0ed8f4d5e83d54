//! Walking and searching a tree: the request and result types of
//! [`ExecutionEnv::walk`] and
//! [`ExecutionEnv::search`], the building blocks every
//! implementation shares, and the generic implementation built on the env's file operations.
//!
//! # Semantics (every implementation)
//! - **Ignore rules** ([`IgnoreRules::Respect`]): `.ignore`, `.gitignore` and
//!   `.git/info/exclude` are honoured the same way inside and outside a git repository, in the
//!   searched tree and in its ancestors, with ripgrep's precedence (`.ignore` over `.gitignore`
//!   over the exclude file; a deeper file over a shallower one; within a file the last matching
//!   line wins, `!` re-includes). The user's global git excludes file is *not* read, so results
//!   do not depend on the host's git configuration.
//! - **Hidden files** are walked and searched; an entry named `.git` (the repository directory,
//!   or a worktree's `.git` file) never is.
//! - **Symbolic links** are never followed below the root: a symlinked directory is not entered
//!   and a symlinked file is not searched (a walk lists the link itself as
//!   [`FileKind::Symlink`]), so nothing outside the tree is read through a link. A root that is
//!   itself a symlink is resolved.
//! - **Globs** ([`PathGlob`]) filter what is returned, after the ignore rules (a glob never
//!   re-includes an ignored file): a glob without `/` matches the entry's name at any depth; a
//!   glob with `/` matches the path relative to the root (`src/**/*.rs`; a leading `/` or `./`
//!   anchors nothing more and is dropped). A trailing `/` matches directories only.
//! - **Binary files** (a NUL byte in what the searcher reads) are skipped by `search`: they
//!   contribute no lines at all.
//! - **Order**: results are sorted by relative path (component by component, bytewise), then by
//!   line number, whatever the scheduling; with a limit, the results kept are the first ones in
//!   that order and "more than the limit" is known exactly.
//! - **Cancellation**: cancelling the request's token stops the walk and the search promptly;
//!   the call then fails with [`ErrorKind::Aborted`].
//!
//! # Implementing
//! Backends that can walk faster than `read_dir` (a local disk, a remote host with ripgrep)
//! override `walk`/`search` but reuse [`IgnoreDir`]-compatible rules, [`PathGlob`],
//! [`FileSearcher`] (one per thread) and [`SearchAssembler`], which is what makes their results
//! identical to the generic implementation's. The conformance suite checks that they are.

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::fmt;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{GlobBuilder, GlobMatcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use tokio_util::sync::CancellationToken;

use crate::env::ExecutionEnv;
use crate::error::{EnvError, EnvResult, ErrorKind};
use crate::types::FileKind;

/// Whether ignore files are honoured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IgnoreRules {
    /// Skip what `.gitignore`, `.ignore` and `.git/info/exclude` exclude.
    #[default]
    Respect,
    /// Walk everything (still never `.git` itself, still no symlinks followed).
    IncludeIgnored,
}

/// Which entries a walk returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EntryKinds {
    /// Regular files (and symlinks, which are not followed).
    #[default]
    Files,
    /// Files, symlinks and directories.
    FilesAndDirectories,
}

/// How a search pattern is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PatternSyntax {
    /// Rust `regex` syntax, as ripgrep.
    #[default]
    Regex,
    /// The pattern is a literal string.
    Literal,
}

/// Whether a search ignores letter case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CaseSensitivity {
    /// `a` matches only `a`.
    #[default]
    Sensitive,
    /// `a` matches `a` and `A` (Unicode simple case folding).
    Insensitive,
}

/// What [`ExecutionEnv::walk`] lists.
#[derive(Debug, Clone)]
pub struct WalkRequest {
    /// An absolute directory (or file) to walk.
    pub root: PathBuf,
    /// Keep only entries this glob matches (see [`PathGlob`]).
    pub glob: Option<String>,
    /// Whether ignore files are honoured.
    pub ignore: IgnoreRules,
    /// Files only, or directories too.
    pub kinds: EntryKinds,
    /// Return at most this many entries (the first in order); `limit_reached` says whether more
    /// existed.
    pub limit: Option<usize>,
    /// Cancelling this stops the walk.
    pub cancel: CancellationToken,
}

impl WalkRequest {
    /// A walk of `root` listing files, honouring ignore files, with no glob and no limit.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            glob: None,
            ignore: IgnoreRules::Respect,
            kinds: EntryKinds::Files,
            limit: None,
            cancel: CancellationToken::new(),
        }
    }
}

/// One entry a walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    /// The path relative to the walked root; for a root that is a file, its file name.
    pub path: PathBuf,
    /// File, directory or symlink (not followed).
    pub kind: FileKind,
}

/// The answer of `walk`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalkResult {
    /// The entries, sorted by [`compare_paths`].
    pub entries: Vec<WalkEntry>,
    /// True when more entries than the request's limit matched.
    pub limit_reached: bool,
}

/// What [`ExecutionEnv::search`] looks for.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// An absolute directory (or a single file) to search.
    pub root: PathBuf,
    /// The pattern, read according to `syntax`.
    pub pattern: String,
    /// Regex or literal.
    pub syntax: PatternSyntax,
    /// Case-sensitive or not.
    pub case: CaseSensitivity,
    /// Search only files this glob matches (see [`PathGlob`]).
    pub glob: Option<String>,
    /// Whether ignore files are honoured.
    pub ignore: IgnoreRules,
    /// Lines of context before and after each matching line (overlapping windows merge).
    pub context_lines: usize,
    /// Keep at most this many matching lines (the first in order); `limit_reached` says
    /// whether there were more.
    pub limit: Option<usize>,
    /// Line texts longer than this many bytes are cut (at a character boundary) and flagged.
    pub max_line_bytes: usize,
    /// Cancelling this stops the search.
    pub cancel: CancellationToken,
}

impl SearchRequest {
    /// A regex search of `root` for `pattern`: case-sensitive, ignore files honoured, no glob,
    /// no context, no limit, lines cut at 4 KiB.
    pub fn new(root: impl Into<PathBuf>, pattern: impl Into<String>) -> Self {
        Self {
            root: root.into(),
            pattern: pattern.into(),
            syntax: PatternSyntax::Regex,
            case: CaseSensitivity::Sensitive,
            glob: None,
            ignore: IgnoreRules::Respect,
            context_lines: 0,
            limit: None,
            max_line_bytes: 4096,
            cancel: CancellationToken::new(),
        }
    }

    /// Checks the pattern and the glob without searching anything.
    pub fn validate(&self) -> Result<(), SearchInputError> {
        build_matcher(self)?;
        if let Some(glob) = &self.glob {
            PathGlob::new(glob)?;
        }
        Ok(())
    }
}

/// Whether a returned line matched or is context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// The line matched the pattern.
    Match,
    /// A context line around a match.
    Context,
}

/// One line of a search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchLine {
    /// 1-based line number.
    pub number: u64,
    /// Match or context.
    pub kind: LineKind,
    /// The line without its line ending (`\n` or `\r\n`), decoded as UTF-8 (invalid bytes
    /// replaced), cut to the request's `max_line_bytes`.
    pub text: String,
    /// True when `text` was cut.
    pub truncated: bool,
}

/// The lines found in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMatches {
    /// The path relative to the searched root; for a root that is a file, its file name.
    pub path: PathBuf,
    /// Matching and context lines in line order; windows that overlap or touch are merged.
    pub lines: Vec<SearchLine>,
}

/// The answer of `search`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchResult {
    /// Files with at least one kept match, sorted by [`compare_paths`].
    pub files: Vec<FileMatches>,
    /// Matching lines kept (at most the limit).
    pub matches: usize,
    /// True when more matching lines than the limit exist.
    pub limit_reached: bool,
}

/// A pattern or glob that cannot be used, with the engine's own message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SearchInputError {
    /// The regex engine rejected the pattern.
    #[error("invalid pattern: {message}")]
    Pattern {
        /// The regex engine's message (multi-line, with a caret under the problem).
        message: String,
    },
    /// The glob could not be parsed.
    #[error("invalid glob \"{glob}\": {message}")]
    Glob {
        /// The glob as given.
        glob: String,
        /// What is wrong with it.
        message: String,
    },
}

impl From<SearchInputError> for EnvError {
    fn from(error: SearchInputError) -> Self {
        EnvError::new(ErrorKind::Invalid, "search", error.to_string())
    }
}

/// Orders relative paths component by component, comparing names bytewise: `a/b` sorts before
/// `a.txt` (the directory `a` sorts before the name `a.txt`) and every directory's contents stay
/// together. This is the order of every walk and search result.
pub fn compare_paths(a: &Path, b: &Path) -> Ordering {
    // For normalised relative paths (no `.`, `..`, empty or trailing components) comparing the
    // bytes with the separator mapped below every other byte is the component-wise order, and
    // much cheaper than splitting into components (sorting 60k paths is on the hot path).
    fn key(byte: u8) -> u8 {
        if byte == b'/' || (cfg!(windows) && byte == b'\\') {
            0
        } else {
            byte
        }
    }
    let (a, b) = (
        a.as_os_str().as_encoded_bytes(),
        b.as_os_str().as_encoded_bytes(),
    );
    a.iter()
        .map(|&byte| key(byte))
        .cmp(b.iter().map(|&byte| key(byte)))
}

/// A key whose bytewise order is [`compare_paths`]'s order (the separator mapped to 0), for
/// sorting many paths with `sort_by_cached_key`.
pub fn path_sort_key(path: &Path) -> Vec<u8> {
    path.as_os_str()
        .as_encoded_bytes()
        .iter()
        .map(|&byte| {
            if byte == b'/' || (cfg!(windows) && byte == b'\\') {
                0
            } else {
                byte
            }
        })
        .collect()
}

/// A compiled walk/search glob (see the module docs for its semantics).
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
    by_name: bool,
    directories_only: bool,
}

impl PathGlob {
    /// Compiles `glob`; `*` and `?` never match `/`, `**` matches any number of directories,
    /// `{a,b}` alternates and `[ab]` classes work as in ripgrep's globs.
    pub fn new(glob: &str) -> Result<Self, SearchInputError> {
        let mut pattern = glob.trim();
        let directories_only = pattern.len() > 1 && pattern.ends_with('/');
        if directories_only {
            pattern = pattern.trim_end_matches('/');
        }
        while let Some(rest) = pattern.strip_prefix("./") {
            pattern = rest;
        }
        let by_name = !pattern.contains('/');
        let pattern = pattern.trim_start_matches('/');
        let compiled = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|error| SearchInputError::Glob {
                glob: glob.to_owned(),
                message: error.kind().to_string(),
            })?;
        Ok(Self {
            matcher: compiled.compile_matcher(),
            by_name,
            directories_only,
        })
    }

    /// Whether the entry at `relative` (relative to the root, any depth) of `kind` matches.
    pub fn is_match(&self, relative: &Path, kind: FileKind) -> bool {
        if self.directories_only && kind != FileKind::Directory {
            return false;
        }
        if self.by_name {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// The entry name a walk never lists or enters.
pub fn is_skipped_name(name: &OsStr) -> bool {
    name == OsStr::new(".git")
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

/// The ignore files of one directory, as `ignore`'s walker reads them.
#[derive(Debug, Clone)]
pub struct IgnoreDir {
    ignore: Gitignore,
    git_ignore: Gitignore,
    git_exclude: Gitignore,
}

impl IgnoreDir {
    /// Builds the matchers of `dir` from the contents of its `.ignore`, `.gitignore` and
    /// `.git/info/exclude` (each `None` when absent or unreadable). Invalid lines are skipped,
    /// as ripgrep does.
    pub fn from_contents(
        dir: &Path,
        ignore: Option<&[u8]>,
        git_ignore: Option<&[u8]>,
        git_exclude: Option<&[u8]>,
    ) -> Self {
        Self {
            ignore: gitignore_from(dir, ignore),
            git_ignore: gitignore_from(dir, git_ignore),
            git_exclude: gitignore_from(dir, git_exclude),
        }
    }

    /// True when none of the three files had a rule.
    pub fn is_empty(&self) -> bool {
        self.ignore.is_empty() && self.git_ignore.is_empty() && self.git_exclude.is_empty()
    }
}

fn gitignore_from(dir: &Path, contents: Option<&[u8]>) -> Gitignore {
    let Some(contents) = contents else {
        return Gitignore::empty();
    };
    let mut builder = GitignoreBuilder::new(dir);
    for (index, line) in contents.split(|&byte| byte == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // Like `BufRead::lines`, which ripgrep uses: a line that is not UTF-8 is skipped.
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let line = if index == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        // An invalid glob line is skipped, as ripgrep does.
        let _ = builder.add_line(None, line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The chain of [`IgnoreDir`]s from the filesystem root down to the directory being listed.
#[derive(Debug, Clone, Default)]
pub struct IgnoreStack {
    dirs: Vec<Arc<IgnoreDir>>,
}

impl IgnoreStack {
    /// The stack with `dir` added as the deepest directory (empty directories add nothing).
    #[must_use]
    pub fn child(&self, dir: IgnoreDir) -> Self {
        if dir.is_empty() {
            return self.clone();
        }
        let mut dirs = self.dirs.clone();
        dirs.push(Arc::new(dir));
        Self { dirs }
    }

    /// Whether the absolute `path` is ignored: the deepest `.ignore` rule that matches decides,
    /// else the deepest `.gitignore` rule, else the deepest exclude-file rule.
    pub fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let mut ignore = Match::None;
        let mut git_ignore = Match::None;
        let mut git_exclude = Match::None;
        for dir in self.dirs.iter().rev() {
            if ignore.is_none() {
                ignore = dir.ignore.matched(path, is_dir);
            }
            if git_ignore.is_none() {
                git_ignore = dir.git_ignore.matched(path, is_dir);
            }
            if git_exclude.is_none() {
                git_exclude = dir.git_exclude.matched(path, is_dir);
            }
        }
        ignore.or(git_ignore).or(git_exclude).is_ignore()
    }
}

/// The generic `walk`: `read_dir` from the root down, ignore files read through the env.
pub async fn walk_with_env<E: ExecutionEnv + ?Sized>(
    env: &E,
    request: WalkRequest,
) -> EnvResult<WalkResult> {
    let glob = request.glob.as_deref().map(PathGlob::new).transpose()?;
    let found = collect_tree(
        env,
        &request.root,
        request.ignore,
        request.kinds,
        &request.cancel,
    )
    .await?;
    let mut entries: Vec<WalkEntry> = found
        .into_iter()
        .filter(|entry| {
            glob.as_ref()
                .is_none_or(|glob| glob.is_match(&entry.path, entry.kind))
        })
        .map(|entry| WalkEntry {
            path: entry.path,
            kind: entry.kind,
        })
        .collect();
    Ok(finish_walk(&mut entries, request.limit))
}

/// Sorts `entries` and applies the limit (shared by every implementation).
pub fn finish_walk(entries: &mut Vec<WalkEntry>, limit: Option<usize>) -> WalkResult {
    entries.sort_by_cached_key(|entry| path_sort_key(&entry.path));
    let mut limit_reached = false;
    if let Some(limit) = limit
        && entries.len() > limit
    {
        entries.truncate(limit);
        limit_reached = true;
    }
    WalkResult {
        entries: std::mem::take(entries),
        limit_reached,
    }
}

/// The generic `search`: the generic walk, then each file read with `read` and searched in
/// path order, stopping as soon as the limit is known to be exceeded.
pub async fn search_with_env<E: ExecutionEnv + ?Sized>(
    env: &E,
    request: SearchRequest,
) -> EnvResult<SearchResult> {
    let compiled = CompiledSearch::new(&request)?;
    let mut files = collect_tree(
        env,
        &request.root,
        request.ignore,
        EntryKinds::Files,
        &request.cancel,
    )
    .await?;
    files.retain(|entry| {
        entry.kind == FileKind::File
            && compiled
                .glob()
                .is_none_or(|glob| glob.is_match(&entry.path, entry.kind))
    });
    files.sort_by_cached_key(|entry| path_sort_key(&entry.path));
    let mut searcher = compiled.file_searcher();
    let mut assembler = compiled.assembler();
    for file in files {
        if request.cancel.is_cancelled() {
            return Err(EnvError::aborted("search"));
        }
        // A file that vanished or cannot be read is skipped, as ripgrep does.
        let Ok(bytes) = env.read(&file.absolute).await else {
            continue;
        };
        let Ok(outcome) = searcher.search_reader(bytes.as_slice()) else {
            continue;
        };
        if !assembler.push(file.path, outcome) {
            break;
        }
    }
    Ok(assembler.finish())
}

struct FoundEntry {
    path: PathBuf,
    absolute: PathBuf,
    kind: FileKind,
}

/// Every entry under `root` that the ignore rules keep, unsorted. A root that is a file yields
/// itself (ignore rules do not apply to what was named explicitly).
async fn collect_tree<E: ExecutionEnv + ?Sized>(
    env: &E,
    root: &Path,
    rules: IgnoreRules,
    kinds: EntryKinds,
    cancel: &CancellationToken,
) -> EnvResult<Vec<FoundEntry>> {
    let root_info = env.stat(root).await?;
    let mut found = Vec::new();
    if root_info.kind != FileKind::Directory {
        let name = root
            .file_name()
            .map_or_else(|| root.to_path_buf(), PathBuf::from);
        found.push(FoundEntry {
            path: name,
            absolute: root.to_path_buf(),
            kind: FileKind::File,
        });
        return Ok(found);
    }
    let mut stack = IgnoreStack::default();
    if rules == IgnoreRules::Respect {
        let canonical = env.canonical_path(root).await?;
        let mut ancestors: Vec<&Path> = canonical.ancestors().skip(1).collect();
        ancestors.reverse();
        for ancestor in ancestors {
            let dir = load_ignore_dir(env, ancestor, None).await;
            stack = stack.child(dir);
        }
    }
    // Depth-first; each pending directory carries the ignore stack of its parent.
    let mut pending: Vec<(PathBuf, PathBuf, IgnoreStack)> =
        vec![(root.to_path_buf(), PathBuf::new(), stack)];
    let mut first = true;
    while let Some((dir, relative, parent_stack)) = pending.pop() {
        if cancel.is_cancelled() {
            return Err(EnvError::aborted("walk"));
        }
        let entries = match env.read_dir(&dir).await {
            Ok(entries) => entries,
            Err(error) if first => return Err(error),
            // A directory that vanished or cannot be listed is skipped, as ripgrep does.
            Err(_) => continue,
        };
        first = false;
        let stack = if rules == IgnoreRules::Respect {
            let names: Vec<&OsStr> = entries.iter().map(|entry| entry.name.as_os_str()).collect();
            parent_stack.child(load_ignore_dir(env, &dir, Some(&names)).await)
        } else {
            parent_stack
        };
        for entry in entries {
            if is_skipped_name(&entry.name) {
                continue;
            }
            let absolute = dir.join(&entry.name);
            let is_dir = entry.kind == FileKind::Directory;
            if rules == IgnoreRules::Respect && stack.is_ignored(&absolute, is_dir) {
                continue;
            }
            let path = relative.join(&entry.name);
            if is_dir {
                pending.push((absolute.clone(), path.clone(), stack.clone()));
            }
            let listed = match entry.kind {
                FileKind::File | FileKind::Symlink => true,
                FileKind::Directory => kinds == EntryKinds::FilesAndDirectories,
                FileKind::Other => false,
            };
            if listed {
                found.push(FoundEntry {
                    path,
                    absolute,
                    kind: entry.kind,
                });
            }
        }
    }
    Ok(found)
}

/// Reads the ignore files of `dir`. `names`, when known, is the directory's listing: files it
/// does not contain are not probed (as ripgrep's walker).
async fn load_ignore_dir<E: ExecutionEnv + ?Sized>(
    env: &E,
    dir: &Path,
    names: Option<&[&OsStr]>,
) -> IgnoreDir {
    let has = |name: &str| names.is_none_or(|names| names.contains(&OsStr::new(name)));
    let ignore = if has(".ignore") {
        read_optional(env, &dir.join(".ignore")).await
    } else {
        None
    };
    let git_ignore = if has(".gitignore") {
        read_optional(env, &dir.join(".gitignore")).await
    } else {
        None
    };
    let git_exclude = if has(".git") {
        read_optional(env, &dir.join(".git/info/exclude")).await
    } else {
        None
    };
    IgnoreDir::from_contents(
        dir,
        ignore.as_deref(),
        git_ignore.as_deref(),
        git_exclude.as_deref(),
    )
}

async fn read_optional<E: ExecutionEnv + ?Sized>(env: &E, path: &Path) -> Option<Vec<u8>> {
    env.read(path).await.ok()
}

impl fmt::Display for LineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Match => "match",
            Self::Context => "context",
        })
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
    fn compare_paths_keeps_directory_contents_together() {
        let mut paths = vec!["a.txt", "a/b", "B", "a/a/z", "a-b"];
        paths.sort_by(|a, b| compare_paths(Path::new(a), Path::new(b)));
        assert_eq!(paths, ["B", "a/a/z", "a/b", "a-b", "a.txt"]);
    }

    #[test]
    fn sort_key_orders_like_compare_paths() {
        let paths = [
            "a.txt", "a/b", "B", "a/a/z", "a-b", "a", "a/b/c", "ab", "a b/c",
        ];
        for a in paths {
            for b in paths {
                let (a, b) = (Path::new(a), Path::new(b));
                assert_eq!(
                    path_sort_key(a).cmp(&path_sort_key(b)),
                    compare_paths(a, b),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn glob_without_slash_matches_names_at_any_depth() {
        let glob = PathGlob::new("*.rs").unwrap();
        assert!(glob.is_match(Path::new("src/deep/x.rs"), FileKind::File));
        assert!(!glob.is_match(Path::new("src/x.rs.txt"), FileKind::File));
        let glob = PathGlob::new("src/*.rs").unwrap();
        assert!(glob.is_match(Path::new("src/x.rs"), FileKind::File));
        assert!(!glob.is_match(Path::new("src/a/x.rs"), FileKind::File));
        assert!(!glob.is_match(Path::new("lib/src/x.rs"), FileKind::File));
        let glob = PathGlob::new("**/*.spec.ts").unwrap();
        assert!(glob.is_match(Path::new("a.spec.ts"), FileKind::File));
        assert!(glob.is_match(Path::new("x/y/a.spec.ts"), FileKind::File));
        let glob = PathGlob::new("build/").unwrap();
        assert!(glob.is_match(Path::new("a/build"), FileKind::Directory));
        assert!(!glob.is_match(Path::new("a/build"), FileKind::File));
    }

    #[test]
    fn invalid_glob_quotes_the_glob() {
        let error = PathGlob::new("src/{a,b").unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid glob \"src/{a,b\": unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"
        );
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

    #[test]
    fn ignore_stack_applies_precedence_and_negation() {
        let root = Path::new("/ws");
        let stack = IgnoreStack::default().child(IgnoreDir::from_contents(
            root,
            Some(b"!keep.log\n"),
            Some(b"*.log\nbuild/\n"),
            Some(b"secret.txt\n"),
        ));
        assert!(stack.is_ignored(Path::new("/ws/a.log"), false));
        assert!(!stack.is_ignored(Path::new("/ws/keep.log"), false));
        assert!(stack.is_ignored(Path::new("/ws/build"), true));
        assert!(!stack.is_ignored(Path::new("/ws/build"), false));
        assert!(stack.is_ignored(Path::new("/ws/x/secret.txt"), false));
        let nested = stack.child(IgnoreDir::from_contents(
            Path::new("/ws/sub"),
            None,
            Some(b"!*.log\n"),
            None,
        ));
        assert!(!nested.is_ignored(Path::new("/ws/sub/a.log"), false));
    }
}
