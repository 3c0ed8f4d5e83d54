//! The file-level parts of the operations in `files`: reading a file already opened (whole, in
//! chunks, its start, a line window), `mkdir -p`, the umask, write-back hints and the private
//! temp directory.
//!
//! Long operations (`read`, `read_lines`, `write`) check a cancellation flag between buffer
//! fills, so dropping the `LocalEnv` future stops the work soon instead of scanning on.

use std::fs::{self, File, Permissions};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use jig_env::{
    Bytes, EnvError, EnvResult, ErrorKind, FileHead, FileInfo, FileKind, LineScanner, LineWindow,
    LinesRead,
};

/// Read size for streaming scans: large enough that syscalls are a rounding error, small
/// enough to stay in cache.
const SCAN_BUFFER: usize = 512 * 1024;
/// Whole-file reads and writes move this much between two cancellation checks.
pub(crate) const IO_CHUNK: usize = 8 * 1024 * 1024;
/// Linux's limit of symlinks followed in one resolution.
pub(crate) const MAX_SYMLINK_HOPS: u32 = 40;

/// Set when the future that started a blocking operation is dropped.
pub(crate) type CancelFlag = AtomicBool;

pub(crate) fn check_cancel(
    operation: &'static str,
    path: &Path,
    cancel: &CancelFlag,
) -> EnvResult<()> {
    if cancel.load(Ordering::Relaxed) {
        return Err(EnvError::aborted(operation).with_path(path));
    }
    Ok(())
}

fn io_error(operation: &'static str, path: &Path, error: io::Error) -> EnvError {
    EnvError::io(operation, path, error)
}

pub(crate) fn kind_of(file_type: fs::FileType) -> FileKind {
    if file_type.is_symlink() {
        FileKind::Symlink
    } else if file_type.is_dir() {
        FileKind::Directory
    } else if file_type.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    }
}

/// The kind of a file from its `st_mode`.
pub(crate) fn kind_of_mode(mode: u32) -> FileKind {
    match rustix::fs::FileType::from_raw_mode(mode) {
        rustix::fs::FileType::RegularFile => FileKind::File,
        rustix::fs::FileType::Directory => FileKind::Directory,
        rustix::fs::FileType::Symlink => FileKind::Symlink,
        _ => FileKind::Other,
    }
}

pub(crate) fn info(path: &Path, metadata: &fs::Metadata) -> FileInfo {
    FileInfo {
        path: path.to_path_buf(),
        kind: kind_of(metadata.file_type()),
        size: metadata.len(),
        modified: metadata.modified().ok(),
        mode: metadata.mode() & 0o7777,
        file_id: Some((metadata.dev(), metadata.ino())),
    }
}

/// Refuses anything but a regular file: a directory as `IsADirectory`, a FIFO, socket or device
/// as `Invalid`.
pub(crate) fn require_regular(
    operation: &'static str,
    path: &Path,
    metadata: &fs::Metadata,
) -> EnvResult<()> {
    if metadata.is_dir() {
        return Err(
            EnvError::new(ErrorKind::IsADirectory, operation, "is a directory").with_path(path),
        );
    }
    if !metadata.is_file() {
        return Err(not_regular(operation, path));
    }
    Ok(())
}

/// The refusal of a FIFO, socket or device where a regular file is needed.
pub(crate) fn not_regular(operation: &'static str, path: &Path) -> EnvError {
    EnvError::new(
        ErrorKind::Invalid,
        operation,
        "not a regular file (a FIFO, socket or device); refused",
    )
    .with_path(path)
}

/// `read` of a file already opened (`path` names it in errors).
pub(crate) fn read_file(
    file: File,
    path: &Path,
    cancel: &CancelFlag,
    parallel_min: u64,
) -> EnvResult<Vec<u8>> {
    let hint = file.metadata().map_or(0, |metadata| metadata.len());
    let mut out = Vec::new();
    if hint >= parallel_min
        && let Ok(len) = usize::try_from(hint)
    {
        // Filling fresh memory is dominated by page faults, which several threads take in
        // parallel; the rest (anything appended meanwhile) is read sequentially below.
        match read_parallel(&file, len, cancel) {
            Ok(Some(whole)) => out = whole,
            // The file shrank while being read: read it again from the start, sequentially.
            Ok(None) => {}
            Err(error) => {
                check_cancel("read", path, cancel)?;
                return Err(io_error("read", path, error));
            }
        }
    } else {
        out.reserve_exact(usize::try_from(hint).unwrap_or(0).saturating_add(1));
    }
    let mut reader = file;
    reader
        .seek(SeekFrom::Start(out.len() as u64))
        .map_err(|error| io_error("read", path, error))?;
    loop {
        check_cancel("read", path, cancel)?;
        let read = (&mut reader)
            .take(IO_CHUNK as u64)
            .read_to_end(&mut out)
            .map_err(|error| io_error("read", path, error))?;
        if read == 0 {
            return Ok(out);
        }
    }
}

/// The first `len` bytes of `file`, read by up to four threads with positioned reads, or
/// `None` when the file turned out shorter. Stops early (with an `Interrupted` error) when
/// `cancel` is set.
fn read_parallel(file: &File, len: usize, cancel: &CancelFlag) -> io::Result<Option<Vec<u8>>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, 4);
    // Zeroed memory from the allocator is fresh pages, faulted in by the reads themselves.
    let mut buffer = vec![0_u8; len];
    let step = len.div_ceil(threads).max(1);
    let complete = std::thread::scope(|scope| {
        let mut parts = buffer.chunks_mut(step).enumerate();
        let first = parts.next();
        let handles: Vec<_> = parts
            .map(|(index, part)| scope.spawn(move || fill_at(file, part, index * step, cancel)))
            .collect();
        let mut complete = first.map_or(Ok(true), |(_, part)| fill_at(file, part, 0, cancel));
        for handle in handles {
            let result = handle
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("a reading thread panicked")));
            complete = match (complete, result) {
                (Err(error), _) | (_, Err(error)) => Err(error),
                (Ok(a), Ok(b)) => Ok(a && b),
            };
        }
        complete
    })?;
    Ok(complete.then_some(buffer))
}

/// Fills `part` from `offset`; `false` when the file ended first.
fn fill_at(file: &File, part: &mut [u8], offset: usize, cancel: &CancelFlag) -> io::Result<bool> {
    let mut filled = 0;
    while filled < part.len() {
        if cancel.load(Ordering::Relaxed) {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "cancelled"));
        }
        let end = part.len().min(filled + IO_CHUNK);
        match file.read_at(&mut part[filled..end], (offset + filled) as u64) {
            Ok(0) => return Ok(false),
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(true)
}

/// Reads the file already opened (`path` names it in errors) in chunks of `chunk` bytes handed
/// to `send`, which returns `false` when nobody takes them any more (then the read stops).
pub(crate) fn read_file_chunks(
    mut file: File,
    path: &Path,
    cancel: &CancelFlag,
    chunk: usize,
    mut send: impl FnMut(Bytes) -> bool,
) -> EnvResult<u64> {
    // Buffers are sized by what the file says is left, so a small file costs a small buffer
    // (a buffer's whole capacity lives on in the chunk sent).
    let size = file.metadata().map_or(0, |metadata| metadata.len());
    let mut total = 0_u64;
    loop {
        check_cancel("read", path, cancel)?;
        let left = usize::try_from(size.saturating_sub(total)).unwrap_or(usize::MAX);
        let mut buffer = Vec::with_capacity(left.saturating_add(1).min(chunk));
        let read = (&mut file)
            .take(chunk as u64)
            .read_to_end(&mut buffer)
            .map_err(|error| io_error("read", path, error))?;
        if read == 0 {
            return Ok(total);
        }
        total += read as u64;
        if !send(Bytes::from(buffer)) {
            return Err(EnvError::aborted("read").with_path(path));
        }
        if read < chunk {
            // `take(chunk).read_to_end` stops short only at the end of the file.
            return Ok(total);
        }
    }
}

/// `read_start` of a file already opened (`path` names it in errors).
pub(crate) fn read_start_file(file: File, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
    let mut out = Vec::with_capacity(max_bytes.min(1024 * 1024));
    file.take(max_bytes as u64)
        .read_to_end(&mut out)
        .map_err(|error| io_error("read", path, error))?;
    Ok(out)
}

/// The `read_head` answer for a file already opened (without blocking) and its metadata.
pub(crate) fn head_of_file(
    file: File,
    path: &Path,
    metadata: &fs::Metadata,
    max_bytes: usize,
) -> EnvResult<FileHead> {
    let opened = info(path, metadata);
    if opened.kind != FileKind::File {
        return Ok(FileHead {
            info: opened,
            bytes: Vec::new(),
            complete: false,
        });
    }
    // One byte more than asked tells a file of exactly `max_bytes` from a longer one.
    let limit = max_bytes.saturating_add(1);
    let expected = usize::try_from(metadata.len()).unwrap_or(usize::MAX);
    let mut bytes = Vec::with_capacity(limit.min(expected.saturating_add(1)).min(1024 * 1024));
    file.take(limit as u64)
        .read_to_end(&mut bytes)
        .map_err(|error| io_error("read", path, error))?;
    let complete = bytes.len() <= max_bytes;
    bytes.truncate(max_bytes);
    Ok(FileHead {
        info: opened,
        bytes,
        complete,
    })
}

/// `read_lines` of a file already opened (`path` names it in errors).
pub(crate) fn read_lines_file(
    mut file: File,
    path: &Path,
    window: &LineWindow,
    cancel: &CancelFlag,
    parallel_min: u64,
) -> EnvResult<LinesRead> {
    let mut scanner = LineScanner::new(window);
    let mut buffer = vec![0_u8; SCAN_BUFFER];
    let mut counted_in_parallel = false;
    loop {
        check_cancel("read", path, cancel)?;
        if scanner.is_full() && !counted_in_parallel {
            // The window is full and only counting is left: for a big rest, count it on
            // several threads with positioned reads, then go on from its end (for anything
            // appended meanwhile).
            counted_in_parallel = true;
            let start = scanner.bytes_seen();
            let end = file
                .metadata()
                .map_err(|error| io_error("read", path, error))?
                .len();
            if end > start && end - start >= parallel_min {
                let counted = count_parallel(&file, start, end, cancel)
                    .map_err(|error| io_error("read", path, error))?;
                check_cancel("read", path, cancel)?;
                scanner.add_count(counted.newlines, counted.tail, counted.bytes);
                file.seek(SeekFrom::Start(start + counted.bytes))
                    .map_err(|error| io_error("read", path, error))?;
            }
        }
        let position = scanner.bytes_seen();
        if let Some(hole) = hole_at(&file, position) {
            // A hole reads as zeros, which hold no line break: count it without reading it.
            scanner.feed_zeros(hole);
            file.seek(SeekFrom::Start(position + hole))
                .map_err(|error| io_error("read", path, error))?;
            continue;
        }
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(io_error("read", path, error)),
        };
        scanner.feed(&buffer[..read]);
    }
    Ok(scanner.finish())
}

/// From this many bytes left to count, `read_lines` counts on several threads.
pub(crate) const PARALLEL_COUNT_MIN: u64 = 32 * 1024 * 1024;
/// Whole-file reads of at least this size run on several threads (see `read_parallel`).
pub(crate) const PARALLEL_READ_MIN: u64 = 32 * 1024 * 1024;

/// Newlines in a byte range.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counted {
    newlines: u64,
    /// Bytes after the last newline of the range, when it has one.
    tail: Option<u64>,
    bytes: u64,
}

impl Counted {
    fn then(self, next: Self) -> Self {
        Self {
            newlines: self.newlines + next.newlines,
            tail: match next.tail {
                Some(tail) => Some(tail),
                None => self.tail.map(|tail| tail + next.bytes),
            },
            bytes: self.bytes + next.bytes,
        }
    }
}

/// Counts newlines in `[start, end)` of `file` on up to four threads (positioned reads, so the
/// shared descriptor's offset is untouched). Stops early, short, when the range shrinks (a
/// truncated file) or the caller cancels.
fn count_parallel(file: &File, start: u64, end: u64, cancel: &CancelFlag) -> io::Result<Counted> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, 4) as u64;
    let step = (end - start).div_ceil(threads);
    let ranges: Vec<(u64, u64)> = (0..threads)
        .map(|index| (start + index * step, (start + (index + 1) * step).min(end)))
        .filter(|(from, to)| from < to)
        .collect();
    let results: Vec<io::Result<Counted>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .iter()
            .skip(1)
            .map(|&(from, to)| scope.spawn(move || count_range(file, from, to, cancel)))
            .collect();
        let mut results = vec![ranges.first().map_or_else(
            || Ok(Counted::default()),
            |&(from, to)| count_range(file, from, to, cancel),
        )];
        for handle in handles {
            results.push(
                handle
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("a counting thread panicked"))),
            );
        }
        results
    });
    let mut total = Counted::default();
    for (result, (from, to)) in results.into_iter().zip(&ranges) {
        let counted = result?;
        let complete = counted.bytes == to - from;
        total = total.then(counted);
        if !complete {
            break; // the file shrank: later ranges would leave a gap
        }
    }
    Ok(total)
}

fn count_range(file: &File, from: u64, to: u64, cancel: &CancelFlag) -> io::Result<Counted> {
    let mut buffer = vec![0_u8; SCAN_BUFFER];
    let mut counted = Counted::default();
    let mut position = from;
    while position < to && !cancel.load(Ordering::Relaxed) {
        if let Some(hole) = hole_at(file, position) {
            let hole = hole.min(to - position);
            counted = counted.then(Counted {
                newlines: 0,
                tail: None,
                bytes: hole,
            });
            position += hole;
            continue;
        }
        let want = usize::try_from(to - position)
            .unwrap_or(usize::MAX)
            .min(buffer.len());
        let read = match file.read_at(&mut buffer[..want], position) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let chunk = &buffer[..read];
        let next = Counted {
            newlines: memchr::memchr_iter(b'\n', chunk).count() as u64,
            tail: memchr::memrchr(b'\n', chunk).map(|last| (read - last - 1) as u64),
            bytes: read as u64,
        };
        counted = counted.then(next);
        position += read as u64;
    }
    Ok(counted)
}

/// The length of the hole (a sparse region, which reads as zeros) starting at `position`, if
/// there is one and the file system reports holes (`SEEK_DATA`); `None` when data starts at
/// `position`, at the end of the file, or when holes cannot be asked for. Moves the file's
/// offset: callers position explicitly afterwards or use positioned reads.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn hole_at(file: &File, position: u64) -> Option<u64> {
    match rustix::fs::seek(file, rustix::fs::SeekFrom::Data(position)) {
        Ok(data) => (data > position).then(|| data - position),
        // ENXIO: no data at or after `position`, so the rest of the file is one hole.
        Err(rustix::io::Errno::NXIO) => {
            let end = file.metadata().ok()?.len();
            (end > position).then(|| end - position)
        }
        Err(_) => None,
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn hole_at(_file: &File, _position: u64) -> Option<u64> {
    None
}

/// `mkdir -p` with the error kinds of the contract: a file in the way is `NotADirectory`.
pub(crate) fn create_dir_all(
    operation: &'static str,
    dir: &Path,
    reported: &Path,
) -> EnvResult<()> {
    match fs::create_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            // Something that is not a directory sits on the path (std reports EEXIST for it).
            match fs::symlink_metadata(dir) {
                Ok(metadata) if metadata.file_type().is_symlink() => Err(EnvError::new(
                    ErrorKind::Other,
                    operation,
                    "file exists (a dangling symlink is in the way)",
                )
                .with_path(reported)),
                _ => Err(
                    EnvError::new(ErrorKind::NotADirectory, operation, "not a directory")
                        .with_path(reported),
                ),
            }
        }
        Err(error) => Err(io_error(operation, reported, error)),
    }
}

/// The process umask, read once (from `/proc/self/status` on Linux, which leaves it
/// untouched; elsewhere by setting and restoring it, which is racy only against a concurrent
/// `umask` call).
pub(crate) fn umask() -> u32 {
    static UMASK: OnceLock<u32> = OnceLock::new();
    *UMASK.get_or_init(|| {
        if let Ok(status) = fs::read_to_string("/proc/self/status")
            && let Some(line) = status.lines().find(|line| line.starts_with("Umask:"))
            && let Ok(mask) = u32::from_str_radix(line["Umask:".len()..].trim(), 8)
        {
            return mask;
        }
        let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
        rustix::process::umask(old);
        old.bits()
    })
}

/// Starts writing `len` bytes at `offset` of `file` to disk without waiting for them, so the
/// `fsync` that ends a big write finds most of the data already on its way. Only a hint: any
/// error shows up again in that `fsync`.
#[expect(unsafe_code, reason = "sync_file_range has no safe wrapper")]
pub(crate) fn start_writeback(file: &File, offset: u64, len: usize) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: the descriptor stays open for the call (borrowed from `file`); the call reads
    // only its integer arguments and touches no memory of this process.
    let _ = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
}

/// Creates the private temp directory (`0700`) under the system temp dir.
pub(crate) fn new_private_dir() -> io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("jig-")
        .permissions(Permissions::from_mode(0o700))
        .tempdir_in(std::env::temp_dir())?;
    // Not subject to the umask: set exactly.
    fs::set_permissions(dir.path(), Permissions::from_mode(0o700))?;
    Ok(dir)
}

/// A new `0600` file in `dir`; `prefix` and `suffix` are checked by the caller.
pub(crate) fn create_temp_file(dir: &Path, prefix: &str, suffix: &str) -> EnvResult<PathBuf> {
    let file = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(suffix)
        .permissions(Permissions::from_mode(0o600))
        .tempfile_in(dir)
        .map_err(|error| io_error("tempfile", dir, error))?;
    let (_, path) = file
        .keep()
        .map_err(|error| io_error("tempfile", dir, error.error))?;
    Ok(path)
}

/// A new `0700` directory in `dir`; `prefix` is checked by the caller.
pub(crate) fn create_temp_dir(dir: &Path, prefix: &str) -> EnvResult<PathBuf> {
    let temp = tempfile::Builder::new()
        .prefix(prefix)
        .permissions(Permissions::from_mode(0o700))
        .tempdir_in(dir)
        .map_err(|error| io_error("tempdir", dir, error))?;
    let path = temp.keep();
    fs::set_permissions(&path, Permissions::from_mode(0o700))
        .map_err(|error| io_error("tempdir", &path, error))?;
    Ok(path)
}

/// `read` by path with the size from which the file is read on several threads.
#[cfg(test)]
fn read_with(path: &Path, cancel: &CancelFlag, parallel_min: u64) -> EnvResult<Vec<u8>> {
    let file = File::open(path).map_err(|error| io_error("read", path, error))?;
    read_file(file, path, cancel, parallel_min)
}

/// `read_lines` by path with the size from which the remaining count runs on several threads.
#[cfg(test)]
fn read_lines_with(
    path: &Path,
    window: &LineWindow,
    cancel: &CancelFlag,
    parallel_min: u64,
) -> EnvResult<LinesRead> {
    let file = File::open(path).map_err(|error| io_error("read", path, error))?;
    read_lines_file(file, path, window, cancel, parallel_min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_counting_agrees_with_the_sequential_scan() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let mut content = Vec::new();
        for index in 0..20_000_usize {
            content.extend(std::iter::repeat_n(b'a', index % 300));
            content.push(b'\n');
        }
        for ending in [&b""[..], b"tail", b"\n"] {
            let mut content = content.clone();
            content.extend_from_slice(ending);
            let path = dir.path().join("f");
            fs::write(&path, &content).unwrap();
            for start_line in [1, 7, 19_999, 20_001, 30_000] {
                let window = LineWindow {
                    start_line,
                    max_lines: 3,
                    max_bytes: 1000,
                };
                let sequential = read_lines_with(&path, &window, &cancel, u64::MAX).unwrap();
                let parallel = read_lines_with(&path, &window, &cancel, 0).unwrap();
                assert_eq!(
                    parallel, sequential,
                    "start {start_line}, ending {ending:?}"
                );
                assert_eq!(sequential.total_bytes, content.len() as u64);
            }
        }
    }

    /// A sparse file: text, holes and text again, counted without the holes gives the same
    /// lines as the scan of the same bytes from memory.
    #[test]
    fn holes_are_counted_without_being_read() {
        use std::os::unix::fs::FileExt as _;
        let dir = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let path = dir.path().join("sparse");
        let file = File::create(&path).unwrap();
        file.write_all_at(b"one\ntwo\n", 0).unwrap();
        file.write_all_at(b"\nthree\nfour", 5 * 1024 * 1024)
            .unwrap();
        file.write_all_at(b"five\n", 40 * 1024 * 1024).unwrap();
        file.set_len(48 * 1024 * 1024).unwrap();
        drop(file);
        let content = fs::read(&path).unwrap();
        for start_line in [1, 2, 3, 5, 6, 7, 8] {
            for max_lines in [1, 2, 100] {
                let window = LineWindow {
                    start_line,
                    max_lines,
                    max_bytes: 1000,
                };
                let expected = jig_env::lines_window(&content, &window);
                for parallel_min in [u64::MAX, 0, PARALLEL_COUNT_MIN] {
                    let read = read_lines_with(&path, &window, &cancel, parallel_min).unwrap();
                    assert_eq!(
                        read, expected,
                        "start {start_line}, max {max_lines}, parallel from {parallel_min}"
                    );
                }
            }
        }
    }

    #[test]
    fn parallel_reading_returns_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let path = dir.path().join("f");
        for len in [0_usize, 1, 7, 4096, 1_000_003] {
            let content: Vec<u8> = (0..len).map(|i| u8::try_from(i % 251).unwrap()).collect();
            fs::write(&path, &content).unwrap();
            let parallel = read_with(&path, &cancel, 0).unwrap();
            assert_eq!(parallel.len(), content.len(), "length {len}");
            assert!(parallel == content, "content of length {len}");
        }
    }

    #[test]
    fn parallel_reading_notices_a_file_shorter_than_expected() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let path = dir.path().join("f");
        fs::write(&path, vec![b'x'; 10_000]).unwrap();
        let file = File::open(&path).unwrap();
        assert_eq!(read_parallel(&file, 10_001, &cancel).unwrap(), None);
        let whole = read_parallel(&file, 10_000, &cancel).unwrap().unwrap();
        assert_eq!(whole, vec![b'x'; 10_000]);
        cancel.store(true, Ordering::Relaxed);
        assert!(read_parallel(&file, 10_000, &cancel).is_err());
        let error = read_with(&path, &cancel, 0).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Aborted);
    }

    #[test]
    fn counted_ranges_combine_in_order() {
        let a = Counted {
            newlines: 2,
            tail: Some(3),
            bytes: 10,
        };
        let b = Counted {
            newlines: 0,
            tail: None,
            bytes: 4,
        };
        let c = Counted {
            newlines: 1,
            tail: Some(0),
            bytes: 5,
        };
        assert_eq!(
            a.then(b),
            Counted {
                newlines: 2,
                tail: Some(7),
                bytes: 14
            }
        );
        let a = Counted {
            newlines: 2,
            tail: Some(3),
            bytes: 10,
        };
        assert_eq!(
            a.then(c),
            Counted {
                newlines: 3,
                tail: Some(0),
                bytes: 15
            }
        );
    }

    #[test]
    fn umask_is_plausible() {
        assert_eq!(umask() & !0o777, 0);
    }
}
