//! A parallel walk on directory handles. Each directory is listed through a handle opened
//! from its parent's handle by name, never following a symlink, so everything the walk sees is
//! beneath the root it started from, whatever is renamed or swapped meanwhile, and no path is
//! resolved twice: a file is opened, and a subdirectory entered, with one lookup of its own name.
//! The ignore rules are `jig_search`'s (`IgnoreDir`, `IgnoreStack`), the ones the generic walk
//! applies, so the entries kept are the generic walk's.

use std::ffi::{OsStr, OsString};
use std::io::Read as _;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use jig_env::{CancellationToken, FileKind, IgnoreRules};
use jig_search::{IgnoreDir, IgnoreStack, is_skipped_name};
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::beneath::Scope;

/// How a directory is opened to be listed: by name in its parent, never through a symlink.
const LIST: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// How a file is opened to be read: by name, never through a symlink, never blocking (a FIFO
/// reads as empty) and never as the controlling terminal.
pub(crate) const READ: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// One entry the walk kept, in the directory whose handle it was listed through.
pub(crate) struct Listed<'a> {
    /// Its path relative to the walk's root.
    pub(crate) relative: &'a Path,
    /// What it is (a symlink is reported as one, never followed).
    pub(crate) kind: FileKind,
    /// The handle of its directory.
    pub(crate) dir: BorrowedFd<'a>,
    /// Its name there.
    pub(crate) name: &'a OsStr,
}

/// What a walk thread does with the entries it lists.
pub(crate) trait Visit: Send {
    /// One entry the ignore rules keep.
    fn visit(&mut self, entry: &Listed<'_>);
}

/// A directory still to list.
struct Pending {
    fd: OwnedFd,
    /// Its absolute path (ignore rules match on it).
    path: PathBuf,
    /// Its path relative to the root.
    relative: PathBuf,
    /// The ignore rules of its ancestors.
    stack: IgnoreStack,
}

struct Queue {
    pending: Vec<Pending>,
    /// Directories being listed.
    active: usize,
    stop: bool,
}

struct Shared<'a> {
    queue: Mutex<Queue>,
    wakeup: Condvar,
    rules: IgnoreRules,
    cancel: &'a CancellationToken,
    /// Where an ignore file that is a symlink is read through.
    scope: Scope<'a>,
}

impl Shared<'_> {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next directory to list; `None` when there is none left (or the walk stopped).
    fn next(&self) -> Option<Pending> {
        let mut queue = self.lock();
        loop {
            if queue.stop {
                return None;
            }
            if let Some(dir) = queue.pending.pop() {
                queue.active += 1;
                return Some(dir);
            }
            if queue.active == 0 {
                return None;
            }
            queue = self
                .wakeup
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// `found` is to be listed; the directory that found them is done.
    fn done(&self, found: Vec<Pending>) {
        let mut queue = self.lock();
        queue.active -= 1;
        let wake = !found.is_empty() || queue.active == 0;
        queue.pending.extend(found);
        if self.cancel.is_cancelled() {
            queue.stop = true;
        }
        drop(queue);
        if wake {
            self.wakeup.notify_all();
        }
    }

    fn work<V: Visit>(&self, visitor: &mut V) {
        while let Some(dir) = self.next() {
            let found = if self.cancel.is_cancelled() {
                Vec::new()
            } else {
                list(&dir, self, visitor)
            };
            self.done(found);
        }
    }
}

/// Walks the tree under the directory `root` (opened by the caller, at `root_path`) on one
/// thread per visitor, handing each kept entry to that thread's visitor; returns the visitors.
/// Directories that vanish or cannot be listed below the root are skipped, as ripgrep does. An
/// ignore file that is a symlink is read through `scope` (for a view: beneath its roots).
pub(crate) fn walk<V: Visit>(
    root: OwnedFd,
    root_path: &Path,
    (rules, scope): (IgnoreRules, Scope<'_>),
    cancel: &CancellationToken,
    mut visitors: Vec<V>,
) -> Vec<V> {
    let stack = match rules {
        IgnoreRules::Respect => ancestors_rules(root_path),
        IgnoreRules::IncludeIgnored => IgnoreStack::default(),
    };
    let shared = Shared {
        queue: Mutex::new(Queue {
            pending: vec![Pending {
                fd: root,
                path: root_path.to_path_buf(),
                relative: PathBuf::new(),
                stack,
            }],
            active: 0,
            stop: false,
        }),
        wakeup: Condvar::new(),
        rules,
        cancel,
        scope,
    };
    std::thread::scope(|scope| {
        let mut rest = visitors.iter_mut();
        let first = rest.next();
        for visitor in rest {
            let shared = &shared;
            scope.spawn(move || shared.work(visitor));
        }
        if let Some(visitor) = first {
            shared.work(visitor);
        }
    });
    visitors
}

/// Lists `dir`: its ignore files first, then each entry the rules keep goes to `visitor`;
/// returns its subdirectories to list.
fn list<V: Visit>(dir: &Pending, shared: &Shared<'_>, visitor: &mut V) -> Vec<Pending> {
    let (rules, scope) = (shared.rules, shared.scope);
    let Ok(listing) = rustix::fs::openat(&dir.fd, ".", LIST, Mode::empty()).and_then(Dir::new)
    else {
        return Vec::new();
    };
    let mut entries: Vec<(OsString, Option<FileKind>)> = Vec::new();
    let mut has_git = false;
    for entry in listing {
        let Ok(entry) = entry else {
            break;
        };
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        if is_skipped_name(name) {
            has_git = true;
            continue;
        }
        entries.push((name.to_os_string(), kind_of(entry.file_type())));
    }
    let stack = match rules {
        IgnoreRules::Respect => {
            let read = |wanted: &[&str]| {
                let listed = match wanted {
                    [".git", ..] => has_git,
                    [name] => entries.iter().any(|(entry, _)| entry == *name),
                    _ => true,
                };
                listed
                    .then(|| read_at(dir.fd.as_fd(), &dir.path, wanted, scope))
                    .flatten()
            };
            let local = IgnoreDir::from_contents(
                &dir.path,
                read(&[".ignore"]).as_deref(),
                read(&[".gitignore"]).as_deref(),
                read(&[".git", "info", "exclude"]).as_deref(),
            );
            dir.stack.child(local)
        }
        IgnoreRules::IncludeIgnored => dir.stack.clone(),
    };
    let mut subdirs = Vec::new();
    for (name, kind) in entries {
        // A cancelled walk stops at its next entry, however large the directory.
        if shared.cancel.is_cancelled() {
            break;
        }
        let kind = match kind {
            Some(kind) => kind,
            // The filesystem did not say (DT_UNKNOWN): ask it, without following a symlink.
            None => match rustix::fs::statat(&dir.fd, &name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => crate::fs::kind_of_mode(stat.st_mode),
                Err(_) => continue,
            },
        };
        let is_dir = kind == FileKind::Directory;
        let path = dir.path.join(&name);
        if rules == IgnoreRules::Respect && stack.is_ignored(&path, is_dir) {
            continue;
        }
        let relative = dir.relative.join(&name);
        visitor.visit(&Listed {
            relative: &relative,
            kind,
            dir: dir.fd.as_fd(),
            name: &name,
        });
        if is_dir && let Ok(fd) = rustix::fs::openat(&dir.fd, &name, LIST, Mode::empty()) {
            subdirs.push(Pending {
                fd,
                path,
                relative,
                stack: stack.clone(),
            });
        }
    }
    subdirs
}

fn kind_of(file_type: FileType) -> Option<FileKind> {
    match file_type {
        FileType::RegularFile => Some(FileKind::File),
        FileType::Directory => Some(FileKind::Directory),
        FileType::Symlink => Some(FileKind::Symlink),
        FileType::Unknown => None,
        _ => Some(FileKind::Other),
    }
}

/// The ignore file at `parts` below `dir` (at `dir_path`), every step by name; `None` when it
/// is not there or cannot be read. One that is (or is reached through) a symlink is read
/// through `scope`, which follows it as reading the file by its path does (a view: only
/// beneath its roots).
fn read_at(
    dir: BorrowedFd<'_>,
    dir_path: &Path,
    parts: &[&str],
    scope: Scope<'_>,
) -> Option<Vec<u8>> {
    let through_link = || {
        let path: PathBuf = parts
            .iter()
            .fold(dir_path.to_path_buf(), |path, part| path.join(part));
        scope
            .read(&path, &std::sync::atomic::AtomicBool::new(false))
            .ok()
    };
    let (last, parents) = parts.split_last()?;
    let mut owned: Option<OwnedFd> = None;
    for part in parents {
        let from = owned.as_ref().map_or(dir, AsFd::as_fd);
        match rustix::fs::openat(from, *part, LIST, Mode::empty()) {
            Ok(fd) => owned = Some(fd),
            Err(Errno::LOOP) => return through_link(),
            Err(_) => return None,
        }
    }
    let from = owned.as_ref().map_or(dir, AsFd::as_fd);
    let fd = match rustix::fs::openat(from, *last, READ, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::LOOP) => return through_link(),
        Err(_) => return None,
    };
    let mut file = std::fs::File::from(fd);
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The ignore rules of the directories above `root` (a repository's `.gitignore` above the
/// searched directory applies, as in ripgrep), read from the host.
fn ancestors_rules(root: &Path) -> IgnoreStack {
    let mut ancestors: Vec<&Path> = root.ancestors().skip(1).collect();
    ancestors.reverse();
    let mut stack = IgnoreStack::default();
    for ancestor in ancestors {
        let read = |name: &str| read_host(&ancestor.join(name));
        stack = stack.child(IgnoreDir::from_contents(
            ancestor,
            read(".ignore").as_deref(),
            read(".gitignore").as_deref(),
            read(".git/info/exclude").as_deref(),
        ));
    }
    stack
}

#[expect(
    clippy::disallowed_methods,
    reason = "the ignore files above a walk's root are read from the host, as ripgrep reads them"
)]
fn read_host(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}
