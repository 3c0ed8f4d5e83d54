//! Walking and searching a tree: the request and result types of
//! [`ExecutionEnv::walk`](crate::ExecutionEnv::walk) and
//! [`ExecutionEnv::search`](crate::ExecutionEnv::search), and the rules every implementation
//! follows. The engine that implements them (ripgrep's libraries) is the `jig-search` crate;
//! this module is data only and imports nothing of the env.
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
//! - **Globs** filter what is returned, after the ignore rules (a glob never re-includes an
//!   ignored file): a glob without `/` matches the entry's name at any depth; a glob with `/`
//!   matches the path relative to the root (`src/**/*.rs`; a leading `/` or `./` anchors nothing
//!   more and is dropped). A trailing `/` matches directories only. `*` and `?` never match `/`,
//!   `**` matches any number of directories, `{a,b}` alternates and `[ab]` classes work as in
//!   ripgrep's globs.
//! - **Binary files** (a NUL byte in what the searcher reads) are skipped by `search`: they
//!   contribute no lines at all.
//! - **Order**: results are sorted by relative path (component by component, bytewise: `a/b`
//!   before `a.txt`), then by line number, whatever the scheduling; with a limit, the results
//!   kept are the first ones in that order and "more than the limit" is known exactly.
//! - **Cancellation**: cancelling the request's token stops the walk and the search promptly;
//!   the call then fails with [`ErrorKind::Aborted`].
//!
//! # Implementing
//! `jig-search` has the generic implementation on the env's file operations
//! (`walk_with_env`, `search_with_env`) and the parts faster backends reuse (globs, ignore
//! rules, the per-file searcher, the result assembler), which is what makes their results
//! identical. The conformance suite checks that they are.

use std::fmt;
use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use crate::error::{EnvError, ErrorKind};
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

/// What [`crate::ExecutionEnv::walk`] lists.
#[derive(Debug, Clone)]
pub struct WalkRequest {
    /// An absolute directory (or file) to walk.
    pub root: PathBuf,
    /// Keep only entries this glob matches (see the module docs).
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
    /// The entries, in path order (see the module docs).
    pub entries: Vec<WalkEntry>,
    /// True when more entries than the request's limit matched.
    pub limit_reached: bool,
}

/// What [`crate::ExecutionEnv::search`] looks for.
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
    /// Search only files this glob matches (see the module docs).
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
    /// Files with at least one kept match, in path order (see the module docs).
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

impl fmt::Display for LineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Match => "match",
            Self::Context => "context",
        })
    }
}
