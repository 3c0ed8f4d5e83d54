//! `LocalEnv`: the host machine's filesystem and processes behind [`jig_env::ExecutionEnv`].
//!
//! ```
//! use std::path::Path;
//! use jig_env::ExecutionEnv;
//! use jig_env_local::LocalEnv;
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! let env = LocalEnv::new();
//! let file = dir.path().join("task.txt");
//! env.write(&file, "status: draft\n".into()).await.unwrap();
//! assert_eq!(env.read(&file).await.unwrap(), b"status: draft\n");
//! env.cleanup().await;
//! # });
//! ```
//!
//! With the feature `test-support`, `test_support` has fixtures for containment tests on the
//! host filesystem (a symlink race).
//!
//! # How it works
//! - **One implementation for the env and its views**: each filesystem operation is written
//!   once (the `files` module), against a directory handle and a name in it. The env hands the
//!   kernel the whole path (`AT_FDCWD`), so symlinks are followed as by any program; a view
//!   resolves the path beneath its roots first (see "Containment" below).
//! - **Where the work runs**: the short, bounded operations (`canonical_path`, `file_info`,
//!   `stat`, `read_link`, and `read_head`/`read_start` of at most 128 KiB) run on the calling
//!   thread: on a local filesystem they take a few microseconds, less than handing them to
//!   another thread and waking the caller again (two such hand-offs were a third of the round
//!   trip of a small `read` through `jig mcp`). Everything that grows with the data (whole
//!   reads, line scans, writes, directory listings, walks, search, removal) runs on tokio's
//!   blocking pool (`spawn_blocking`), so the runtime does not stall on a big file or a slow
//!   disk. The price: on a hung network mount even a `stat` blocks, and then it blocks a
//!   runtime worker rather than a pool thread.
//! - **Cancellation**: dropping a future cannot stop a blocking syscall already running, so the
//!   long operations (`read`, `read_lines`, `write`) check a flag that is set when their future
//!   is dropped, between buffer fills (every 512 KiB scanned, 8 MiB read or written) and stop
//!   there. A cancelled `write` removes its temp file and leaves the target untouched; the
//!   short operations (stat, rename, mkdir, …) simply run to completion.
//! - **`read`** of a file of 32 MiB or more runs positioned reads on up to four threads:
//!   filling fresh memory is bound by page faults, which threads take in parallel (half the
//!   time for 200 MB here). Anything appended meanwhile is read on sequentially; a file that
//!   shrank meanwhile is read again from the start.
//! - **`read_lines`** streams the file once through a 512 KiB buffer, finding line ends with
//!   `memchr`; only the window's lines are kept, so memory is bounded by the window however
//!   big the file is. Counting the total lines still reads the whole file; once the window is
//!   full and at least 32 MiB are left, the rest is counted on up to four threads with
//!   positioned reads (then anything appended meanwhile is read sequentially).
//!   The window itself is computed by [`jig_env::LineScanner`], as in every env.
//! - **`walk`/`search`** list the tree with `ignore`'s parallel walker, then search the sorted
//!   file list on a pool of threads, with `jig-search`'s globs, ignore rules, per-file searcher
//!   and result assembler (the same parts as every env, hence the same results).
//! - **`write`** is atomic: missing parents are created; a final symlink (or a chain of them)
//!   is resolved first so its target is replaced and the link survives; a file the user may
//!   not write is refused with `PermissionDenied` (checked with `access(W_OK)`, because the
//!   rename would otherwise replace it); the data goes to a temp file in the target's
//!   directory: unnamed (`O_TMPFILE`) where the filesystem supports it, so a killed writer
//!   leaves nothing, else a fresh `O_EXCL` name `.<name>.<pid>.<random>.jig-tmp`, created after
//!   removing such files of writers no longer running. It gets the existing file's permission
//!   bits (new files: `0666 & !umask`) and, where permitted, its owner, is `fsync`ed, given a
//!   name if it has none, and renamed over the target; then the directory is synced. For a big
//!   write the kernel is asked to start writing each 8 MiB chunk to disk as soon as it is
//!   copied (`sync_file_range`), so the final `fsync` waits for less. On any error the temp
//!   file is removed. Only a crash of the whole process between naming and renaming the temp
//!   file can leave one behind (recognisable by its `.jig-tmp` suffix); the target is then
//!   untouched. Like every save-by-rename, this replaces the inode: other hard links to the old
//!   file keep the old content, and extended attributes/ACLs are not copied. The env and its
//!   views (below) share this write: each finds the target's directory in its own way, then
//!   every step is relative to a handle of that directory.
//! - **`read_chunks` / `write_chunks`** (for `jig env serve`): the same read and atomic write,
//!   in a view too, run on the blocking pool with at most four 1 MiB chunks waiting between it
//!   and the caller, so memory stays bounded whatever the file's size. A chunked write whose
//!   content stops before its end (the source fails, or the future is dropped) removes its
//!   temp file and leaves the target untouched.
//! - **Private temp directory**: one `jig-XXXXXX` directory (`0700`) per env under the system
//!   temp dir (`$TMPDIR` respected), created on first use, removed by `cleanup` and, as a
//!   fallback, when the env is dropped.
//! - **Processes** (`exec`): see the `exec` module; background processes a command leaves
//!   running are tracked per env and killed by `cleanup`.
//!
//! # Containment: confined views
//! `LocalEnv` itself operates on the paths it is given. [`ExecutionEnv::beneath`] returns a
//! view, running the same operations, that resolves every path beneath an open `O_PATH` handle
//! of a root, at the moment of use: `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` opens the
//! directories of a symlink-free path in one call; otherwise (a symlink on the way, or no
//! `openat2`) the path is walked one component at a time with `O_NOFOLLOW`, and a symlink is
//! followed only when where it leads (normalised against the symlink-free prefix) is inside a
//! root. The final component is acted on relative to the directory handle with `O_NOFOLLOW`; if
//! it became a symlink meanwhile, the path is resolved again. In a view, `read`, `append` and
//! `write` act on a regular file only and refuse a FIFO, socket or device (the env reads or
//! appends to one like any program, and replaces one like a file); `walk`/`search` report an
//! entry only if it exists beneath the root without a symlink when checked, and open every
//! searched file that way. Hard links are not covered: a hard link inside a root to a file
//! elsewhere is that file.
//!
//! # Update locks
//! [`ExecutionEnv::lock_file`] takes `flock(LOCK_EX)` on the file (polled, so dropping the
//! future gives up), then checks that the path still names the locked inode — a writer holding
//! the lock may have replaced the file by a rename — and otherwise locks the new file. Every
//! jig process takes it around a read-modify-write, so edits from several processes never
//! interleave; it is advisory, programs that do not take it are not held back.
//!
//! # Permissions when running as root
//! Root may write any file, so the `PermissionDenied` refusal of read-only files only applies
//! to other users (the same as for `echo > file` in a shell).
#![expect(
    clippy::disallowed_methods,
    reason = "this crate is the host I/O backend"
)]

mod beneath;
mod exec;
mod files;

pub use jig_process::{WatchdogCommand, run_watchdog};
mod fs;
pub mod sandbox;
mod search;
#[cfg(feature = "test-support")]
pub mod test_support;
mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use beneath::Scope;
use jig_env::{
    Bytes, ChunkSink, ChunkSource, DirEntry, EnvError, EnvResult, ErrorKind, ExecOutcome,
    ExecRequest, ExecSink, ExecutionEnv, FILE_CHUNK, FileHead, FileInfo, FileLock, LineWindow,
    LinesRead, Recursive, SearchRequest, SearchResult, WalkRequest, WalkResult, WriteOutcome,
    check_path, check_temp_affix,
};

/// The host machine as an [`ExecutionEnv`]: its filesystem and its processes.
///
/// Cheap to create; hold one per session as `Arc<dyn ExecutionEnv>` and call
/// [`cleanup`](ExecutionEnv::cleanup) at the end (dropping it also removes the private temp
/// directory and kills tracked background processes, as a fallback).
#[derive(Debug)]
pub struct LocalEnv {
    home: Option<PathBuf>,
    /// Processes commands left running in the background; killed by `cleanup`.
    pub(crate) processes: exec::ProcessTracker,
    /// The private temp directory, created on first use.
    temp_dir: Mutex<Option<tempfile::TempDir>>,
    /// Leave the private temp directory in place on `cleanup` (processes are still killed).
    keep_temp_files: bool,
    /// The filesystem operations, on any path.
    files: Files,
}

impl Default for LocalEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalEnv {
    /// The host env; the home directory comes from `$HOME` (none when it is unset or empty).
    pub fn new() -> Self {
        let home = std::env::var_os(jig_protocol::EnvVars::HOME)
            .filter(|home| !home.is_empty())
            .map(PathBuf::from);
        Self::with_home(home)
    }

    /// The host env with an explicit home directory (`None`: `~` cannot be expanded).
    pub fn with_home(home: Option<PathBuf>) -> Self {
        Self {
            home,
            processes: exec::ProcessTracker::new(),
            temp_dir: Mutex::new(None),
            keep_temp_files: false,
            files: Files { roots: None },
        }
    }

    /// The same env with a watchdog: `command` must run [`run_watchdog`]. It is started with the
    /// first command and kills what is left of the commands if this process dies without
    /// cleaning up (SIGKILL, a crash); see [`run_watchdog`]. There is one watchdog per process,
    /// shared with extension processes and hooks: the first command named
    /// ([`jig_process::set_watchdog_command`]) is the one started.
    #[must_use]
    pub fn with_watchdog(mut self, command: WatchdogCommand) -> Self {
        self.processes.set_watchdog(command);
        self
    }

    /// The same env, enforcing sandbox policies with `mechanism` rather than the one this
    /// process detected (see [`sandbox::mechanism`]); [`sandbox::Mechanism::forced`] names one.
    #[must_use]
    pub fn with_sandbox_mechanism(mut self, mechanism: sandbox::Mechanism) -> Self {
        self.processes.set_mechanism(mechanism);
        self
    }

    /// The same env, but `cleanup` leaves the private temp directory and its files (such as
    /// bash's full-output files) in place for the user; background processes are still killed.
    #[must_use]
    pub fn keep_temp_files(mut self, keep: bool) -> Self {
        self.keep_temp_files = keep;
        self
    }

    fn temp_guard(&self) -> MutexGuard<'_, Option<tempfile::TempDir>> {
        self.temp_dir.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The env's private temp directory (`0700`, under the system temp dir), created on first
    /// use and again after `cleanup` or when something removed it.
    pub(crate) fn private_temp_dir(&self) -> EnvResult<PathBuf> {
        let mut guard = self.temp_guard();
        if let Some(dir) = guard.as_ref()
            && std::fs::symlink_metadata(dir.path()).is_ok_and(|metadata| metadata.is_dir())
        {
            return Ok(dir.path().to_path_buf());
        }
        let dir = fs::new_private_dir()
            .map_err(|error| EnvError::io("tempdir", &std::env::temp_dir(), error))?;
        let path = dir.path().to_path_buf();
        *guard = Some(dir);
        Ok(path)
    }
}

/// Sets the flag when dropped: the blocking work polls it and stops when the caller is gone.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Reads up to this size run on the calling thread (see "Where the work runs").
const INLINE_READ_MAX: usize = 128 * 1024;

/// Runs blocking filesystem work on the blocking pool. The closure gets a flag that turns
/// true when this future is dropped.
async fn blocking<T, F>(operation: &'static str, work: F) -> EnvResult<T>
where
    T: Send + 'static,
    F: FnOnce(&AtomicBool) -> EnvResult<T> + Send + 'static,
{
    let flag = Arc::new(AtomicBool::new(false));
    let guard = CancelOnDrop(Arc::clone(&flag));
    let result = tokio::task::spawn_blocking(move || work(&flag)).await;
    drop(guard);
    match result {
        Ok(result) => result,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(error) => Err(EnvError::new(
            ErrorKind::Aborted,
            operation,
            format!("blocking task did not finish: {error}"),
        )),
    }
}

/// How many chunks of a chunked read or write wait between the blocking thread and the caller.
const CHUNKS_IN_FLIGHT: usize = 4;

/// A chunked read: `produce` runs on the blocking pool and hands its chunks over as it reads
/// them (at most [`CHUNKS_IN_FLIGHT`] wait), so memory stays bounded whatever the file's size.
async fn read_chunked<F>(sink: &mut dyn ChunkSink, produce: F) -> EnvResult<u64>
where
    F: FnOnce(&AtomicBool, &mut dyn FnMut(Bytes) -> bool) -> EnvResult<u64> + Send + 'static,
{
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Bytes>(CHUNKS_IN_FLIGHT);
    let producer = blocking("read", move |cancel| {
        produce(cancel, &mut |chunk| tx.blocking_send(chunk).is_ok())
    });
    // A sink error drops the receiver, which stops the producer.
    let consumer = async move {
        while let Some(chunk) = rx.recv().await {
            sink.chunk(chunk).await?;
        }
        Ok::<(), EnvError>(())
    };
    let (total, delivered) = tokio::join!(producer, consumer);
    delivered?;
    total
}

/// One message from the caller to the blocking side of a chunked write.
enum Part {
    Chunk(Bytes),
    End,
}

/// A chunked write: `consume` runs on the blocking pool and pulls the chunks `source`
/// supplies (at most [`CHUNKS_IN_FLIGHT`] wait). When `source` fails or this future is
/// dropped before the content is complete, `consume`'s pull fails and it leaves the target
/// untouched.
async fn write_chunked<F>(
    path: &Path,
    source: &mut dyn ChunkSource,
    consume: F,
) -> EnvResult<WriteOutcome>
where
    F: FnOnce(&AtomicBool, &mut dyn FnMut() -> EnvResult<Option<Bytes>>) -> EnvResult<WriteOutcome>
        + Send
        + 'static,
{
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Part>(CHUNKS_IN_FLIGHT);
    let reported = path.to_path_buf();
    let writer = blocking("write", move |cancel| {
        consume(cancel, &mut || match rx.blocking_recv() {
            Some(Part::Chunk(chunk)) => Ok(Some(chunk)),
            Some(Part::End) => Ok(None),
            None => Err(EnvError::new(
                ErrorKind::Aborted,
                "write",
                "the content stopped before its end; nothing was written",
            )
            .with_path(&reported)),
        })
    });
    tokio::pin!(writer);
    let feeder = async move {
        loop {
            let part = match source.next_chunk().await? {
                Some(chunk) => Part::Chunk(chunk),
                None => Part::End,
            };
            let end = matches!(part, Part::End);
            // A failed send: the writer stopped, and its result says why.
            if tx.send(part).await.is_err() || end {
                return Ok::<(), EnvError>(());
            }
        }
    };
    let fed = tokio::select! {
        // The writer stopped before the content was complete (an error): stop feeding it.
        written = &mut writer => return written,
        fed = feeder => fed,
    };
    // The sender is gone: on a source error the writer sees the content cut off, removes its
    // temp file and ends; wait for that, then report the source's error.
    let written = writer.await;
    fed?;
    written
}

/// `impl ExecutionEnv for $ty { … }` with the filesystem operations, walk, search and
/// `lock_file` delegated to the type's `files` (one implementation for the env and its
/// views), and the other methods as written.
macro_rules! env_over_files {
    (impl ExecutionEnv for $ty:ty { $($rest:tt)* }) => {
        #[async_trait]
        impl ExecutionEnv for $ty {
            async fn canonical_path(&self, path: &Path) -> EnvResult<PathBuf> {
                self.files.canonical_path(path)
            }

            async fn file_info(&self, path: &Path) -> EnvResult<FileInfo> {
                self.files.file_info(path)
            }

            async fn stat(&self, path: &Path) -> EnvResult<FileInfo> {
                self.files.stat(path)
            }

            async fn read_link(&self, path: &Path) -> EnvResult<PathBuf> {
                self.files.read_link(path)
            }

            async fn read(&self, path: &Path) -> EnvResult<Vec<u8>> {
                self.files.read(path).await
            }

            async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
                self.files.read_start(path, max_bytes).await
            }

            async fn read_head(&self, path: &Path, max_bytes: usize) -> EnvResult<FileHead> {
                self.files.read_head(path, max_bytes).await
            }

            async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead> {
                self.files.read_lines(path, window).await
            }

            async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome> {
                self.files.write(path, data).await
            }

            async fn read_chunks(&self, path: &Path, sink: &mut dyn ChunkSink) -> EnvResult<u64> {
                self.files.read_chunks(path, sink).await
            }

            async fn write_chunks(
                &self,
                path: &Path,
                source: &mut dyn ChunkSource,
            ) -> EnvResult<WriteOutcome> {
                self.files.write_chunks(path, source).await
            }

            async fn append(&self, path: &Path, data: Bytes) -> EnvResult<()> {
                self.files.append(path, data).await
            }

            async fn rename(&self, from: &Path, to: &Path) -> EnvResult<()> {
                self.files.rename(from, to).await
            }

            async fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
                self.files.remove(path, recursive).await
            }

            async fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
                self.files.create_dir(path, recursive).await
            }

            async fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>> {
                self.files.read_dir(path).await
            }

            async fn walk(&self, request: WalkRequest) -> EnvResult<WalkResult> {
                self.files.walk(request).await
            }

            async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult> {
                self.files.search(request).await
            }

            async fn lock_file(&self, path: &Path) -> EnvResult<FileLock> {
                self.files.lock_file(path).await
            }
            $($rest)*
        }
    };
}

env_over_files! {
impl ExecutionEnv for LocalEnv {
    fn name(&self) -> &'static str {
        "local"
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }


    async fn create_temp_file(&self, prefix: &str, suffix: &str) -> EnvResult<PathBuf> {
        check_temp_affix("tempfile", prefix)?;
        check_temp_affix("tempfile", suffix)?;
        let dir = self.private_temp_dir()?;
        let (prefix, suffix) = (prefix.to_owned(), suffix.to_owned());
        blocking("tempfile", move |_| {
            fs::create_temp_file(&dir, &prefix, &suffix)
        })
        .await
    }

    async fn create_temp_dir(&self, prefix: &str) -> EnvResult<PathBuf> {
        check_temp_affix("tempdir", prefix)?;
        let dir = self.private_temp_dir()?;
        let prefix = prefix.to_owned();
        blocking("tempdir", move |_| fs::create_temp_dir(&dir, &prefix)).await
    }

    async fn exec(&self, request: ExecRequest, sink: &mut dyn ExecSink) -> EnvResult<ExecOutcome> {
        exec::exec(self, request, sink).await
    }


    fn beneath(self: Arc<Self>, roots: &[PathBuf]) -> EnvResult<Arc<dyn ExecutionEnv>> {
        let roots = beneath::Roots::open(roots)?;
        Ok(Arc::new(LocalView {
            env: self,
            files: Files {
                roots: Some(Arc::new(roots)),
            },
        }))
    }


    async fn cleanup(&self) {
        self.processes.kill_all().await;
        let dir = self.temp_guard().take();
        if self.keep_temp_files {
            // Kept on request: the files are the user's now.
            let _ = dir.map(tempfile::TempDir::keep);
            return;
        }
        if let Some(dir) = dir {
            let path = dir.path().to_path_buf();
            let removed = tokio::task::spawn_blocking(move || dir.close()).await;
            match removed {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    tracing::warn!(path = %path.display(), %error, "could not remove the private temp directory");
                }
                Err(error) => {
                    tracing::warn!(path = %path.display(), %error, "removing the private temp directory did not finish");
                }
            }
        }
    }
}
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    use super::*;

    /// Dropping the future sets the flag the blocking work polls, so it stops instead of
    /// running on unobserved.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_the_future_stops_the_blocking_work() {
        let stopped = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&stopped);
        let work = blocking("scan", move |cancel| {
            let deadline = Instant::now() + Duration::from_secs(20);
            while !cancel.load(Ordering::Relaxed) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            seen.store(cancel.load(Ordering::Relaxed), Ordering::Relaxed);
            Ok::<_, EnvError>(())
        });
        assert!(
            tokio::time::timeout(Duration::from_millis(50), work)
                .await
                .is_err()
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while !stopped.load(Ordering::Relaxed) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(
            stopped.load(Ordering::Relaxed),
            "the blocking work saw the cancellation"
        );
    }

    #[tokio::test]
    async fn read_lines_rejects_line_zero_and_relative_paths() {
        let env = LocalEnv::new();
        let window = LineWindow {
            start_line: 0,
            max_lines: 1,
            max_bytes: 1,
        };
        let error = env
            .read_lines(Path::new("/etc/hostname"), window)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Invalid);
        let error = env.read(Path::new("relative")).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Invalid);
    }
}

/// A [`LocalEnv`] confined beneath roots ([`ExecutionEnv::beneath`]): every filesystem
/// operation resolves its path beneath an open handle of a root (see the `beneath` module);
/// processes, temp files and the home directory are the env's own.
#[derive(Debug)]
struct LocalView {
    env: Arc<LocalEnv>,
    files: Files,
}

env_over_files! {
impl ExecutionEnv for LocalView {
    fn name(&self) -> &'static str {
        "local"
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.env.home_dir()
    }


    async fn create_temp_file(&self, prefix: &str, suffix: &str) -> EnvResult<PathBuf> {
        self.env.create_temp_file(prefix, suffix).await
    }

    async fn create_temp_dir(&self, prefix: &str) -> EnvResult<PathBuf> {
        self.env.create_temp_dir(prefix).await
    }

    async fn exec(&self, request: ExecRequest, sink: &mut dyn ExecSink) -> EnvResult<ExecOutcome> {
        self.env.exec(request, sink).await
    }


    async fn cleanup(&self) {
        // A view owns nothing: the env it came from cleans up.
    }

    fn beneath(self: Arc<Self>, roots: &[PathBuf]) -> EnvResult<Arc<dyn ExecutionEnv>> {
        // A view of a view only narrows: each new root must be reachable beneath the old ones.
        let scope = self.files.scope();
        let mut inner = Vec::with_capacity(roots.len());
        for root in roots {
            inner.push(scope.canonical_path(&check_path("beneath", root)?)?);
        }
        Arc::clone(&self.env).beneath(&inner)
    }

}
}

/// The filesystem operations of an env or of a view (the `files` module), resolved in its
/// [`Scope`]: the short ones on the calling thread, the rest on the blocking pool (see "Where the
/// work runs").
#[derive(Debug, Clone)]
struct Files {
    /// The roots of a view; `None`: the env, on any path.
    roots: Option<Arc<beneath::Roots>>,
}

impl Files {
    fn scope(&self) -> Scope<'_> {
        match self.roots.as_deref() {
            None => Scope::Host,
            Some(roots) => Scope::Beneath(roots),
        }
    }

    /// Runs `work` on the blocking pool with this scope (see [`blocking`]).
    async fn blocking<T, F>(&self, operation: &'static str, work: F) -> EnvResult<T>
    where
        T: Send + 'static,
        F: FnOnce(Scope<'_>, &AtomicBool) -> EnvResult<T> + Send + 'static,
    {
        let files = self.clone();
        blocking(operation, move |cancel| work(files.scope(), cancel)).await
    }

    fn canonical_path(&self, path: &Path) -> EnvResult<PathBuf> {
        self.scope()
            .canonical_path(&check_path("canonicalize", path)?)
    }

    fn file_info(&self, path: &Path) -> EnvResult<FileInfo> {
        self.scope().file_info(&check_path("stat", path)?)
    }

    fn stat(&self, path: &Path) -> EnvResult<FileInfo> {
        self.scope().stat(&check_path("stat", path)?)
    }

    fn read_link(&self, path: &Path) -> EnvResult<PathBuf> {
        self.scope().read_link(&check_path("readlink", path)?)
    }

    async fn read(&self, path: &Path) -> EnvResult<Vec<u8>> {
        let path = check_path("read", path)?;
        self.blocking("read", move |scope, cancel| scope.read(&path, cancel))
            .await
    }

    async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        let path = check_path("read", path)?;
        if max_bytes <= INLINE_READ_MAX {
            return self.scope().read_start(&path, max_bytes);
        }
        self.blocking("read", move |scope, _| scope.read_start(&path, max_bytes))
            .await
    }

    async fn read_head(&self, path: &Path, max_bytes: usize) -> EnvResult<FileHead> {
        let path = check_path("read", path)?;
        if max_bytes < INLINE_READ_MAX {
            return self.scope().read_head(&path, max_bytes);
        }
        self.blocking("read", move |scope, _| scope.read_head(&path, max_bytes))
            .await
    }

    async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead> {
        let path = check_path("read", path)?;
        if window.start_line == 0 {
            return Err(EnvError::new(
                ErrorKind::Invalid,
                "read",
                "start_line is 1-based; 0 is not a line",
            )
            .with_path(path));
        }
        self.blocking("read", move |scope, cancel| {
            scope.read_lines(&path, &window, cancel)
        })
        .await
    }

    async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome> {
        let path = check_path("write", path)?;
        self.blocking("write", move |scope, cancel| {
            scope.write(&path, &data, cancel)
        })
        .await
    }

    async fn read_chunks(&self, path: &Path, sink: &mut dyn ChunkSink) -> EnvResult<u64> {
        let path = check_path("read", path)?;
        let files = self.clone();
        read_chunked(sink, move |cancel, send| {
            files.scope().read_chunks(&path, cancel, FILE_CHUNK, send)
        })
        .await
    }

    async fn write_chunks(
        &self,
        path: &Path,
        source: &mut dyn ChunkSource,
    ) -> EnvResult<WriteOutcome> {
        let path = check_path("write", path)?;
        let files = self.clone();
        let target = path.clone();
        write_chunked(&path, source, move |cancel, next| {
            files.scope().write_from(&target, cancel, true, next)
        })
        .await
    }

    async fn append(&self, path: &Path, data: Bytes) -> EnvResult<()> {
        let path = check_path("append", path)?;
        self.blocking("append", move |scope, _| scope.append(&path, &data))
            .await
    }

    async fn rename(&self, from: &Path, to: &Path) -> EnvResult<()> {
        let from = check_path("rename", from)?;
        let to = check_path("rename", to)?;
        self.blocking("rename", move |scope, _| scope.rename(&from, &to))
            .await
    }

    async fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        let path = check_path("remove", path)?;
        if self.roots.is_none() && path.parent().is_none() {
            return Err(EnvError::new(
                ErrorKind::Invalid,
                "remove",
                "refusing to remove the root directory",
            )
            .with_path(path));
        }
        self.blocking("remove", move |scope, _| scope.remove(&path, recursive))
            .await
    }

    async fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        let path = check_path("mkdir", path)?;
        self.blocking("mkdir", move |scope, _| scope.create_dir(&path, recursive))
            .await
    }

    async fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>> {
        let path = check_path("readdir", path)?;
        self.blocking("readdir", move |scope, _| scope.read_dir(&path))
            .await
    }

    async fn walk(&self, request: WalkRequest) -> EnvResult<WalkResult> {
        // Dropping this future cancels the walk on the blocking pool too.
        let guard = request.cancel.clone().drop_guard();
        let roots = self.roots.clone();
        let result = blocking("walk", move |_| {
            search::walk_blocking(&request, roots.as_deref())
        })
        .await;
        guard.disarm();
        result
    }

    async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult> {
        // Dropping this future cancels the search on the blocking pool too.
        let guard = request.cancel.clone().drop_guard();
        let roots = self.roots.clone();
        let result = blocking("search", move |_| {
            search::search_blocking(&request, roots.as_deref())
        })
        .await;
        guard.disarm();
        result
    }

    async fn lock_file(&self, path: &Path) -> EnvResult<FileLock> {
        let path = check_path("lock", path)?;
        let scope = self.scope();
        lock_loop(
            &path,
            || scope.open_for_lock(&path),
            || scope.stat(&path).map(|info| info.file_id),
        )
        .await
    }
}

/// Takes an exclusive `flock` on the file `open` opens, polling without blocking a thread (so
/// dropping the future gives up cleanly), then checks that `path` still names the locked file:
/// a writer that held the lock may have replaced it by a rename, and then the new file is the
/// one to lock.
async fn lock_loop(
    path: &Path,
    open: impl Fn() -> EnvResult<(std::fs::File, std::fs::Metadata)>,
    identity: impl Fn() -> EnvResult<Option<(u64, u64)>>,
) -> EnvResult<FileLock> {
    use std::os::unix::fs::MetadataExt;
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        let (file, metadata) = open()?;
        loop {
            match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => break,
                Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(std::time::Duration::from_millis(20));
                }
                Err(errno) => {
                    return Err(EnvError::io("lock", path, std::io::Error::from(errno)));
                }
            }
        }
        if identity()? == Some((metadata.dev(), metadata.ino())) {
            // Unlocked when the descriptor is closed, i.e. when the lock is dropped.
            return Ok(FileLock::new(file));
        }
        // Replaced while we waited: lock the file that is there now.
    }
}
