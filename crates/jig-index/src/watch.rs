//! Change notifications for one root, straight from inotify.
//!
//! Why inotify itself and not a portable watcher library: exactness needs a query to know that
//! every change completed before it began has been seen. The kernel queues an inotify event
//! inside the system call that makes the change, before it returns; so reading the descriptor
//! until it would block ([`Watcher::drain`]) sees every change completed before the read
//! began. A library that delivers events from its own thread through a channel gives no such
//! point in time. Other systems get no index (every search takes the cold path).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;

use crate::tree::{child_key, is_below};

/// What a watch descriptor watches.
#[derive(Debug, Clone)]
enum Watched {
    /// A directory of the tree.
    Dir(Vec<u8>),
    /// The `.git` directory of a directory of the tree (for `info` appearing).
    Git(Vec<u8>),
    /// The `.git/info` directory of a directory of the tree (for `exclude`).
    GitInfo(Vec<u8>),
    /// A directory above the root, or its `.git` or `.git/info`: its ignore files apply.
    Above,
}

/// What the index must do about the events read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// The entry at this key changed; `rewalk`: it may be a different directory now.
    Path { key: Vec<u8>, rewalk: bool },
    /// The ignore files of this directory (or its `.git`) changed.
    IgnoreFiles(Vec<u8>),
    /// The index can no longer follow the tree.
    Doubt(String),
}

/// One inotify instance watching a root's directories.
#[derive(Debug)]
pub(crate) struct Watcher {
    fd: OwnedFd,
    watched: HashMap<i32, Watched>,
    buffer: Vec<MaybeUninit<u8>>,
}

const DIR_EVENTS: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MODIFY)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF)
    .union(WatchFlags::DONT_FOLLOW)
    .union(WatchFlags::ONLYDIR);

impl Watcher {
    /// A new instance (non-blocking reads).
    pub(crate) fn new() -> std::io::Result<Self> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
        Ok(Self {
            fd,
            watched: HashMap::new(),
            buffer: vec![MaybeUninit::uninit(); 64 * 1024],
        })
    }

    /// The descriptor, to wait for events on.
    pub(crate) fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// How many watches are held.
    pub(crate) fn len(&self) -> usize {
        self.watched.len()
    }

    fn add(&mut self, path: &Path, what: Watched) -> std::io::Result<()> {
        let wd = inotify::add_watch(&self.fd, path, DIR_EVENTS)?;
        self.watched.insert(wd, what);
        Ok(())
    }

    /// Watches the directory `key` of the tree at `path`. Call before listing it, so a change
    /// made after the listing is reported.
    pub(crate) fn watch_dir(&mut self, path: &Path, key: &[u8]) -> std::io::Result<()> {
        self.add(path, Watched::Dir(key.to_vec()))
    }

    /// Watches `.git` and `.git/info` of the directory `key` of the tree at `path`, as far as
    /// they exist (the `.git` entry's own changes are reported by the directory's watch).
    pub(crate) fn watch_git(&mut self, path: &Path, key: &[u8]) {
        let git = path.join(".git");
        if self.add(&git, Watched::Git(key.to_vec())).is_ok() {
            let _ = self.add(&git.join("info"), Watched::GitInfo(key.to_vec()));
        }
    }

    /// Watches a directory above the root (and its `.git`, `.git/info`): a change to its ignore
    /// files makes the index doubtful.
    pub(crate) fn watch_above(&mut self, dir: &Path) -> std::io::Result<()> {
        self.add(dir, Watched::Above)?;
        let git = dir.join(".git");
        if self.add(&git, Watched::Above).is_ok() {
            let _ = self.add(&git.join("info"), Watched::Above);
        }
        Ok(())
    }

    /// Stops watching the directory `key` and everything below it.
    pub(crate) fn unwatch_subtree(&mut self, key: &[u8]) {
        let fd = &self.fd;
        self.watched.retain(|&wd, what| {
            let (Watched::Dir(dir) | Watched::Git(dir) | Watched::GitInfo(dir)) = what else {
                return true;
            };
            if dir.as_slice() == key || is_below(dir, key) {
                let _ = inotify::remove_watch(fd, wd);
                false
            } else {
                true
            }
        });
    }

    /// Reads every event queued now (until the read would block) into `changes`; returns how
    /// many events were read. More than `max_events` is reported as a doubt: the index would
    /// spend longer following than a rebuild takes.
    pub(crate) fn drain(&mut self, changes: &mut Vec<Change>, max_events: usize) -> usize {
        let mut count = 0;
        let mut reader = inotify::Reader::new(&self.fd, &mut self.buffer);
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(Errno::AGAIN | Errno::INTR) => break,
                Err(error) => {
                    changes.push(Change::Doubt(format!(
                        "reading change notifications failed: {error}"
                    )));
                    break;
                }
            };
            count += 1;
            if count > max_events {
                if count == max_events + 1 {
                    changes.push(Change::Doubt(format!(
                        "more than {max_events} changes arrived at once"
                    )));
                }
                continue;
            }
            let mask = event.events();
            if mask.contains(ReadFlags::QUEUE_OVERFLOW) {
                changes.push(Change::Doubt(
                    "the kernel's change queue overflowed".to_owned(),
                ));
                continue;
            }
            if mask.contains(ReadFlags::UNMOUNT) {
                changes.push(Change::Doubt(
                    "a filesystem under the root was unmounted".to_owned(),
                ));
                continue;
            }
            let wd = event.wd();
            if mask.contains(ReadFlags::IGNORED) {
                self.watched.remove(&wd);
                continue;
            }
            let Some(what) = self.watched.get(&wd) else {
                continue;
            };
            let name = event.file_name().map(std::ffi::CStr::to_bytes);
            let is_self = mask.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF);
            match what {
                Watched::Dir(dir) => match name {
                    None if is_self && dir.is_empty() => {
                        changes.push(Change::Doubt("the root was moved or removed".to_owned()));
                    }
                    None => {}
                    Some(b".git") => changes.push(Change::IgnoreFiles(dir.clone())),
                    Some(name) => {
                        if name == b".gitignore" || name == b".ignore" {
                            changes.push(Change::IgnoreFiles(dir.clone()));
                        }
                        changes.push(Change::Path {
                            key: child_key(dir, name),
                            rewalk: mask.intersects(
                                ReadFlags::CREATE | ReadFlags::MOVED_TO | ReadFlags::ATTRIB,
                            ),
                        });
                    }
                },
                Watched::Git(dir) => {
                    if is_self || name == Some(b"info") {
                        changes.push(Change::IgnoreFiles(dir.clone()));
                    }
                }
                Watched::GitInfo(dir) => {
                    if is_self || name == Some(b"exclude") {
                        changes.push(Change::IgnoreFiles(dir.clone()));
                    }
                }
                Watched::Above => {
                    let relevant = name.is_none_or(|name| {
                        [&b".gitignore"[..], b".ignore", b".git", b"info", b"exclude"]
                            .contains(&name)
                    });
                    if relevant {
                        changes.push(Change::Doubt(
                            "ignore files above the root changed".to_owned(),
                        ));
                    }
                }
            }
        }
        count
    }
}

/// The name of a directory entry as bytes.
pub(crate) fn name_bytes(name: &OsStr) -> &[u8] {
    name.as_bytes()
}

/// The directories above `root`, nearest first.
pub(crate) fn ancestors(root: &Path) -> Vec<PathBuf> {
    root.ancestors().skip(1).map(Path::to_path_buf).collect()
}
