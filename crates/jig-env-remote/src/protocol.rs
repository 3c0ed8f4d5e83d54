//! The wire format of `jig env serve` (see `docs/env-protocol.md`): frames, messages and the
//! JSON forms of the env's types.
//!
//! A frame is `u32 header length` + `u32 payload length` (both big-endian), a JSON header
//! ([`Message`]) and raw payload bytes (file contents, process output, the records of a walk
//! or search result). Bulk bytes therefore cross without base64 or JSON escaping.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use bytes::{Buf as _, BufMut as _, Bytes, BytesMut};
use jig_env::{
    CaseSensitivity, DirEntry, EntryKinds, EnvError, ErrorKind, ExecOutcome, FileHead, FileInfo,
    FileKind, FileMatches, IgnoreRules, LineKind, PatternSyntax, SearchLine, SearchRequest,
    SearchResult, WalkEntry, WalkRequest, WalkResult,
};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

/// The protocol version both sides announce in their hello; a peer with another major version
/// is refused.
pub const PROTOCOL_VERSION: u32 = 7;

/// Bulk data crosses in chunks of at most this many bytes (one frame each): the env port's
/// chunk, so a streamed read's chunks cross one to a frame.
pub const CHUNK: usize = jig_env::FILE_CHUNK;

/// The records of a walk or search result cross in chunks of this many bytes: smaller than
/// [`CHUNK`], so the client decodes one while the next crosses.
pub const RECORD_CHUNK: usize = 256 << 10;

/// Largest accepted JSON header of an answer (server → client): a big directory's entries
/// cross in one.
const MAX_HEADER: usize = 256 << 20;
/// Largest accepted JSON header of a request (client → server): a call's arguments, a command
/// line and its environment included, are far smaller.
pub const MAX_REQUEST_HEADER: usize = 16 << 20;
/// Largest accepted payload of one frame, in both directions: 16 MiB.
pub const MAX_PAYLOAD: usize = 16 << 20;

/// Most bytes a `read_start` or `read_head` answer carries: its `max_bytes` may not be more
/// (the server refuses it, whatever the client asks). [`RemoteEnv`](crate::RemoteEnv) reads a
/// longer start as a stream of chunks.
pub const MAX_READ_REPLY: usize = MAX_PAYLOAD;

/// Largest `max_bytes` of a `read_lines` window (its lines hold at most twice that).
pub const MAX_WINDOW_BYTES: usize = MAX_PAYLOAD / 2;

/// Largest `max_lines` of a `read_lines` window: each line's numbers cross in the header.
pub const MAX_WINDOW_LINES: usize = 1 << 20;

/// Largest body of one `append` (and of a `write` collected whole): 8 MiB.
/// [`RemoteEnv`](crate::RemoteEnv) sends a longer append as several.
pub const MAX_APPEND: u64 = 8 << 20;

/// While any call runs, the server sends an `alive` frame when it sent nothing else for this
/// long, so the client can tell a long quiet call (a command without output) from a far side
/// that stopped.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(1);

/// One frame: a message and its payload bytes (often empty).
#[derive(Debug, Clone)]
pub struct Frame {
    /// The JSON header.
    pub message: Message,
    /// Raw bytes belonging to the message.
    pub payload: Bytes,
}

impl Frame {
    /// A frame without payload.
    pub fn new(message: Message) -> Self {
        Self {
            message,
            payload: Bytes::new(),
        }
    }

    /// A frame carrying `payload`.
    pub fn with_payload(message: Message, payload: Bytes) -> Self {
        Self { message, payload }
    }
}

/// Writes one frame (not flushed).
pub async fn write_frame<W: AsyncWrite + Unpin + ?Sized>(
    writer: &mut W,
    frame: &Frame,
) -> std::io::Result<()> {
    if frame.payload.len() > MAX_PAYLOAD {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "a frame payload of {} bytes is over the protocol's limit of {MAX_PAYLOAD}",
                frame.payload.len()
            ),
        ));
    }
    let header = serde_json::to_vec(&frame.message).map_err(std::io::Error::other)?;
    let header_len = u32::try_from(header.len()).map_err(std::io::Error::other)?;
    let payload_len = u32::try_from(frame.payload.len()).map_err(std::io::Error::other)?;
    let mut prefix = [0_u8; 8];
    prefix[..4].copy_from_slice(&header_len.to_be_bytes());
    prefix[4..].copy_from_slice(&payload_len.to_be_bytes());
    writer.write_all(&prefix).await?;
    writer.write_all(&header).await?;
    if !frame.payload.is_empty() {
        writer.write_all(&frame.payload).await?;
    }
    Ok(())
}

/// Reads one frame (an answer: a header of up to 256 MiB); `Ok(None)` at a clean end of stream
/// (before a frame started).
pub async fn read_frame<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
) -> std::io::Result<Option<Frame>> {
    read_frame_within(reader, MAX_HEADER).await
}

/// Reads one frame whose header is at most `max_header` bytes and whose payload at most
/// [`MAX_PAYLOAD`]: nothing bigger is ever allocated. `Ok(None)` at a clean end of stream.
pub async fn read_frame_within<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
    max_header: usize,
) -> std::io::Result<Option<Frame>> {
    let mut prefix = [0_u8; 8];
    match reader.read_exact(&mut prefix[..1]).await {
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error),
    }
    reader.read_exact(&mut prefix[1..]).await?;
    let header_len = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
    let payload_len = u32::from_be_bytes([prefix[4], prefix[5], prefix[6], prefix[7]]) as usize;
    if header_len > max_header || payload_len > MAX_PAYLOAD {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "frame too large (header {header_len} bytes, payload {payload_len} bytes): \
                 the other side does not speak the jig env protocol"
            ),
        ));
    }
    let mut header = vec![0_u8; header_len];
    reader.read_exact(&mut header).await?;
    let mut payload = vec![0_u8; payload_len];
    reader.read_exact(&mut payload).await?;
    let message: Message = serde_json::from_slice(&header).map_err(|error| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("invalid frame header: {error}"),
        )
    })?;
    Ok(Some(Frame {
        message,
        payload: Bytes::from(payload),
    }))
}

/// Every message, in both directions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Message {
    /// The server's first frame: who it is.
    Hello(Hello),
    /// Client → server: run an operation. `view` names a confined view made by `beneath`.
    Call {
        /// Request id, unique among the client's open calls.
        id: u64,
        /// The view the operation acts in; none for the served env itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        view: Option<u64>,
        /// The operation.
        op: Op,
    },
    /// Bulk bytes of call `id` in the payload: a body chunk (client → server, `write` and
    /// `append`), file contents (server → client, `read`) or process output (`exec`).
    Data {
        /// The call.
        id: u64,
    },
    /// Client → server: the body of call `id` is complete.
    End {
        /// The call.
        id: u64,
    },
    /// Client → server: one `data` frame of a `read` asked with a `window` was consumed; the
    /// server may send one more.
    Ack {
        /// The call.
        id: u64,
    },
    /// Client → server: abandon call `id` (an exec's process group is killed).
    Cancel {
        /// The call.
        id: u64,
    },
    /// Server → client: call `id` succeeded; `value` depends on the operation, the payload
    /// carries its bytes where it has some.
    Ok {
        /// The call.
        id: u64,
        /// The result.
        #[serde(default)]
        value: serde_json::Value,
    },
    /// Server → client: call `id` failed.
    Err {
        /// The call.
        id: u64,
        /// What went wrong.
        error: WireError,
    },
    /// Server → client: calls are running; sent when nothing else was sent for
    /// [`KEEPALIVE_INTERVAL`].
    Alive,
}

/// The server's greeting.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    /// [`PROTOCOL_VERSION`] of the server.
    pub protocol: u32,
    /// The jig version serving.
    pub version: String,
    /// The served env's name.
    pub env: String,
    /// Its home directory.
    pub home: Option<WirePath>,
    /// `uname -m` style architecture of the server.
    pub arch: String,
}

/// The operations; fields mirror the [`ExecutionEnv`](jig_env::ExecutionEnv) methods.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
#[expect(
    missing_docs,
    reason = "each variant is the env method of the same name"
)]
pub enum Op {
    CanonicalPath {
        path: WirePath,
    },
    CanonicalPathLenient {
        path: WirePath,
    },
    FileInfo {
        path: WirePath,
    },
    Stat {
        path: WirePath,
    },
    ReadLink {
        path: WirePath,
    },
    Exists {
        path: WirePath,
    },
    Read {
        path: WirePath,
        /// At most this many `data` frames sent ahead of the client's `ack`s; none: no limit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<usize>,
    },
    ReadStart {
        path: WirePath,
        max_bytes: usize,
    },
    ReadHead {
        path: WirePath,
        max_bytes: usize,
    },
    ReadLines {
        path: WirePath,
        start_line: u64,
        max_lines: usize,
        max_bytes: usize,
    },
    Write {
        path: WirePath,
        /// The body's size; none when the client streams a body of unknown size.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
    Append {
        path: WirePath,
        size: u64,
    },
    Rename {
        from: WirePath,
        to: WirePath,
    },
    Remove {
        path: WirePath,
        recursive: bool,
    },
    CreateDir {
        path: WirePath,
        recursive: bool,
    },
    ReadDir {
        path: WirePath,
    },
    CreateTempFile {
        prefix: String,
        suffix: String,
    },
    CreateTempDir {
        prefix: String,
    },
    Exec(WireExec),
    Walk(WireWalk),
    Search(WireSearch),
    Cleanup,
    /// Keeps `roots` warm far side ([`ExecutionEnv::keep_warm`](jig_env::ExecutionEnv::keep_warm)).
    KeepWarm {
        roots: Vec<WirePath>,
    },
    /// Makes view `view` (a number the client picks) confined beneath `roots`.
    Beneath {
        view: u64,
        roots: Vec<WirePath>,
    },
    /// Forgets view `view`.
    DropView {
        view: u64,
    },
    /// Takes the update lock of `path`; it is held until `unlock` with this call's id.
    LockFile {
        path: WirePath,
    },
    /// Releases the lock taken by call `lock`.
    Unlock {
        lock: u64,
    },
}

/// A path: a string when it is UTF-8, otherwise its bytes in base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WirePath {
    /// A UTF-8 path.
    Utf8(String),
    /// Any other path.
    Bytes {
        /// The path's bytes, base64 (standard alphabet, padded).
        b64: String,
    },
}

impl WirePath {
    /// The wire form of `path`.
    pub fn from_path(path: &Path) -> Self {
        match path.to_str() {
            Some(text) => Self::Utf8(text.to_owned()),
            None => Self::Bytes {
                b64: base64::engine::general_purpose::STANDARD.encode(path.as_os_str().as_bytes()),
            },
        }
    }

    /// The path (undecodable base64 gives a path the env refuses as relative).
    pub fn to_path(&self) -> PathBuf {
        match self {
            Self::Utf8(text) => PathBuf::from(text),
            Self::Bytes { b64 } => PathBuf::from(OsString::from_vec(
                base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .unwrap_or_default(),
            )),
        }
    }
}

impl From<&Path> for WirePath {
    fn from(path: &Path) -> Self {
        Self::from_path(path)
    }
}

/// An [`EnvError`] on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireError {
    /// [`ErrorKind::as_str`].
    pub kind: String,
    /// The failed operation.
    pub operation: String,
    /// The path involved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<WirePath>,
    /// The message without operation and path.
    pub message: String,
}

impl From<&EnvError> for WireError {
    fn from(error: &EnvError) -> Self {
        Self {
            kind: error.kind().as_str().to_owned(),
            operation: error.operation().to_owned(),
            path: error.path().map(WirePath::from_path),
            message: error.message().to_owned(),
        }
    }
}

impl WireError {
    /// The error as the env reports it.
    pub fn into_env_error(self) -> EnvError {
        let kind = match self.kind.as_str() {
            "not_found" => ErrorKind::NotFound,
            "permission_denied" => ErrorKind::PermissionDenied,
            "not_a_directory" => ErrorKind::NotADirectory,
            "is_a_directory" => ErrorKind::IsADirectory,
            "invalid" => ErrorKind::Invalid,
            "unsupported" => ErrorKind::Unsupported,
            "aborted" => ErrorKind::Aborted,
            "timeout" => ErrorKind::Timeout,
            "outside_roots" => ErrorKind::OutsideRoots,
            _ => ErrorKind::Other,
        };
        let error = EnvError::new(kind, static_operation(&self.operation), self.message);
        match self.path {
            Some(path) => error.with_path(path.to_path()),
            None => error,
        }
    }
}

/// The operation names envs use, as `&'static str` (an [`EnvError`] needs one).
fn static_operation(name: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "canonicalize",
        "stat",
        "readlink",
        "read",
        "write",
        "append",
        "rename",
        "remove",
        "mkdir",
        "create_dir",
        "read_dir",
        "readdir",
        "temp",
        "create_temp_file",
        "create_temp_dir",
        "exec",
        "walk",
        "search",
        "beneath",
        "lock",
        "cleanup",
        "open",
        "remote",
    ];
    KNOWN
        .iter()
        .find(|known| **known == name)
        .copied()
        .unwrap_or("remote")
}

/// A [`FileInfo`] on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[expect(missing_docs, reason = "mirrors FileInfo")]
pub struct WireInfo {
    pub path: WirePath,
    pub kind: WireKind,
    pub size: u64,
    /// Nanoseconds since the Unix epoch (negative before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_ns: Option<i128>,
    pub mode: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<(u64, u64)>,
}

/// A [`FileKind`] on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[expect(missing_docs, reason = "mirrors FileKind")]
pub enum WireKind {
    File,
    Directory,
    Symlink,
    Other,
}

impl From<FileKind> for WireKind {
    fn from(kind: FileKind) -> Self {
        match kind {
            FileKind::File => Self::File,
            FileKind::Directory => Self::Directory,
            FileKind::Symlink => Self::Symlink,
            FileKind::Other => Self::Other,
        }
    }
}

impl From<WireKind> for FileKind {
    fn from(kind: WireKind) -> Self {
        match kind {
            WireKind::File => Self::File,
            WireKind::Directory => Self::Directory,
            WireKind::Symlink => Self::Symlink,
            WireKind::Other => Self::Other,
        }
    }
}

impl From<&FileInfo> for WireInfo {
    fn from(info: &FileInfo) -> Self {
        let modified_ns =
            info.modified
                .map(|time| match time.duration_since(SystemTime::UNIX_EPOCH) {
                    Ok(after) => i128::try_from(after.as_nanos()).unwrap_or(i128::MAX),
                    Err(before) => {
                        -i128::try_from(before.duration().as_nanos()).unwrap_or(i128::MAX)
                    }
                });
        Self {
            path: WirePath::from_path(&info.path),
            kind: info.kind.into(),
            size: info.size,
            modified_ns,
            mode: info.mode,
            file_id: info.file_id,
        }
    }
}

impl From<WireInfo> for FileInfo {
    fn from(info: WireInfo) -> Self {
        let modified = info.modified_ns.map(|ns| {
            let nanos = ns.unsigned_abs();
            let magnitude = Duration::new(
                u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX),
                u32::try_from(nanos % 1_000_000_000).unwrap_or(0),
            );
            if ns >= 0 {
                SystemTime::UNIX_EPOCH + magnitude
            } else {
                SystemTime::UNIX_EPOCH - magnitude
            }
        });
        FileInfo {
            path: info.path.to_path(),
            kind: info.kind.into(),
            size: info.size,
            modified,
            mode: info.mode,
            file_id: info.file_id,
        }
    }
}

/// A [`FileHead`] without its bytes (they travel as the payload).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[expect(missing_docs, reason = "mirrors FileHead")]
pub struct WireHead {
    pub info: WireInfo,
    pub complete: bool,
}

impl WireHead {
    /// Splits a head into its wire form and its bytes.
    pub fn split(head: FileHead) -> (Self, Bytes) {
        (
            Self {
                info: (&head.info).into(),
                complete: head.complete,
            },
            Bytes::from(head.bytes),
        )
    }
}

/// A directory entry on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[expect(missing_docs, reason = "mirrors DirEntry")]
pub struct WireDirEntry {
    pub name: WirePath,
    pub kind: WireKind,
}

impl From<&DirEntry> for WireDirEntry {
    fn from(entry: &DirEntry) -> Self {
        Self {
            name: WirePath::from_path(Path::new(&entry.name)),
            kind: entry.kind.into(),
        }
    }
}

impl From<WireDirEntry> for DirEntry {
    fn from(entry: WireDirEntry) -> Self {
        DirEntry {
            name: entry.name.to_path().into_os_string(),
            kind: entry.kind.into(),
        }
    }
}

/// One line of a `read_lines` answer; the bytes are in the payload, one after the other.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[expect(missing_docs, reason = "mirrors Line")]
pub struct WireLine {
    pub number: u64,
    /// How many payload bytes are this line's.
    pub len: usize,
    pub full_len: u64,
}

/// The value of a `read_lines` answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[expect(missing_docs, reason = "mirrors LinesRead")]
pub struct WireLines {
    pub lines: Vec<WireLine>,
    pub total_lines: u64,
    pub total_bytes: u64,
}

/// An exec request on the wire (its cancellation token is the `cancel` message).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[expect(missing_docs, reason = "mirrors ExecRequest")]
pub struct WireExec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: WirePath,
    pub env: std::collections::BTreeMap<String, String>,
    pub env_remove: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    pub kill_grace_ms: u64,
    pub idle_grace_ms: u64,
    /// The sandbox policy; absent means off. The far side enforces it or fails the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<WireSandbox>,
}

/// A sandbox policy on the wire (see `jig_env::SandboxPolicy`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[expect(missing_docs, reason = "mirrors SandboxPolicy")]
pub struct WireSandbox {
    /// `read-only` or `workspace-write`.
    pub mode: String,
    pub network: bool,
    pub writable_roots: Vec<WirePath>,
    pub protected: Vec<WirePath>,
}

impl WireSandbox {
    /// The wire form of `policy`; `None` when it is off.
    #[must_use]
    pub fn from_policy(policy: &jig_env::SandboxPolicy) -> Option<Self> {
        policy.is_on().then(|| Self {
            mode: policy.mode.name().to_owned(),
            network: policy.network,
            writable_roots: policy
                .writable_roots
                .iter()
                .map(|p| WirePath::from_path(p))
                .collect(),
            protected: policy
                .protected
                .iter()
                .map(|p| WirePath::from_path(p))
                .collect(),
        })
    }

    /// The policy this wire form stands for.
    ///
    /// # Errors
    /// An unknown mode name.
    pub fn into_policy(self) -> Result<jig_env::SandboxPolicy, jig_env::UnknownSandboxMode> {
        Ok(jig_env::SandboxPolicy {
            mode: jig_env::SandboxMode::parse(&self.mode)?,
            network: self.network,
            writable_roots: self.writable_roots.iter().map(WirePath::to_path).collect(),
            protected: self.protected.iter().map(WirePath::to_path).collect(),
        })
    }
}

/// An exec outcome on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[expect(missing_docs, reason = "mirrors ExecOutcome")]
pub struct WireOutcome {
    pub exit_code: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal_name: Option<String>,
    pub timed_out: bool,
    pub aborted: bool,
    pub duration_ms: f64,
}

impl From<&ExecOutcome> for WireOutcome {
    fn from(outcome: &ExecOutcome) -> Self {
        Self {
            exit_code: outcome.exit_code,
            signal: outcome.signal,
            signal_name: outcome.signal_name.clone(),
            timed_out: outcome.timed_out,
            aborted: outcome.aborted,
            duration_ms: outcome.duration.as_secs_f64() * 1000.0,
        }
    }
}

impl From<WireOutcome> for ExecOutcome {
    fn from(outcome: WireOutcome) -> Self {
        ExecOutcome {
            exit_code: outcome.exit_code,
            signal: outcome.signal,
            signal_name: outcome.signal_name,
            timed_out: outcome.timed_out,
            aborted: outcome.aborted,
            duration: Duration::from_secs_f64(outcome.duration_ms.max(0.0) / 1000.0),
        }
    }
}

/// A walk request on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[expect(missing_docs, reason = "mirrors WalkRequest")]
pub struct WireWalk {
    pub root: WirePath,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    pub include_ignored: bool,
    pub directories: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

impl From<&WalkRequest> for WireWalk {
    fn from(request: &WalkRequest) -> Self {
        Self {
            root: WirePath::from_path(&request.root),
            glob: request.glob.clone(),
            include_ignored: request.ignore == IgnoreRules::IncludeIgnored,
            directories: request.kinds == EntryKinds::FilesAndDirectories,
            limit: request.limit,
        }
    }
}

impl WireWalk {
    /// The request, with a fresh cancellation token.
    pub fn into_request(self) -> WalkRequest {
        let mut request = WalkRequest::new(self.root.to_path());
        request.glob = self.glob;
        request.ignore = ignore_rules(self.include_ignored);
        request.kinds = if self.directories {
            EntryKinds::FilesAndDirectories
        } else {
            EntryKinds::Files
        };
        request.limit = self.limit;
        request
    }
}

fn ignore_rules(include_ignored: bool) -> IgnoreRules {
    if include_ignored {
        IgnoreRules::IncludeIgnored
    } else {
        IgnoreRules::Respect
    }
}

/// A search request on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[expect(missing_docs, reason = "mirrors SearchRequest")]
pub struct WireSearch {
    pub root: WirePath,
    pub pattern: String,
    pub literal: bool,
    pub case_insensitive: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    pub include_ignored: bool,
    pub context_lines: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    pub max_line_bytes: usize,
}

impl From<&SearchRequest> for WireSearch {
    fn from(request: &SearchRequest) -> Self {
        Self {
            root: WirePath::from_path(&request.root),
            pattern: request.pattern.clone(),
            literal: request.syntax == PatternSyntax::Literal,
            case_insensitive: request.case == CaseSensitivity::Insensitive,
            glob: request.glob.clone(),
            include_ignored: request.ignore == IgnoreRules::IncludeIgnored,
            context_lines: request.context_lines,
            limit: request.limit,
            max_line_bytes: request.max_line_bytes,
        }
    }
}

impl WireSearch {
    /// The request, with a fresh cancellation token.
    pub fn into_request(self) -> SearchRequest {
        let mut request = SearchRequest::new(self.root.to_path(), self.pattern);
        request.syntax = if self.literal {
            PatternSyntax::Literal
        } else {
            PatternSyntax::Regex
        };
        request.case = if self.case_insensitive {
            CaseSensitivity::Insensitive
        } else {
            CaseSensitivity::Sensitive
        };
        request.glob = self.glob;
        request.ignore = ignore_rules(self.include_ignored);
        request.context_lines = self.context_lines;
        request.limit = self.limit;
        request.max_line_bytes = self.max_line_bytes;
        request
    }
}

// ---- Walk and search results: records in the payload ----

/// The `value` of a `walk` answer; its entries are records in the payload
/// ([`encode_walk`]).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct WireWalkSummary {
    /// More entries than the limit exist.
    pub limit_reached: bool,
}

/// The `value` of a `search` answer; its files and lines are records in the payload
/// ([`encode_search`]).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct WireSearchSummary {
    /// Matching lines kept.
    pub matches: usize,
    /// More matching lines than the limit exist.
    pub limit_reached: bool,
}

/// A walk or search answer whose payload records cannot be read (or written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed result records: {0}")]
pub struct RecordError(&'static str);

/// Flag bit of a search line record: the line matched (otherwise it is context).
const LINE_MATCH: u8 = 1;
/// Flag bit of a search line record: the text was cut to `max_line_bytes`.
const LINE_TRUNCATED: u8 = 2;

fn kind_byte(kind: FileKind) -> u8 {
    match kind {
        FileKind::File => 0,
        FileKind::Directory => 1,
        FileKind::Symlink => 2,
        FileKind::Other => 3,
    }
}

fn byte_kind(byte: u8) -> Result<FileKind, RecordError> {
    Ok(match byte {
        0 => FileKind::File,
        1 => FileKind::Directory,
        2 => FileKind::Symlink,
        3 => FileKind::Other,
        _ => return Err(RecordError("unknown entry kind")),
    })
}

/// `u32` length, then the bytes.
fn put_bytes(out: &mut BytesMut, bytes: &[u8]) -> Result<(), RecordError> {
    let len = u32::try_from(bytes.len()).map_err(|_| RecordError("a field over 4 GiB"))?;
    out.put_u32(len);
    out.put_slice(bytes);
    Ok(())
}

fn need(input: &[u8], len: usize) -> Result<(), RecordError> {
    if input.len() < len {
        return Err(RecordError("the records end early"));
    }
    Ok(())
}

fn take_bytes<'a>(input: &mut &'a [u8]) -> Result<&'a [u8], RecordError> {
    need(input, 4)?;
    let len = input.get_u32() as usize;
    need(input, len)?;
    let (bytes, rest) = input.split_at(len);
    *input = rest;
    Ok(bytes)
}

fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(bytes))
}

/// A walk result as its `value` and payload records: per entry `u8 kind` (0 file,
/// 1 directory, 2 symlink, 3 other), `u32` path length, the path's bytes. Integers are
/// big-endian.
pub fn encode_walk(result: &WalkResult) -> Result<(WireWalkSummary, Bytes), RecordError> {
    let size = result
        .entries
        .iter()
        .map(|entry| 5 + entry.path.as_os_str().len())
        .sum();
    let mut out = BytesMut::with_capacity(size);
    for entry in &result.entries {
        out.put_u8(kind_byte(entry.kind));
        put_bytes(&mut out, entry.path.as_os_str().as_bytes())?;
    }
    Ok((
        WireWalkSummary {
            limit_reached: result.limit_reached,
        },
        out.freeze(),
    ))
}

/// The walk result of [`encode_walk`]'s value and records.
pub fn decode_walk(
    summary: WireWalkSummary,
    mut records: &[u8],
) -> Result<WalkResult, RecordError> {
    let mut entries = Vec::new();
    while !records.is_empty() {
        let kind = byte_kind(records.get_u8())?;
        let path = path_of(take_bytes(&mut records)?);
        entries.push(WalkEntry { path, kind });
    }
    Ok(WalkResult {
        entries,
        limit_reached: summary.limit_reached,
    })
}

/// A search result as its `value` and payload records: per file, `u32` path length, the
/// path's bytes, `u32` line count, then per line `u64` line number, `u8` flags (1: a match,
/// else context; 2: truncated), `u32` text length, the text (UTF-8). Integers are big-endian.
pub fn encode_search(result: &SearchResult) -> Result<(WireSearchSummary, Bytes), RecordError> {
    let size = result
        .files
        .iter()
        .map(|file| {
            8 + file.path.as_os_str().len()
                + file
                    .lines
                    .iter()
                    .map(|line| 13 + line.text.len())
                    .sum::<usize>()
        })
        .sum();
    let mut out = BytesMut::with_capacity(size);
    for file in &result.files {
        put_bytes(&mut out, file.path.as_os_str().as_bytes())?;
        out.put_u32(u32::try_from(file.lines.len()).map_err(|_| RecordError("too many lines"))?);
        for line in &file.lines {
            out.put_u64(line.number);
            let mut flags = 0;
            if line.kind == LineKind::Match {
                flags |= LINE_MATCH;
            }
            if line.truncated {
                flags |= LINE_TRUNCATED;
            }
            out.put_u8(flags);
            put_bytes(&mut out, line.text.as_bytes())?;
        }
    }
    Ok((
        WireSearchSummary {
            matches: result.matches,
            limit_reached: result.limit_reached,
        },
        out.freeze(),
    ))
}

/// The search result of [`encode_search`]'s value and records.
pub fn decode_search(
    summary: WireSearchSummary,
    records: &[u8],
) -> Result<SearchResult, RecordError> {
    let mut decoder = SearchDecoder::default();
    decoder.feed(records)?;
    decoder.finish(summary)
}

/// Reads [`encode_search`]'s records as they arrive, chunk by chunk (a record may be cut
/// anywhere between chunks), so the lines of one chunk are decoded while the next crosses.
#[derive(Debug, Default)]
pub struct SearchDecoder {
    /// The start of a record cut at the end of the last chunk.
    pending: Vec<u8>,
    files: Vec<FileMatches>,
    /// Lines of the last file still to come.
    lines_left: usize,
}

impl SearchDecoder {
    /// Decodes the complete records of what arrived so far.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), RecordError> {
        if self.pending.is_empty() {
            let used = self.decode(chunk)?;
            self.pending.extend_from_slice(&chunk[used..]);
        } else {
            let mut pending = std::mem::take(&mut self.pending);
            pending.extend_from_slice(chunk);
            let used = self.decode(&pending)?;
            pending.drain(..used);
            self.pending = pending;
        }
        Ok(())
    }

    /// The result, once every record arrived.
    pub fn finish(self, summary: WireSearchSummary) -> Result<SearchResult, RecordError> {
        if !self.pending.is_empty() || self.lines_left != 0 {
            return Err(RecordError("the records end early"));
        }
        Ok(SearchResult {
            files: self.files,
            matches: summary.matches,
            limit_reached: summary.limit_reached,
        })
    }

    /// Decodes the complete records at the start of `input`; how many bytes they took.
    fn decode(&mut self, input: &[u8]) -> Result<usize, RecordError> {
        let mut rest = input;
        loop {
            if self.lines_left == 0 {
                // A file: u32 path length, the path, u32 line count.
                let Some(len) = peek_len(rest, 0) else { break };
                if rest.len() < 8 + len {
                    break;
                }
                let path = path_of(&rest[4..4 + len]);
                rest = &rest[4 + len..];
                let count = rest.get_u32() as usize;
                // The count is checked against what is left, so a bad one cannot reserve much.
                let lines = Vec::with_capacity(count.min(rest.len() / 13 + 1));
                self.files.push(FileMatches { path, lines });
                self.lines_left = count;
            } else {
                // A line: u64 number, u8 flags, u32 text length, the text.
                let Some(len) = peek_len(rest, 9) else { break };
                if rest.len() < 13 + len {
                    break;
                }
                let number = rest.get_u64();
                let flags = rest.get_u8();
                rest.advance(4);
                let text = std::str::from_utf8(&rest[..len])
                    .map_err(|_| RecordError("a line's text is not UTF-8"))?;
                rest = &rest[len..];
                let Some(file) = self.files.last_mut() else {
                    return Err(RecordError("a line outside a file"));
                };
                file.lines.push(SearchLine {
                    number,
                    kind: if flags & LINE_MATCH == 0 {
                        LineKind::Context
                    } else {
                        LineKind::Match
                    },
                    text: text.to_owned(),
                    truncated: flags & LINE_TRUNCATED != 0,
                });
                self.lines_left -= 1;
            }
        }
        Ok(input.len() - rest.len())
    }
}

/// The `u32` length at `offset` of `input`, when that much arrived.
fn peek_len(input: &[u8], offset: usize) -> Option<usize> {
    let bytes = input.get(offset..offset + 4)?;
    Some(u32::from_be_bytes(bytes.try_into().ok()?) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_with_payload() {
        let (mut a, mut b) = tokio::io::duplex(1 << 16);
        let frame = Frame::with_payload(Message::Data { id: 7 }, Bytes::from_static(b"\0bytes"));
        write_frame(&mut a, &frame).await.unwrap();
        drop(a);
        let read = read_frame(&mut b).await.unwrap().unwrap();
        assert!(matches!(read.message, Message::Data { id: 7 }));
        assert_eq!(&read.payload[..], b"\0bytes");
        assert!(read_frame(&mut b).await.unwrap().is_none());
    }

    #[test]
    fn non_utf8_paths_survive() {
        let path = PathBuf::from(OsString::from_vec(vec![b'/', 0xff, b'x']));
        let wire = WirePath::from_path(&path);
        let json = serde_json::to_string(&wire).unwrap();
        let back: WirePath = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_path(), path);
    }

    fn odd_path() -> PathBuf {
        PathBuf::from(OsString::from_vec(vec![
            b's', b'r', b'c', b'/', 0xff, b'.', b'r', b's',
        ]))
    }

    #[test]
    fn search_records_round_trip() {
        let result = SearchResult {
            files: vec![
                FileMatches {
                    path: PathBuf::from("a \"quoted\"\tname.rs"),
                    lines: vec![
                        SearchLine {
                            number: 1,
                            kind: LineKind::Context,
                            text: String::new(),
                            truncated: false,
                        },
                        SearchLine {
                            number: u64::MAX,
                            kind: LineKind::Match,
                            text: "fn f() { \"\\\u{1}ü\" }".to_owned(),
                            truncated: true,
                        },
                    ],
                },
                FileMatches {
                    path: odd_path(),
                    lines: Vec::new(),
                },
            ],
            matches: 1,
            limit_reached: true,
        };
        let (summary, records) = encode_search(&result).unwrap();
        assert_eq!(decode_search(summary, &records).unwrap(), result);
        // Chunks cut anywhere, down to single bytes, decode to the same.
        for size in [1, 2, 3, 7, 13, 64] {
            let mut decoder = SearchDecoder::default();
            for chunk in records.chunks(size) {
                decoder.feed(chunk).unwrap();
            }
            assert_eq!(decoder.finish(summary).unwrap(), result, "chunks of {size}");
        }
        let empty = SearchResult::default();
        let (summary, records) = encode_search(&empty).unwrap();
        assert!(records.is_empty());
        assert_eq!(decode_search(summary, &records).unwrap(), empty);
    }

    #[test]
    fn walk_records_round_trip() {
        let result = WalkResult {
            entries: vec![
                WalkEntry {
                    path: PathBuf::from("dir"),
                    kind: FileKind::Directory,
                },
                WalkEntry {
                    path: odd_path(),
                    kind: FileKind::File,
                },
                WalkEntry {
                    path: PathBuf::from("link"),
                    kind: FileKind::Symlink,
                },
            ],
            limit_reached: false,
        };
        let (summary, records) = encode_walk(&result).unwrap();
        let back = decode_walk(summary, &records).unwrap();
        assert_eq!(back.entries, result.entries);
        assert!(!back.limit_reached);
    }

    #[test]
    fn cut_or_invalid_records_are_errors() {
        let result = SearchResult {
            files: vec![FileMatches {
                path: PathBuf::from("a.rs"),
                lines: vec![SearchLine {
                    number: 3,
                    kind: LineKind::Match,
                    text: "match".to_owned(),
                    truncated: false,
                }],
            }],
            matches: 1,
            limit_reached: false,
        };
        let (summary, records) = encode_search(&result).unwrap();
        for cut in 1..records.len() {
            assert!(
                decode_search(summary, &records[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut bad = records.to_vec();
        let last = bad.len() - 1;
        bad[last] = 0xff;
        assert_eq!(
            decode_search(summary, &bad).unwrap_err().to_string(),
            "malformed result records: a line's text is not UTF-8"
        );
        assert!(
            decode_walk(
                WireWalkSummary {
                    limit_reached: false
                },
                &[9, 0, 0, 0, 0]
            )
            .is_err()
        );
        assert!(
            decode_walk(
                WireWalkSummary {
                    limit_reached: false
                },
                &[0, 0, 0]
            )
            .is_err()
        );
    }
}
