//! Command hooks: one process per event, the event as JSON on stdin, the exit status decides.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Child;

use crate::error::{ExtensionError, HandlerError};
use crate::handle::ExtensionHandle;
use crate::host::ExtensionHost;
use crate::registration::{FlagRegistration, Registrations, events};
use crate::spawn::spawn_piped;

/// Most a hook may write on stdout (its answer): 1 MiB. More is an error, not buffered.
pub const HOOK_MAX_STDOUT_BYTES: usize = 1024 * 1024;
/// Most of a hook's stderr that is kept (the block reason): 64 KiB.
const HOOK_MAX_STDERR_BYTES: usize = 64 * 1024;

/// An extension made of command hooks (`[hooks]` in `extension.toml`).
///
/// For each event it subscribes to, one process runs per event: the event's payload plus
/// `"event": "<name>"` (and `"flags"`, when it declares any) as one JSON object on stdin. Exit 0 with empty stdout is no opinion;
/// exit 0 with JSON on stdout is the event's result; exit 2 blocks, with stderr as the reason
/// (`tool_call`: `{"block": true}`, `session_before_*`: `{"cancel": true}`, `project_trust`:
/// `{"trusted": "no"}`; other events have nothing to block and report an error); any other
/// exit, a signal, or a timeout is an extension error (and for `tool_call` a block).
///
/// The answer is decided when the hook process exits, not when its pipes close: what it wrote
/// is read (with a brief grace for data in flight), and whatever it left running is killed:
/// hooks are tracked like `bash` commands (own session, `JIG_EXEC_TAG`, the watchdog), so a
/// `setsid` or double-forked child goes too.
pub struct HookExtension {
    path: String,
    hooks: BTreeMap<String, Vec<OsString>>,
    cwd: PathBuf,
    registrations: Registrations,
    /// The values of the declared flags, set once after loading.
    flag_values: OnceLock<serde_json::Map<String, Value>>,
}

impl fmt::Debug for HookExtension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookExtension")
            .field("path", &self.path)
            .field("hooks", &self.hooks)
            .finish_non_exhaustive()
    }
}

impl HookExtension {
    /// Hooks by event name, each an argv run in `cwd`.
    pub fn new(
        path: impl Into<String>,
        hooks: BTreeMap<String, Vec<OsString>>,
        cwd: impl Into<PathBuf>,
    ) -> Self {
        let registrations = Registrations {
            events: hooks.keys().cloned().collect(),
            ..Registrations::default()
        };
        Self {
            path: path.into(),
            hooks,
            cwd: cwd.into(),
            registrations,
            flag_values: OnceLock::new(),
        }
    }

    /// Declares `flags` (`[flags.NAME]` in the manifest): each hook then receives their
    /// values as `"flags": {NAME: value}` in its input.
    #[must_use]
    pub fn with_flags(mut self, flags: Vec<FlagRegistration>) -> Self {
        self.registrations.flags = flags;
        self
    }

    /// The handle a runner holds.
    pub fn into_handle(self) -> Arc<dyn ExtensionHandle> {
        Arc::new(self)
    }
}

/// How long a hook's pipes are still read after it exited: data it wrote just before exiting
/// may still be in flight. A background child that holds the pipes open is not waited for.
const HOOK_EXIT_GRACE: Duration = Duration::from_millis(100);

/// Reads `pipe` into `kept` until end of file; more than `max` bytes is an error (what fits is
/// kept). What was read stays in `kept` when the future is dropped.
async fn read_bounded(
    mut pipe: impl AsyncRead + Unpin,
    kept: &mut Vec<u8>,
    max: usize,
) -> Result<(), ReadError> {
    let mut chunk = vec![0_u8; 16 * 1024];
    loop {
        let n = pipe.read(&mut chunk).await.map_err(ReadError::Io)?;
        if n == 0 {
            return Ok(());
        }
        if kept.len() + n > max {
            let room = max - kept.len();
            kept.extend_from_slice(&chunk[..room]);
            return Err(ReadError::Overflow);
        }
        kept.extend_from_slice(&chunk[..n]);
    }
}

enum ReadError {
    Io(std::io::Error),
    Overflow,
}

impl ReadError {
    fn into_handler_error(self) -> HandlerError {
        HandlerError::Failed(match self {
            Self::Io(error) => format!("cannot read hook output: {error}"),
            Self::Overflow => format!(
                "hook wrote more than {} on stdout",
                jig_truncate::format_size(HOOK_MAX_STDOUT_BYTES)
            ),
        })
    }
}

/// Writes `input` to the hook, reads its stdout and stderr, and waits for it: its exit status
/// and what it wrote. Done when it exits (see [`HOOK_EXIT_GRACE`]), or when both pipes closed and
/// it exited.
async fn exchange(
    mut child: Child,
    input: Vec<u8>,
) -> Result<(ExitStatus, Vec<u8>, Vec<u8>), HandlerError> {
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = {
        let write = async move {
            if let Some(mut stdin) = stdin {
                // A hook that does not read its input is fine.
                let _ = stdin.write_all(&input).await;
            }
        };
        let read_out = async {
            match stdout {
                Some(pipe) => read_bounded(pipe, &mut out, HOOK_MAX_STDOUT_BYTES).await,
                None => Ok(()),
            }
        };
        let read_err = async {
            match stderr {
                Some(mut pipe) => {
                    // Only the first part of a long stderr is kept; the rest is drained, so
                    // that a hook still writing is not killed by a closed pipe.
                    match read_bounded(&mut pipe, &mut err, HOOK_MAX_STDERR_BYTES).await {
                        Err(ReadError::Overflow) => {
                            tokio::io::copy(&mut pipe, &mut tokio::io::sink())
                                .await
                                .map(|_| ())
                                .map_err(ReadError::Io)
                        }
                        other => other,
                    }
                }
                None => Ok(()),
            }
        };
        let pipes = async {
            let ((), read) = tokio::join!(write, async {
                tokio::try_join!(read_out, read_err).map(|_| ())
            });
            read
        };
        tokio::pin!(pipes);
        // The answer is decided when the hook exits, not when its pipes close: a background
        // child may hold them open. After the exit, what is already in the pipes (or arrives
        // within a brief grace) is read, and the rest is not waited for.
        tokio::select! {
            read = &mut pipes => {
                // The group is killed by the caller's guard.
                read.map_err(ReadError::into_handler_error)?;
                child.wait().await
            }
            status = child.wait() => {
                if let Ok(read) = tokio::time::timeout(HOOK_EXIT_GRACE, &mut pipes).await {
                    read.map_err(ReadError::into_handler_error)?;
                }
                status
            }
        }
    }
    .map_err(|error| HandlerError::Failed(format!("cannot wait for the hook: {error}")))?;
    Ok((status, out, err))
}

fn blocked(event: &str, reason: &str) -> Result<Value, HandlerError> {
    let reason = reason.trim().to_owned();
    match event {
        events::TOOL_CALL => Ok(json!({"block": true, "reason": reason})),
        events::PROJECT_TRUST => Ok(json!({"trusted": "no"})),
        name if name.starts_with("session_before_") => Ok(json!({"cancel": true})),
        _ => Err(HandlerError::Failed(format!(
            "hook exited with status 2, which has no meaning for {event}: {reason}"
        ))),
    }
}

#[async_trait]
impl ExtensionHandle for HookExtension {
    fn path(&self) -> &str {
        &self.path
    }

    fn registrations(&self) -> &Registrations {
        &self.registrations
    }

    async fn handle_event(&self, event: &str, payload: &Value) -> Result<Value, HandlerError> {
        let Some((program, args)) = self.hooks.get(event).and_then(|argv| argv.split_first())
        else {
            return Ok(Value::Null);
        };
        let mut input = payload.clone();
        if let Value::Object(map) = &mut input {
            map.insert("event".to_owned(), Value::from(event));
            if !self.registrations.flags.is_empty() {
                let values = self.flag_values.get().cloned().unwrap_or_default();
                map.insert("flags".to_owned(), Value::Object(values));
            }
        }
        let mut input = serde_json::to_vec(&input)
            .map_err(|error| HandlerError::Failed(format!("cannot encode the event: {error}")))?;
        input.push(b'\n');
        let (child, tree) = spawn_piped(program.as_ref(), args, &self.cwd).map_err(|error| {
            HandlerError::Failed(format!(
                "cannot start hook {}: {error}",
                PathBuf::from(program).display()
            ))
        })?;
        // A timeout drops this future, and with it `tree`: the hook and everything it started
        // are killed. Otherwise they go once the answer is decided: whatever the hook left
        // running (in its group, in a new session, double-forked) does not outlive it.
        let exchanged = exchange(child, input).await;
        tree.terminate(Duration::ZERO).await;
        let (status, out, err) = exchanged?;
        let stderr = String::from_utf8_lossy(&err).into_owned();
        match status.code() {
            Some(0) => {
                if out.iter().all(u8::is_ascii_whitespace) {
                    return Ok(Value::Null);
                }
                serde_json::from_slice(&out).map_err(|error| {
                    HandlerError::Failed(format!("hook printed invalid JSON: {error}"))
                })
            }
            Some(2) => blocked(event, &stderr),
            _ => {
                let stderr = stderr.trim();
                Err(HandlerError::Failed(if stderr.is_empty() {
                    format!("hook failed ({status})")
                } else {
                    format!("hook failed ({status}): {stderr}")
                }))
            }
        }
    }

    async fn bind(&self, _host: Arc<dyn ExtensionHost>) -> Vec<ExtensionError> {
        Vec::new()
    }

    fn timed_out(&self, _event: &str) {
        // The timed-out process was killed when its future was dropped; the next event starts a
        // fresh one.
    }

    fn failure(&self) -> Option<String> {
        None
    }

    fn set_flag_values(&self, values: serde_json::Map<String, Value>) {
        let _ = self.flag_values.set(values);
    }

    async fn shutdown(&self) {}
}
