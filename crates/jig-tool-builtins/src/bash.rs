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
mod config;
mod denial;
mod guard;
mod head_tail;
mod render;
mod sink;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_env::{ErrorKind, ExecRequest, ExecutionEnv, Recursive};
use jig_tool::{Effects, Tool, ToolContext, ToolError, ToolOutput};
use jig_truncate::format_size;
use schemars::JsonSchema;
use serde::Deserialize;

pub use self::config::{
    BashConfig, DEFAULT_BASH_MAX_TIMEOUT, DEFAULT_BASH_TIMEOUT, DEFAULT_FULL_OUTPUT_MAX_BYTES,
    DEFAULT_FULL_OUTPUTS_TOTAL_MAX_BYTES, SESSION_VARIABLES, SharedSpawnHook, SpawnHook,
    SpawnRequest,
};
use self::config::{resolve_timeout, timeout_sentence};
pub use self::guard::CommandGuard;
use self::render::FullOutput;
use self::sink::BashSink;
use crate::details::BashDetails;
use crate::failure::{Action, Subject, env_failure, no_working_directory};

/// Shells tried, in order, when no explicit shell is configured (then `bash` on `PATH`, then
/// `sh`).
const SHELL_CANDIDATES: &[&str] = &[
    "/bin/bash",
    "/usr/bin/bash",
    "/usr/local/bin/bash",
    "/opt/homebrew/bin/bash",
];

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
    type Details = BashDetails;

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

    async fn call(
        &self,
        ctx: &ToolContext,
        input: BashInput,
    ) -> Result<ToolOutput<BashDetails>, ToolError> {
        run(&self.config, &self.kept, ctx, input).await
    }
}

async fn run(
    config: &BashConfig,
    kept: &KeptFiles,
    ctx: &ToolContext,
    input: BashInput,
) -> Result<ToolOutput<BashDetails>, ToolError> {
    let timeout = resolve_timeout(config, input.timeout)?;
    if config.guard == CommandGuard::Workspace {
        guard::check(&input.command, &ctx.cwd, &ctx.containment.roots)
            .map_err(|refusal| ToolError::failed(refusal.to_string()))?;
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
        _ => return Err(no_working_directory(&spawn.cwd)),
    }
    let shells = resolve_shells(config, env).await?;

    let sandbox = ctx.exec_sandbox();
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
        request.sandbox = sandbox.clone();
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
            Err(error) => {
                let shells = shell_names(&shells);
                let cwd = spawn.cwd.display().to_string();
                return Err(env_failure(
                    Action::Exec { shells: &shells },
                    Subject::same(&cwd),
                    &error,
                ));
            }
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
    Ok(render::final_output(
        config,
        &sandbox,
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
