use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use jig_env::{CancellationToken, ExecutionEnv, SandboxPolicy};
use jig_protocol::ToolResult;

use crate::error::ToolError;
use crate::mutation_queue::MutationQueue;

/// Whether file tools are confined to the roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContainmentMode {
    /// Every file tool refuses paths outside the roots (lexically or after resolving symlinks).
    #[default]
    Workspace,
    /// No confinement: any path the env can reach.
    None,
}

/// The roots file tools are confined to, and whether confinement is on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Containment {
    /// Workspace or none.
    pub mode: ContainmentMode,
    /// Canonical (symlink-free, absolute) root directories.
    pub roots: Vec<PathBuf>,
    /// Canonical directories `read` may also read, never write (the skills' directories):
    /// confined like the roots, for reading only.
    pub read_only_roots: Vec<PathBuf>,
}

impl Containment {
    /// The containment of reading tools: the roots and the read-only roots.
    #[must_use]
    pub fn for_reading(&self) -> Containment {
        let mut roots = self.roots.clone();
        roots.extend(
            self.read_only_roots
                .iter()
                .filter(|root| !roots.contains(root))
                .cloned()
                .collect::<Vec<_>>(),
        );
        Containment {
            mode: self.mode,
            roots,
            read_only_roots: Vec::new(),
        }
    }
}

/// The call a context runs: set by whoever dispatches it (the agent loop with the model's call
/// id, a host without a model with [`CallInfo::next`]), so everything the call does can be
/// attributed to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallInfo {
    /// The call's id: the model's tool call id, or `call-PID-N` for a call no model made.
    pub id: String,
    /// The tool's name.
    pub tool: String,
}

/// The last id [`CallInfo::next`] gave out in this process.
static MINTED: AtomicU64 = AtomicU64::new(0);

impl CallInfo {
    /// The call `id` of `tool`.
    pub fn new(id: impl Into<String>, tool: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            tool: tool.into(),
        }
    }

    /// A call of `tool` no model made (an MCP client's, the command line's): `call-PID-1`,
    /// `call-PID-2`, … from one counter per process, so that calls of processes writing one
    /// audit log at the same time are told apart too.
    pub fn next(tool: impl Into<String>) -> Self {
        let n = MINTED.fetch_add(1, Ordering::Relaxed) + 1;
        Self::new(format!("call-{}-{n}", std::process::id()), tool)
    }
}

/// Receives partial results while a tool runs (bash streams its output tail through this).
pub type UpdateSink = Arc<dyn Fn(ToolResult) + Send + Sync>;

/// Everything a tool call may use: the env, the working directory, containment, cancellation,
/// a sink for partial results, the session's variables, the env's mutation queue, and which
/// call it is.
#[derive(Clone)]
pub struct ToolContext {
    /// Where the tool acts.
    pub env: Arc<dyn ExecutionEnv>,
    /// The canonical working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// The roots and mode file tools are confined by.
    pub containment: Containment,
    /// Cancelled when the call is aborted.
    pub cancel: CancellationToken,
    /// Partial results go here, when a host listens.
    pub updates: Option<UpdateSink>,
    /// Variables describing the running session (`JIG_SESSION_ID`, …), given to processes.
    pub session_env: BTreeMap<String, String>,
    /// One queue per env: serialises read-modify-write of one file.
    pub mutation_queue: Arc<MutationQueue>,
    /// The sandbox commands run in: its mode, network and protected paths; the writable roots
    /// are the containment roots plus these ([`exec_sandbox`](Self::exec_sandbox)).
    pub sandbox: SandboxPolicy,
    /// The call this context runs, set by whoever dispatches it; `None` in a host's base
    /// context.
    pub call: Option<CallInfo>,
}

impl ToolContext {
    /// A context with workspace containment rooted at `cwd` (which must be canonical), a fresh
    /// token, no update sink, no session variables, a new mutation queue and no call.
    pub fn new(env: Arc<dyn ExecutionEnv>, cwd: PathBuf) -> Self {
        Self {
            env,
            containment: Containment {
                mode: ContainmentMode::Workspace,
                roots: vec![cwd.clone()],
                read_only_roots: Vec::new(),
            },
            cwd,
            cancel: CancellationToken::new(),
            updates: None,
            session_env: BTreeMap::new(),
            mutation_queue: Arc::new(MutationQueue::new()),
            sandbox: SandboxPolicy::off(),
            call: None,
        }
    }

    /// The policy of a command started now: [`sandbox`](Self::sandbox) with the current
    /// containment roots (and the working directory) writable, and the protected names
    /// (`.env*`, and the relative paths in [`sandbox`](Self::sandbox)'s protected list) of
    /// each root added.
    #[must_use]
    pub fn exec_sandbox(&self) -> SandboxPolicy {
        let mut policy = self.sandbox.clone();
        if !policy.is_on() {
            return policy;
        }
        let mut roots: Vec<PathBuf> = self.containment.roots.clone();
        if !roots.iter().any(|root| self.cwd.starts_with(root)) {
            roots.push(self.cwd.clone());
        }
        // Relative protected paths (from the settings) name a path inside each root.
        let (relative, absolute): (Vec<PathBuf>, Vec<PathBuf>) =
            std::mem::take(&mut policy.protected)
                .into_iter()
                .partition(|path| path.is_relative());
        policy.protected = absolute;
        let names = jig_env::PROTECTED_NAMES
            .iter()
            .map(PathBuf::from)
            .chain(relative);
        let names: Vec<PathBuf> = names.collect();
        for root in roots {
            for name in &names {
                let pattern = root.join(name);
                if !policy.protected.contains(&pattern) {
                    policy.protected.push(pattern);
                }
            }
            if !policy.writable_roots.contains(&root) {
                policy.writable_roots.push(root);
            }
        }
        policy
    }

    /// The env file tools act through. With workspace containment this is a view of `env`
    /// confined beneath the roots ([`ExecutionEnv::beneath`]): every path is resolved beneath
    /// an open handle of a root at the moment it is used, so a symlink swapped in after
    /// [`paths::resolve`](crate::paths::resolve) checked the path cannot lead the operation
    /// outside. Without containment it is `env` itself.
    ///
    /// An env that cannot confine file access is an error, never a silent fallback to `env`.
    pub fn files(&self) -> Result<Arc<dyn ExecutionEnv>, ToolError> {
        self.confined(&self.containment.roots)
    }

    /// Like [`files`](Self::files), for a reading tool: confined beneath the roots and the
    /// read-only roots ([`Containment::for_reading`]).
    pub fn files_for_reading(&self) -> Result<Arc<dyn ExecutionEnv>, ToolError> {
        if self.containment.read_only_roots.is_empty() {
            return self.files();
        }
        self.confined(&self.containment.for_reading().roots)
    }

    fn confined(&self, roots: &[PathBuf]) -> Result<Arc<dyn ExecutionEnv>, ToolError> {
        match self.containment.mode {
            ContainmentMode::None => Ok(Arc::clone(&self.env)),
            ContainmentMode::Workspace => Arc::clone(&self.env).beneath(roots).map_err(|error| {
                ToolError::Fatal(format!(
                    "cannot confine file access to the workspace roots: {error}"
                ))
            }),
        }
    }

    /// Sends a partial result to the host, if one listens.
    pub fn send_update(&self, update: ToolResult) {
        if let Some(sink) = &self.updates {
            sink(update);
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("env", &self.env.name())
            .field("cwd", &self.cwd)
            .field("containment", &self.containment)
            .field("session_env", &self.session_env)
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}
