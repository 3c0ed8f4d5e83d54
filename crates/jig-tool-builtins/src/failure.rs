//! One mapping from an env failure to the text a model reads.
//!
//! Every built-in tool turns an [`EnvError`] into a [`ToolError`] here, and only here: the
//! message for each kind of failure stands next to it, worded for what the tool was doing
//! ([`Action`]). The same facts a tool finds itself (a path that is a directory, a FIFO) use the
//! same words through [`is_a_directory`] and [`not_regular`]. For every action a cancelled
//! operation ([`ErrorKind::Aborted`]) is a cancellation, and a path the confined view refused
//! ([`ErrorKind::OutsideRoots`]) is the workspace refusal of [`paths::refusal`].

use std::path::Path;

use jig_env::{EnvError, ErrorKind};
use jig_tool::ToolError;
use jig_tool::paths::{self, ResolvedPath};

/// What the tool was doing when the env failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action<'a> {
    /// `read` reading a file.
    Read,
    /// `write` writing a file.
    Write,
    /// `edit` locking, reading or checking the file.
    EditRead,
    /// `edit` writing the file back.
    EditWrite,
    /// `ls` listing a directory.
    List,
    /// `grep` or `find` looking at the path it was given.
    SearchRoot,
    /// `grep` or `find` searching; the word names the operation (`Search`, `Find`).
    Search(&'a str),
    /// `bash` running a command with these shells (a comma-separated list).
    Exec {
        /// The shells tried.
        shells: &'a str,
    },
}

/// The path a message names: as the model wrote it, and absolute.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Subject<'a> {
    /// What the model wrote (also what a workspace refusal quotes).
    pub(crate) shown: &'a str,
    /// The absolute path.
    pub(crate) absolute: &'a str,
}

impl<'a> Subject<'a> {
    /// A subject shown and named by the same text.
    pub(crate) fn same(path: &'a str) -> Self {
        Self {
            shown: path,
            absolute: path,
        }
    }
}

/// `error`, met while doing `action` on `subject`, as what the model reads.
pub(crate) fn env_failure(action: Action<'_>, subject: Subject<'_>, error: &EnvError) -> ToolError {
    let kind = error.kind();
    if kind == ErrorKind::Aborted {
        return ToolError::Cancelled;
    }
    if let Some(refused) = paths::refusal(subject.shown, error) {
        return refused;
    }
    let Subject { shown, absolute } = subject;
    ToolError::failed(match (action, kind) {
        (
            Action::Read | Action::Write | Action::EditRead | Action::EditWrite,
            ErrorKind::IsADirectory,
        ) => {
            return is_a_directory(action, shown);
        }

        (Action::Read, ErrorKind::NotFound) => format!("File not found: {absolute}"),
        (Action::Read, ErrorKind::PermissionDenied) => {
            format!("Permission denied: cannot read {absolute}")
        }
        (Action::Read, ErrorKind::NotADirectory) => {
            format!("File not found: {absolute} (a parent of it is not a directory)")
        }
        (Action::Read, _) => format!("Cannot read {shown}: {error}"),

        (Action::Write, ErrorKind::PermissionDenied) => {
            format!("Permission denied: cannot write {absolute}")
        }
        (Action::Write, ErrorKind::NotADirectory) => {
            format!("Cannot write {shown}: a parent of it is a file, not a directory.")
        }
        (Action::Write, _) => format!("Cannot write {shown}: {error}"),

        (Action::EditRead | Action::EditWrite, ErrorKind::NotFound) => {
            format!("File not found: {shown}. Check the path; to create a new file, use write.")
        }
        (Action::EditWrite, ErrorKind::PermissionDenied) => format!(
            "Cannot edit {shown}: permission denied, the file is not writable. It was left unchanged."
        ),
        (Action::EditRead, ErrorKind::PermissionDenied) => {
            format!("Cannot edit {shown}: permission denied, the file is not readable.")
        }
        (Action::EditRead | Action::EditWrite, ErrorKind::NotADirectory) => {
            format!("File not found: {shown}. A component of the path is not a directory.")
        }
        (Action::EditRead | Action::EditWrite, _) => format!(
            "Could not edit {shown}: {} failed: {}. The file was left unchanged.",
            if action == Action::EditWrite {
                "write"
            } else {
                "read"
            },
            error.message()
        ),

        (Action::List | Action::Search(_), ErrorKind::NotFound)
        | (Action::SearchRoot, ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            format!("Path not found: {absolute}")
        }
        (Action::List, ErrorKind::NotADirectory) => return not_a_directory(absolute),
        (Action::List, ErrorKind::PermissionDenied) => {
            format!("Permission denied: cannot list {absolute}")
        }
        (Action::List, _) => format!("Cannot read directory {absolute}: {error}"),

        (Action::SearchRoot, _) => format!("Cannot access {absolute}: {error}"),
        (Action::Search(what), _) => format!("{what} failed: {error}"),

        (Action::Exec { .. }, ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return no_working_directory(error.path().unwrap_or(Path::new("")));
        }
        (Action::Exec { .. }, ErrorKind::Unsupported) => format!(
            "This environment cannot run commands ({}).",
            error.message()
        ),
        (Action::Exec { shells }, _) => {
            format!("Could not run the command with {shells}: {error}")
        }
    })
}

/// `error`, met while doing `action` on a resolved path (named as the model wrote it, and
/// absolute).
pub(crate) fn at_path(action: Action<'_>, path: &ResolvedPath, error: &EnvError) -> ToolError {
    let absolute = path.absolute_display();
    let subject = Subject {
        shown: &path.display,
        absolute: &absolute,
    };
    env_failure(action, subject, error)
}

/// `shown` is a directory where a file tool wanted a file.
pub(crate) fn is_a_directory(action: Action<'_>, shown: &str) -> ToolError {
    ToolError::failed(match action {
        Action::Write => format!(
            "Cannot write {shown}: it is a directory. Give the path of a file (e.g. {}/name.txt).",
            shown.trim_end_matches('/')
        ),
        Action::EditRead | Action::EditWrite => {
            format!("Cannot edit {shown}: it is a directory, not a file.")
        }
        _ => format!("Cannot read {shown}: it is a directory. Use ls to list its entries."),
    })
}

/// `shown` is a socket, FIFO or device where a file tool wanted a regular file.
pub(crate) fn not_regular(action: Action<'_>, shown: &str) -> ToolError {
    ToolError::failed(match action {
        Action::Write => format!(
            "Cannot write {shown}: it is not a regular file (a socket, FIFO or device); it was \
             left as it is."
        ),
        Action::EditRead | Action::EditWrite => {
            format!("Cannot edit {shown}: it is not a regular file (a socket, FIFO or device).")
        }
        _ => format!("Cannot read {shown}: it is not a regular file (a socket, FIFO or device)."),
    })
}

/// `ls` was given something that is not a directory.
pub(crate) fn not_a_directory(absolute: &str) -> ToolError {
    ToolError::failed(format!("Not a directory: {absolute}"))
}

/// `bash`'s working directory is missing.
pub(crate) fn no_working_directory(cwd: &Path) -> ToolError {
    ToolError::failed(format!(
        "Working directory does not exist: {}\nCannot execute bash commands.",
        cwd.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(error: ToolError) -> String {
        match error {
            ToolError::Failed(text) => text,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn every_action_maps_an_abort_to_a_cancellation() {
        let aborted = EnvError::new(ErrorKind::Aborted, "op", "cancelled");
        for action in [
            Action::Read,
            Action::Write,
            Action::EditRead,
            Action::EditWrite,
            Action::List,
            Action::SearchRoot,
            Action::Search("Find"),
            Action::Exec { shells: "bash" },
        ] {
            assert!(
                matches!(
                    env_failure(action, Subject::same("/ws/a"), &aborted),
                    ToolError::Cancelled
                ),
                "{action:?}"
            );
        }
    }

    #[test]
    fn messages_name_the_path_as_each_tool_words_it() {
        let subject = Subject {
            shown: "a.txt",
            absolute: "/ws/a.txt",
        };
        let missing = EnvError::new(ErrorKind::NotFound, "open", "no such file");
        assert_eq!(
            text(env_failure(Action::Read, subject, &missing)),
            "File not found: /ws/a.txt"
        );
        assert_eq!(
            text(env_failure(Action::EditRead, subject, &missing)),
            "File not found: a.txt. Check the path; to create a new file, use write."
        );
        let denied = EnvError::new(ErrorKind::PermissionDenied, "write", "denied");
        assert_eq!(
            text(env_failure(Action::EditWrite, subject, &denied)),
            "Cannot edit a.txt: permission denied, the file is not writable. It was left unchanged."
        );
        assert_eq!(
            text(env_failure(Action::List, subject, &denied)),
            "Permission denied: cannot list /ws/a.txt"
        );
    }
}
