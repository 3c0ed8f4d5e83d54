//! Reading the host tree under one root: listing directories, reading files beneath the root
//! without following any symbolic link, reading ignore files, and telling filesystems whose
//! changes the kernel does not report.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read as _};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use jig_env::FileKind;
use jig_search::IgnoreDir;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};

use crate::trigram::{Content, Summarizer};

/// The root of an index, opened once.
#[derive(Debug)]
pub(crate) struct Scanner {
    root: PathBuf,
    root_fd: OwnedFd,
    root_device: u64,
    max_file_bytes: u64,
}

impl Scanner {
    /// Opens the directory `root` (canonical).
    pub(crate) fn open(root: &Path, max_file_bytes: u64) -> io::Result<Self> {
        let root_fd = rustix::fs::open(
            root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let root_device = rustix::fs::fstat(&root_fd)?.st_dev;
        Ok(Self {
            root: root.to_path_buf(),
            root_fd,
            root_device,
            max_file_bytes,
        })
    }

    /// Opens the regular file at `relative` beneath the root, no symbolic link followed on the
    /// way, never blocking on a FIFO swapped in; `None` when that is not possible (as the cold
    /// search skips a file it cannot open).
    pub(crate) fn open_file(&self, relative: &Path) -> Option<File> {
        let fd = rustix::fs::openat2(
            &self.root_fd,
            relative,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        )
        .ok()?;
        let stat = rustix::fs::fstat(&fd).ok()?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return None;
        }
        Some(File::from(fd))
    }

    /// The summary of the file at `relative`: unknown when it cannot be read whole, is larger
    /// than the limit, or has other names (a change through another hard link is not reported
    /// on this directory).
    pub(crate) fn summarize(&self, relative: &Path, summarizer: &mut Summarizer) -> Content {
        let Some(file) = self.open_file(relative) else {
            return Content::Unknown;
        };
        let Ok(metadata) = file.metadata() else {
            return Content::Unknown;
        };
        if std::os::unix::fs::MetadataExt::nlink(&metadata) > 1 {
            return Content::Unknown;
        }
        let mut bytes = Vec::with_capacity(
            usize::try_from(metadata.len().min(self.max_file_bytes)).unwrap_or(0) + 1,
        );
        match file.take(self.max_file_bytes + 1).read_to_end(&mut bytes) {
            Ok(read) if (read as u64) <= self.max_file_bytes => summarizer.summarize(&bytes),
            _ => Content::Unknown,
        }
    }

    /// The kind of the entry at `relative` (not followed when it is a symbolic link).
    pub(crate) fn kind_at(&self, relative: &Path) -> io::Result<FileKind> {
        let stat = rustix::fs::statat(&self.root_fd, relative, AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(kind_of(FileType::from_raw_mode(stat.st_mode)))
    }

    /// The entries of the directory at `relative` (`.git` included: the caller decides), with
    /// their kinds, not followed.
    pub(crate) fn list_dir(&self, relative: &Path) -> io::Result<Vec<(OsString, FileKind)>> {
        #[expect(
            clippy::disallowed_methods,
            reason = "the index lists the host tree it watches"
        )]
        let listing = std::fs::read_dir(self.root.join(relative))?;
        let mut entries = Vec::new();
        for entry in listing {
            let entry = entry?;
            let kind = match entry.file_type() {
                Ok(kind) if kind.is_symlink() => FileKind::Symlink,
                Ok(kind) if kind.is_dir() => FileKind::Directory,
                Ok(kind) if kind.is_file() => FileKind::File,
                _ => FileKind::Other,
            };
            entries.push((entry.file_name(), kind));
        }
        Ok(entries)
    }

    /// Why the directory at `relative` cannot be trusted to report its changes, if it cannot:
    /// a network or user-space filesystem mounted there.
    pub(crate) fn untrusted_mount(&self, relative: &Path) -> Option<String> {
        let stat = rustix::fs::statat(&self.root_fd, relative, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        if stat.st_dev == self.root_device && !relative.as_os_str().is_empty() {
            return None;
        }
        remote_filesystem(&self.root.join(relative))
    }

    /// The ignore files of the directory at `relative`, given its listing's names.
    pub(crate) fn ignore_dir(&self, relative: &Path, names: &[&std::ffi::OsStr]) -> IgnoreDir {
        read_ignore_dir(&self.root.join(relative), Some(names))
    }
}

/// Reads the ignore files of the absolute directory `dir` (as the cold walk does: a file the
/// listing does not contain is not probed).
pub(crate) fn read_ignore_dir(dir: &Path, names: Option<&[&std::ffi::OsStr]>) -> IgnoreDir {
    let has = |name: &str| names.is_none_or(|names| names.contains(&std::ffi::OsStr::new(name)));
    #[expect(
        clippy::disallowed_methods,
        reason = "the index reads the host tree's ignore files"
    )]
    let read = |path: PathBuf| std::fs::read(path).ok();
    let ignore = if has(".ignore") {
        read(dir.join(".ignore"))
    } else {
        None
    };
    let git_ignore = if has(".gitignore") {
        read(dir.join(".gitignore"))
    } else {
        None
    };
    let git_exclude = if has(".git") {
        read(dir.join(".git/info/exclude"))
    } else {
        None
    };
    IgnoreDir::from_contents(
        dir,
        ignore.as_deref(),
        git_ignore.as_deref(),
        git_exclude.as_deref(),
    )
}

fn kind_of(kind: FileType) -> FileKind {
    match kind {
        FileType::Symlink => FileKind::Symlink,
        FileType::Directory => FileKind::Directory,
        FileType::RegularFile => FileKind::File,
        _ => FileKind::Other,
    }
}

/// The name of the filesystem at `path` when the kernel does not see its changes (a network
/// or FUSE filesystem: changes made on another machine, or by the server, send no event).
pub(crate) fn remote_filesystem(path: &Path) -> Option<String> {
    let stat = rustix::fs::statfs(path).ok()?;
    #[expect(
        clippy::cast_sign_loss,
        reason = "f_type's width and sign differ between targets; the magic numbers are u32"
    )]
    let magic = (stat.f_type as i64 as u64) & 0xFFFF_FFFF;
    let name = match magic {
        0x6969 => "NFS",
        0x517B => "SMB",
        0xFF53_4D42 => "CIFS",
        0xFE53_4D42 => "SMB2",
        0x6573_5546 => "FUSE",
        0x0102_1997 => "9P",
        0x7375_7245 => "Coda",
        0x5346_414F => "AFS",
        0x00C3_6400 => "Ceph",
        _ => return None,
    };
    Some(format!(
        "{} is on a {name} filesystem, whose changes are not reliably reported",
        path.display()
    ))
}
