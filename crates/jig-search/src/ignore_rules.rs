//! Ignore files (`.ignore`, `.gitignore`, `.git/info/exclude`) with ripgrep's precedence, and the
//! one name a walk never enters.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The entry name a walk never lists or enters.
pub fn is_skipped_name(name: &OsStr) -> bool {
    name == OsStr::new(".git")
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

#[cfg(test)]
mod tests {
    use super::*;

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
