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
//!   operation sees a symlink (or `ELOOP`) and resolves again, up to a bound.
//!
//! So whatever another process does to the tree meanwhile, no open, create, rename or removal
//! happens in a directory that is not beneath a root.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use jig_env::{
    Bytes, DirEntry, EnvError, EnvResult, ErrorKind, FileHead, FileInfo, FileKind, LineWindow,
    LinesRead, Recursive, WriteOutcome, normalize_path, outside_roots,
};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::fs::{self, CancelFlag};
use crate::write;

/// How directory handles (and the handles that only look at an entry) are opened: `O_PATH`
/// where the system has it (no read permission needed, a final symlink can be opened itself),
/// else a plain read-only open.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
const HANDLE: OFlags = OFlags::PATH;
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
const HANDLE: OFlags = OFlags::RDONLY;

/// How often one operation resolves again because the tree changed under it before it gives up.
const MAX_RETRIES: u32 = 64;

/// Set once `openat2` turned out to be unavailable (old kernel, or a seccomp filter).
#[cfg(target_os = "linux")]
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

fn errno_error(operation: &'static str, path: &Path, errno: Errno) -> EnvError {
    EnvError::io(operation, path, io::Error::from(errno))
}

fn changed_too_often(operation: &'static str, path: &Path) -> EnvError {
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
pub(crate) struct Located {
    /// `O_PATH` handle of the directory holding the final component.
    pub(crate) dir: OwnedFd,
    /// The final component; `None` when the path is a root itself (then `dir` is the root).
    pub(crate) name: Option<OsString>,
    /// The symlink-free absolute path of the result.
    pub(crate) logical: PathBuf,
}

impl Located {
    fn name(&self) -> &OsStr {
        self.name.as_deref().unwrap_or(OsStr::new("."))
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
    ) -> EnvResult<Located> {
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
                    dir,
                    name: None,
                    logical: root.path.clone(),
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
                        dir,
                        name: Some(name.clone()),
                        logical: logical.join(name),
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
            Ok(located) => match Self::stat_located(operation, &target, &located) {
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

    /// lstat of what `located` names.
    #[cfg(target_os = "linux")]
    fn stat_located(
        operation: &'static str,
        path: &Path,
        located: &Located,
    ) -> EnvResult<FileInfo> {
        let stat = rustix::fs::statx(
            &located.dir,
            located.name(),
            AtFlags::SYMLINK_NOFOLLOW,
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

    /// lstat of what `located` names.
    #[cfg(not(target_os = "linux"))]
    fn stat_located(
        operation: &'static str,
        path: &Path,
        located: &Located,
    ) -> EnvResult<FileInfo> {
        let fd = rustix::fs::openat(
            &located.dir,
            located.name(),
            HANDLE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| errno_error(operation, path, errno))?;
        let metadata = File::from(fd)
            .metadata()
            .map_err(|e| EnvError::io(operation, path, e))?;
        Ok(fs::info(path, &metadata))
    }

    /// Resolves, then runs `act` on the result; when `act` reports that the final component
    /// became a symlink meanwhile (`Ok(None)`), resolves again.
    fn with_located<T>(
        &self,
        operation: &'static str,
        path: &Path,
        last: Final,
        create: bool,
        mut act: impl FnMut(&Located) -> EnvResult<Option<T>>,
    ) -> EnvResult<T> {
        for _ in 0..MAX_RETRIES {
            let located = self.resolve(operation, path, last, create)?;
            if let Some(result) = act(&located)? {
                return Ok(result);
            }
        }
        Err(changed_too_often(operation, path))
    }

    pub(crate) fn file_info(&self, path: &Path) -> EnvResult<FileInfo> {
        self.with_located("stat", path, Final::NoFollow, false, |located| {
            Self::stat_located("stat", path, located).map(Some)
        })
    }

    pub(crate) fn stat(&self, path: &Path) -> EnvResult<FileInfo> {
        self.with_located("stat", path, Final::Follow, false, |located| {
            let info = Self::stat_located("stat", path, located)?;
            Ok((info.kind != FileKind::Symlink).then_some(info))
        })
    }

    pub(crate) fn canonical_path(&self, path: &Path) -> EnvResult<PathBuf> {
        self.with_located("canonicalize", path, Final::Follow, false, |located| {
            let info = Self::stat_located("canonicalize", path, located)?;
            Ok((info.kind != FileKind::Symlink).then(|| located.logical.clone()))
        })
    }

    pub(crate) fn read_link(&self, path: &Path) -> EnvResult<PathBuf> {
        let located = self.resolve("readlink", path, Final::NoFollow, false)?;
        match rustix::fs::readlinkat(&located.dir, located.name(), Vec::new()) {
            Ok(target) => Ok(PathBuf::from(OsStr::from_bytes(target.as_bytes()))),
            Err(Errno::INVAL) => {
                Err(
                    EnvError::new(ErrorKind::Invalid, "readlink", "not a symbolic link")
                        .with_path(path),
                )
            }
            Err(errno) => Err(errno_error("readlink", path, errno)),
        }
    }

    /// Opens what `path` names for reading without blocking (a FIFO opens at once) and never
    /// through a final symlink that appeared after resolution; returns the file and its metadata.
    fn open_read(&self, path: &Path) -> EnvResult<(File, std::fs::Metadata)> {
        self.with_located(
            "read",
            path,
            Final::Follow,
            false,
            |located| match rustix::fs::openat(
                &located.dir,
                located.name(),
                OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => {
                    let file = File::from(fd);
                    let metadata = file.metadata().map_err(|e| EnvError::io("read", path, e))?;
                    Ok(Some((file, metadata)))
                }
                Err(Errno::LOOP) => Ok(None),
                Err(errno) => Err(errno_error("read", path, errno)),
            },
        )
    }

    /// Like `open_read`, but only a regular file is accepted.
    fn open_regular(&self, path: &Path) -> EnvResult<(File, std::fs::Metadata)> {
        let (file, metadata) = self.open_read(path)?;
        fs::require_regular("read", path, &metadata)?;
        Ok((file, metadata))
    }

    pub(crate) fn read(&self, path: &Path, cancel: &CancelFlag) -> EnvResult<Vec<u8>> {
        let (file, _) = self.open_regular(path)?;
        fs::read_file(file, path, cancel, fs::PARALLEL_READ_MIN)
    }

    /// `read` in chunks of `chunk` bytes handed to `send` (see [`fs::read_file_chunks`]).
    pub(crate) fn read_chunks(
        &self,
        path: &Path,
        cancel: &CancelFlag,
        chunk: usize,
        send: impl FnMut(Bytes) -> bool,
    ) -> EnvResult<u64> {
        let (file, _) = self.open_regular(path)?;
        fs::read_file_chunks(file, path, cancel, chunk, send)
    }

    pub(crate) fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        let (file, _) = self.open_regular(path)?;
        fs::read_start_file(file, path, max_bytes)
    }

    pub(crate) fn read_head(&self, path: &Path, max_bytes: usize) -> EnvResult<FileHead> {
        self.with_located("read", path, Final::Follow, false, |located| {
            // Only a regular file is opened: anything else is reported from its lstat.
            let info = Self::stat_located("stat", path, located)?;
            match info.kind {
                // Swapped in after resolution: resolve again.
                FileKind::Symlink => return Ok(None),
                FileKind::File => {}
                FileKind::Directory | FileKind::Other => {
                    return Ok(Some(FileHead {
                        info,
                        bytes: Vec::new(),
                        complete: false,
                    }));
                }
            }
            let fd = match rustix::fs::openat(
                &located.dir,
                located.name(),
                OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(Errno::LOOP) => return Ok(None),
                Err(errno) => return Err(errno_error("read", path, errno)),
            };
            let file = File::from(fd);
            let metadata = file.metadata().map_err(|e| EnvError::io("read", path, e))?;
            {
                use std::os::unix::fs::MetadataExt;
                if info.file_id != Some((metadata.dev(), metadata.ino())) {
                    // Replaced between the lstat and the open: look again.
                    return Ok(None);
                }
            }
            fs::head_of_file(file, path, &metadata, max_bytes).map(Some)
        })
    }

    pub(crate) fn read_lines(
        &self,
        path: &Path,
        window: &LineWindow,
        cancel: &CancelFlag,
    ) -> EnvResult<LinesRead> {
        let (file, _) = self.open_regular(path)?;
        fs::read_lines_file(file, path, window, cancel, fs::PARALLEL_COUNT_MIN)
    }

    /// Opens the directory `path` for listing.
    fn open_dir(&self, operation: &'static str, path: &Path) -> EnvResult<OwnedFd> {
        self.with_located(operation, path, Final::Follow, false, |located| {
            match rustix::fs::openat(
                &located.dir,
                located.name(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => Ok(Some(fd)),
                // A symlink swapped in after resolution: resolve again.
                Err(Errno::LOOP) => Ok(None),
                Err(Errno::NOTDIR)
                    if rustix::fs::readlinkat(&located.dir, located.name(), Vec::new()).is_ok() =>
                {
                    Ok(None)
                }
                Err(errno) => Err(errno_error(operation, path, errno)),
            }
        })
    }

    /// Fails unless `path` is a directory that can be listed.
    pub(crate) fn check_listable(&self, path: &Path) -> EnvResult<()> {
        self.open_dir("search", path).map(drop)
    }

    pub(crate) fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>> {
        let fd = self.open_dir("readdir", path)?;
        let mut dir =
            rustix::fs::Dir::new(fd).map_err(|errno| errno_error("readdir", path, errno))?;
        let mut out = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|errno| errno_error("readdir", path, errno))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                rustix::fs::FileType::RegularFile => FileKind::File,
                rustix::fs::FileType::Directory => FileKind::Directory,
                rustix::fs::FileType::Symlink => FileKind::Symlink,
                rustix::fs::FileType::Unknown => {
                    let fd = dir
                        .fd()
                        .map_err(|errno| errno_error("readdir", path, errno))?;
                    match rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(stat) => fs::kind_of_mode(stat.st_mode),
                        // Vanished between readdir and lstat: skipped like `ls` would.
                        Err(Errno::NOENT) => continue,
                        Err(errno) => return Err(errno_error("readdir", path, errno)),
                    }
                }
                _ => FileKind::Other,
            };
            out.push(DirEntry {
                name: name.to_os_string(),
                kind,
            });
        }
        Ok(out)
    }

    pub(crate) fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        let located = self.resolve("mkdir", path, Final::NoFollow, recursive == Recursive::Yes)?;
        let Some(name) = &located.name else {
            return match recursive {
                Recursive::Yes => Ok(()),
                Recursive::No => {
                    Err(EnvError::new(ErrorKind::Other, "mkdir", "file exists").with_path(path))
                }
            };
        };
        match rustix::fs::mkdirat(&located.dir, name.as_os_str(), Mode::from_raw_mode(0o777)) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) if recursive == Recursive::Yes => {
                // Fine when a directory (or a symlink to one inside the roots) is there.
                match self.stat(path) {
                    Ok(info) if info.kind == FileKind::Directory => Ok(()),
                    Ok(_) => {
                        Err(
                            EnvError::new(ErrorKind::NotADirectory, "mkdir", "not a directory")
                                .with_path(path),
                        )
                    }
                    Err(error) if error.kind() == ErrorKind::NotFound => Err(EnvError::new(
                        ErrorKind::Other,
                        "mkdir",
                        "file exists (a dangling symlink is in the way)",
                    )
                    .with_path(path)),
                    Err(error) => Err(error),
                }
            }
            Err(Errno::EXIST) => {
                Err(EnvError::new(ErrorKind::Other, "mkdir", "file exists").with_path(path))
            }
            Err(errno) => Err(errno_error("mkdir", path, errno)),
        }
    }

    pub(crate) fn append(&self, path: &Path, data: &[u8]) -> EnvResult<()> {
        let mut file = self.with_located("append", path, Final::Follow, true, |located| {
            let Some(name) = &located.name else {
                return Err(
                    EnvError::new(ErrorKind::IsADirectory, "append", "is a directory")
                        .with_path(path),
                );
            };
            match rustix::fs::openat(
                &located.dir,
                name.as_os_str(),
                OFlags::WRONLY
                    | OFlags::APPEND
                    | OFlags::CREATE
                    | OFlags::NOFOLLOW
                    | OFlags::NONBLOCK
                    | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o666),
            ) {
                Ok(fd) => Ok(Some(File::from(fd))),
                Err(Errno::LOOP) => Ok(None),
                Err(errno) => Err(errno_error("append", path, errno)),
            }
        })?;
        let metadata = file
            .metadata()
            .map_err(|e| EnvError::io("append", path, e))?;
        if !metadata.is_file() {
            return Err(fs::not_regular("append", path));
        }
        file.write_all(data)
            .map_err(|e| EnvError::io("append", path, e))
    }

    pub(crate) fn rename(&self, from: &Path, to: &Path) -> EnvResult<()> {
        let source = self.resolve("rename", from, Final::NoFollow, false)?;
        let dest = self.resolve("rename", to, Final::NoFollow, false)?;
        let (Some(source_name), Some(dest_name)) = (&source.name, &dest.name) else {
            return Err(EnvError::new(
                ErrorKind::Invalid,
                "rename",
                "cannot rename a workspace root",
            )
            .with_path(from));
        };
        rustix::fs::renameat(
            &source.dir,
            source_name.as_os_str(),
            &dest.dir,
            dest_name.as_os_str(),
        )
        .map_err(|errno| {
            let reported = match errno {
                Errno::NOENT
                    if rustix::fs::statat(
                        &source.dir,
                        source_name.as_os_str(),
                        AtFlags::SYMLINK_NOFOLLOW,
                    )
                    .is_err() =>
                {
                    from
                }
                Errno::NOENT | Errno::ISDIR | Errno::NOTDIR => to,
                _ => from,
            };
            errno_error("rename", reported, errno)
        })
    }

    pub(crate) fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        let located = self.resolve("remove", path, Final::NoFollow, false)?;
        let Some(name) = &located.name else {
            return Err(EnvError::new(
                ErrorKind::Invalid,
                "remove",
                "refusing to remove a workspace root",
            )
            .with_path(path));
        };
        let stat = rustix::fs::statat(&located.dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|errno| errno_error("remove", path, errno))?;
        let result = if fs::kind_of_mode(stat.st_mode) == FileKind::Directory {
            if recursive == Recursive::Yes {
                remove_contents(&located.dir, name)
                    .map_err(|errno| errno_error("remove", path, errno))?;
            }
            rustix::fs::unlinkat(&located.dir, name.as_os_str(), AtFlags::REMOVEDIR)
        } else {
            rustix::fs::unlinkat(&located.dir, name.as_os_str(), AtFlags::empty())
        };
        result.map_err(|errno| {
            if errno == Errno::NOTEMPTY {
                EnvError::new(
                    ErrorKind::Other,
                    "remove",
                    "directory not empty (remove it recursively to delete its contents)",
                )
                .with_path(path)
            } else {
                errno_error("remove", path, errno)
            }
        })
    }

    /// The atomic write of the contract (see [`write::write_in`]), every step relative to the
    /// target's directory handle. Refuses a target that is not a regular file.
    pub(crate) fn write(
        &self,
        path: &Path,
        data: &Bytes,
        cancel: &CancelFlag,
    ) -> EnvResult<WriteOutcome> {
        let (big, next) = write::pieces(data);
        self.write_from(path, cancel, big, next)
    }

    /// The atomic write of the content `next` supplies chunk by chunk (see
    /// [`write::write_in`]).
    pub(crate) fn write_from(
        &self,
        path: &Path,
        cancel: &CancelFlag,
        big: bool,
        next: impl FnMut() -> EnvResult<Option<Bytes>>,
    ) -> EnvResult<WriteOutcome> {
        // Where the bytes go and what is there now; a symlink swapped in after resolution is
        // resolved again, so the mode and owner copied are the real target's. If a symlink is
        // swapped in before the rename, the rename replaces the link, never its target.
        let target = self.with_located("write", path, Final::Follow, true, |located| {
            let Some(name) = &located.name else {
                return Err(
                    EnvError::new(ErrorKind::IsADirectory, "write", "is a directory")
                        .with_path(path),
                );
            };
            let existing =
                match rustix::fs::statat(&located.dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                {
                    Ok(stat) if fs::kind_of_mode(stat.st_mode) == FileKind::Symlink => {
                        return Ok(None);
                    }
                    Ok(stat) => Some(stat),
                    Err(Errno::NOENT) => None,
                    Err(errno) => return Err(errno_error("write", path, errno)),
                };
            let dir = rustix::fs::openat(
                &located.dir,
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|errno| errno_error("write", path, errno))?;
            Ok(Some(write::Target {
                dir,
                name: name.clone(),
                existing,
            }))
        })?;
        write::write_in(&target, write::Writer::Confined, path, cancel, big, next)
    }

    /// Opens the existing regular file `path` for locking (read-only, no blocking, no final
    /// symlink swapped in after resolution) with its metadata.
    pub(crate) fn open_for_lock(&self, path: &Path) -> EnvResult<(File, std::fs::Metadata)> {
        let (file, metadata) = self
            .open_read(path)
            .map_err(|error| relabel(&error, "lock"))?;
        fs::require_regular("lock", path, &metadata)?;
        Ok((file, metadata))
    }

    /// Opens the file `path` (relative to the root it is spelled in, no symlink anywhere) for
    /// a search: `None` when it is not a regular file there now.
    pub(crate) fn open_for_search(&self, path: &Path) -> Option<File> {
        let (root, parts) = self.locate(path)?;
        let fd = open_no_symlinks(&root.fd, &parts, OFlags::RDONLY | OFlags::NONBLOCK)?;
        let file = File::from(fd);
        file.metadata().ok().filter(std::fs::Metadata::is_file)?;
        Some(file)
    }

    /// Whether `path` exists beneath its root as `kind`, reached without any symlink.
    pub(crate) fn verify_entry(&self, path: &Path, kind: FileKind) -> bool {
        let Some((root, parts)) = self.locate(path) else {
            return false;
        };
        let Some(fd) = open_no_symlinks(&root.fd, &parts, HANDLE) else {
            return false;
        };
        File::from(fd)
            .metadata()
            .is_ok_and(|metadata| fs::kind_of(metadata.file_type()) == kind)
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

fn relabel(error: &EnvError, operation: &'static str) -> EnvError {
    let mut out = EnvError::new(error.kind(), operation, error.message());
    if let Some(path) = error.path() {
        out = out.with_path(path);
    }
    out
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

/// Removes everything inside the directory `name` of `parent`, never following a symlink.
fn remove_contents(parent: &OwnedFd, name: &OsStr) -> Result<(), Errno> {
    let fd = rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut names = Vec::new();
    {
        let mut dir = rustix::fs::Dir::read_from(&fd)?;
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let child = OsStr::from_bytes(entry.file_name().to_bytes());
            if child != "." && child != ".." {
                names.push(child.to_os_string());
            }
        }
    }
    for child in names {
        let stat = match rustix::fs::statat(&fd, child.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => continue,
            Err(errno) => return Err(errno),
        };
        if fs::kind_of_mode(stat.st_mode) == FileKind::Directory {
            remove_contents(&fd, &child)?;
            rustix::fs::unlinkat(&fd, child.as_os_str(), AtFlags::REMOVEDIR)?;
        } else {
            rustix::fs::unlinkat(&fd, child.as_os_str(), AtFlags::empty())?;
        }
    }
    Ok(())
}
