use std::fmt::Debug;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{EnvError, EnvResult, ErrorKind};
use crate::search::{SearchRequest, SearchResult, WalkRequest, WalkResult};
use crate::types::{
    DirEntry, ExecOutcome, ExecRequest, FileHead, FileInfo, LineWindow, LinesRead, Recursive,
    WriteOutcome,
};

/// Receives a running process's output as it arrives.
#[async_trait]
pub trait ExecSink: Send {
    /// One chunk of raw output bytes, stdout and stderr merged in arrival order. A chunk may end
    /// in the middle of a UTF-8 character.
    async fn output(&mut self, chunk: &[u8]);
}

/// A sink that drops everything (for callers that only want the exit status).
#[derive(Debug, Default, Clone, Copy)]
pub struct DiscardSink;

#[async_trait]
impl ExecSink for DiscardSink {
    async fn output(&mut self, _chunk: &[u8]) {}
}

/// A sink that keeps every byte, in order (for callers that want the whole output).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CollectSink(pub Vec<u8>);

#[async_trait]
impl ExecSink for CollectSink {
    async fn output(&mut self, chunk: &[u8]) {
        self.0.extend_from_slice(chunk);
    }
}

/// The size of the chunks [`ExecutionEnv::read_chunks`] hands out (the last one may be
/// smaller).
pub const FILE_CHUNK: usize = 1 << 20;

/// Receives a file's bytes chunk by chunk, in order ([`ExecutionEnv::read_chunks`]).
#[async_trait]
pub trait ChunkSink: Send {
    /// One chunk of at most [`FILE_CHUNK`] bytes. An error stops the read, which returns it.
    async fn chunk(&mut self, chunk: Bytes) -> EnvResult<()>;
}

/// Supplies a file's new content chunk by chunk, in order ([`ExecutionEnv::write_chunks`]).
#[async_trait]
pub trait ChunkSource: Send {
    /// The next chunk (any size), `None` once the content is complete. An error stops the
    /// write, which returns it and leaves the target untouched.
    async fn next_chunk(&mut self) -> EnvResult<Option<Bytes>>;
}

/// Where jig's tools act: a filesystem and a way to run processes.
///
/// Tools never touch the host directly; they hold an `Arc<dyn ExecutionEnv>` and everything they
/// read, write or run goes through it. That is what lets the same tool run against the local
/// machine (`LocalEnv` in `jig-env-local`), an in-memory tree (`MemoryEnv` in `jig-env-memory`),
/// and later a sandbox or a remote host.
///
/// # Contract shared by every method
/// - **Paths** given to the env are absolute; a relative path is [`ErrorKind::Invalid`] (the env
///   never guesses a working directory). Implementations normalise them lexically (`.` and `..`
///   removed, as [`normalize_path`], so `/link/..` is `/`) and never resolve symlinks unless a
///   method says so. A path containing a NUL byte is an [`ErrorKind::Invalid`] error and
///   touches nothing.
/// - **Symlinks**: a symlink in the middle of a path is always followed. A final symlink:
///   `file_info`, `read_link`, `rename` and `remove` act on the link itself (`remove` never
///   touches its target); `stat`, `canonical_path`, `read`, `read_start`, `read_lines`,
///   `write`, `append` and `read_dir` follow it (a write through a symlink writes its target
///   and the link survives; through a dangling one it creates the target when the target's
///   directory exists). `read_dir` reports entries without following them. A symlink loop
///   (more than 40 hops) is [`ErrorKind::Invalid`].
/// - **Errors** carry an [`ErrorKind`], the operation and the path.
/// - **Cancellation**: every method is cancelled by dropping its future; `exec` is also
///   cancelled through [`ExecRequest::cancel`]. What a dropped operation leaves behind: reads
///   leave nothing; `write` either completed or left the target untouched (never a partial
///   file, never a leftover temp file); `append` may have appended a prefix of the data;
///   `create_dir` with [`Recursive::Yes`] may have created some parents; a recursive `remove`
///   may have removed part of a tree.
///
/// # Implementing
/// The required methods are the primitive operations; the provided ones (`exists`,
/// `canonical_path_lenient`, `absolute_path`, `read_head`, `walk`, `search`) are built on them.
/// Override a provided one where the env can do it in fewer round trips (`LocalEnv` does
/// `read_head` in one blocking call and `walk`/`search` with ripgrep's libraries). Run
/// the conformance suite (`jig_env::conformance`, feature `test-support`) from the new
/// implementation's tests: an env is done when it passes.
#[async_trait]
pub trait ExecutionEnv: Send + Sync + Debug {
    /// A short name for messages and logs (`local`, `memory`, …).
    fn name(&self) -> &str;

    /// The home directory used to expand `~`, when the env has one.
    fn home_dir(&self) -> Option<PathBuf>;

    /// `path` joined onto `cwd` (when relative) and normalised lexically; no symlink is resolved
    /// and the path need not exist.
    fn absolute_path(&self, cwd: &Path, path: &Path) -> PathBuf {
        normalize_path(&cwd.join(path))
    }

    /// The realpath of an existing path: absolute, every symlink resolved.
    async fn canonical_path(&self, path: &Path) -> EnvResult<PathBuf>;

    /// Like `canonical_path`, but for a path that does not exist (yet): the realpath of its
    /// nearest existing ancestor with the remaining components appended. This is what makes a
    /// not-yet-existing file below a symlinked directory get the same key as its real path.
    /// A dangling symlink is resolved to its (missing) target, so a link pointing outside a
    /// root is seen as outside.
    async fn canonical_path_lenient(&self, path: &Path) -> EnvResult<PathBuf> {
        let path = normalize_path(path);
        let mut missing: Vec<std::ffi::OsString> = Vec::new();
        let mut current = path.clone();
        let mut hops = 0_u32;
        loop {
            match self.canonical_path(&current).await {
                Ok(real) => {
                    let mut out = real;
                    for part in missing.iter().rev() {
                        out.push(part);
                    }
                    return Ok(normalize_path(&out));
                }
                Err(error) if error.kind() == ErrorKind::NotFound => {
                    // A dangling symlink: follow its target lexically.
                    if let Ok(info) = self.file_info(&current).await
                        && info.kind == crate::FileKind::Symlink
                    {
                        hops += 1;
                        if hops > 40 {
                            return Err(EnvError::new(
                                ErrorKind::Invalid,
                                "canonicalize",
                                "too many levels of symbolic links",
                            )
                            .with_path(path));
                        }
                        let target = self.read_link(&current).await?;
                        let parent = current
                            .parent()
                            .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
                        current = normalize_path(&parent.join(target));
                        continue;
                    }
                    let Some(name) = current.file_name() else {
                        return Err(error);
                    };
                    missing.push(name.to_os_string());
                    current = match current.parent() {
                        Some(parent) => parent.to_path_buf(),
                        None => return Err(error),
                    };
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Metadata of `path` without following a final symlink (lstat).
    async fn file_info(&self, path: &Path) -> EnvResult<FileInfo>;

    /// Metadata of what `path` points to, following symlinks (stat).
    async fn stat(&self, path: &Path) -> EnvResult<FileInfo>;

    /// The target of the symlink at `path`, as stored (may be relative).
    async fn read_link(&self, path: &Path) -> EnvResult<PathBuf>;

    /// Whether `path` exists (a dangling symlink exists). Only "not found" maps to `false`;
    /// other failures are errors.
    async fn exists(&self, path: &Path) -> EnvResult<bool> {
        match self.file_info(path).await {
            Ok(_) => Ok(true),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// The whole file as bytes. A directory is [`ErrorKind::IsADirectory`].
    async fn read(&self, path: &Path) -> EnvResult<Vec<u8>>;

    /// At most `max_bytes` bytes from the start of the file (for sniffing types and encodings).
    async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>>;

    /// The metadata of what `path` points to and, when it is a regular file, at most
    /// `max_bytes` from its start, with whether that is the whole file. Anything but a regular
    /// file (a directory, FIFO, device or socket) is never opened, so this cannot block on a
    /// FIFO; its `bytes` are empty. A missing path is [`ErrorKind::NotFound`].
    ///
    /// This is what a reader needs to decide how to show a file, and for a small file all it
    /// needs. The default asks [`stat`](Self::stat) then [`read_start`](Self::read_start); an
    /// env where each operation is a round trip should do both in one.
    async fn read_head(&self, path: &Path, max_bytes: usize) -> EnvResult<FileHead> {
        let info = self.stat(path).await?;
        if info.kind != crate::FileKind::File {
            return Ok(FileHead {
                info,
                bytes: Vec::new(),
                complete: false,
            });
        }
        // One byte more than asked tells a file of exactly `max_bytes` from a longer one.
        let mut bytes = self.read_start(path, max_bytes.saturating_add(1)).await?;
        let complete = bytes.len() <= max_bytes;
        bytes.truncate(max_bytes);
        Ok(FileHead {
            info,
            bytes,
            complete,
        })
    }

    /// A window of lines, streaming: memory is bounded by the window, not the file, so a page
    /// of a multi-GB file is cheap. Lines are split on `\n` only (a `\r` before it stays on the
    /// line). The whole file is scanned once to count `total_lines` (a final line without `\n`
    /// counts, a trailing `\n` adds none). A `start_line` past the end returns no lines (not
    /// an error); `start_line` 0 is [`ErrorKind::Invalid`]. See [`LineWindow`] for how
    /// `max_lines` and `max_bytes` end the window.
    async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead>;

    /// Replaces the file's content atomically: a temp file in the same directory is written,
    /// synced and renamed over the target. Missing parent directories are created. An existing
    /// file keeps its permission bits; a symlink target is written through (the link
    /// survives). No temp file is left behind, also on failure. A directory is
    /// [`ErrorKind::IsADirectory`]; a file the user may not write is
    /// [`ErrorKind::PermissionDenied`] (it is not silently replaced by the rename).
    async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome>;

    /// [`read`](Self::read) in chunks of at most [`FILE_CHUNK`] bytes handed to `sink` as they
    /// are read, for a file too big to hold whole; returns the number of bytes read. An empty
    /// file gives no chunk. The same rules as `read` apply (symlinks followed, a directory is
    /// [`ErrorKind::IsADirectory`]); a sink error stops the read and is returned.
    ///
    /// The provided implementation reads the whole file with `read` and cuts it up; an env
    /// that can read a file piecewise overrides it so that memory stays bounded by a few
    /// chunks (`LocalEnv` and its confined views do).
    async fn read_chunks(&self, path: &Path, sink: &mut dyn ChunkSink) -> EnvResult<u64> {
        let data = Bytes::from(self.read(path).await?);
        for piece in data.chunks(FILE_CHUNK) {
            sink.chunk(data.slice_ref(piece)).await?;
        }
        Ok(data.len() as u64)
    }

    /// [`write`](Self::write) of the content `source` supplies chunk by chunk, for a file too
    /// big to hold whole; the same atomic replacement and rules as `write`. The target is
    /// replaced only once `source` said the content is complete: when `source` fails, or the
    /// future is dropped, before that, the target is untouched and no temp file is left.
    ///
    /// The provided implementation collects the content and calls `write`; an env that can
    /// write a file piecewise overrides it so that memory stays bounded by a few chunks
    /// (`LocalEnv` and its confined views do).
    async fn write_chunks(
        &self,
        path: &Path,
        source: &mut dyn ChunkSource,
    ) -> EnvResult<WriteOutcome> {
        let mut data = bytes::BytesMut::new();
        while let Some(chunk) = source.next_chunk().await? {
            data.extend_from_slice(&chunk);
        }
        self.write(path, data.freeze()).await
    }

    /// Appends to the file, creating it (and missing parents) when needed.
    async fn append(&self, path: &Path, data: Bytes) -> EnvResult<()>;

    /// Renames `from` to `to`, replacing `to` atomically; never copies across filesystems.
    async fn rename(&self, from: &Path, to: &Path) -> EnvResult<()>;

    /// Removes a file, a symlink (not its target) or a directory (empty unless recursive).
    async fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()>;

    /// Creates a directory (and its parents with [`Recursive::Yes`]; then an existing
    /// directory is fine). Without `Recursive::Yes` a missing parent is
    /// [`ErrorKind::NotFound`] and an existing path is an error ([`ErrorKind::Other`],
    /// "file exists").
    async fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()>;

    /// The entries of a directory (the path itself is followed when it is a symlink),
    /// excluding `.` and `..`, in no particular order; each entry's kind is lstat's (a symlink
    /// is reported as a symlink, dangling or not). A file is [`ErrorKind::NotADirectory`].
    async fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>>;

    /// A new empty file inside the env's private temp directory (one `0700` directory per env,
    /// removed by [`cleanup`](Self::cleanup)); the file is `0600`.
    async fn create_temp_file(&self, prefix: &str, suffix: &str) -> EnvResult<PathBuf>;

    /// A new directory inside the env's private temp directory.
    async fn create_temp_dir(&self, prefix: &str) -> EnvResult<PathBuf>;

    /// Runs a process, streaming its merged output to `sink`.
    ///
    /// The process gets no stdin (EOF) and no controlling terminal; it runs in its own session
    /// and process group. On timeout or cancellation the whole group gets SIGTERM, then SIGKILL
    /// after `kill_grace`, and the call returns with `timed_out` / `aborted` set. A process
    /// killed by a signal reports `128 + n` and the signal. After the main process exits, the
    /// call waits for pipe output at most `idle_grace` past the last byte. Processes the
    /// command left running in the background on purpose are tracked and killed by `cleanup`.
    /// A missing program or cwd is an error, not an outcome.
    async fn exec(&self, request: ExecRequest, sink: &mut dyn ExecSink) -> EnvResult<ExecOutcome>;

    /// Lists the entries under `request.root` (a directory, or one file), honouring ignore
    /// files, sorted by path; see [`search`](crate::search) for the exact rules (ignore files,
    /// hidden files, `.git`, symlinks, globs, order, limits). An invalid glob is
    /// [`ErrorKind::Invalid`]; a cancelled request is [`ErrorKind::Aborted`].
    ///
    /// `jig_search::walk_with_env` is the generic implementation (directories listed with
    /// `read_dir`, ignore files read with `read`); backends with a faster way to walk use it and
    /// must return the same result.
    async fn walk(&self, request: WalkRequest) -> EnvResult<WalkResult>;

    /// Searches file contents under `request.root` (a directory, or one file) line by line with
    /// ripgrep's regex engine; results in (path, line) order, the first `limit` matching lines
    /// kept and "more than the limit" known exactly. The walk follows the same rules as
    /// [`walk`](Self::walk); binary files are skipped. An invalid pattern or glob is
    /// [`ErrorKind::Invalid`] with the engine's message; a cancelled request is
    /// [`ErrorKind::Aborted`].
    ///
    /// `jig_search::search_with_env` is the generic implementation (it walks like `walk` and
    /// reads each file with `read`, stopping once the limit is known to be exceeded); backends
    /// with a faster way to search use it and must return the same result.
    async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult>;

    /// Releases what the env holds: kills tracked background processes and removes the private
    /// temp directory. Best effort and idempotent; never fails.
    async fn cleanup(&self);

    /// Asks the env to keep `roots` (absolute, canonical directories) warm for `walk` and
    /// `search` when it can: an env next to the files with an index in front (a long-lived
    /// session's local env, the far side of `jig env serve`) starts indexing them in the
    /// background. Answers never change, only how fast they come. A hint: the default does
    /// nothing, and an env that cannot keep them warm ignores it.
    async fn keep_warm(&self, roots: &[PathBuf]) {
        let _ = roots;
    }

    /// Tells the env that the host refused `path` for `operation` before asking it anything (a
    /// containment check found the path outside the workspace); `reason` is the refusal's text.
    /// Nothing is done by an env that acts; a decorator that records operations (the audit
    /// log) records it, so a refused path is on record as refused. The default does nothing.
    fn note_refused(&self, operation: &str, path: &Path, reason: &str) {
        let _ = (operation, path, reason);
    }

    /// A view of this env whose filesystem operations never reach outside `roots` (absolute,
    /// canonical directories), also while other processes change the tree.
    ///
    /// Every path given to the view must be spelled inside one of the roots, and is resolved
    /// beneath it: a symbolic link (in the middle or, where the operation follows it, at the
    /// end) is followed only when where it leads is inside one of the roots, and that is
    /// decided on what is opened, not on a path checked earlier, so swapping a directory for a
    /// symlink between two calls (or during one) cannot redirect an operation outside. A path
    /// that leads outside is [`ErrorKind::OutsideRoots`] and touches nothing. `walk` and
    /// `search` report only entries found beneath the root and read only files opened beneath
    /// it. `write` refuses a target that is not a regular file (a FIFO, socket or device).
    ///
    /// What a view does not cover: hard links (a file inside a root that is a hard link to a
    /// file elsewhere is the same file), and the non-file methods — `exec`, the temp-file
    /// methods and `home_dir` act as the env's own; `cleanup` of a view does nothing (the env
    /// owns the resources).
    ///
    /// The provided implementation refuses ([`ErrorKind::Unsupported`]): an env offers views
    /// only when it can keep this guarantee.
    fn beneath(self: Arc<Self>, roots: &[PathBuf]) -> EnvResult<Arc<dyn ExecutionEnv>> {
        let _ = roots;
        Err(EnvError::unsupported(
            "beneath",
            format!(
                "the {} environment cannot confine file access to workspace roots",
                self.name()
            ),
        ))
    }

    /// Waits for the update lock of the existing regular file `path` (symlinks followed), held
    /// until the returned [`FileLock`] is dropped. Every jig process working on the same files
    /// takes it around a read-modify-write, so two processes never interleave theirs. It is
    /// advisory: a program that does not take it (an editor) is not held back. A missing file
    /// is [`ErrorKind::NotFound`]; anything but a regular file is [`ErrorKind::Invalid`].
    /// Cancelled by dropping the future.
    ///
    /// The provided implementation refuses ([`ErrorKind::Unsupported`]).
    async fn lock_file(&self, path: &Path) -> EnvResult<FileLock> {
        Err(EnvError::unsupported(
            "lock",
            format!("the {} environment has no file locks", self.name()),
        )
        .with_path(path))
    }
}

/// A held update lock ([`ExecutionEnv::lock_file`]); dropping it releases the lock.
pub struct FileLock {
    held: Option<Box<dyn Send + Sync>>,
}

impl FileLock {
    /// A lock kept alive by `held` (a locked descriptor, a guard): released when it is dropped.
    pub fn new(held: impl Send + Sync + 'static) -> Self {
        Self {
            held: Some(Box::new(held)),
        }
    }

    /// The lock of an env whose files no other process can reach (an in-memory tree): nothing
    /// to hold, in-process ordering is the caller's.
    pub fn private() -> Self {
        Self { held: None }
    }
}

impl Debug for FileLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileLock")
            .field("held", &self.held.is_some())
            .finish()
    }
}

/// Forwarding impl so an `Arc<E>` is usable wherever an env is.
#[async_trait]
impl<E: ExecutionEnv + ?Sized> ExecutionEnv for Arc<E> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn home_dir(&self) -> Option<PathBuf> {
        (**self).home_dir()
    }
    fn absolute_path(&self, cwd: &Path, path: &Path) -> PathBuf {
        (**self).absolute_path(cwd, path)
    }
    async fn canonical_path(&self, path: &Path) -> EnvResult<PathBuf> {
        (**self).canonical_path(path).await
    }
    async fn canonical_path_lenient(&self, path: &Path) -> EnvResult<PathBuf> {
        (**self).canonical_path_lenient(path).await
    }
    async fn file_info(&self, path: &Path) -> EnvResult<FileInfo> {
        (**self).file_info(path).await
    }
    async fn stat(&self, path: &Path) -> EnvResult<FileInfo> {
        (**self).stat(path).await
    }
    async fn read_link(&self, path: &Path) -> EnvResult<PathBuf> {
        (**self).read_link(path).await
    }
    async fn exists(&self, path: &Path) -> EnvResult<bool> {
        (**self).exists(path).await
    }
    async fn read(&self, path: &Path) -> EnvResult<Vec<u8>> {
        (**self).read(path).await
    }
    async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        (**self).read_start(path, max_bytes).await
    }
    async fn read_head(&self, path: &Path, max_bytes: usize) -> EnvResult<FileHead> {
        (**self).read_head(path, max_bytes).await
    }
    async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead> {
        (**self).read_lines(path, window).await
    }
    async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome> {
        (**self).write(path, data).await
    }
    async fn read_chunks(&self, path: &Path, sink: &mut dyn ChunkSink) -> EnvResult<u64> {
        (**self).read_chunks(path, sink).await
    }
    async fn write_chunks(
        &self,
        path: &Path,
        source: &mut dyn ChunkSource,
    ) -> EnvResult<WriteOutcome> {
        (**self).write_chunks(path, source).await
    }
    async fn append(&self, path: &Path, data: Bytes) -> EnvResult<()> {
        (**self).append(path, data).await
    }
    async fn rename(&self, from: &Path, to: &Path) -> EnvResult<()> {
        (**self).rename(from, to).await
    }
    async fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        (**self).remove(path, recursive).await
    }
    async fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        (**self).create_dir(path, recursive).await
    }
    async fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>> {
        (**self).read_dir(path).await
    }
    async fn create_temp_file(&self, prefix: &str, suffix: &str) -> EnvResult<PathBuf> {
        (**self).create_temp_file(prefix, suffix).await
    }
    async fn create_temp_dir(&self, prefix: &str) -> EnvResult<PathBuf> {
        (**self).create_temp_dir(prefix).await
    }
    async fn exec(&self, request: ExecRequest, sink: &mut dyn ExecSink) -> EnvResult<ExecOutcome> {
        (**self).exec(request, sink).await
    }
    async fn walk(&self, request: WalkRequest) -> EnvResult<WalkResult> {
        (**self).walk(request).await
    }
    async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult> {
        (**self).search(request).await
    }
    async fn cleanup(&self) {
        (**self).cleanup().await;
    }
    async fn keep_warm(&self, roots: &[PathBuf]) {
        (**self).keep_warm(roots).await;
    }
    fn note_refused(&self, operation: &str, path: &Path, reason: &str) {
        (**self).note_refused(operation, path, reason);
    }
    fn beneath(self: Arc<Self>, roots: &[PathBuf]) -> EnvResult<Arc<dyn ExecutionEnv>> {
        E::beneath(Arc::clone(&*self), roots)
    }
    async fn lock_file(&self, path: &Path) -> EnvResult<FileLock> {
        (**self).lock_file(path).await
    }
}

/// Lexical normalisation: removes `.` components and resolves `..` against the preceding
/// component (never above the root). Does not touch the filesystem.
pub fn normalize_path(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => out.push(prefix.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            Component::Normal(part) => out.push(part),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// The path check every env runs first: no NUL byte, absolute (a relative path is
/// [`ErrorKind::Invalid`]: the env never guesses a working directory); returns the path
/// normalised lexically (as [`normalize_path`]).
pub fn check_path(operation: &'static str, path: &Path) -> EnvResult<PathBuf> {
    check_no_nul(operation, path)?;
    if !path.has_root() {
        return Err(EnvError::new(
            ErrorKind::Invalid,
            operation,
            "path must be absolute (resolve it against a working directory first)",
        )
        .with_path(path));
    }
    Ok(normalize_path(path))
}

/// Fails with [`ErrorKind::Invalid`] when the path contains a NUL byte.
pub fn check_no_nul(operation: &'static str, path: &Path) -> EnvResult<()> {
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(
            EnvError::new(ErrorKind::Invalid, operation, "path contains a NUL byte")
                .with_path(path.to_string_lossy().replace('\0', "\\0")),
        );
    }
    Ok(())
}

/// The [`ErrorKind::OutsideRoots`] error of a confined view
/// ([`ExecutionEnv::beneath`]): `path` (as given) leads to `leads_to`, which is outside every
/// one of `roots`; `via` is the symbolic link that led there, when one did.
pub fn outside_roots(
    operation: &'static str,
    path: &Path,
    leads_to: &Path,
    roots: &[PathBuf],
    via: Option<&Path>,
) -> EnvError {
    let roots = match roots {
        [root] => format!("the workspace root {}", root.display()),
        roots => format!(
            "the workspace roots {}",
            roots
                .iter()
                .map(|root| root.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let message = match via {
        Some(link) => format!(
            "the symbolic link {} leads to {}, outside {roots}; refused, nothing was touched",
            link.display(),
            leads_to.display()
        ),
        None => format!(
            "{} is outside {roots}; refused, nothing was touched",
            leads_to.display()
        ),
    };
    EnvError::new(ErrorKind::OutsideRoots, operation, message).with_path(path)
}

/// Fails with [`ErrorKind::Invalid`] when a temp-name prefix or suffix (`create_temp_file`,
/// `create_temp_dir`) contains `/` or NUL: it must stay one file name inside the temp directory.
pub fn check_temp_affix(operation: &'static str, affix: &str) -> EnvResult<()> {
    if affix.contains('/') || affix.contains('\0') {
        return Err(EnvError::new(
            ErrorKind::Invalid,
            operation,
            format!("temp name part {affix:?} must not contain '/' or NUL"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_removes_dots_and_never_climbs_above_root() {
        assert_eq!(
            normalize_path(Path::new("/a/./b/../c")),
            PathBuf::from("/a/c")
        );
        assert_eq!(
            normalize_path(Path::new("/../../etc")),
            PathBuf::from("/etc")
        );
        assert_eq!(
            normalize_path(Path::new("a/../../x")),
            PathBuf::from("../x")
        );
    }
}
