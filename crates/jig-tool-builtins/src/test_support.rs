//! Tables for tests of the built-in tools (feature `test-support`), shared by the tests that
//! call the tools directly and the ones that go through the `jig` binary.

use serde_json::{Value, json};

/// What a file tool is asked to touch: a file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A file path.
    File,
    /// A directory path.
    Dir,
}

/// One file tool of the containment table: its name, what it touches and its arguments for a
/// path.
#[derive(Debug)]
pub struct FileToolCase {
    /// The tool's name.
    pub name: &'static str,
    /// Whether the path names a file or a directory.
    pub target: Target,
    /// The tool's arguments for `path`.
    pub args: fn(&str) -> Value,
}

/// Every file tool that must refuse paths outside the workspace (a new file tool adds a row).
pub const FILE_TOOLS: &[FileToolCase] = &[
    FileToolCase {
        name: "read",
        target: Target::File,
        args: |path| json!({"path": path}),
    },
    FileToolCase {
        name: "write",
        target: Target::File,
        args: |path| json!({"path": path, "content": "pwned\n"}),
    },
    FileToolCase {
        name: "ls",
        target: Target::Dir,
        args: |path| json!({"path": path}),
    },
];
