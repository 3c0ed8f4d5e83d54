//! The filesystem operations of `LocalEnv` and of its confined views, each written once against
//! a directory handle and a name in it ([`Located`]). Where that comes from is the [`Scope`]:
//! the env hands the kernel the whole path (`AT_FDCWD` and the absolute path, a final symlink
//! followed by the kernel where the operation follows one); a view resolves the path beneath
//! its roots first (the `beneath` module), follows symlinks itself and never lets the kernel
//! follow one, resolving again when a final component turned into a symlink meanwhile.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use jig_env::{
    Bytes, DirEntry, EnvError, EnvResult, ErrorKind, FileHead, FileInfo, FileKind, LineWindow,
    LinesRead, Recursive, WriteOutcome,
};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::beneath::{DirHandle, Final, HANDLE, Scope, errno_error, stat_located};
use crate::fs::{self, CancelFlag};
use crate::write;

impl Scope<'_> {
    pub(crate) fn file_info(self, path: &Path) -> EnvResult<FileInfo> {
        self.with_located("stat", path, Final::NoFollow, false, |located| {
            stat_located("stat", path, located).map(Some)
        })
    }

    pub(crate) fn stat(self, path: &Path) -> EnvResult<FileInfo> {
        self.with_located("stat", path, Final::Follow, false, |located| {
            let info = stat_located("stat", path, located)?;
            Ok((info.kind != FileKind::Symlink).then_some(info))
        })
    }

    pub(crate) fn canonical_path(self, path: &Path) -> EnvResult<PathBuf> {
        match self {
            Scope::Host => std::fs::canonicalize(path)
                .map_err(|error| EnvError::io("canonicalize", path, error)),
            Scope::Beneath(_) => {
                self.with_located("canonicalize", path, Final::Follow, false, |located| {
                    let info = stat_located("canonicalize", path, located)?;
                    Ok((info.kind != FileKind::Symlink).then(|| located.logical.clone()))
                })
            }
        }
    }

    pub(crate) fn read_link(self, path: &Path) -> EnvResult<PathBuf> {
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

    /// Opens what `path` names (a final symlink followed) with `flags`, never through a final
    /// symlink that appeared after a view resolved it; returns the file and its metadata.
    fn open(
        self,
        operation: &'static str,
        path: &Path,
        flags: OFlags,
    ) -> EnvResult<(File, std::fs::Metadata)> {
        self.with_located(
            operation,
            path,
            Final::Follow,
            false,
            |located| match rustix::fs::openat(
                &located.dir,
                located.name(),
                flags | located.nofollow() | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => {
                    let file = File::from(fd);
                    let metadata = file
                        .metadata()
                        .map_err(|e| EnvError::io(operation, path, e))?;
                    Ok(Some((file, metadata)))
                }
                Err(Errno::LOOP) if !located.follows => Ok(None),
                Err(errno) => Err(errno_error(operation, path, errno)),
            },
        )
    }

    /// Opens the file `path` for reading; a directory is `IsADirectory`. A view opens without
    /// blocking (a FIFO opens at once) and accepts only a regular file; the env reads whatever
    /// it is given, like any program.
    fn open_for_read(self, path: &Path) -> EnvResult<File> {
        if self.confined() {
            let (file, metadata) = self.open("read", path, OFlags::RDONLY | OFlags::NONBLOCK)?;
            fs::require_regular("read", path, &metadata)?;
            return Ok(file);
        }
        let (file, metadata) = self.open("read", path, OFlags::RDONLY)?;
        if metadata.is_dir() {
            return Err(
                EnvError::new(ErrorKind::IsADirectory, "read", "is a directory").with_path(path),
            );
        }
        Ok(file)
    }

    pub(crate) fn read(self, path: &Path, cancel: &CancelFlag) -> EnvResult<Vec<u8>> {
        let file = self.open_for_read(path)?;
        fs::read_file(file, path, cancel, fs::PARALLEL_READ_MIN)
    }

    /// `read` in chunks of `chunk` bytes handed to `send`, which returns `false` when nobody
    /// takes them any more (then the read stops); see [`fs::read_file_chunks`].
    pub(crate) fn read_chunks(
        self,
        path: &Path,
        cancel: &CancelFlag,
        chunk: usize,
        send: impl FnMut(Bytes) -> bool,
    ) -> EnvResult<u64> {
        let file = self.open_for_read(path)?;
        fs::read_file_chunks(file, path, cancel, chunk, send)
    }

    pub(crate) fn read_start(self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        let file = self.open_for_read(path)?;
        fs::read_start_file(file, path, max_bytes)
    }

    /// `ExecutionEnv::read_head`: stat, and only for a regular file open and read the start.
    /// The open does not block if the file was swapped for a FIFO after the stat
    /// (`O_NONBLOCK`), and a file replaced in between is looked at again, so a non-regular file
    /// is never read.
    pub(crate) fn read_head(self, path: &Path, max_bytes: usize) -> EnvResult<FileHead> {
        self.with_located("read", path, Final::Follow, false, |located| {
            // Only a regular file is opened: anything else is reported from its stat.
            let info = stat_located("stat", path, located)?;
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
                OFlags::RDONLY | OFlags::NONBLOCK | located.nofollow() | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(Errno::LOOP) if !located.follows => return Ok(None),
                Err(errno) => return Err(errno_error("read", path, errno)),
            };
            let file = File::from(fd);
            let metadata = file.metadata().map_err(|e| EnvError::io("read", path, e))?;
            {
                use std::os::unix::fs::MetadataExt;
                if info.file_id != Some((metadata.dev(), metadata.ino())) {
                    // Replaced between the stat and the open: look again.
                    return Ok(None);
                }
            }
            fs::head_of_file(file, path, &metadata, max_bytes).map(Some)
        })
    }

    /// The streaming line window (see `ExecutionEnv::read_lines` and
    /// [`fs::read_lines_file`]).
    pub(crate) fn read_lines(
        self,
        path: &Path,
        window: &LineWindow,
        cancel: &CancelFlag,
    ) -> EnvResult<LinesRead> {
        let file = self.open_for_read(path)?;
        fs::read_lines_file(file, path, window, cancel, fs::PARALLEL_COUNT_MIN)
    }

    /// Opens the directory `path` for listing.
    fn open_dir(self, operation: &'static str, path: &Path) -> EnvResult<File> {
        self.with_located(operation, path, Final::Follow, false, |located| {
            match rustix::fs::openat(
                &located.dir,
                located.name(),
                OFlags::RDONLY | OFlags::DIRECTORY | located.nofollow() | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => Ok(Some(File::from(fd))),
                // A symlink swapped in after a view resolved the path: resolve again.
                Err(Errno::LOOP) if !located.follows => Ok(None),
                Err(Errno::NOTDIR)
                    if !located.follows
                        && rustix::fs::readlinkat(&located.dir, located.name(), Vec::new())
                            .is_ok() =>
                {
                    Ok(None)
                }
                Err(errno) => Err(errno_error(operation, path, errno)),
            }
        })
    }

    /// Fails unless `path` is a directory that can be listed.
    pub(crate) fn check_listable(self, path: &Path) -> EnvResult<()> {
        self.open_dir("search", path).map(drop)
    }

    pub(crate) fn read_dir(self, path: &Path) -> EnvResult<Vec<DirEntry>> {
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

    pub(crate) fn create_dir(self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        let located = self.resolve("mkdir", path, Final::NoFollow, recursive == Recursive::Yes)?;
        let Some(name) = &located.name else {
            return match recursive {
                Recursive::Yes => Ok(()),
                Recursive::No => {
                    Err(EnvError::new(ErrorKind::Other, "mkdir", "file exists").with_path(path))
                }
            };
        };
        match rustix::fs::mkdirat(&located.dir, &**name, Mode::from_raw_mode(0o777)) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) if recursive == Recursive::Yes => {
                // Fine when a directory (or a symlink to one, inside the roots of a view) is
                // there.
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

    /// Appends to the file (created when missing, with its parents). A view opens without
    /// blocking and appends only to a regular file.
    pub(crate) fn append(self, path: &Path, data: &[u8]) -> EnvResult<()> {
        let confined = if self.confined() {
            OFlags::NONBLOCK
        } else {
            OFlags::empty()
        };
        let mut file = self.with_located("append", path, Final::Follow, true, |located| {
            let Some(name) = &located.name else {
                return Err(
                    EnvError::new(ErrorKind::IsADirectory, "append", "is a directory")
                        .with_path(path),
                );
            };
            match rustix::fs::openat(
                &located.dir,
                &**name,
                OFlags::WRONLY
                    | OFlags::APPEND
                    | OFlags::CREATE
                    | located.nofollow()
                    | confined
                    | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o666),
            ) {
                Ok(fd) => Ok(Some(File::from(fd))),
                Err(Errno::LOOP) if !located.follows => Ok(None),
                Err(errno) => Err(errno_error("append", path, errno)),
            }
        })?;
        if self.confined() {
            let metadata = file
                .metadata()
                .map_err(|e| EnvError::io("append", path, e))?;
            if !metadata.is_file() {
                return Err(fs::not_regular("append", path));
            }
        }
        file.write_all(data)
            .map_err(|e| EnvError::io("append", path, e))
    }

    pub(crate) fn rename(self, from: &Path, to: &Path) -> EnvResult<()> {
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
        rustix::fs::renameat(&source.dir, &**source_name, &dest.dir, &**dest_name).map_err(
            |errno| {
                // Name the side that is at fault where the error tells it.
                let reported = match errno {
                    Errno::NOENT
                        if rustix::fs::statat(
                            &source.dir,
                            &**source_name,
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
            },
        )
    }

    /// Removes `path`; a symlink (to anything) is removed itself, never its target.
    pub(crate) fn remove(self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        let located = self.resolve("remove", path, Final::NoFollow, false)?;
        let Some(name) = &located.name else {
            return Err(EnvError::new(
                ErrorKind::Invalid,
                "remove",
                "refusing to remove a workspace root",
            )
            .with_path(path));
        };
        let stat = rustix::fs::statat(&located.dir, &**name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|errno| errno_error("remove", path, errno))?;
        let result = if fs::kind_of_mode(stat.st_mode) == FileKind::Directory {
            if recursive == Recursive::Yes {
                remove_contents(&located.dir, name)
                    .map_err(|errno| errno_error("remove", path, errno))?;
            }
            rustix::fs::unlinkat(&located.dir, &**name, AtFlags::REMOVEDIR)
        } else {
            rustix::fs::unlinkat(&located.dir, &**name, AtFlags::empty())
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

    /// The atomic write of the contract (see [`write::write_in`]).
    pub(crate) fn write(
        self,
        path: &Path,
        data: &Bytes,
        cancel: &CancelFlag,
    ) -> EnvResult<WriteOutcome> {
        let (big, next) = write::pieces(data);
        self.write_from(path, cancel, big, next)
    }

    /// The atomic write of the content `next` supplies chunk by chunk (see
    /// [`write::write_in`]): missing parents created, final symlinks written through.
    pub(crate) fn write_from(
        self,
        path: &Path,
        cancel: &CancelFlag,
        big: bool,
        next: impl FnMut() -> EnvResult<Option<Bytes>>,
    ) -> EnvResult<WriteOutcome> {
        let target = match self {
            Scope::Host => {
                if let Some(parent) = path.parent() {
                    fs::create_dir_all("write", parent, path)?;
                }
                host_write_target(path)?
            }
            Scope::Beneath(_) => self.confined_write_target(path)?,
        };
        write::write_in(&target, self, path, cancel, big, next)
    }

    /// Where a write through `path` lands in a view: the directory handle the resolution ended
    /// on and what is there now. A symlink swapped in after resolution is resolved again, so the
    /// mode and owner copied are the real target's; one swapped in before the rename is
    /// replaced itself, never its target.
    fn confined_write_target(self, path: &Path) -> EnvResult<write::Target> {
        self.with_located("write", path, Final::Follow, true, |located| {
            let Some(name) = &located.name else {
                return Err(
                    EnvError::new(ErrorKind::IsADirectory, "write", "is a directory")
                        .with_path(path),
                );
            };
            let existing =
                match rustix::fs::statat(&located.dir, &**name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(stat) if fs::kind_of_mode(stat.st_mode) == FileKind::Symlink => {
                        return Ok(None);
                    }
                    Ok(stat) => Some(stat),
                    Err(Errno::NOENT) => None,
                    Err(errno) => return Err(errno_error("write", path, errno)),
                };
            let dir = located
                .dir
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| EnvError::io("write", path, e))?;
            Ok(Some(write::Target {
                dir,
                name: name.to_os_string(),
                existing,
            }))
        })
    }

    /// Opens the existing regular file `path` (a final symlink followed) for an update lock:
    /// read-only, without blocking on a FIFO, with its metadata.
    pub(crate) fn open_for_lock(self, path: &Path) -> EnvResult<(File, std::fs::Metadata)> {
        let (file, metadata) = self.open("lock", path, OFlags::RDONLY | OFlags::NONBLOCK)?;
        fs::require_regular("lock", path, &metadata)?;
        Ok((file, metadata))
    }
}

/// Where the env's write through `path` lands: the directory of `path`, or of the file its
/// final symlinks lead to (a chain is followed), opened, with the target's name and lstat.
fn host_write_target(path: &Path) -> EnvResult<write::Target> {
    let mut current = path.to_path_buf();
    for _ in 0..=fs::MAX_SYMLINK_HOPS {
        let (Some(parent), Some(name)) = (current.parent(), current.file_name()) else {
            return Err(
                EnvError::new(ErrorKind::IsADirectory, "write", "is a directory").with_path(path),
            );
        };
        let dir = rustix::fs::open(
            parent,
            HANDLE | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| errno_error("write", path, errno))?;
        let existing = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) if fs::kind_of_mode(stat.st_mode) == FileKind::Symlink => {
                match rustix::fs::readlinkat(&dir, name, Vec::new()) {
                    // Joined, not normalised: `..` after a symlinked directory must be resolved
                    // by the kernel, physically.
                    Ok(target) => current = parent.join(OsStr::from_bytes(target.as_bytes())),
                    // Swapped away meanwhile: look again.
                    Err(Errno::INVAL | Errno::NOENT) => {}
                    Err(errno) => return Err(errno_error("write", path, errno)),
                }
                continue;
            }
            Ok(stat) => Some(stat),
            Err(Errno::NOENT) => None,
            Err(errno) => return Err(errno_error("write", path, errno)),
        };
        return Ok(write::Target {
            dir,
            name: name.to_os_string(),
            existing,
        });
    }
    Err(EnvError::new(
        ErrorKind::Invalid,
        "write",
        "too many levels of symbolic links",
    )
    .with_path(path))
}

/// Removes everything inside the directory `name` of `parent`, never following a symlink; an
/// entry removed by someone else meanwhile is no error.
fn remove_contents(parent: &DirHandle, name: &OsStr) -> Result<(), Errno> {
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
    let fd = DirHandle::Fd(fd);
    for child in names {
        let stat = match rustix::fs::statat(&fd, child.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => continue,
            Err(errno) => return Err(errno),
        };
        let removed = if fs::kind_of_mode(stat.st_mode) == FileKind::Directory {
            match remove_contents(&fd, &child) {
                Ok(()) => rustix::fs::unlinkat(&fd, child.as_os_str(), AtFlags::REMOVEDIR),
                Err(errno) => Err(errno),
            }
        } else {
            rustix::fs::unlinkat(&fd, child.as_os_str(), AtFlags::empty())
        };
        match removed {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(errno) => return Err(errno),
        }
    }
    Ok(())
}
