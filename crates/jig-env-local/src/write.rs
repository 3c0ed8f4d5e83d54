//! The atomic write, for `LocalEnv` and its confined views alike: each finds the target's
//! directory and what is there now in its own way (a path, or a handle beneath a root), then
//! [`write_in`] does the rest relative to that directory's handle.
//!
//! The temp file is unnamed (`O_TMPFILE`) where the filesystem supports it, so a writer killed
//! mid-write leaves nothing behind; else it gets a fresh `O_EXCL` name carrying the writer's pid,
//! `.<name>.<pid>.<random>.jig-tmp`, and such files of writers no longer running are removed
//! before a new one is added.

use std::cell::RefCell;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use jig_env::{Bytes, EnvError, EnvResult, ErrorKind, FileKind, WriteOutcome};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::beneath::Scope;
use crate::fs::{self, CancelFlag};

/// Where a write lands, as the caller found it.
pub(crate) struct Target {
    /// A handle of the directory holding the target (`O_PATH` will do: the directory needs
    /// search and write permission, as for any save-by-rename, not read permission).
    pub(crate) dir: OwnedFd,
    /// The target's name in `dir`.
    pub(crate) name: OsString,
    /// The target's lstat; `None`: it does not exist yet. Never a symlink: the caller follows
    /// final symlinks to the file they lead to.
    pub(crate) existing: Option<rustix::fs::Stat>,
}

/// The atomic write of the contract in `target.dir`: the existing mode (and, where allowed,
/// owner) kept, data in a temp file in the same directory that is synced and renamed over the
/// target, then the directory synced. `next` supplies the content chunk by chunk (`None`:
/// complete; an error stops the write); `big` asks the disk to start on each chunk at once. On
/// any failure the temp file is removed and the target is untouched. The env replaces a FIFO,
/// socket or device like a file; a view refuses to, and looks at nothing through a symlink
/// swapped in meanwhile.
pub(crate) fn write_in(
    target: &Target,
    scope: Scope<'_>,
    path: &Path,
    cancel: &CancelFlag,
    big: bool,
    next: impl FnMut() -> EnvResult<Option<Bytes>>,
) -> EnvResult<WriteOutcome> {
    let Target {
        dir,
        name,
        existing,
    } = target;
    let mode = match existing {
        Some(stat) => match (fs::kind_of_mode(stat.st_mode), scope) {
            (FileKind::Directory, _) => {
                return Err(
                    EnvError::new(ErrorKind::IsADirectory, "write", "is a directory")
                        .with_path(path),
                );
            }
            (FileKind::Symlink | FileKind::Other, Scope::Beneath(_)) => {
                return Err(fs::not_regular("write", path));
            }
            _ => {
                // The rename would replace a file the user may not write (it needs only write
                // access to the directory): refuse it.
                let flags = match scope {
                    Scope::Host => AtFlags::empty(),
                    Scope::Beneath(_) => AtFlags::SYMLINK_NOFOLLOW,
                };
                rustix::fs::accessat(dir, name.as_os_str(), rustix::fs::Access::WRITE_OK, flags)
                    .map_err(|errno| errno_error(path, errno))?;
                stat.st_mode & 0o7777
            }
        },
        None => 0o666 & !fs::umask(),
    };
    let temp = TempFile::create(dir, name).map_err(|errno| errno_error(path, errno))?;
    let result = fill_and_rename(
        dir,
        &temp,
        name,
        Content { next, big },
        mode,
        existing.as_ref(),
        path,
        cancel,
    );
    if result.is_err() {
        temp.discard(dir);
    }
    result?;
    // Make the rename itself durable; a failure here (the directory cannot be opened for
    // reading, say) does not undo a completed write.
    if let Ok(dir) = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        let _ = rustix::fs::fsync(dir);
    }
    Ok(WriteOutcome {
        created: existing.is_none(),
    })
}

/// `data` as the content of a write: whether it is big (see [`write_in`]), and its chunks of
/// at most [`fs::IO_CHUNK`] bytes.
pub(crate) fn pieces(data: &Bytes) -> (bool, impl FnMut() -> EnvResult<Option<Bytes>> + '_) {
    let mut pieces = data.chunks(fs::IO_CHUNK).map(|piece| data.slice_ref(piece));
    (data.len() > fs::IO_CHUNK, move || Ok(pieces.next()))
}

fn errno_error(path: &Path, errno: Errno) -> EnvError {
    EnvError::io("write", path, io::Error::from(errno))
}

/// The temp file of a write: unnamed (`O_TMPFILE`) where the filesystem supports it, so a
/// writer killed mid-write leaves nothing behind; else a fresh `O_EXCL` name.
struct TempFile {
    file: File,
    /// The name it has in the directory, once it has one.
    name: RefCell<Option<OsString>>,
}

impl TempFile {
    fn create(dir: &OwnedFd, target: &OsStr) -> Result<Self, Errno> {
        #[cfg(target_os = "linux")]
        if proc_fd_available()
            && let result = rustix::fs::openat(
                dir,
                ".",
                OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )
        {
            match result {
                Ok(fd) => {
                    return Ok(Self {
                        file: File::from(fd),
                        name: RefCell::new(None),
                    });
                }
                // The filesystem has no unnamed files: use a named one.
                Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL | Errno::NOENT) => {}
                Err(errno) => return Err(errno),
            }
        }
        Self::open_named(dir, target)
    }

    fn open_named(dir: &OwnedFd, target: &OsStr) -> Result<Self, Errno> {
        // Without unnamed files a writer killed mid-write leaves its temp file: remove those
        // of dead writers before adding one.
        remove_stale_temps(dir, target);
        loop {
            let name = temp_name(target);
            // O_CREAT|O_EXCL: the name is fresh and a symlink planted at it is never followed.
            match rustix::fs::openat(
                dir,
                name.as_os_str(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            ) {
                Ok(fd) => {
                    return Ok(Self {
                        file: File::from(fd),
                        name: RefCell::new(Some(name)),
                    });
                }
                Err(Errno::EXIST) => {}
                Err(errno) => return Err(errno),
            }
        }
    }

    /// Gives the file a name in `dir` (for an unnamed one: links it under a fresh temp name).
    fn link(&self, dir: &OwnedFd, target: &OsStr) -> Result<OsString, Errno> {
        if let Some(name) = self.name.borrow().as_ref() {
            return Ok(name.clone());
        }
        let proc_path = format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&self.file)
        );
        loop {
            let name = temp_name(target);
            match rustix::fs::linkat(
                rustix::fs::CWD,
                proc_path.as_str(),
                dir,
                name.as_os_str(),
                AtFlags::SYMLINK_FOLLOW,
            ) {
                Ok(()) => {
                    *self.name.borrow_mut() = Some(name.clone());
                    return Ok(name);
                }
                Err(Errno::EXIST) => {}
                Err(errno) => return Err(errno),
            }
        }
    }

    fn discard(&self, dir: &OwnedFd) {
        if let Some(name) = self.name.borrow_mut().take() {
            let _ = rustix::fs::unlinkat(dir, name.as_os_str(), AtFlags::empty());
        }
    }
}

/// Whether `/proc/self/fd` can name an open file (needed to link an unnamed temp file).
#[cfg(target_os = "linux")]
fn proc_fd_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| Path::new("/proc/self/fd").is_dir())
}

/// Removes `target`'s temp files in `dir` left by writers that are no longer running (the
/// writer's pid is part of the name). Best effort: anything unreadable is left alone, and so is
/// a file whose pid now belongs to another running process.
fn remove_stale_temps(dir: &OwnedFd, target: &OsStr) {
    let Ok(handle) = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let Ok(entries) = rustix::fs::Dir::read_from(&handle) else {
        return;
    };
    let mut prefix = b".".to_vec();
    prefix.extend_from_slice(target.as_bytes());
    prefix.push(b'.');
    let own = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name().to_bytes();
        let Some(middle) = name
            .strip_prefix(prefix.as_slice())
            .and_then(|rest| rest.strip_suffix(b".jig-tmp"))
        else {
            continue;
        };
        // `<pid>.<random>`
        let Some(pid) = middle
            .split(|&b| b == b'.')
            .next()
            .and_then(|pid| std::str::from_utf8(pid).ok())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let dead = pid != own
            && i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
                .is_some_and(|pid| rustix::process::test_kill_process(pid) == Err(Errno::SRCH));
        if dead {
            let _ = rustix::fs::unlinkat(dir, entry.file_name(), AtFlags::empty());
        }
    }
}

/// `.<target>.<pid>.XXXXXXXXXX.jig-tmp`: the writer's pid, then a random part.
fn temp_name(target: &OsStr) -> OsString {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| {
                u64::from(elapsed.subsec_nanos()) ^ elapsed.as_secs()
            }),
    );
    let random = hasher.finish() & 0xff_ffff_ffff;
    let mut name = OsString::from(".");
    name.push(target);
    name.push(format!(".{}.{random:010x}.jig-tmp", std::process::id()));
    name
}

/// The content of a write: `next` supplies it chunk by chunk; `big` asks the disk to start on
/// each chunk at once.
struct Content<F> {
    next: F,
    big: bool,
}

#[expect(
    clippy::too_many_arguments,
    reason = "the steps of one write share all of its state"
)]
fn fill_and_rename(
    dir: &OwnedFd,
    temp: &TempFile,
    name: &OsStr,
    content: Content<impl FnMut() -> EnvResult<Option<Bytes>>>,
    mode: u32,
    existing: Option<&rustix::fs::Stat>,
    path: &Path,
    cancel: &CancelFlag,
) -> EnvResult<()> {
    let io_error = |error: io::Error| EnvError::io("write", path, error);
    let mut file = &temp.file;
    let mut written = 0_u64;
    let Content { mut next, big } = content;
    while let Some(chunk) = next()? {
        fs::check_cancel("write", path, cancel)?;
        file.write_all(&chunk).map_err(io_error)?;
        if big {
            // A big write: the disk starts on each chunk while the next is copied.
            fs::start_writeback(&temp.file, written, chunk.len());
        }
        written += chunk.len() as u64;
    }
    temp.file
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(io_error)?;
    if let Some(stat) = existing
        && (stat.st_uid != rustix::process::geteuid().as_raw()
            || stat.st_gid != rustix::process::getegid().as_raw())
    {
        // Keep the owner when allowed (root, or a group we are in); otherwise the file
        // becomes ours, as with any editor that saves by rename. chown clears set-id bits:
        // restore the mode.
        let _ = std::os::unix::fs::fchown(&temp.file, Some(stat.st_uid), Some(stat.st_gid));
        let _ = temp
            .file
            .set_permissions(std::fs::Permissions::from_mode(mode));
    }
    temp.file.sync_all().map_err(io_error)?;
    fs::check_cancel("write", path, cancel)?;
    let temp_name = temp
        .link(dir, name)
        .map_err(|errno| io_error(io::Error::from(errno)))?;
    rustix::fs::renameat(dir, temp_name.as_os_str(), dir, name)
        .map_err(|errno| io_error(io::Error::from(errno)))?;
    // Renamed: the temp name is gone.
    *temp.name.borrow_mut() = None;
    Ok(())
}

#[cfg(test)]
mod stale_temp_tests {
    use super::*;

    /// A pid no process has right now.
    fn dead_pid() -> u32 {
        (100_000..4_000_000_u32)
            .rev()
            .step_by(7919)
            .find(|&pid| {
                rustix::process::Pid::from_raw(pid.cast_signed())
                    .is_some_and(|pid| rustix::process::test_kill_process(pid) == Err(Errno::SRCH))
            })
            .expect("some pid is free")
    }

    #[test]
    fn temp_files_of_dead_writers_of_the_same_target_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dead_pid();
        let own = std::process::id();
        let names = [
            format!(".a.txt.{dead}.00000000ab.jig-tmp"),
            format!(".a.txt.{own}.00000000cd.jig-tmp"),
            format!(".b.txt.{dead}.00000000ef.jig-tmp"),
            ".a.txt.x9k2Lm.jig-tmp".to_owned(),
            "a.txt".to_owned(),
        ];
        for name in &names {
            std::fs::write(dir.path().join(name), "partial").unwrap();
        }
        let handle = rustix::fs::open(
            dir.path(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap();
        remove_stale_temps(&handle, OsStr::new("a.txt"));
        let left: Vec<bool> = names
            .iter()
            .map(|name| dir.path().join(name).exists())
            .collect();
        // Only the dead writer's temp file of a.txt goes: a live writer's, another target's,
        // a name without a pid and the target stay.
        assert_eq!(left, [false, true, true, true, true]);
    }

    #[test]
    fn temp_names_carry_the_writers_pid() {
        let name = temp_name(OsStr::new("a.txt"));
        let name = name.to_str().unwrap();
        let pid = std::process::id().to_string();
        assert!(
            name.starts_with(&format!(".a.txt.{pid}.")) && name.ends_with(".jig-tmp"),
            "{name}"
        );
    }
}
