//! An optional, lexical guard that refuses shell commands naming paths outside the workspace.
//!
//! It is a seatbelt against accidents, not a sandbox: it reads the command text, not what the
//! shell will do (variables, `cd` with computed paths, symlinks inside the workspace, programs
//! that open paths themselves all get past it). Real isolation needs an OS sandbox.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use jig_env::normalize_path;

/// Whether `bash` refuses commands that name paths outside the workspace roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CommandGuard {
    /// No check (the default): the shell can reach anything the user can.
    #[default]
    Off,
    /// Before spawning, refuse a command that names an absolute path outside the roots,
    /// climbs out of them with `../`, or names the home directory (`~`, `$HOME`). Read-only
    /// system locations (`/usr`, `/bin`, `/lib`, …) and the harmless devices (`/dev/null`, …)
    /// are allowed.
    Workspace,
}

/// Absolute locations a command may name under [`CommandGuard::Workspace`].
const ALLOWED_PREFIXES: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt/homebrew/bin",
    "/proc/self",
];
const ALLOWED_EXACT: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/",
];

/// A command the guard refuses: the word that names a path, why, and the roots it may use.
/// The text is for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Command refused: `{word}` {cause} ({roots}). The bash guard only allows paths inside the \
     workspace and read-only system locations such as /usr and /bin; use a path inside the \
     workspace, or ask the user to turn the guard off.",
    roots = list(.roots)
)]
pub(crate) struct Refusal {
    /// The word of the command that names the path.
    pub(crate) word: String,
    /// What is wrong with it.
    pub(crate) cause: RefusalCause,
    /// The workspace roots.
    pub(crate) roots: Vec<PathBuf>,
}

/// What a refused word does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefusalCause {
    /// `~`, `$HOME` or `${HOME}`.
    HomeDirectory,
    /// An absolute path outside the roots and the allowed system locations.
    OutsidePath,
    /// A relative path whose `..` leads out of the roots.
    ClimbsOut,
}

impl fmt::Display for RefusalCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::HomeDirectory => "names the home directory",
            Self::OutsidePath => "names a path outside the workspace",
            Self::ClimbsOut => "climbs out of the workspace with `..`",
        })
    }
}

/// Checks `command` (run in `cwd`) against the roots.
pub(crate) fn check(command: &str, cwd: &Path, roots: &[PathBuf]) -> Result<(), Refusal> {
    let refusal = |word: String, cause: RefusalCause| Refusal {
        word,
        cause,
        roots: roots.to_vec(),
    };
    for word in words(command) {
        if word.starts_with('~') || word.contains("$HOME") || word.contains("${HOME}") {
            return Err(refusal(word, RefusalCause::HomeDirectory));
        }
        let path = Path::new(&word);
        let candidate = if path.is_absolute() {
            if word == "/" {
                continue;
            }
            normalize_path(path)
        } else if path.components().any(|c| c == Component::ParentDir) {
            normalize_path(&cwd.join(path))
        } else {
            continue;
        };
        if is_allowed(&candidate, roots) {
            continue;
        }
        let cause = if path.is_absolute() {
            RefusalCause::OutsidePath
        } else {
            RefusalCause::ClimbsOut
        };
        return Err(refusal(word, cause));
    }
    Ok(())
}

fn is_allowed(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
        || ALLOWED_EXACT
            .iter()
            .any(|allowed| path == Path::new(allowed))
        || ALLOWED_PREFIXES
            .iter()
            .any(|prefix| path.starts_with(prefix))
}

/// The roots as the refusal names them.
fn list(roots: &[PathBuf]) -> String {
    let roots: Vec<String> = roots
        .iter()
        .map(|root| root.display().to_string())
        .collect();
    roots.join(", ")
}

/// Splits a command into the words a path could appear in: on whitespace and shell operators,
/// with quotes removed and `VAR=value` / `--flag=value` reduced to the value.
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for character in command.chars() {
        match (quote, character) {
            (Some(open), c) if c == open => quote = None,
            (None, '\'' | '"') => quote = Some(character),
            (None, c)
                if c.is_whitespace()
                    || matches!(c, ';' | '|' | '&' | '(' | ')' | '<' | '>' | '`') =>
            {
                flush(&mut current, &mut words);
            }
            (_, c) => current.push(c),
        }
    }
    flush(&mut current, &mut words);
    words
}

fn flush(current: &mut String, words: &mut Vec<String>) {
    if current.is_empty() {
        return;
    }
    let word = std::mem::take(current);
    // `NAME=/path` and `--opt=/path`: the value is what names a path.
    let value = match word.split_once('=') {
        Some((_, value)) => value.to_owned(),
        None => word,
    };
    // `$(...)`, `${...}` remnants are left as they are; `:`-separated lists are split.
    for part in value.split(':') {
        if !part.is_empty() {
            words.push(part.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_ws(command: &str) -> Result<(), Refusal> {
        check(
            command,
            Path::new("/ws/project/sub"),
            &[PathBuf::from("/ws/project")],
        )
    }

    #[test]
    fn paths_inside_the_workspace_and_system_locations_pass() {
        for command in [
            "ls -la",
            "cat /ws/project/a.txt > /dev/null 2>&1",
            "/usr/bin/env python3 x.py",
            "cd .. && ls",
            "grep -r 'x' ../other.txt",
            "PATH=/usr/bin:/bin make",
            "echo 'a/../b'",
            "find . -name '*.rs'",
        ] {
            assert_eq!(check_ws(command), Ok(()), "{command}");
        }
    }

    #[test]
    fn paths_outside_are_refused() {
        for (command, word) in [
            ("cat /etc/passwd", "/etc/passwd"),
            ("rm -rf ../../elsewhere", "../../elsewhere"),
            ("ls ~/.ssh", "~/.ssh"),
            ("cp x \"$HOME/y\"", "$HOME/y"),
            ("echo hi>/tmp/out", "/tmp/out"),
            ("make DESTDIR=/var/lib/x", "/var/lib/x"),
        ] {
            let error = check_ws(command).unwrap_err().to_string();
            assert!(error.contains(&format!("`{word}`")), "{command}: {error}");
        }
    }
}
