//! `bash`'s options, the spawn hook, and the timeout a call runs with.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use jig_tool::ToolError;
use jig_truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};

use super::guard::CommandGuard;

/// The default timeout: 180 seconds.
pub const DEFAULT_BASH_TIMEOUT: Duration = Duration::from_mins(3);

/// The default maximum a call may ask for: one day.
pub const DEFAULT_BASH_MAX_TIMEOUT: Duration = Duration::from_hours(24);

/// The session variables a command gets (and that are removed from the inherited environment).
pub const SESSION_VARIABLES: [&str; 5] = jig_protocol::EnvVars::SESSION_VARIABLES;

/// The default bound of one full-output file: 16 MiB, the first and the last 8 MiB of the
/// output.
pub const DEFAULT_FULL_OUTPUT_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The default bound of all full-output files one `bash` tool keeps: 256 MiB. Beyond it the
/// oldest files are removed.
pub const DEFAULT_FULL_OUTPUTS_TOTAL_MAX_BYTES: u64 = 256 * 1024 * 1024;

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

/// A shared [`SpawnHook`]. Two are equal when they are the same hook.
#[derive(Clone)]
pub struct SharedSpawnHook(pub Arc<dyn SpawnHook>);

impl SharedSpawnHook {
    /// Shares `hook`.
    pub fn new(hook: impl SpawnHook + 'static) -> Self {
        Self(Arc::new(hook))
    }
}

impl SpawnHook for SharedSpawnHook {
    fn prepare(&self, spawn: &mut SpawnRequest) {
        self.0.prepare(spawn);
    }
}

impl fmt::Debug for SharedSpawnHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<hook>")
    }
}

impl PartialEq for SharedSpawnHook {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.0), Arc::as_ptr(&other.0))
    }
}

impl Eq for SharedSpawnHook {}

/// Options of `bash`. Build one with struct-update syntax from `BashConfig::default()`.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    pub spawn_hook: Option<SharedSpawnHook>,
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

pub(super) fn timeout_sentence(config: &BashConfig) -> String {
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
pub(super) fn resolve_timeout(
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
}
