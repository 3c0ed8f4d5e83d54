//! Resolving paths beneath open directory handles of the roots: the machinery of
//! [`LocalEnv::beneath`](jig_env::ExecutionEnv::beneath).
//!
//! Each root is opened once per view (`O_PATH`); every path is then resolved relative to that
//! handle and never through a path string checked earlier:
//!
//! - The directories on the way are opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`
//!   where the kernel has it (Linux 5.6): one system call for the common path without symlinks.
//! - Otherwise, and whenever a symlink is on the way, the path is walked one component at a time
//!   with `openat(O_NOFOLLOW)` from the root's handle. A symlink found on the way is read with
//!   `readlinkat`; where it leads (with the rest of the path) is normalised lexically — the
//!   prefix walked so far is symlink-free, so `..` there is the physical parent — and must be
//!   inside one of the roots, else the operation fails with `OutsideRoots`. The walk then starts
//!   again from that root's handle.
//! - The final component is acted on relative to the directory handle the walk ended on, with
//!   `O_NOFOLLOW`/`AT_SYMLINK_NOFOLLOW`: if it turned into a symlink after it was looked at, the
//!   operation sees a symlink (or `ELOOP`) and resolves again, up to a bound. The operations
//!   themselves are the env's (the `files` module); this module only finds where they act.
//!
//! So whatever another process does to the tree meanwhile, no open, create, rename or removal
//! happens in a directory that is not beneath a root.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use jig_env::{EnvError, EnvResult, ErrorKind, FileInfo, FileKind, normalize_path, outside_roots};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::fs;

/// How directory handles (and the handles that only look at an entry) are opened: `O_PATH`
/// where the system has it (no read permission needed, a final symlink can be opened itself),
/// else a plain read-only open.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
pub(crate) const HANDLE: OFlags = OFlags::PATH;
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
pub(crate) const HANDLE: OFlags = OFlags::RDONLY;

/// How often one operation resolves again because the tree changed under it before it gives up.
pub(crate) const MAX_RETRIES: u32 = 64;

/// Set once `openat2` turned out to be unavailable (old kernel, or a seccomp filter).
#[cfg(target_os = "linux")]
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

pub(crate) fn errno_error(operation: &'static str, path: &Path, errno: Errno) -> EnvError {
    EnvError::io(operation, path, io::Error::from(errno))
}

pub(crate) fn changed_too_often(operation: &'static str, path: &Path) -> EnvError {
    EnvError::new(
        ErrorKind::Other,
        operation,
        "the path kept changing while it was resolved (another process is swapping it); try again",
    )
    .with_path(path)
}

fn dup(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    fd.try_clone_to_owned()
}

/// One root: its canonical path and an `O_PATH` handle of the directory.
#[derive(Debug)]
struct Root {
    path: PathBuf,
    fd: OwnedFd,
}

/// The roots of one view.
#[derive(Debug)]
pub(crate) struct Roots {
    roots: Vec<Root>,
    paths: Vec<PathBuf>,
}

/// Where a path landed: a directory handle and the final name in it.
#[derive(Debug)]
pub(crate) struct Located<'a> {
    /// The directory holding the final component (in a view an `O_PATH` handle).
    pub(crate) dir: DirHandle,
    /// The final component (for the env, which lets the kernel resolve, the whole path);
    /// `None` when the path is a root itself (then `dir` is the root).
    pub(crate) name: Option<Cow<'a, OsStr>>,
    /// In a view, the symlink-free absolute path of the result (the env leaves it empty).
    pub(crate) logical: PathBuf,
    /// The kernel follows a final symlink: the env's operations that follow one. A view never
    /// lets it (every open and stat is `O_NOFOLLOW`), it follows symlinks itself.
    pub(crate) follows: bool,
}

impl Located<'_> {
    pub(crate) fn name(&self) -> &OsStr {
        self.name.as_deref().unwrap_or(OsStr::new("."))
    }

    /// `O_NOFOLLOW` unless the kernel is to follow a final symlink.
    pub(crate) fn nofollow(&self) -> OFlags {
        if self.follows {
            OFlags::empty()
        } else {
            OFlags::NOFOLLOW
        }
    }
}

/// A directory the `*at` system calls start from.
#[derive(Debug)]
pub(crate) enum DirHandle {
    /// The working directory (`AT_FDCWD`): the name is an absolute path the kernel resolves.
    Cwd,
    Fd(OwnedFd),
}

impl AsFd for DirHandle {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            DirHandle::Cwd => rustix::fs::CWD,
            DirHandle::Fd(fd) => fd.as_fd(),
        }
    }
}

enum Walked {
    Dir(OwnedFd, PathBuf),
    /// A symlink on the way: where the path leads now, and the link.
    Symlink {
        leads_to: PathBuf,
        link: PathBuf,
    },
}

/// How the final component is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Final {
    /// A final symlink is followed (stat, read, write).
    Follow,
    /// A final symlink is the result itself (lstat, readlink, remove, rename).
    NoFollow,
}

impl Roots {
    /// Opens the roots (absolute directories; each is canonicalised first).
    pub(crate) fn open(paths: &[PathBuf]) -> EnvResult<Self> {
        let mut roots: Vec<Root> = Vec::new();
        for path in paths {
            let path = jig_env::check_path("beneath", path)?;
            let (canonical, fd) = open_root(&path)?;
            if !roots.iter().any(|root| root.path == canonical) {
                roots.push(Root {
                    path: canonical,
                    fd,
                });
            }
        }
        let paths = roots.iter().map(|root| root.path.clone()).collect();
        Ok(Self { roots, paths })
    }

    /// The root `path` is spelled in (the deepest, when roots nest) and the components below it.
    fn locate(&self, path: &Path) -> Option<(&Root, Vec<OsString>)> {
        let root = self
            .roots
            .iter()
            .filter(|root| path.starts_with(&root.path))
            .max_by_key(|root| root.path.as_os_str().len())?;
        let rest = path.strip_prefix(&root.path).ok()?;
        let parts = rest
            .components()
            .filter_map(|component| match component {
                Component::Normal(part) => Some(part.to_os_string()),
                _ => None,
            })
            .collect();
        Some((root, parts))
    }

    /// Resolves `path` (absolute, normalised) beneath the roots. With `create`, missing
    /// directories on the way are created (`mkdir -p` of the parent).
    pub(crate) fn resolve(
        &self,
        operation: &'static str,
        path: &Path,
        last: Final,
        create: bool,
    ) -> EnvResult<Located<'static>> {
        let mut current = path.to_path_buf();
        let mut via: Option<PathBuf> = None;
        let mut create = create;
        for _ in 0..=fs::MAX_SYMLINK_HOPS {
            let Some((root, parts)) = self.locate(&current) else {
                return Err(outside_roots(
                    operation,
                    path,
                    &current,
                    &self.paths,
                    via.as_deref(),
                ));
            };
            let Some((name, parents)) = parts.split_last() else {
                let dir = dup(root.fd.as_fd()).map_err(|e| EnvError::io(operation, path, e))?;
                return Ok(Located {
                    dir: DirHandle::Fd(dir),
                    name: None,
                    logical: root.path.clone(),
                    follows: false,
                });
            };
            match self.walk_dirs(operation, path, root, parents, name, create)? {
                Walked::Symlink { leads_to, link } => {
                    current = leads_to;
                    via = Some(link);
                }
                Walked::Dir(dir, logical) => {
                    if last == Final::Follow {
                        match rustix::fs::statat(&dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                        {
                            Ok(stat)
                                if rustix::fs::FileType::from_raw_mode(stat.st_mode)
                                    == rustix::fs::FileType::Symlink =>
                            {
                                let link = logical.join(name);
                                match rustix::fs::readlinkat(&dir, name.as_os_str(), Vec::new()) {
                                    Ok(target) => {
                                        let target = OsStr::from_bytes(target.as_bytes());
                                        current = normalize_path(&logical.join(target));
                                        via = Some(link);
                                        // Through a dangling final link a write creates the
                                        // target, never directories for it.
                                        create = false;
                                    }
                                    // Swapped away meanwhile: look again.
                                    Err(Errno::INVAL | Errno::NOENT) => {}
                                    Err(errno) => return Err(errno_error(operation, path, errno)),
                                }
                                continue;
                            }
                            Ok(_) | Err(Errno::NOENT) => {}
                            Err(errno) => return Err(errno_error(operation, path, errno)),
                        }
                    }
                    return Ok(Located {
                        dir: DirHandle::Fd(dir),
                        name: Some(Cow::Owned(name.clone())),
                        logical: logical.join(name),
                        follows: false,
                    });
                }
            }
        }
        Err(EnvError::new(
            ErrorKind::Invalid,
            operation,
            "too many levels of symbolic links",
        )
        .with_path(path))
    }

    /// Opens the directories `parents` below `root`; `name` is the final component (only used
    /// to say where a symlink on the way leads).
    fn walk_dirs(
        &self,
        operation: &'static str,
        path: &Path,
        root: &Root,
        parents: &[OsString],
        name: &OsStr,
        create: bool,
    ) -> EnvResult<Walked> {
        if parents.is_empty() {
            let dir = dup(root.fd.as_fd()).map_err(|e| EnvError::io(operation, path, e))?;
            return Ok(Walked::Dir(dir, root.path.clone()));
        }
        #[cfg(target_os = "linux")]
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            let relative: PathBuf = parents.iter().collect();
            match rustix::fs::openat2(
                &root.fd,
                &relative,
                HANDLE | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
                rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_SYMLINKS,
            ) {
                Ok(dir) => return Ok(Walked::Dir(dir, root.path.join(relative))),
                Err(Errno::NOSYS | Errno::PERM) => NO_OPENAT2.store(true, Ordering::Relaxed),
                // A symlink on the way, a concurrent rename, or something missing that may be
                // created: the component walk decides.
                Err(Errno::LOOP | Errno::XDEV | Errno::AGAIN) => {}
                Err(Errno::NOENT) if create => {}
                Err(errno) => return Err(errno_error(operation, path, errno)),
            }
        }
        let mut dir = dup(root.fd.as_fd()).map_err(|e| EnvError::io(operation, path, e))?;
        let mut logical = root.path.clone();
        for (index, part) in parents.iter().enumerate() {
            let mut retries = 0;
            loop {
                retries += 1;
                if retries > MAX_RETRIES {
                    return Err(changed_too_often(operation, path));
                }
                match rustix::fs::openat(
                    &dir,
                    part.as_os_str(),
                    HANDLE | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                ) {
                    Ok(next) => {
                        dir = next;
                        logical.push(part);
                        break;
                    }
                    Err(Errno::NOTDIR | Errno::LOOP) => {
                        match rustix::fs::readlinkat(&dir, part.as_os_str(), Vec::new()) {
                            Ok(target) => {
                                let link = logical.join(part);
                                let mut leads_to =
                                    logical.join(OsStr::from_bytes(target.as_bytes()));
                                for rest in &parents[index + 1..] {
                                    leads_to.push(rest);
                                }
                                leads_to.push(name);
                                if create {
                                    self.check_link_target(operation, path, &link, &leads_to)?;
                                }
                                return Ok(Walked::Symlink {
                                    leads_to: normalize_path(&leads_to),
                                    link,
                                });
                            }
                            // Not a symlink: a file is in the way.
                            Err(Errno::INVAL) => {
                                return Err(EnvError::new(
                                    ErrorKind::NotADirectory,
                                    operation,
                                    "not a directory",
                                )
                                .with_path(path));
                            }
                            Err(Errno::NOENT) => {}
                            Err(errno) => return Err(errno_error(operation, path, errno)),
                        }
                    }
                    Err(Errno::NOENT) if create => {
                        match rustix::fs::mkdirat(
                            &dir,
                            part.as_os_str(),
                            Mode::from_raw_mode(0o777),
                        ) {
                            Ok(()) | Err(Errno::EXIST) => {}
                            Err(errno) => return Err(errno_error(operation, path, errno)),
                        }
                    }
                    Err(errno) => return Err(errno_error(operation, path, errno)),
                }
            }
        }
        Ok(Walked::Dir(dir, logical))
    }

    /// `mkdir -p` through a symlink creates below its target only when the target exists (a
    /// dangling symlink in the way is an error, as for `mkdir -p`).
    fn check_link_target(
        &self,
        operation: &'static str,
        path: &Path,
        link: &Path,
        leads_to: &Path,
    ) -> EnvResult<()> {
        // The link's own target: `leads_to` without the components that followed the link.
        let below = path
            .strip_prefix(link)
            .map_or(0, |rest| rest.components().count());
        let mut target = normalize_path(leads_to);
        for _ in 0..below {
            target.pop();
        }
        match self.resolve(operation, &target, Final::Follow, false) {
            Ok(located) => match stat_located(operation, &target, &located) {
                Ok(info) if info.kind == FileKind::Directory => Ok(()),
                Ok(_) => Err(
                    EnvError::new(ErrorKind::NotADirectory, operation, "not a directory")
                        .with_path(path),
                ),
                Err(error) if error.kind() == ErrorKind::NotFound => Err(EnvError::new(
                    ErrorKind::Other,
                    operation,
                    "file exists (a dangling symlink is in the way)",
                )
                .with_path(path)),
                Err(error) => Err(error),
            },
            Err(error) if error.kind() == ErrorKind::NotFound => Err(EnvError::new(
                ErrorKind::Other,
                operation,
                "file exists (a dangling symlink is in the way)",
            )
            .with_path(path)),
            Err(error) => Err(error),
        }
    }
}

impl Roots {
    /// A handle of the directory `path` for listing, opened beneath its root without following
    /// any symlink; `None` when it is not such a directory now.
    pub(crate) fn open_directory(&self, path: &Path) -> Option<OwnedFd> {
        let (root, parts) = self.locate(path)?;
        open_no_symlinks(&root.fd, &parts, OFlags::RDONLY | OFlags::DIRECTORY)
    }
}

/// The handle of the directory a walk's last entry was in, opened beneath its root without
/// following any symlink. A walk visits a directory's entries one after another, so each file
/// is then opened (or checked) with one lookup of its own name instead of a resolution of its
/// whole path from the root: what makes a confined walk cost what an unconfined one does.
///
/// Holding a directory's handle is as safe as resolving every path again: the file opened is a
/// child, by name, of a directory that was beneath the root when its handle was taken, and the
/// name itself is never followed when it is a symlink.
pub(crate) struct ParentHandles<'a> {
    roots: &'a Roots,
    last: Option<(PathBuf, OwnedFd)>,
}

impl<'a> ParentHandles<'a> {
    pub(crate) fn new(roots: &'a Roots) -> Self {
        Self { roots, last: None }
    }

    /// The handle of `path`'s directory and `path`'s name.
    fn parent<'p>(&mut self, path: &'p Path) -> Option<(BorrowedFd<'_>, &'p OsStr)> {
        let parent = path.parent()?;
        let name = path.file_name()?;
        if self.last.as_ref().is_none_or(|(last, _)| last != parent) {
            self.last = None;
            let (root, parts) = self.roots.locate(parent)?;
            let fd = open_no_symlinks(&root.fd, &parts, HANDLE | OFlags::DIRECTORY)?;
            self.last = Some((parent.to_path_buf(), fd));
        }
        let (_, fd) = self.last.as_ref()?;
        Some((fd.as_fd(), name))
    }

    /// The file the walk listed as a regular file at `path`, for reading, reached beneath its
    /// root without a symlink. It is not stat'ed again (one system call per file, as much as
    /// the open): what was swapped in since the listing cannot hold a search up — a FIFO opens
    /// non-blocking and reads as empty, a socket does not open, and a device reads as binary
    /// (its first NUL ends the search) or not at all.
    pub(crate) fn open_for_search(&mut self, path: &Path) -> Option<File> {
        let (dir, name) = self.parent(path)?;
        let fd = rustix::fs::openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        Some(File::from(fd))
    }
}

/// Opens a root directory (`O_PATH`) and returns its canonical path with the handle. A path
/// without symlinks is canonical as it is (one `openat2` tells); otherwise it is canonicalised
/// first.
fn open_root(path: &Path) -> EnvResult<(PathBuf, OwnedFd)> {
    let flags = HANDLE | OFlags::DIRECTORY | OFlags::CLOEXEC;
    #[cfg(target_os = "linux")]
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        match rustix::fs::openat2(
            rustix::fs::CWD,
            path,
            flags,
            Mode::empty(),
            rustix::fs::ResolveFlags::NO_SYMLINKS,
        ) {
            Ok(fd) => return Ok((path.to_path_buf(), fd)),
            Err(Errno::NOSYS | Errno::PERM) => NO_OPENAT2.store(true, Ordering::Relaxed),
            Err(Errno::LOOP | Errno::AGAIN) => {}
            Err(errno) => return Err(errno_error("beneath", path, errno)),
        }
    }
    let canonical = std::fs::canonicalize(path).map_err(|e| EnvError::io("beneath", path, e))?;
    let fd = rustix::fs::open(&canonical, flags, Mode::empty())
        .map_err(|errno| errno_error("beneath", path, errno))?;
    Ok((canonical, fd))
}

/// Opens `parts` below `root` without following any symlink (the final one included: with
/// `O_PATH` a final symlink is opened itself); `None` on any failure.
fn open_no_symlinks(root: &OwnedFd, parts: &[OsString], flags: OFlags) -> Option<OwnedFd> {
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if parts.is_empty() {
        return rustix::fs::openat(root, ".", flags, Mode::empty()).ok();
    }
    #[cfg(target_os = "linux")]
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let relative: PathBuf = parts.iter().collect();
        match rustix::fs::openat2(
            root,
            &relative,
            flags,
            Mode::empty(),
            rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_SYMLINKS,
        ) {
            Ok(fd) => return Some(fd),
            Err(Errno::NOSYS | Errno::PERM) => NO_OPENAT2.store(true, Ordering::Relaxed),
            Err(Errno::AGAIN) => {}
            Err(_) => return None,
        }
    }
    let (last, parents) = parts.split_last()?;
    let mut dir = dup(root.as_fd()).ok()?;
    for part in parents {
        dir = rustix::fs::openat(
            &dir,
            part.as_os_str(),
            HANDLE | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
    }
    rustix::fs::openat(&dir, last.as_os_str(), flags, Mode::empty()).ok()
}

/// Where the operations resolve their paths.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope<'a> {
    /// Anywhere, as the kernel resolves them: `LocalEnv`.
    Host,
    /// Beneath the roots of a view.
    Beneath(&'a Roots),
}

impl Scope<'_> {
    /// Finds the directory and final name of `path` (absolute, normalised). With `create`,
    /// missing directories on the way are created (`mkdir -p` of the parent).
    pub(crate) fn resolve<'p>(
        self,
        operation: &'static str,
        path: &'p Path,
        last: Final,
        create: bool,
    ) -> EnvResult<Located<'p>> {
        match self {
            Scope::Host => {
                if create && let Some(parent) = path.parent() {
                    fs::create_dir_all(operation, parent, path)?;
                }
                Ok(Located {
                    dir: DirHandle::Cwd,
                    name: Some(Cow::Borrowed(path.as_os_str())),
                    logical: PathBuf::new(),
                    follows: last == Final::Follow,
                })
            }
            Scope::Beneath(roots) => roots.resolve(operation, path, last, create),
        }
    }

    /// Resolves, then runs `act` on the result; when `act` reports that the final component
    /// became a symlink meanwhile (`Ok(None)`), resolves again.
    pub(crate) fn with_located<T>(
        self,
        operation: &'static str,
        path: &Path,
        last: Final,
        create: bool,
        mut act: impl FnMut(&Located<'_>) -> EnvResult<Option<T>>,
    ) -> EnvResult<T> {
        for _ in 0..MAX_RETRIES {
            let located = self.resolve(operation, path, last, create)?;
            if let Some(result) = act(&located)? {
                return Ok(result);
            }
        }
        Err(changed_too_often(operation, path))
    }

    pub(crate) fn confined(self) -> bool {
        matches!(self, Scope::Beneath(_))
    }
}

/// The lstat of what `located` names (its stat where the kernel follows a final symlink).
#[cfg(target_os = "linux")]
pub(crate) fn stat_located(
    operation: &'static str,
    path: &Path,
    located: &Located<'_>,
) -> EnvResult<FileInfo> {
    let flags = if located.follows {
        AtFlags::empty()
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    let stat = rustix::fs::statx(
        &located.dir,
        located.name(),
        flags,
        rustix::fs::StatxFlags::BASIC_STATS,
    )
    .map_err(|errno| errno_error(operation, path, errno))?;
    let mode = u32::from(stat.stx_mode);
    let modified = u64::try_from(stat.stx_mtime.tv_sec).ok().map(|seconds| {
        std::time::UNIX_EPOCH + std::time::Duration::new(seconds, stat.stx_mtime.tv_nsec)
    });
    Ok(FileInfo {
        path: path.to_path_buf(),
        kind: fs::kind_of_mode(mode),
        size: stat.stx_size,
        modified,
        mode: mode & 0o7777,
        // As std reports it (`st_dev` is `makedev(major, minor)`).
        file_id: Some((
            rustix::fs::makedev(stat.stx_dev_major, stat.stx_dev_minor),
            stat.stx_ino,
        )),
    })
}

/// The lstat of what `located` names (its stat where the kernel follows a final symlink).
#[cfg(not(target_os = "linux"))]
pub(crate) fn stat_located(
    operation: &'static str,
    path: &Path,
    located: &Located<'_>,
) -> EnvResult<FileInfo> {
    let fd = rustix::fs::openat(
        &located.dir,
        located.name(),
        HANDLE | located.nofollow() | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| errno_error(operation, path, errno))?;
    let metadata = File::from(fd)
        .metadata()
        .map_err(|e| EnvError::io(operation, path, e))?;
    Ok(fs::info(path, &metadata))
}
