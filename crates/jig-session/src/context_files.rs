//! The context files (`AGENTS.md`, `CLAUDE.md`) of the working directory and its ancestors,
//! read as text for the model in every project, trusted or not (they are data, never run).
//!
//! Each is read through a confined view of the env beneath the directory that holds it
//! (`ExecutionEnv::beneath`, the file tools' containment), with `read_head`, so:
//! - a symbolic link that leads outside that directory is skipped (the working directory is
//!   the workspace, so its own files may point only inside it);
//! - only a regular file is opened (never a FIFO, device or socket: nothing can block startup),
//!   and at most [`MAX_CONTEXT_FILE_BYTES`] of it are read; a longer file is cut;
//! - a file in a directory that every user may write, or (on this machine) that belongs to
//!   another user than the one running jig, is skipped, as git refuses such repositories
//!   (`safe.directory`). Directories owned by root are fine: only root could have written
//!   there. Over `--env` the env protocol reports modes but not owners, so there only the
//!   "writable by every user" rule applies.
//!
//! Every skipped or cut file is a warning on stderr; `--verbose` names the files loaded.

use std::path::Path;
use std::sync::Arc;

use jig_agent::system_prompt::ContextFile;
use jig_env::{ErrorKind, ExecutionEnv, FileKind};

/// The most of one context file that reaches the system prompt (256 KiB).
pub const MAX_CONTEXT_FILE_BYTES: usize = 256 * 1024;

/// The names looked for in each directory, in this order.
const NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// What was found: the files for the prompt and what to tell the user.
#[derive(Debug, Default)]
pub struct ContextFiles {
    /// Outermost directory first.
    pub files: Vec<ContextFile>,
    /// Warnings: a file skipped or cut, and why.
    pub warnings: Vec<String>,
}

impl ContextFiles {
    /// The `--verbose` line naming the files loaded (`None` when there are none).
    pub fn loaded_note(&self, trusted: bool) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let paths: Vec<String> = self
            .files
            .iter()
            .map(|file| file.path.display().to_string())
            .collect();
        let trust = if trusted {
            ""
        } else {
            " (the project is not trusted: they are read as text, nothing in them runs)"
        };
        Some(format!("context files loaded{trust}: {}", paths.join(", ")))
    }
}

/// Who may have written a directory's files.
#[derive(Debug, Clone, Copy)]
pub enum Owners {
    /// The host checks the directory's owner too (the local machine).
    Local,
    /// Only the mode is known (over `--env`).
    ModeOnly,
}

/// The context files of `cwd` (absolute, canonical) and its ancestors, read through `env`.
pub async fn load(env: &Arc<dyn ExecutionEnv>, cwd: &Path, owners: Owners) -> ContextFiles {
    let mut found = ContextFiles::default();
    let dirs: Vec<&Path> = cwd.ancestors().collect();
    for dir in dirs.into_iter().rev() {
        let mut present = Vec::new();
        for name in NAMES {
            let path = dir.join(name);
            match env.file_info(&path).await {
                Ok(_) => present.push(path),
                Err(error) if error.kind() == ErrorKind::NotFound => {}
                // A directory we may not list: nothing of it reaches the prompt anyway.
                Err(error) if error.kind() == ErrorKind::PermissionDenied => {}
                Err(error) => found
                    .warnings
                    .push(format!("context file {} skipped: {error}", path.display())),
            }
        }
        if present.is_empty() {
            continue;
        }
        if let Some(reason) = unsafe_directory(env, dir, owners).await {
            for path in present {
                found.warnings.push(format!(
                    "context file {} skipped: {reason} (another user could have written it)",
                    path.display()
                ));
            }
            continue;
        }
        let view = match Arc::clone(env).beneath(&[dir.to_path_buf()]) {
            Ok(view) => view,
            Err(error) => {
                for path in present {
                    found
                        .warnings
                        .push(format!("context file {} skipped: {error}", path.display()));
                }
                continue;
            }
        };
        let mut seen: Option<String> = None;
        for path in present {
            let Some(content) = read_one(view.as_ref(), dir, &path, &mut found.warnings).await
            else {
                continue;
            };
            // A CLAUDE.md with the same text as the AGENTS.md beside it (a symlink) once.
            if seen.as_deref() == Some(content.as_str()) {
                continue;
            }
            seen = Some(content.clone());
            found.files.push(ContextFile { path, content });
        }
    }
    found
}

/// One file's text, or `None` with a warning.
async fn read_one(
    view: &dyn ExecutionEnv,
    dir: &Path,
    path: &Path,
    warnings: &mut Vec<String>,
) -> Option<String> {
    let skipped = |reason: String| format!("context file {} skipped: {reason}", path.display());
    let head = match view.read_head(path, MAX_CONTEXT_FILE_BYTES).await {
        Ok(head) => head,
        Err(error) if error.kind() == ErrorKind::NotFound => return None,
        Err(error) if error.kind() == ErrorKind::OutsideRoots => {
            warnings.push(skipped(format!(
                "it is a symbolic link that leads outside {}",
                dir.display()
            )));
            return None;
        }
        Err(error) => {
            warnings.push(skipped(error.to_string()));
            return None;
        }
    };
    match head.info.kind {
        FileKind::File => {}
        FileKind::Directory => {
            warnings.push(skipped("it is a directory".into()));
            return None;
        }
        FileKind::Symlink | FileKind::Other => {
            warnings.push(skipped(
                "it is not a regular file (a FIFO, device or socket)".into(),
            ));
            return None;
        }
    }
    let mut bytes = head.bytes;
    if !head.complete {
        // Cut where a UTF-8 character ends, so a cut character is no reason to skip it.
        if let Err(error) = std::str::from_utf8(&bytes)
            && error.error_len().is_none()
        {
            bytes.truncate(error.valid_up_to());
        }
        warnings.push(format!(
            "context file {} cut to its first {} KiB (it has {})",
            path.display(),
            MAX_CONTEXT_FILE_BYTES / 1024,
            jig_truncate::format_size(usize::try_from(head.info.size).unwrap_or(usize::MAX)),
        ));
    }
    let text = String::from_utf8(bytes).ok();
    if text.is_none() {
        warnings.push(skipped("it is not UTF-8 text".into()));
    }
    text
}

/// Why the files of `dir` cannot be trusted to be the user's, if they cannot.
async fn unsafe_directory(
    env: &Arc<dyn ExecutionEnv>,
    dir: &Path,
    owners: Owners,
) -> Option<String> {
    let info = match env.stat(dir).await {
        Ok(info) => info,
        Err(error) => return Some(format!("{} cannot be checked: {error}", dir.display())),
    };
    if info.mode & 0o002 != 0 {
        return Some(format!("{} is writable by every user", dir.display()));
    }
    if matches!(owners, Owners::Local) {
        let owner = match host_owner(dir) {
            Ok(owner) => owner,
            Err(error) => return Some(format!("{} cannot be checked: {error}", dir.display())),
        };
        let me = rustix::process::geteuid().as_raw();
        if owner != me && owner != 0 {
            return Some(format!(
                "{} belongs to another user (uid {owner})",
                dir.display()
            ));
        }
    }
    None
}

/// The owner of a directory of this machine.
fn host_owner(dir: &Path) -> std::io::Result<u32> {
    use std::os::unix::fs::MetadataExt as _;
    #[expect(
        clippy::disallowed_methods,
        reason = "the owner of a directory of this machine, which the env does not report"
    )]
    let metadata = std::fs::metadata(dir)?;
    Ok(metadata.uid())
}

#[cfg(test)]
mod tests {
    #![expect(clippy::disallowed_methods, reason = "test fixtures on the host")]

    use super::*;
    use std::fs;
    use std::path::PathBuf;

    #[tokio::test]
    async fn files_are_found_from_the_outermost_down_and_a_same_text_claude_md_is_kept_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let cwd = root.join("a/b");
        fs::create_dir_all(&cwd).unwrap();
        fs::write(root.join("a/CLAUDE.md"), "claude").unwrap();
        fs::write(cwd.join("AGENTS.md"), "same").unwrap();
        std::os::unix::fs::symlink("AGENTS.md", cwd.join("CLAUDE.md")).unwrap();
        let env: Arc<dyn ExecutionEnv> = Arc::new(jig_env_local::LocalEnv::new());
        let found = load(&env, &cwd, Owners::Local).await;
        let paths: Vec<PathBuf> = found.files.iter().map(|file| file.path.clone()).collect();
        assert_eq!(paths, vec![root.join("a/CLAUDE.md"), cwd.join("AGENTS.md")]);
        assert_eq!(found.files[1].content, "same");
        assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    }

    #[tokio::test]
    async fn a_long_file_is_cut_at_a_character_boundary_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = fs::canonicalize(dir.path()).unwrap();
        fs::set_permissions(&cwd, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        // "é" is two bytes: the limit falls inside one.
        let text = format!("a{}", "é".repeat(MAX_CONTEXT_FILE_BYTES));
        fs::write(cwd.join("AGENTS.md"), &text).unwrap();
        let env: Arc<dyn ExecutionEnv> = Arc::new(jig_env_local::LocalEnv::new());
        let found = load(&env, &cwd, Owners::Local).await;
        assert_eq!(found.files.len(), 1);
        let content = &found.files[0].content;
        assert_eq!(content.len(), MAX_CONTEXT_FILE_BYTES - 1);
        assert!(text.starts_with(content.as_str()));
        assert_eq!(found.warnings.len(), 1, "{:?}", found.warnings);
        assert!(
            found.warnings[0].ends_with("cut to its first 256 KiB (it has 512.0KB)"),
            "{:?}",
            found.warnings
        );
    }
}
