//! The `bash` tool: runs a shell command through the env and returns its cleaned, bounded
//! output and exit status.
//!
//! - Execution goes through [`ExecutionEnv::exec`], which owns the process rules (own session,
//!   stdin at EOF, TERM → grace → KILL of everything the command started on timeout or abort,
//!   tracked background processes). This module decides *what* runs: shell, command prefix,
//!   environment (non-interactive defaults, session variables), the spawn hook and the optional
//!   [`CommandGuard`].
//! - Output is decoded and cleaned as it streams ([`clean`]) into an [`OutputAccumulator`] that
//!   keeps only a head and a rolling tail; the raw bytes go to a full-output file created through
//!   the env when the limits are first exceeded (see [`FullOutput`]).
//! - The result text never exceeds the byte and line budget, marker and notices included.

mod accumulator;
mod clean;
mod guard;
mod head_tail;

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use jig_env::{
    Bytes, EnvError, ErrorKind, ExecOutcome, ExecRequest, ExecSink, ExecutionEnv, Recursive,
};
use jig_protocol::ToolResult;
use jig_tool::{Effects, Tool, ToolContext, ToolError};
use jig_truncate::format_size;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use self::accumulator::{Limits, OutputAccumulator, Reserve, Shown, TextStore, Truncation};
pub use self::guard::CommandGuard;
use self::head_tail::{HeadTail, describe_bytes};
use crate::config::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};

/// The default timeout: 180 seconds.
pub const DEFAULT_BASH_TIMEOUT: Duration = Duration::from_mins(3);

/// The default maximum a call may ask for: one day.
pub const DEFAULT_BASH_MAX_TIMEOUT: Duration = Duration::from_hours(24);

/// The session variables a command gets (and that are removed from the inherited environment).
pub const SESSION_VARIABLES: [&str; 5] = jig_protocol::EnvVars::SESSION_VARIABLES;

/// Raw output is written to the full-output file in batches of this size.
const SPILL_BATCH: usize = 1024 * 1024;

/// The default bound of one full-output file: 16 MiB, the first and the last 8 MiB of the
/// output.
pub const DEFAULT_FULL_OUTPUT_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The default bound of all full-output files one `bash` tool keeps: 256 MiB. Beyond it the
/// oldest files are removed.
pub const DEFAULT_FULL_OUTPUTS_TOTAL_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// More than any status line takes (`\n\nCommand timed out after 2147483.647 seconds`).
const STATUS_RESERVE: Reserve = Reserve {
    bytes: 64,
    lines: 2,
};

/// Shells tried, in order, when no explicit shell is configured (then `bash` on `PATH`, then
/// `sh`).
const SHELL_CANDIDATES: &[&str] = &[
    "/bin/bash",
    "/usr/bin/bash",
    "/usr/local/bin/bash",
    "/opt/homebrew/bin/bash",
];

/// What is about to be spawned; a [`SpawnHook`] may change any of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    /// The command text given to the shell's `-c` (with the prefix already applied).
    pub command: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// Variables set on top of the inherited environment.
    pub env: BTreeMap<String, String>,
    /// Inherited variables removed first.
    pub env_remove: Vec<String>,
}

/// A host hook that rewrites command, cwd and environment right before spawning (for example
/// to add `CI=1` or wrap the command). It sees the session variables.
pub trait SpawnHook: Send + Sync {
    /// Adjusts `spawn` in place.
    fn prepare(&self, spawn: &mut SpawnRequest);
}

impl<F> SpawnHook for F
where
    F: Fn(&mut SpawnRequest) + Send + Sync,
{
    fn prepare(&self, spawn: &mut SpawnRequest) {
        self(spawn);
    }
}

/// Options of `bash`. Build one with struct-update syntax from `BashConfig::default()`.
#[derive(Clone)]
pub struct BashConfig {
    /// An explicit shell; it must exist. `None`: `/bin/bash`, else `bash` on `PATH`, else `sh`.
    pub shell: Option<PathBuf>,
    /// Timeout when the call gives none (`Duration::ZERO`: no timer).
    pub default_timeout: Duration,
    /// The largest timeout a call may ask for.
    pub max_timeout: Duration,
    /// Whether a call may pass `timeout: 0` to run without a timer.
    pub allow_no_timeout: bool,
    /// Between SIGTERM and SIGKILL on timeout or abort.
    pub kill_grace: Duration,
    /// After the shell exits, how long to wait for more output from processes it left behind.
    pub idle_grace: Duration,
    /// Line budget of one result (marker and notices included).
    pub max_lines: usize,
    /// Byte budget of one result (marker and notices included).
    pub max_bytes: usize,
    /// Variables every command gets; by default the non-interactive set (`PAGER=cat`,
    /// `GIT_PAGER=cat`, `GIT_TERMINAL_PROMPT=0`, `GIT_EDITOR=true`,
    /// `DEBIAN_FRONTEND=noninteractive`).
    pub env: BTreeMap<String, String>,
    /// Whether the context's session variables (`JIG_SESSION_ID`, …) are given to commands.
    pub expose_session_env: bool,
    /// Prepended to every command, on its own line.
    pub command_prefix: Option<String>,
    /// Rewrites what is spawned.
    pub spawn_hook: Option<Arc<dyn SpawnHook>>,
    /// The optional lexical workspace guard (off by default).
    pub guard: CommandGuard,
    /// Whether truncated output is kept in a full-output file whose path is given to the model.
    /// Hosts whose env lives on after the call (agent sessions, `jig mcp`) keep it (the
    /// default); a one-shot host that cleans the env on exit turns it off unless asked to keep
    /// temp files, so no path to a deleted file is ever offered.
    pub keep_full_output: bool,
    /// The most a full-output file holds: the first and the last half of this many bytes, with
    /// a line saying how much was left out between them.
    pub full_output_max_bytes: u64,
    /// The most all full-output files of one tool (one session) hold together: when a new file
    /// takes the total over this, the oldest files are removed (the newest is always kept).
    pub full_outputs_total_max_bytes: u64,
    /// Streaming updates are sent at most this often.
    pub update_interval: Duration,
}

impl Default for BashConfig {
    fn default() -> Self {
        let env = [
            ("PAGER", "cat"),
            ("GIT_PAGER", "cat"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("GIT_EDITOR", "true"),
            ("DEBIAN_FRONTEND", "noninteractive"),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
        Self {
            shell: None,
            default_timeout: DEFAULT_BASH_TIMEOUT,
            max_timeout: DEFAULT_BASH_MAX_TIMEOUT,
            allow_no_timeout: false,
            kill_grace: Duration::from_secs(2),
            idle_grace: Duration::from_millis(250),
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
            env,
            expose_session_env: true,
            command_prefix: None,
            spawn_hook: None,
            guard: CommandGuard::Off,
            keep_full_output: true,
            full_output_max_bytes: DEFAULT_FULL_OUTPUT_MAX_BYTES,
            full_outputs_total_max_bytes: DEFAULT_FULL_OUTPUTS_TOTAL_MAX_BYTES,
            update_interval: Duration::from_millis(100),
        }
    }
}

impl BashConfig {
    /// The same options with `keep_full_output` set.
    #[must_use]
    pub fn with_keep_full_output(mut self, keep: bool) -> Self {
        self.keep_full_output = keep;
        self
    }

    /// The same options with other output limits.
    #[must_use]
    pub fn with_limits(mut self, max_lines: usize, max_bytes: usize) -> Self {
        self.max_lines = max_lines.max(10);
        self.max_bytes = max_bytes.max(512);
        self
    }
}

impl fmt::Debug for BashConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BashConfig")
            .field("shell", &self.shell)
            .field("default_timeout", &self.default_timeout)
            .field("max_timeout", &self.max_timeout)
            .field("allow_no_timeout", &self.allow_no_timeout)
            .field("kill_grace", &self.kill_grace)
            .field("idle_grace", &self.idle_grace)
            .field("max_lines", &self.max_lines)
            .field("max_bytes", &self.max_bytes)
            .field("env", &self.env)
            .field("expose_session_env", &self.expose_session_env)
            .field("command_prefix", &self.command_prefix)
            .field("spawn_hook", &self.spawn_hook.as_ref().map(|_| "<hook>"))
            .field("guard", &self.guard)
            .field("keep_full_output", &self.keep_full_output)
            .field("full_output_max_bytes", &self.full_output_max_bytes)
            .field(
                "full_outputs_total_max_bytes",
                &self.full_outputs_total_max_bytes,
            )
            .field("update_interval", &self.update_interval)
            .finish()
    }
}

impl PartialEq for BashConfig {
    fn eq(&self, other: &Self) -> bool {
        let same_hook = match (&self.spawn_hook, &other.spawn_hook) {
            (None, None) => true,
            (Some(a), Some(b)) => std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b)),
            _ => false,
        };
        same_hook
            && self.shell == other.shell
            && self.default_timeout == other.default_timeout
            && self.max_timeout == other.max_timeout
            && self.allow_no_timeout == other.allow_no_timeout
            && self.kill_grace == other.kill_grace
            && self.idle_grace == other.idle_grace
            && self.max_lines == other.max_lines
            && self.max_bytes == other.max_bytes
            && self.env == other.env
            && self.expose_session_env == other.expose_session_env
            && self.command_prefix == other.command_prefix
            && self.guard == other.guard
            && self.keep_full_output == other.keep_full_output
            && self.full_output_max_bytes == other.full_output_max_bytes
            && self.full_outputs_total_max_bytes == other.full_outputs_total_max_bytes
            && self.update_interval == other.update_interval
    }
}

impl Eq for BashConfig {}

/// Arguments of the `bash` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BashInput {
    /// The command to run with bash in the workspace directory.
    pub command: String,
    /// Timeout in seconds (fractions allowed). Omit it for the default; the tool description
    /// gives the default and the maximum.
    pub timeout: Option<f64>,
}

/// `bash`: runs a shell command and returns its output and exit status.
#[derive(Debug, Clone, Default)]
pub struct BashTool {
    config: BashConfig,
    kept: Arc<KeptFiles>,
}

/// The full-output files a tool has kept, oldest first, with their sizes.
#[derive(Debug, Default)]
struct KeptFiles(std::sync::Mutex<std::collections::VecDeque<(PathBuf, u64)>>);

impl KeptFiles {
    /// Records a new file; returns the oldest files to remove so the total stays within
    /// `max_total` (the new file itself is never one of them).
    fn add(&self, path: PathBuf, size: u64, max_total: u64) -> Vec<PathBuf> {
        let mut files = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        files.push_back((path, size));
        let mut total: u64 = files.iter().map(|(_, size)| size).sum();
        let mut evicted = Vec::new();
        while total > max_total && files.len() > 1 {
            if let Some((old, size)) = files.pop_front() {
                total -= size;
                evicted.push(old);
            }
        }
        evicted
    }
}

impl BashTool {
    /// The tool with `config`.
    pub fn new(config: BashConfig) -> Self {
        Self {
            config,
            kept: Arc::default(),
        }
    }

    /// Its options.
    pub fn config(&self) -> &BashConfig {
        &self.config
    }
}

impl Tool for BashTool {
    const NAME: &'static str = "bash";
    type Input = BashInput;

    fn title(&self) -> &'static str {
        "Run shell command"
    }

    fn description(&self) -> String {
        let config = &self.config;
        let mut text = String::from(
            "Run a shell command with bash in the workspace directory. Returns stdout and stderr \
             merged in the order they were written, then the exit status. The output is cleaned \
             for reading: colour and other escape codes are removed and carriage-return progress \
             lines are shown in their final state.",
        );
        let _ = write!(
            text,
            " If the output is longer than {lines} lines or {size}, you get its beginning and its \
             end, with a marker saying exactly how many lines and bytes were left out",
            lines = config.max_lines,
            size = format_size(config.max_bytes),
        );
        text.push_str(if config.keep_full_output {
            ", and the path of a file holding the full output (read it with the read tool or grep; \
             a very long output keeps its first and last part there, with a line saying how much \
             was left out)."
        } else {
            "."
        });
        let _ = write!(text, " {}", timeout_sentence(config));
        text.push_str(
            " On timeout or abort the command and every process it started are stopped \
             (SIGTERM, then SIGKILL). stdin is closed and there is no terminal, so anything that \
             waits for input gets end-of-file: pass non-interactive flags (`-y`, `git commit -m \
             ...`); pagers and git's editor and password prompts are disabled. Processes you \
             start in the background on purpose (`server &`, `nohup`) keep running after the \
             command returns and are stopped when the session ends; redirect their output \
             (`server > server.log 2>&1 &`) so they do not hold the command's output open.",
        );
        text.push_str(match config.guard {
            CommandGuard::Off => {
                " The shell is NOT confined to the workspace like the file tools are: it can read \
                 and change anything your user can, so stay inside the workspace unless asked."
            }
            CommandGuard::Workspace => {
                " The shell is NOT sandboxed, but a guard refuses commands that name paths outside \
                 the workspace (absolute paths, `../` climbing out, `~`), except read-only system \
                 locations such as /usr and /bin. The guard only reads the command text."
            }
        });
        text
    }

    fn effects(&self) -> Effects {
        Effects::Process
    }

    /// A command may change any file, so it never runs alongside other calls.
    fn sequential(&self) -> bool {
        true
    }

    async fn call(&self, ctx: &ToolContext, input: BashInput) -> Result<ToolResult, ToolError> {
        run(&self.config, &self.kept, ctx, input).await
    }
}

fn timeout_sentence(config: &BashConfig) -> String {
    let default = if config.default_timeout.is_zero() {
        "no time limit by default".to_owned()
    } else {
        format!(
            "a {} second time limit by default",
            seconds(config.default_timeout)
        )
    };
    let zero = if config.allow_no_timeout {
        "; 0 disables the timer"
    } else {
        ""
    };
    format!(
        "Commands have {default}; pass `timeout` in seconds (fractions allowed, at most {max}{zero}) \
         for a different limit.",
        max = seconds(config.max_timeout),
    )
}

/// Seconds as a person writes them: `180`, `0.5`.
fn seconds(duration: Duration) -> String {
    format!("{}", duration.as_secs_f64())
}

/// The timer for this call and the number to print in "timed out after N seconds".
fn resolve_timeout(
    config: &BashConfig,
    requested: Option<f64>,
) -> Result<Option<(Duration, String)>, ToolError> {
    let Some(value) = requested else {
        return Ok((!config.default_timeout.is_zero())
            .then(|| (config.default_timeout, seconds(config.default_timeout))));
    };
    if !value.is_finite() || value < 0.0 {
        return Err(ToolError::invalid(format!(
            "Invalid timeout: must be a finite number of seconds, 0 or more (got {value})."
        )));
    }
    if value == 0.0 {
        if config.allow_no_timeout {
            return Ok(None);
        }
        return Err(ToolError::invalid(format!(
            "Invalid timeout: 0 (no time limit) is not allowed here; pass a number of seconds up \
             to {}.",
            seconds(config.max_timeout)
        )));
    }
    if value > config.max_timeout.as_secs_f64() {
        return Err(ToolError::invalid(format!(
            "Invalid timeout: maximum is {} seconds.",
            seconds(config.max_timeout)
        )));
    }
    Ok(Some((Duration::from_secs_f64(value), format!("{value}"))))
}

async fn run(
    config: &BashConfig,
    kept: &KeptFiles,
    ctx: &ToolContext,
    input: BashInput,
) -> Result<ToolResult, ToolError> {
    let timeout = resolve_timeout(config, input.timeout)?;
    if config.guard == CommandGuard::Workspace {
        guard::check(&input.command, &ctx.cwd, &ctx.containment.roots)
            .map_err(ToolError::failed)?;
    }
    let env = ctx.env.as_ref();

    let command = match &config.command_prefix {
        Some(prefix) => format!("{prefix}\n{}", input.command),
        None => input.command,
    };
    let mut spawn_env = config.env.clone();
    if config.expose_session_env {
        spawn_env.extend(
            ctx.session_env
                .iter()
                .map(|(name, value)| (name.clone(), value.clone())),
        );
    }
    let mut spawn = SpawnRequest {
        command,
        cwd: ctx.cwd.clone(),
        env: spawn_env,
        env_remove: SESSION_VARIABLES
            .iter()
            .map(|name| (*name).to_owned())
            .collect(),
    };
    if let Some(hook) = &config.spawn_hook {
        hook.prepare(&mut spawn);
    }

    match env.stat(&spawn.cwd).await {
        Ok(info) if info.kind == jig_env::FileKind::Directory => {}
        _ => {
            return Err(ToolError::failed(format!(
                "Working directory does not exist: {}\nCannot execute bash commands.",
                spawn.cwd.display()
            )));
        }
    }
    let shells = resolve_shells(config, env).await?;

    let mut sink = BashSink::new(config, ctx);
    let mut outcome = None;
    let mut last_error = None;
    for shell in &shells {
        let mut request = ExecRequest::new(
            shell.clone(),
            vec!["-c".to_owned(), spawn.command.clone()],
            spawn.cwd.clone(),
        );
        request.env = spawn.env.clone();
        request.env_remove = spawn.env_remove.clone();
        request.timeout = timeout.as_ref().map(|(duration, _)| *duration);
        request.kill_grace = config.kill_grace;
        request.idle_grace = config.idle_grace;
        request.cancel = ctx.cancel.clone();
        match env.exec(request, &mut sink).await {
            Ok(done) => {
                outcome = Some(done);
                break;
            }
            // The shell was not found: try the next candidate (nothing ran).
            Err(error)
                if error.kind() == ErrorKind::NotFound
                    && error.path() == Some(Path::new(shell)) =>
            {
                last_error = Some(error);
            }
            Err(error) => return Err(exec_failure(&error, &shell_names(&shells))),
        }
    }
    let Some(outcome) = outcome else {
        let tried = shell_names(&shells);
        return Err(ToolError::failed(match last_error {
            Some(error) => format!("No shell found (tried {tried}): {}", error.message()),
            None => format!("No shell found (tried {tried})."),
        }));
    };
    let output = sink.finish().await;
    if let FullOutput::Kept { path, .. } = &output.full {
        let size = ctx.env.stat(path).await.map_or(0, |info| info.size);
        for old in kept.add(path.clone(), size, config.full_outputs_total_max_bytes) {
            let _ = ctx.env.remove(&old, Recursive::No).await;
        }
    }
    Ok(final_result(
        config,
        &outcome,
        timeout.as_ref().map(|(_, shown)| shown.as_str()),
        &output,
    ))
}

/// The shells to try, in order.
async fn resolve_shells(
    config: &BashConfig,
    env: &dyn ExecutionEnv,
) -> Result<Vec<String>, ToolError> {
    if let Some(shell) = &config.shell {
        return match env.exists(shell).await {
            Ok(true) => Ok(vec![shell.display().to_string()]),
            _ => Err(ToolError::failed(format!(
                "Custom shell path not found: {}",
                shell.display()
            ))),
        };
    }
    for candidate in SHELL_CANDIDATES {
        if env.exists(Path::new(candidate)).await.unwrap_or(false) {
            return Ok(vec![(*candidate).to_owned()]);
        }
    }
    Ok(vec!["bash".to_owned(), "sh".to_owned()])
}

fn shell_names(shells: &[String]) -> String {
    shells.join(", ")
}

fn exec_failure(error: &EnvError, shells: &str) -> ToolError {
    match error.kind() {
        ErrorKind::Aborted => ToolError::failed("Command aborted"),
        ErrorKind::NotFound | ErrorKind::NotADirectory => ToolError::failed(format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            error
                .path()
                .map(Path::display)
                .map(|p| p.to_string())
                .unwrap_or_default()
        )),
        ErrorKind::Unsupported => ToolError::failed(format!(
            "This environment cannot run commands ({}).",
            error.message()
        )),
        _ => ToolError::failed(format!("Could not run the command with {shells}: {error}")),
    }
}

/// What happened to the full raw output.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FullOutput {
    /// The output fit; no file was needed.
    NotNeeded,
    /// Saved at this path (lives until the env is cleaned up), with `dropped` bytes from the
    /// middle left out when the output was longer than the file's bound.
    Kept { path: PathBuf, dropped: u64 },
    /// Not kept by configuration.
    NotKept,
    /// Could not be written.
    Failed(String),
}

/// Where raw output goes before and after the limits are exceeded.
#[derive(Debug)]
enum Spill {
    /// `keep_full_output` is off.
    Disabled,
    /// Below the limits: every raw byte so far, to seed the file if it becomes needed.
    Buffering(Vec<u8>),
    /// The file exists; `buffer` holds bytes not yet appended; `capped` decides which bytes
    /// go to the file.
    Writing {
        path: PathBuf,
        buffer: Vec<u8>,
        capped: HeadTail,
    },
    /// Creating or writing the file failed; `path` is what to remove.
    Failed {
        path: Option<PathBuf>,
        reason: String,
    },
}

/// Receives the process output: accumulates it, spills raw bytes, streams updates.
struct BashSink<'a> {
    ctx: &'a ToolContext,
    limits: Limits,
    accumulator: OutputAccumulator,
    spill: Spill,
    full_output_max_bytes: u64,
    raw_bytes: u64,
    raw_newlines: u64,
    update_interval: Duration,
    last_update: Option<Instant>,
}

impl<'a> BashSink<'a> {
    fn new(config: &BashConfig, ctx: &'a ToolContext) -> Self {
        let limits = Limits {
            max_lines: config.max_lines,
            max_bytes: config.max_bytes,
        };
        Self {
            ctx,
            limits,
            accumulator: OutputAccumulator::new(limits),
            spill: if config.keep_full_output {
                Spill::Buffering(Vec::new())
            } else {
                Spill::Disabled
            },
            full_output_max_bytes: config.full_output_max_bytes,
            raw_bytes: 0,
            raw_newlines: 0,
            update_interval: config.update_interval,
            last_update: None,
        }
    }

    fn over_limits(&self) -> bool {
        self.raw_bytes + STATUS_RESERVE.bytes as u64 > self.limits.max_bytes as u64
            || self.raw_newlines + STATUS_RESERVE.lines as u64 > self.limits.max_lines as u64
            || !self.accumulator.text().fits(STATUS_RESERVE)
    }

    async fn spill(&mut self, chunk: &[u8]) {
        let env = self.ctx.env.as_ref();
        let over_limits = self.over_limits();
        match &mut self.spill {
            Spill::Disabled | Spill::Failed { .. } => {}
            Spill::Buffering(buffer) => {
                buffer.extend_from_slice(chunk);
                if over_limits {
                    let seed = std::mem::take(buffer);
                    self.spill = match env.create_temp_file("bash-", ".log").await {
                        Ok(path) => Spill::Writing {
                            path,
                            buffer: seed,
                            capped: HeadTail::new(self.full_output_max_bytes),
                        },
                        Err(error) => Spill::Failed {
                            path: None,
                            reason: error.to_string(),
                        },
                    };
                    self.flush_spill(false).await;
                }
            }
            Spill::Writing { buffer, .. } => {
                buffer.extend_from_slice(chunk);
                if buffer.len() >= SPILL_BATCH {
                    self.flush_spill(false).await;
                }
            }
        }
    }

    /// Appends buffered raw bytes to the file (all of them when `all`, else whole batches).
    async fn flush_spill(&mut self, all: bool) {
        let Spill::Writing {
            path,
            buffer,
            capped,
        } = &mut self.spill
        else {
            return;
        };
        if buffer.is_empty() || (!all && buffer.len() < SPILL_BATCH) {
            return;
        }
        let pending = std::mem::take(buffer);
        let head = capped.push(&pending);
        if head.is_empty() {
            return;
        }
        let data = if head.len() == pending.len() {
            Bytes::from(pending)
        } else {
            Bytes::copy_from_slice(head)
        };
        if let Err(error) = self.ctx.env.append(path, data).await {
            let path = path.clone();
            self.spill = Spill::Failed {
                path: Some(path),
                reason: error.to_string(),
            };
        }
    }

    fn full_output_now(&self) -> Option<&Path> {
        match &self.spill {
            Spill::Writing { path, .. } => Some(path),
            _ => None,
        }
    }

    fn send_update(&mut self) {
        if self.ctx.updates.is_none() {
            return;
        }
        let now = Instant::now();
        if self
            .last_update
            .is_some_and(|last| now.duration_since(last) < self.update_interval)
        {
            return;
        }
        self.last_update = Some(now);
        let store = self.accumulator.snapshot();
        let full = match self.full_output_now() {
            Some(path) => FullOutput::Kept {
                path: path.to_path_buf(),
                dropped: 0,
            },
            None if matches!(self.spill, Spill::Disabled) => FullOutput::NotKept,
            None => FullOutput::NotNeeded,
        };
        let (text, truncation) = render(&store, &self.limits, &full, None);
        let mut details = serde_json::Map::new();
        if let Some(truncation) = &truncation {
            details.insert(
                "truncation".into(),
                truncation_details(truncation, &self.limits, &full),
            );
        }
        if let FullOutput::Kept { path, .. } = &full {
            details.insert("fullOutputPath".into(), json!(path.display().to_string()));
        }
        self.ctx
            .send_update(ToolResult::text(text).with_details(Value::Object(details)));
    }

    /// Ends the stream: flushes text and file; decides what happened to the full output.
    async fn finish(mut self) -> FinishedOutput {
        self.accumulator.finish();
        // The last unfinished line only reaches the text now: it may be what crosses the limits.
        if matches!(self.spill, Spill::Buffering(_)) && self.over_limits() {
            self.spill(&[]).await;
        }
        self.flush_spill(true).await;
        // Room for the longest status line, so the file is kept whenever the final text can be
        // cut (the status line counts towards the budget).
        let truncated = !self.accumulator.text().fits(STATUS_RESERVE);
        let env = self.ctx.env.as_ref();
        let full = match std::mem::replace(&mut self.spill, Spill::Disabled) {
            Spill::Disabled => {
                if truncated {
                    FullOutput::NotKept
                } else {
                    FullOutput::NotNeeded
                }
            }
            Spill::Buffering(_) => FullOutput::NotNeeded,
            Spill::Writing { path, capped, .. } => {
                if truncated {
                    let (rest, dropped) = capped.finish();
                    match env.append(&path, Bytes::from(rest)).await {
                        Ok(()) => FullOutput::Kept { path, dropped },
                        Err(error) => {
                            let _ = env.remove(&path, Recursive::No).await;
                            FullOutput::Failed(error.to_string())
                        }
                    }
                } else {
                    // The raw bytes were over the limits but the cleaned text fits: the model
                    // saw everything, so the file is not needed.
                    let _ = env.remove(&path, Recursive::No).await;
                    FullOutput::NotNeeded
                }
            }
            Spill::Failed { path, reason } => {
                if let Some(path) = path {
                    let _ = env.remove(&path, Recursive::No).await;
                }
                FullOutput::Failed(reason)
            }
        };
        FinishedOutput {
            text: self.accumulator.text().clone(),
            full,
        }
    }
}

#[async_trait]
impl ExecSink for BashSink<'_> {
    async fn output(&mut self, chunk: &[u8]) {
        self.raw_bytes += chunk.len() as u64;
        self.raw_newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.accumulator.push(chunk);
        self.spill(chunk).await;
        self.send_update();
    }
}

impl fmt::Debug for BashSink<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BashSink")
            .field("raw_bytes", &self.raw_bytes)
            .finish_non_exhaustive()
    }
}

/// The whole output after the command ended.
#[derive(Debug)]
struct FinishedOutput {
    text: TextStore,
    full: FullOutput,
}

/// How the command ended, as one status line (`None` for success).
fn status_line(outcome: &ExecOutcome, timeout_shown: Option<&str>) -> Option<String> {
    if outcome.aborted {
        return Some("Command aborted".to_owned());
    }
    if outcome.timed_out {
        return Some(format!(
            "Command timed out after {} seconds",
            timeout_shown.unwrap_or("?")
        ));
    }
    if let Some(signal) = outcome.signal {
        return Some(format!(
            "Command terminated by signal {}",
            signal_name(signal)
        ));
    }
    (outcome.exit_code != 0).then(|| format!("Command exited with code {}", outcome.exit_code))
}

/// Output text plus notice plus status, within the budget.
fn render(
    store: &TextStore,
    limits: &Limits,
    full: &FullOutput,
    status: Option<&str>,
) -> (String, Option<Truncation>) {
    let status_part = status.map(|line| format!("\n\n{line}")).unwrap_or_default();
    let status_lines = if status.is_some() { 2 } else { 0 };
    let whole = Reserve {
        bytes: status_part.len(),
        lines: status_lines,
    };
    // The notice's size with the largest numbers it can print.
    let worst = Truncation {
        truncated_by: jig_truncate::TruncatedBy::Lines,
        total_lines: store.total_lines(),
        total_bytes: store.total_bytes(),
        head_lines: store.total_lines(),
        tail_lines: store.total_lines(),
        last_line_partial: false,
        tail_bytes: store.total_bytes(),
        omitted_lines: 0,
        omitted_bytes: 0,
    };
    let worst_notice = notice(&worst, limits, full)
        .len()
        .max(
            notice(
                &Truncation {
                    last_line_partial: true,
                    ..worst.clone()
                },
                limits,
                full,
            )
            .len(),
        )
        .max(
            notice(
                &Truncation {
                    truncated_by: jig_truncate::TruncatedBy::Bytes,
                    ..worst.clone()
                },
                limits,
                full,
            )
            .len(),
        );
    let cut = Reserve {
        bytes: whole.bytes + worst_notice + 2,
        lines: whole.lines + 2,
    };
    let Shown { text, truncation } = store.show(whole, cut);
    let mut out = match &truncation {
        None => text,
        Some(truncation) => {
            let mut out = text.strip_suffix('\n').unwrap_or(&text).to_owned();
            out.push_str("\n\n");
            out.push_str(&notice(truncation, limits, full));
            out
        }
    };
    if let Some(status) = status {
        if out.is_empty() {
            out.push_str(status);
        } else {
            let trimmed_len = out.trim_end_matches('\n').len();
            out.truncate(trimmed_len);
            out.push_str(&status_part);
        }
    } else if out.is_empty() {
        out.push_str("(no output)");
    }
    (out, truncation)
}

/// `[Showing lines 1-12 and 5000-6000 of 6000 (50.0KB limit). Full output: /tmp/…/bash-….log]`
fn notice(truncation: &Truncation, limits: &Limits, full: &FullOutput) -> String {
    let total = truncation.total_lines;
    let range = |first: u64, last: u64| {
        if first == last {
            first.to_string()
        } else {
            format!("{first}-{last}")
        }
    };
    let mut ranges = Vec::new();
    if truncation.head_lines > 0 {
        ranges.push(range(1, truncation.head_lines));
    }
    let partial = truncation.last_line_partial.then(|| {
        format!(
            "the last {} of line {total}",
            format_size(usize::try_from(truncation.tail_bytes).unwrap_or(usize::MAX))
        )
    });
    if partial.is_none() && truncation.tail_lines > 0 {
        ranges.push(range(total + 1 - truncation.tail_lines.min(total), total));
    }
    let word = if ranges.len() == 1 && !ranges[0].contains('-') {
        "line"
    } else {
        "lines"
    };
    let mut shown = if ranges.is_empty() {
        String::new()
    } else {
        format!("{word} {}", ranges.join(" and "))
    };
    if let Some(partial) = partial {
        if !shown.is_empty() {
            shown.push_str(" and ");
        }
        shown.push_str(&partial);
    }
    if shown.is_empty() {
        shown.push_str("no lines");
    }
    let limit = match truncation.truncated_by {
        jig_truncate::TruncatedBy::Bytes => format!("{} limit", format_size(limits.max_bytes)),
        jig_truncate::TruncatedBy::Lines => format!("{} line limit", limits.max_lines),
    };
    let full = match full {
        FullOutput::Kept { path, dropped: 0 } => format!("Full output: {}", path.display()),
        FullOutput::Kept { path, dropped } => format!(
            "Full output, without {} from the middle: {}",
            describe_bytes(*dropped),
            path.display()
        ),
        FullOutput::NotKept | FullOutput::NotNeeded => "Full output not kept.".to_owned(),
        FullOutput::Failed(reason) => format!("Full output could not be saved ({reason})."),
    };
    format!("[Showing {shown} of {total} lines ({limit}). {full}]")
}

fn truncation_details(truncation: &Truncation, limits: &Limits, full: &FullOutput) -> Value {
    let mut details = json!({
        "truncatedBy": truncation.truncated_by.as_str(),
        "totalLines": truncation.total_lines,
        "totalBytes": truncation.total_bytes,
        "headLines": truncation.head_lines,
        "tailLines": truncation.tail_lines,
        "omittedLines": truncation.omitted_lines,
        "omittedBytes": truncation.omitted_bytes,
        "lastLinePartial": truncation.last_line_partial,
        "maxLines": limits.max_lines,
        "maxBytes": limits.max_bytes,
        "fullOutput": match full {
            FullOutput::Kept { .. } => "kept",
            FullOutput::NotKept | FullOutput::NotNeeded => "notKept",
            FullOutput::Failed(_) => "failed",
        },
    });
    if let (FullOutput::Failed(reason), Some(map)) = (full, details.as_object_mut()) {
        map.insert("fullOutputError".into(), json!(reason));
    }
    if let (FullOutput::Kept { dropped, .. }, Some(map)) = (full, details.as_object_mut())
        && *dropped > 0
    {
        map.insert("fullOutputDroppedBytes".into(), json!(dropped));
    }
    details
}

fn final_result(
    config: &BashConfig,
    outcome: &ExecOutcome,
    timeout_shown: Option<&str>,
    output: &FinishedOutput,
) -> ToolResult {
    let limits = Limits {
        max_lines: config.max_lines,
        max_bytes: config.max_bytes,
    };
    let status = status_line(outcome, timeout_shown);
    let (text, truncation) = render(&output.text, &limits, &output.full, status.as_deref());
    let mut details = serde_json::Map::new();
    details.insert("exitCode".into(), json!(outcome.exit_code));
    if let Some(signal) = outcome.signal {
        details.insert("signal".into(), json!(signal_name(signal)));
    }
    details.insert("timedOut".into(), json!(outcome.timed_out));
    details.insert("aborted".into(), json!(outcome.aborted));
    details.insert(
        "durationMs".into(),
        json!(u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX)),
    );
    if let Some(truncation) = &truncation {
        details.insert(
            "truncation".into(),
            truncation_details(truncation, &limits, &output.full),
        );
    }
    if let (FullOutput::Kept { path, .. }, Some(_)) = (&output.full, &truncation) {
        details.insert("fullOutputPath".into(), json!(path.display().to_string()));
    }
    let mut result = ToolResult::text(text).with_details(Value::Object(details));
    result.is_error = status.is_some();
    result
}

/// The conventional name of a signal number on this platform (`SIGKILL`), or `SIG<n>`.
fn signal_name(signal: i32) -> String {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const NAMES: &[&str] = &[
        "",
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const NAMES: &[&str] = &[
        "",
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGEMT",
        "SIGFPE",
        "SIGKILL",
        "SIGBUS",
        "SIGSEGV",
        "SIGSYS",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGURG",
        "SIGSTOP",
        "SIGTSTP",
        "SIGCONT",
        "SIGCHLD",
        "SIGTTIN",
        "SIGTTOU",
        "SIGIO",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGINFO",
        "SIGUSR1",
        "SIGUSR2",
    ];
    usize::try_from(signal)
        .ok()
        .and_then(|index| NAMES.get(index))
        .filter(|name| !name.is_empty())
        .map_or_else(|| format!("SIG{signal}"), |name| (*name).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_validated() {
        let config = BashConfig::default();
        assert_eq!(
            resolve_timeout(&config, None).unwrap(),
            Some((Duration::from_mins(3), "180".to_owned()))
        );
        assert_eq!(
            resolve_timeout(&config, Some(0.5)).unwrap(),
            Some((Duration::from_millis(500), "0.5".to_owned()))
        );
        for bad in [-1.0, f64::NAN, f64::INFINITY, 0.0, 1e9] {
            assert!(resolve_timeout(&config, Some(bad)).is_err(), "{bad}");
        }
        let open = BashConfig {
            allow_no_timeout: true,
            ..BashConfig::default()
        };
        assert_eq!(resolve_timeout(&open, Some(0.0)).unwrap(), None);
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(64), "SIG64");
    }
}
