//! Limits and options of the built-in tools, one struct per tool, each with `Default`.
//!
//! The options of `grep`, `find`, `bash` and images live beside their tools; this module only
//! gathers them, so no tool module depends on it.

/// The default page bounds (`read`, `ls`, `bash`, `grep`, `find`): jig-truncate's 2000 lines and
/// 50 KiB, defined there once.
pub use jig_truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
/// The default number of entries `ls` lists.
pub const DEFAULT_LS_LIMIT: usize = 500;

/// Options of every built-in tool. Hosts build one (usually `BuiltinsConfig::default()`) and
/// hand it to [`register_builtins`](crate::register_builtins).
///
/// Build one with struct-update syntax:
/// `BuiltinsConfig { read: ReadConfig::default().with_limits(100, 8192), ..Default::default() }`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuiltinsConfig {
    /// Options of `read`.
    pub read: ReadConfig,
    /// Options of `write`.
    pub write: WriteConfig,
    /// Options of `grep`.
    pub grep: crate::grep::GrepConfig,
    /// Options of `find`.
    pub find: crate::find::FindConfig,
    /// Options of `ls`.
    pub ls: LsConfig,
    /// Options of `bash`.
    pub bash: crate::bash::BashConfig,
}

/// Options of `read`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadConfig {
    /// At most this many lines on one page.
    pub max_lines: usize,
    /// At most this many bytes of output on one page, line-number prefixes and the notice
    /// included.
    pub max_bytes: usize,
    /// How many bytes from the start of a file are inspected to tell text from binary.
    pub sniff_bytes: usize,
    /// Which images are returned as image blocks, and their limits.
    pub image: crate::image::ImageConfig,
}

impl Default for ReadConfig {
    fn default() -> Self {
        Self {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
            sniff_bytes: 8192,
            image: crate::image::ImageConfig::default(),
        }
    }
}

impl ReadConfig {
    /// The same options with other page bounds.
    #[must_use]
    pub fn with_limits(mut self, max_lines: usize, max_bytes: usize) -> Self {
        self.max_lines = max_lines.max(1);
        self.max_bytes = max_bytes.max(1);
        self
    }
}

/// Options of `write` (none yet; kept so hosts configure every tool the same way).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteConfig {}

/// Options of `ls`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LsConfig {
    /// Entries listed when the caller gives no `limit`.
    pub default_limit: usize,
    /// At most this many bytes of output.
    pub max_bytes: usize,
}

impl Default for LsConfig {
    fn default() -> Self {
        Self {
            default_limit: DEFAULT_LS_LIMIT,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl LsConfig {
    /// The same options with other limits.
    #[must_use]
    pub fn with_limits(mut self, default_limit: usize, max_bytes: usize) -> Self {
        self.default_limit = default_limit.max(1);
        self.max_bytes = max_bytes.max(1);
        self
    }
}
