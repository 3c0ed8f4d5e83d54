//! [`MemoryEnv`]: an in-memory filesystem behind the [`ExecutionEnv`] contract — the universal
//! test double and a dry-run backend. It cannot run processes: `exec` is
//! [`ErrorKind::Unsupported`]. `walk` and `search` are `jig-search`'s generic implementation on
//! the tree, so they follow the same rules as every other env.
//!
//! ```
//! use std::path::Path;
//! use jig_env::ExecutionEnv;
//! use jig_env_memory::MemoryEnv;
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let env = MemoryEnv::new();
//! env.write(Path::new("/ws/task.txt"), "status: draft\n".into()).await.unwrap();
//! assert_eq!(env.read(Path::new("/ws/task.txt")).await.unwrap(), b"status: draft\n");
//! # });
//! ```
//!//!
//! The tree is one owned structure behind a `std::sync::Mutex`; every operation takes the lock
//! once, so each operation is atomic with respect to the others (a `write` is never seen half
//! done). Paths are resolved component by component like a POSIX kernel does: symlinks in the
//! middle of a path are always followed (relative targets against the link's directory, absolute
//! ones from the root), a final symlink only where the contract says so, and more than 40 hops is
//! a loop error.
//!
//! Permission bits are modelled for a non-root user on regular files: a file without `0o400`
//! cannot be read, one without `0o200` cannot be written or appended to
//! ([`ErrorKind::PermissionDenied`]). Directory permission bits are stored and reported but not
//! enforced.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use async_trait::async_trait;
use jig_env::{
    Bytes, DirEntry, EnvError, EnvResult, ErrorKind, ExecOutcome, ExecRequest, ExecSink,
    ExecutionEnv, FileInfo, FileKind, FileLock, LineWindow, LinesRead, Recursive, SearchRequest,
    SearchResult, WalkRequest, WalkResult, WriteOutcome, check_no_nul, check_path,
    check_temp_affix, lines_window, normalize_path, outside_roots,
};

/// Mode of a file created by `write`/`append` (`0o666` under the usual `022` umask).
const NEW_FILE_MODE: u32 = 0o644;
/// Mode of a directory created by `create_dir` (`0o777` under the usual `022` umask).
const NEW_DIR_MODE: u32 = 0o755;
/// Mode reported for symlinks.
const SYMLINK_MODE: u32 = 0o777;
/// How many symlinks one resolution may follow before it is a loop (Linux's limit).
const MAX_SYMLINK_HOPS: u32 = 40;
/// Size reported for directories (what most Unix filesystems report).
const DIR_SIZE: u64 = 4096;

/// Distinguishes the temp directories of several `MemoryEnv`s in one process (their trees are
/// separate anyway, but distinct names make logs and test failures easier to read).
static NEXT_ENV_ID: AtomicU64 = AtomicU64::new(1);

/// An in-memory filesystem: the universal test double and a dry-run backend.
///
/// It starts with an empty root directory `/`. It cannot run processes: [`exec`] is
/// [`ErrorKind::Unsupported`]. Besides the [`ExecutionEnv`] methods it has synchronous helpers to
/// set up a test tree ([`add_file`](Self::add_file), [`add_dir`](Self::add_dir),
/// [`symlink`](Self::symlink), [`set_mode`](Self::set_mode),
/// [`set_modified`](Self::set_modified)) and to inspect it ([`files`](Self::files),
/// [`temp_dir`](Self::temp_dir)).
///
/// ```
/// use std::path::Path;
/// use jig_env::{ExecutionEnv, FileKind};
/// use jig_env_memory::MemoryEnv;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let env = MemoryEnv::with_home("/home/me");
/// env.add_file("/ws/notes/a.txt", "one\ntwo\n").unwrap();
/// env.symlink("notes", "/ws/link").unwrap();
/// let info = env.file_info(Path::new("/ws/link")).await.unwrap();
/// assert_eq!(info.kind, FileKind::Symlink);
/// assert_eq!(env.read(Path::new("/ws/link/a.txt")).await.unwrap(), b"one\ntwo\n");
/// assert_eq!(env.home_dir().unwrap(), Path::new("/home/me"));
/// # });
/// ```
///
/// [`exec`]: ExecutionEnv::exec
pub struct MemoryEnv {
    id: u64,
    home: Option<PathBuf>,
    state: Arc<Mutex<State>>,
    /// The roots of a confined view ([`ExecutionEnv::beneath`]); `None` for the env itself.
    confine: Option<Arc<[PathBuf]>>,
}

#[derive(Debug)]
struct State {
    root: Node,
    temp_dir: Option<PathBuf>,
    next_temp: u64,
    /// The roots resolution must stay beneath: set from the view on every lock, so checking
    /// and acting happen under one lock.
    confine: Option<Arc<[PathBuf]>>,
}

#[derive(Debug, Clone)]
struct Node {
    kind: NodeKind,
    mode: u32,
    modified: SystemTime,
}

#[derive(Debug, Clone)]
enum NodeKind {
    File(Vec<u8>),
    Dir(BTreeMap<OsString, Node>),
    Symlink(PathBuf),
}

impl Node {
    fn dir(mode: u32) -> Self {
        Self {
            kind: NodeKind::Dir(BTreeMap::new()),
            mode,
            modified: SystemTime::now(),
        }
    }

    fn file(content: Vec<u8>, mode: u32) -> Self {
        Self {
            kind: NodeKind::File(content),
            mode,
            modified: SystemTime::now(),
        }
    }

    fn file_kind(&self) -> FileKind {
        match self.kind {
            NodeKind::File(_) => FileKind::File,
            NodeKind::Dir(_) => FileKind::Directory,
            NodeKind::Symlink(_) => FileKind::Symlink,
        }
    }

    fn info(&self, path: PathBuf) -> FileInfo {
        let size = match &self.kind {
            NodeKind::File(content) => content.len() as u64,
            NodeKind::Dir(_) => DIR_SIZE,
            NodeKind::Symlink(target) => target.as_os_str().len() as u64,
        };
        FileInfo {
            path,
            kind: self.file_kind(),
            size,
            modified: Some(self.modified),
            mode: self.mode,
            file_id: None,
        }
    }
}

/// Where a path lands after symlink resolution: an existing directory `parent` (as physical
/// components from the root, no symlinks) and a final `name` in it (`None` for the root itself).
#[derive(Debug)]
struct Resolved {
    parent: Vec<OsString>,
    name: Option<OsString>,
    exists: bool,
}

impl Resolved {
    fn physical(&self) -> Vec<OsString> {
        let mut out = self.parent.clone();
        out.extend(self.name.clone());
        out
    }
}

/// A component still to resolve.
enum Step {
    Name(OsString),
    Parent,
}

/// Where a symlink met during a confined resolution leads, with the rest of the path: it must
/// stay beneath a root (checked under the same lock as the operation), else `OutsideRoots`.
fn confined_hop(
    op: &'static str,
    path: &Path,
    roots: &[PathBuf],
    phys: &[OsString],
    name: &OsStr,
    target: &Path,
    rest: &VecDeque<Step>,
) -> EnvResult<PathBuf> {
    let link = physical_path(phys).join(name);
    let mut leads_to = physical_path(phys).join(target);
    for step in rest {
        match step {
            Step::Name(part) => leads_to.push(part),
            Step::Parent => leads_to.push(".."),
        }
    }
    let leads_to = normalize_path(&leads_to);
    if !roots.iter().any(|root| leads_to.starts_with(root)) {
        return Err(outside_roots(op, path, &leads_to, roots, Some(&link)));
    }
    Ok(leads_to)
}

fn physical_path(parts: &[OsString]) -> PathBuf {
    let mut out = PathBuf::from("/");
    for part in parts {
        out.push(part);
    }
    out
}

fn error(kind: ErrorKind, operation: &'static str, path: &Path) -> EnvError {
    let message = match kind {
        ErrorKind::NotFound => "no such file or directory",
        ErrorKind::PermissionDenied => "permission denied",
        ErrorKind::NotADirectory => "not a directory",
        ErrorKind::IsADirectory => "is a directory",
        _ => "operation failed",
    };
    EnvError::new(kind, operation, message).with_path(path)
}

fn exists_error(operation: &'static str, path: &Path) -> EnvError {
    EnvError::new(ErrorKind::Other, operation, "file exists").with_path(path)
}

fn checked(operation: &'static str, path: &Path) -> EnvResult<PathBuf> {
    check_path(operation, path)
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panic while holding the lock cannot leave the tree half-updated in a way that matters
    // more than losing the env, and tests should see the original panic, not a poison error.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl State {
    fn new() -> Self {
        Self {
            root: Node::dir(NEW_DIR_MODE),
            temp_dir: None,
            next_temp: 0,
            confine: None,
        }
    }

    fn node(&self, parts: &[OsString]) -> Option<&Node> {
        let mut node = &self.root;
        for part in parts {
            match &node.kind {
                NodeKind::Dir(entries) => node = entries.get(part)?,
                _ => return None,
            }
        }
        Some(node)
    }

    fn node_mut(&mut self, parts: &[OsString]) -> Option<&mut Node> {
        let mut node = &mut self.root;
        for part in parts {
            match &mut node.kind {
                NodeKind::Dir(entries) => node = entries.get_mut(part)?,
                _ => return None,
            }
        }
        Some(node)
    }

    /// The entries of the directory at `parts` (which resolution guarantees is a directory),
    /// with its mtime bumped because the caller is about to change them.
    fn entries_mut(
        &mut self,
        parts: &[OsString],
        op: &'static str,
    ) -> EnvResult<&mut BTreeMap<OsString, Node>> {
        let node = self
            .node_mut(parts)
            .ok_or_else(|| error(ErrorKind::NotFound, op, &physical_path(parts)))?;
        node.modified = SystemTime::now();
        match &mut node.kind {
            NodeKind::Dir(entries) => Ok(entries),
            _ => Err(error(ErrorKind::NotADirectory, op, &physical_path(parts))),
        }
    }

    /// Resolves `path` (absolute, normalised) to a physical location. Symlinks in the middle
    /// are always followed; a final one only with `follow_last`. A missing final component is
    /// fine (`exists: false`); a missing or non-directory intermediate one is an error.
    fn resolve(&self, op: &'static str, path: &Path, follow_last: bool) -> EnvResult<Resolved> {
        let steps = |path: &Path| -> VecDeque<Step> {
            path.components()
                .filter_map(|component| match component {
                    Component::Normal(name) => Some(Step::Name(name.to_os_string())),
                    Component::ParentDir => Some(Step::Parent),
                    _ => None,
                })
                .collect()
        };
        if let Some(roots) = &self.confine {
            let spelled = normalize_path(path);
            if !roots.iter().any(|root| spelled.starts_with(root)) {
                return Err(outside_roots(op, path, &spelled, roots, None));
            }
        }
        let mut queue = steps(path);
        let mut phys: Vec<OsString> = Vec::new();
        let mut hops = 0_u32;
        while let Some(step) = queue.pop_front() {
            let name = match step {
                Step::Parent => {
                    phys.pop();
                    continue;
                }
                Step::Name(name) => name,
            };
            let last = queue.is_empty();
            let Some(NodeKind::Dir(entries)) = self.node(&phys).map(|node| &node.kind) else {
                // Unreachable by construction (phys only ever holds directories); be explicit.
                return Err(error(ErrorKind::NotADirectory, op, path));
            };
            match entries.get(&name) {
                None if last => {
                    return Ok(Resolved {
                        parent: phys,
                        name: Some(name),
                        exists: false,
                    });
                }
                None => return Err(error(ErrorKind::NotFound, op, path)),
                Some(node) => match &node.kind {
                    NodeKind::Symlink(target) if !last || follow_last => {
                        hops += 1;
                        if hops > MAX_SYMLINK_HOPS {
                            return Err(EnvError::new(
                                ErrorKind::Invalid,
                                op,
                                "too many levels of symbolic links",
                            )
                            .with_path(path));
                        }
                        if target.as_os_str().is_empty() {
                            return Err(error(ErrorKind::NotFound, op, path));
                        }
                        if let Some(roots) = &self.confine {
                            let leads_to =
                                confined_hop(op, path, roots, &phys, &name, target, &queue)?;
                            phys.clear();
                            queue = steps(&leads_to);
                            continue;
                        }
                        if target.has_root() {
                            phys.clear();
                        }
                        for component in target.components().rev() {
                            match component {
                                Component::Normal(part) => {
                                    queue.push_front(Step::Name(part.to_os_string()));
                                }
                                Component::ParentDir => queue.push_front(Step::Parent),
                                _ => {}
                            }
                        }
                    }
                    NodeKind::Dir(_) => phys.push(name),
                    _ if last => {
                        return Ok(Resolved {
                            parent: phys,
                            name: Some(name),
                            exists: true,
                        });
                    }
                    _ => return Err(error(ErrorKind::NotADirectory, op, path)),
                },
            }
        }
        // The walk ended on a directory (possibly the root).
        let name = phys.pop();
        Ok(Resolved {
            parent: phys,
            name,
            exists: true,
        })
    }

    fn resolve_existing(
        &self,
        op: &'static str,
        path: &Path,
        follow_last: bool,
    ) -> EnvResult<(Vec<OsString>, &Node)> {
        let resolved = self.resolve(op, path, follow_last)?;
        if !resolved.exists {
            return Err(error(ErrorKind::NotFound, op, path));
        }
        let parts = resolved.physical();
        let node = self
            .node(&parts)
            .ok_or_else(|| error(ErrorKind::NotFound, op, path))?;
        Ok((parts, node))
    }

    fn readable_file(&self, op: &'static str, path: &Path) -> EnvResult<&[u8]> {
        let (_, node) = self.resolve_existing(op, path, true)?;
        match &node.kind {
            NodeKind::File(content) if node.mode & 0o400 != 0 => Ok(content),
            NodeKind::File(_) => Err(error(ErrorKind::PermissionDenied, op, path)),
            NodeKind::Dir(_) => Err(error(ErrorKind::IsADirectory, op, path)),
            NodeKind::Symlink(_) => Err(error(ErrorKind::NotFound, op, path)),
        }
    }

    /// `mkdir -p`: every missing directory of `path` is created; symlinks to directories on
    /// the way are followed.
    fn create_dir_all(&mut self, op: &'static str, path: &Path, mode: u32) -> EnvResult<()> {
        let mut prefix = PathBuf::from("/");
        for component in path.components() {
            let Component::Normal(part) = component else {
                continue;
            };
            prefix.push(part);
            // A view starts at its roots: their ancestors are not its to look at.
            if let Some(roots) = &self.confine
                && roots
                    .iter()
                    .any(|root| root.starts_with(&prefix) && *root != prefix)
            {
                continue;
            }
            let resolved = self.resolve(op, &prefix, true)?;
            if resolved.exists {
                let node = self
                    .node(&resolved.physical())
                    .ok_or_else(|| error(ErrorKind::NotFound, op, &prefix))?;
                if !matches!(node.kind, NodeKind::Dir(_)) {
                    return Err(error(ErrorKind::NotADirectory, op, &prefix));
                }
                continue;
            }
            // A dangling symlink on the way is not silently turned into a directory at its
            // target (`mkdir -p` refuses too).
            if self.resolve(op, &prefix, false)?.exists {
                return Err(exists_error(op, &prefix));
            }
            let Some(name) = resolved.name else { continue };
            self.entries_mut(&resolved.parent, op)?
                .insert(name, Node::dir(mode));
        }
        Ok(())
    }

    /// Creates the missing parents of `path` (lexically), then resolves `path` following a
    /// final symlink: where `write` and `append` put their bytes.
    fn prepare_file_target(&mut self, op: &'static str, path: &Path) -> EnvResult<Resolved> {
        if let Some(parent) = path.parent() {
            self.create_dir_all(op, parent, NEW_DIR_MODE)?;
        }
        let resolved = self.resolve(op, path, true)?;
        let Some(name) = &resolved.name else {
            return Err(error(ErrorKind::IsADirectory, op, path));
        };
        if resolved.exists {
            let node = self
                .node(&resolved.physical())
                .ok_or_else(|| error(ErrorKind::NotFound, op, path))?;
            match node.kind {
                NodeKind::Dir(_) => return Err(error(ErrorKind::IsADirectory, op, path)),
                NodeKind::File(_) if node.mode & 0o200 == 0 => {
                    return Err(error(ErrorKind::PermissionDenied, op, path));
                }
                _ => {}
            }
        } else if name.is_empty() {
            return Err(error(ErrorKind::Invalid, op, path));
        }
        Ok(resolved)
    }

    fn ensure_temp_dir(&mut self, env_id: u64) -> EnvResult<PathBuf> {
        if let Some(dir) = &self.temp_dir
            && let Ok(resolved) = self.resolve("tempdir", dir, false)
            && resolved.exists
        {
            return Ok(dir.clone());
        }
        self.create_dir_all("tempdir", Path::new("/tmp"), 0o1777)?;
        let dir = loop {
            self.next_temp += 1;
            let candidate =
                PathBuf::from(format!("/tmp/jig-memory-{env_id}-{:04}", self.next_temp));
            if !self.resolve("tempdir", &candidate, false)?.exists {
                break candidate;
            }
        };
        let resolved = self.resolve("tempdir", &dir, false)?;
        let Some(name) = resolved.name else {
            return Err(error(ErrorKind::Invalid, "tempdir", &dir));
        };
        self.entries_mut(&resolved.parent, "tempdir")?
            .insert(name, Node::dir(0o700));
        self.temp_dir = Some(dir.clone());
        Ok(dir)
    }

    fn create_temp_entry(
        &mut self,
        env_id: u64,
        op: &'static str,
        prefix: &str,
        suffix: &str,
        node: &Node,
    ) -> EnvResult<PathBuf> {
        check_temp_affix(op, prefix)?;
        check_temp_affix(op, suffix)?;
        let dir = self.ensure_temp_dir(env_id)?;
        let resolved = self.resolve(op, &dir, true)?;
        let parent = resolved.physical();
        loop {
            self.next_temp += 1;
            let name = OsString::from(format!("{prefix}{:06x}{suffix}", self.next_temp));
            let entries = self.entries_mut(&parent, op)?;
            if !entries.contains_key(&name) {
                entries.insert(name.clone(), node.clone());
                return Ok(dir.join(name));
            }
        }
    }

    fn collect_files(node: &Node, path: &mut PathBuf, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        match &node.kind {
            NodeKind::File(content) => {
                out.insert(path.clone(), content.clone());
            }
            NodeKind::Dir(entries) => {
                for (name, child) in entries {
                    path.push(name);
                    Self::collect_files(child, path, out);
                    path.pop();
                }
            }
            NodeKind::Symlink(_) => {}
        }
    }
}

impl std::fmt::Debug for MemoryEnv {
    /// Compact: the tree can be large, so only its size is shown (use [`MemoryEnv::files`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files = self.files().len();
        f.debug_struct("MemoryEnv")
            .field("id", &self.id)
            .field("home", &self.home)
            .field("files", &files)
            .finish_non_exhaustive()
    }
}

impl Default for MemoryEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryEnv {
    /// An empty filesystem (only `/`) without a home directory (`~` cannot be expanded).
    pub fn new() -> Self {
        Self {
            id: NEXT_ENV_ID.fetch_add(1, Ordering::Relaxed),
            home: None,
            state: Arc::new(Mutex::new(State::new())),
            confine: None,
        }
    }

    /// An empty filesystem whose home directory is `home` (created, with its parents).
    ///
    /// # Panics
    /// When `home` is not an absolute path without NUL bytes (a bug in the calling test).
    pub fn with_home(home: impl AsRef<Path>) -> Self {
        let mut env = Self::new();
        let home = normalize_path(home.as_ref());
        if let Err(error) = env.add_dir(&home) {
            panic!("MemoryEnv::with_home({}): {error}", home.display());
        }
        env.home = Some(home);
        env
    }

    /// Creates (or replaces) a regular file with `content`, creating missing parent
    /// directories; mode `0o644`. A final symlink is replaced, not followed.
    pub fn add_file(&self, path: impl AsRef<Path>, content: impl Into<Vec<u8>>) -> EnvResult<()> {
        let path = checked("write", path.as_ref())?;
        let mut state = self.lock();
        if let Some(parent) = path.parent() {
            state.create_dir_all("write", parent, NEW_DIR_MODE)?;
        }
        let resolved = state.resolve("write", &path, false)?;
        let Some(name) = resolved.name else {
            return Err(error(ErrorKind::IsADirectory, "write", &path));
        };
        let entries = state.entries_mut(&resolved.parent, "write")?;
        if let Some(Node {
            kind: NodeKind::Dir(_),
            ..
        }) = entries.get(&name)
        {
            return Err(error(ErrorKind::IsADirectory, "write", &path));
        }
        entries.insert(name, Node::file(content.into(), NEW_FILE_MODE));
        Ok(())
    }

    /// Creates a directory and its missing parents (`mkdir -p`); an existing one is fine.
    pub fn add_dir(&self, path: impl AsRef<Path>) -> EnvResult<()> {
        let path = checked("mkdir", path.as_ref())?;
        self.lock().create_dir_all("mkdir", &path, NEW_DIR_MODE)
    }

    /// Creates a symlink at `link` pointing to `target` (stored as given: relative targets
    /// resolve against the link's directory). The target need not exist (a dangling link);
    /// the link's parent must exist and `link` must not.
    pub fn symlink(&self, target: impl AsRef<Path>, link: impl AsRef<Path>) -> EnvResult<()> {
        let target = target.as_ref();
        check_no_nul("symlink", target)?;
        let link = checked("symlink", link.as_ref())?;
        let mut state = self.lock();
        let resolved = state.resolve("symlink", &link, false)?;
        if resolved.exists {
            return Err(exists_error("symlink", &link));
        }
        let Some(name) = resolved.name else {
            return Err(exists_error("symlink", &link));
        };
        let node = Node {
            kind: NodeKind::Symlink(target.to_path_buf()),
            mode: SYMLINK_MODE,
            modified: SystemTime::now(),
        };
        state
            .entries_mut(&resolved.parent, "symlink")?
            .insert(name, node);
        Ok(())
    }

    /// Sets the permission bits (`chmod`; follows symlinks). Only the low 12 bits are kept.
    pub fn set_mode(&self, path: impl AsRef<Path>, mode: u32) -> EnvResult<()> {
        let path = checked("chmod", path.as_ref())?;
        let mut state = self.lock();
        let (parts, _) = state.resolve_existing("chmod", &path, true)?;
        let node = state
            .node_mut(&parts)
            .ok_or_else(|| error(ErrorKind::NotFound, "chmod", &path))?;
        node.mode = mode & 0o7777;
        Ok(())
    }

    /// Sets the modification time (follows symlinks).
    pub fn set_modified(&self, path: impl AsRef<Path>, modified: SystemTime) -> EnvResult<()> {
        let path = checked("touch", path.as_ref())?;
        let mut state = self.lock();
        let (parts, _) = state.resolve_existing("touch", &path, true)?;
        let node = state
            .node_mut(&parts)
            .ok_or_else(|| error(ErrorKind::NotFound, "touch", &path))?;
        node.modified = modified;
        Ok(())
    }

    /// Every regular file in the tree with its content, keyed by physical path (symlinks are
    /// not listed and not followed). Handy to compare a whole tree after an operation.
    pub fn files(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let state = self.lock();
        let mut out = BTreeMap::new();
        State::collect_files(&state.root, &mut PathBuf::from("/"), &mut out);
        out
    }

    /// The private temp directory, once a temp file or directory was created (and until
    /// [`cleanup`](ExecutionEnv::cleanup)).
    pub fn temp_dir(&self) -> Option<PathBuf> {
        self.lock().temp_dir.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        let mut state = lock(&self.state);
        state.confine.clone_from(&self.confine);
        state
    }

    /// The lock without confinement, for the env's own temp directory.
    fn lock_unconfined(&self) -> MutexGuard<'_, State> {
        let mut state = lock(&self.state);
        state.confine = None;
        state
    }
}

fn check_window(window: &LineWindow) -> EnvResult<()> {
    if window.start_line == 0 {
        return Err(EnvError::new(
            ErrorKind::Invalid,
            "read",
            "start_line is 1-based; 0 is not a line",
        ));
    }
    Ok(())
}

#[async_trait]
impl ExecutionEnv for MemoryEnv {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    async fn canonical_path(&self, path: &Path) -> EnvResult<PathBuf> {
        let path = checked("canonicalize", path)?;
        tokio::task::yield_now().await;
        let state = self.lock();
        let (parts, _) = state.resolve_existing("canonicalize", &path, true)?;
        Ok(physical_path(&parts))
    }

    async fn file_info(&self, path: &Path) -> EnvResult<FileInfo> {
        let path = checked("stat", path)?;
        tokio::task::yield_now().await;
        let state = self.lock();
        let (_, node) = state.resolve_existing("stat", &path, false)?;
        Ok(node.info(path))
    }

    async fn stat(&self, path: &Path) -> EnvResult<FileInfo> {
        let path = checked("stat", path)?;
        tokio::task::yield_now().await;
        let state = self.lock();
        let (_, node) = state.resolve_existing("stat", &path, true)?;
        Ok(node.info(path))
    }

    async fn read_link(&self, path: &Path) -> EnvResult<PathBuf> {
        let path = checked("readlink", path)?;
        tokio::task::yield_now().await;
        let state = self.lock();
        let (_, node) = state.resolve_existing("readlink", &path, false)?;
        match &node.kind {
            NodeKind::Symlink(target) => Ok(target.clone()),
            _ => Err(
                EnvError::new(ErrorKind::Invalid, "readlink", "not a symbolic link")
                    .with_path(path),
            ),
        }
    }

    async fn read(&self, path: &Path) -> EnvResult<Vec<u8>> {
        let path = checked("read", path)?;
        tokio::task::yield_now().await;
        let state = self.lock();
        Ok(state.readable_file("read", &path)?.to_vec())
    }

    async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        let path = checked("read", path)?;
        tokio::task::yield_now().await;
        let state = self.lock();
        let content = state.readable_file("read", &path)?;
        Ok(content[..content.len().min(max_bytes)].to_vec())
    }

    async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead> {
        let path = checked("read", path)?;
        check_window(&window).map_err(|error| error.with_path(&path))?;
        tokio::task::yield_now().await;
        let state = self.lock();
        let content = state.readable_file("read", &path)?;
        Ok(lines_window(content, &window))
    }

    async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome> {
        let path = checked("write", path)?;
        tokio::task::yield_now().await;
        let mut state = self.lock();
        let resolved = state.prepare_file_target("write", &path)?;
        let created = !resolved.exists;
        let parts = resolved.physical();
        if let Some(node) = state.node_mut(&parts) {
            node.kind = NodeKind::File(data.to_vec());
            node.modified = SystemTime::now();
        } else if let Some(name) = resolved.name {
            state
                .entries_mut(&resolved.parent, "write")?
                .insert(name, Node::file(data.to_vec(), NEW_FILE_MODE));
        }
        Ok(WriteOutcome { created })
    }

    async fn append(&self, path: &Path, data: Bytes) -> EnvResult<()> {
        let path = checked("append", path)?;
        tokio::task::yield_now().await;
        let mut state = self.lock();
        let resolved = state.prepare_file_target("append", &path)?;
        let parts = resolved.physical();
        if let Some(node) = state.node_mut(&parts) {
            if let NodeKind::File(content) = &mut node.kind {
                content.extend_from_slice(&data);
            }
            node.modified = SystemTime::now();
        } else if let Some(name) = resolved.name {
            state
                .entries_mut(&resolved.parent, "append")?
                .insert(name, Node::file(data.to_vec(), NEW_FILE_MODE));
        }
        Ok(())
    }

    async fn rename(&self, from: &Path, to: &Path) -> EnvResult<()> {
        let from = checked("rename", from)?;
        let to = checked("rename", to)?;
        tokio::task::yield_now().await;
        let mut state = self.lock();
        let source = state.resolve("rename", &from, false)?;
        if !source.exists {
            return Err(error(ErrorKind::NotFound, "rename", &from));
        }
        let Some(source_name) = source.name.clone() else {
            return Err(EnvError::new(
                ErrorKind::Invalid,
                "rename",
                "cannot rename the root directory",
            )
            .with_path(from));
        };
        let dest = state.resolve("rename", &to, false)?;
        let Some(dest_name) = dest.name.clone() else {
            return Err(error(ErrorKind::IsADirectory, "rename", &to));
        };
        let source_parts = source.physical();
        let dest_parts = dest.physical();
        if source_parts == dest_parts {
            return Ok(());
        }
        let source_is_dir = matches!(
            state.node(&source_parts).map(|node| &node.kind),
            Some(NodeKind::Dir(_))
        );
        if source_is_dir && dest_parts.starts_with(&source_parts) {
            return Err(EnvError::new(
                ErrorKind::Invalid,
                "rename",
                "cannot move a directory into itself",
            )
            .with_path(to));
        }
        if dest.exists {
            let dest_entries = match state.node(&dest_parts).map(|node| &node.kind) {
                Some(NodeKind::Dir(entries)) => Some(entries.len()),
                _ => None,
            };
            match (source_is_dir, dest_entries) {
                (true, Some(count)) if count > 0 => {
                    return Err(
                        EnvError::new(ErrorKind::Other, "rename", "directory not empty")
                            .with_path(to),
                    );
                }
                (false, Some(_)) => return Err(error(ErrorKind::IsADirectory, "rename", &to)),
                (true, None) => return Err(error(ErrorKind::NotADirectory, "rename", &to)),
                _ => {}
            }
        }
        let node = state
            .entries_mut(&source.parent, "rename")?
            .remove(&source_name)
            .ok_or_else(|| error(ErrorKind::NotFound, "rename", &from))?;
        state
            .entries_mut(&dest.parent, "rename")?
            .insert(dest_name, node);
        Ok(())
    }

    async fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        let path = checked("remove", path)?;
        tokio::task::yield_now().await;
        let mut state = self.lock();
        let resolved = state.resolve("remove", &path, false)?;
        if !resolved.exists {
            return Err(error(ErrorKind::NotFound, "remove", &path));
        }
        let Some(name) = resolved.name.clone() else {
            return Err(EnvError::new(
                ErrorKind::Invalid,
                "remove",
                "refusing to remove the root directory",
            )
            .with_path(path));
        };
        if recursive == Recursive::No
            && let Some(Node {
                kind: NodeKind::Dir(entries),
                ..
            }) = state.node(&resolved.physical())
            && !entries.is_empty()
        {
            return Err(
                EnvError::new(ErrorKind::Other, "remove", "directory not empty").with_path(path),
            );
        }
        state.entries_mut(&resolved.parent, "remove")?.remove(&name);
        if let Some(temp) = &state.temp_dir
            && temp.starts_with(&path)
        {
            state.temp_dir = None;
        }
        Ok(())
    }

    async fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        let path = checked("mkdir", path)?;
        tokio::task::yield_now().await;
        let mut state = self.lock();
        if recursive == Recursive::Yes {
            return state.create_dir_all("mkdir", &path, NEW_DIR_MODE);
        }
        let resolved = state.resolve("mkdir", &path, false)?;
        let Some(name) = resolved.name else {
            return Err(exists_error("mkdir", &path));
        };
        if resolved.exists {
            return Err(exists_error("mkdir", &path));
        }
        state
            .entries_mut(&resolved.parent, "mkdir")?
            .insert(name, Node::dir(NEW_DIR_MODE));
        Ok(())
    }

    async fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>> {
        let path = checked("readdir", path)?;
        tokio::task::yield_now().await;
        let state = self.lock();
        let (_, node) = state.resolve_existing("readdir", &path, true)?;
        match &node.kind {
            NodeKind::Dir(entries) => Ok(entries
                .iter()
                .map(|(name, child)| DirEntry {
                    name: name.clone(),
                    kind: child.file_kind(),
                })
                .collect()),
            _ => Err(error(ErrorKind::NotADirectory, "readdir", &path)),
        }
    }

    async fn create_temp_file(&self, prefix: &str, suffix: &str) -> EnvResult<PathBuf> {
        tokio::task::yield_now().await;
        let node = Node::file(Vec::new(), 0o600);
        self.lock_unconfined()
            .create_temp_entry(self.id, "tempfile", prefix, suffix, &node)
    }

    async fn create_temp_dir(&self, prefix: &str) -> EnvResult<PathBuf> {
        tokio::task::yield_now().await;
        let node = Node::dir(0o700);
        self.lock_unconfined()
            .create_temp_entry(self.id, "tempdir", prefix, "", &node)
    }

    async fn exec(
        &self,
        _request: ExecRequest,
        _sink: &mut dyn ExecSink,
    ) -> EnvResult<ExecOutcome> {
        Err(EnvError::unsupported(
            "exec",
            "the in-memory environment cannot run processes",
        ))
    }

    async fn walk(&self, request: WalkRequest) -> EnvResult<WalkResult> {
        jig_search::walk_with_env(self, request).await
    }

    async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult> {
        jig_search::search_with_env(self, request).await
    }

    fn beneath(self: Arc<Self>, roots: &[PathBuf]) -> EnvResult<Arc<dyn ExecutionEnv>> {
        let mut confined = Vec::with_capacity(roots.len());
        let state = self.lock();
        for root in roots {
            let root = check_path("beneath", root)?;
            // Each root must be an existing directory the view itself may reach (a view of a
            // view only narrows).
            let (parts, node) = state.resolve_existing("beneath", &root, true)?;
            if !matches!(node.kind, NodeKind::Dir(_)) {
                return Err(error(ErrorKind::NotADirectory, "beneath", &root));
            }
            let physical = physical_path(&parts);
            if !confined.contains(&physical) {
                confined.push(physical);
            }
        }
        drop(state);
        Ok(Arc::new(Self {
            id: self.id,
            home: self.home.clone(),
            state: Arc::clone(&self.state),
            confine: Some(confined.into()),
        }))
    }

    async fn lock_file(&self, path: &Path) -> EnvResult<FileLock> {
        let path = checked("lock", path)?;
        let state = self.lock();
        let (_, node) = state.resolve_existing("lock", &path, true)?;
        match node.kind {
            // No other process sees this tree: in-process ordering is all there is.
            NodeKind::File(_) => Ok(FileLock::private()),
            NodeKind::Dir(_) => Err(error(ErrorKind::IsADirectory, "lock", &path)),
            NodeKind::Symlink(_) => Err(error(ErrorKind::NotFound, "lock", &path)),
        }
    }

    async fn cleanup(&self) {
        if self.confine.is_some() {
            // A view owns nothing; the env it came from cleans up.
            return;
        }
        let mut state = self.lock_unconfined();
        let Some(dir) = state.temp_dir.take() else {
            return;
        };
        if let Ok(resolved) = state.resolve("cleanup", &dir, false)
            && resolved.exists
            && let Some(name) = resolved.name
            && let Ok(entries) = state.entries_mut(&resolved.parent, "cleanup")
        {
            entries.remove(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn symlink_loops_are_an_error_not_a_hang() {
        let env = MemoryEnv::new();
        env.add_dir("/d").unwrap();
        env.symlink("b", "/d/a").unwrap();
        env.symlink("a", "/d/b").unwrap();
        let error = env.read(Path::new("/d/a")).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Invalid);
        assert!(error.to_string().contains("too many levels"), "{error}");
    }

    #[tokio::test]
    async fn dot_dot_in_a_symlink_target_is_physical() {
        let env = MemoryEnv::new();
        env.add_file("/a/b/c/f.txt", "x").unwrap();
        env.symlink("/a/b/c", "/link").unwrap();
        env.symlink("../c/f.txt", "/a/b/c/rel").unwrap();
        assert_eq!(
            env.canonical_path(Path::new("/link/rel")).await.unwrap(),
            PathBuf::from("/a/b/c/f.txt")
        );
        assert_eq!(
            env.canonical_path(Path::new("/link")).await.unwrap(),
            PathBuf::from("/a/b/c")
        );
    }

    #[tokio::test]
    async fn helpers_build_a_tree_and_files_lists_it() {
        let env = MemoryEnv::with_home("/home/u");
        env.add_file("/ws/a.txt", "1").unwrap();
        env.add_file("/ws/sub/b.txt", "2").unwrap();
        env.symlink("a.txt", "/ws/l").unwrap();
        env.set_mode("/ws/a.txt", 0o600).unwrap();
        let files = env.files();
        assert_eq!(
            files.keys().cloned().collect::<Vec<_>>(),
            vec![PathBuf::from("/ws/a.txt"), PathBuf::from("/ws/sub/b.txt")]
        );
        assert_eq!(env.stat(Path::new("/ws/l")).await.unwrap().mode, 0o600);
        assert_eq!(
            env.file_info(Path::new("/home/u")).await.unwrap().kind,
            FileKind::Directory
        );
        assert!(env.symlink("x", "/ws/l").is_err());
    }

    #[tokio::test]
    async fn files_without_permission_bits_are_refused() {
        let env = MemoryEnv::new();
        env.add_file("/f", "data").unwrap();
        env.set_mode("/f", 0o444).unwrap();
        let error = env
            .write(Path::new("/f"), Bytes::from_static(b"new"))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::PermissionDenied);
        assert_eq!(env.read(Path::new("/f")).await.unwrap(), b"data");
        env.set_mode("/f", 0o200).unwrap();
        assert_eq!(
            env.read(Path::new("/f")).await.unwrap_err().kind(),
            ErrorKind::PermissionDenied
        );
    }

    #[tokio::test]
    async fn exec_is_unsupported() {
        let env = MemoryEnv::new();
        let request = ExecRequest::new("true", Vec::new(), "/");
        let error = env
            .exec(request, &mut jig_env::DiscardSink)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Unsupported);
    }
}
