//! `jig run`: one agent run from the command line.
//!
//! The prompt is the positional argument followed by piped stdin (`git diff | jig run "review
//! this"`), or stdin alone with `-` or no argument; a terminal stdin is never read. Text mode
//! (the default, also `-p/--print`) prints the final reply on stdout, and with progress on
//! (`--verbose`, or stderr a terminal) a summary of turns, tokens and cost on stderr; `--mode
//! json` prints one JSON event per line (first the session header; `agent_end` carries tokens
//! and cost per model). The environment is cleaned up (commands killed, temporary files
//! removed) however the run ends. The exit code is 0 when the model finished,
//! 1 when the run ended in an error, was aborted or hit `--max-turns`, 2 for usage errors.
//! Ctrl-C aborts the run (running tools are cancelled, their processes killed, the session keeps
//! every result); a second Ctrl-C exits at once with 130.

pub(crate) mod output;

use std::io::{self, IsTerminal as _, Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use jig_agent::{RunEnd, RunOutcome};
use jig_llm::ThinkingLevel;
use jig_session::policy::PermissionMode;
use jig_session::print::{self, PrintEnd};
use jig_session::startup::{self, Face, OpenOptions, Opened, RunOptions};
use tokio_util::sync::CancellationToken;

use crate::CliResult;
use crate::exit::CliError;
use crate::flags::{ContainmentArg, ProjectArgs};

/// Exit code after a second Ctrl-C.
const INTERRUPTED: i32 = 130;

/// How `jig run` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum OutputMode {
    /// The final reply's text.
    #[default]
    Text,
    /// One JSON event per line.
    Json,
    /// A long-lived session an app drives with JSONL commands on stdin (Pi's RPC protocol;
    /// see docs/rpc.md).
    Rpc,
}

/// Arguments of `jig run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The prompt; `-` reads it from stdin. Piped stdin is appended to a prompt argument after
    /// a blank line [default: stdin, when it is not a terminal].
    prompt: Option<String>,
    /// Print mode: send the prompt, print the final reply, exit (this is what `jig run` does).
    #[arg(short = 'p', long = "print")]
    print: bool,
    /// Output: `text` (the final reply), `json` (one event per line), or `rpc` (a session an
    /// app drives with JSONL commands on stdin; see docs/rpc.md).
    #[arg(long, visible_alias = "output-format", value_enum, default_value_t = OutputMode::Text)]
    mode: OutputMode,
    /// Compact the resumed session (--continue or --session) before sending the prompt.
    #[arg(long)]
    compact: bool,
    #[command(flatten)]
    pub(crate) agent: AgentArgs,
}

/// The options of every face that runs jig's agent (`jig run`, the interactive session,
/// `jig acp`).
#[derive(Debug, Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "command-line flags: each bool is one independent switch"
)]
pub(crate) struct AgentArgs {
    /// Text mode: print one line per tool call and per retry on stderr [default: on when stderr
    /// is a terminal].
    #[arg(short = 'v', long)]
    verbose: bool,
    /// The provider: openai, anthropic, openrouter, ollama, lmstudio, llamacpp, vllm,
    /// openai-compatible, or a custom provider named in the settings file's `providers`
    /// [default: the resumed session's, else the settings file's, else anthropic when only
    /// ANTHROPIC_API_KEY is set, else openai].
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// The model id [default: the resumed session's, else the settings file's, else the
    /// provider's default].
    #[arg(short = 'm', long, value_name = "ID")]
    model: Option<String>,
    /// The API key [default: the provider's variable, e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY].
    #[arg(long, value_name = "KEY")]
    api_key: Option<String>,
    /// The provider's base URL, e.g. http://localhost:8080/v1 for a local server (it does not
    /// change the provider) [default: the resumed session's, else OPENAI_BASE_URL for openai
    /// and openai-compatible, ANTHROPIC_BASE_URL for anthropic, else the settings file's, else
    /// the provider's].
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Seconds allowed to connect to the model's server.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_seconds)]
    connect_timeout: Duration,
    /// Seconds the model's server may stay silent (before replying, or mid-reply) before the
    /// request fails.
    #[arg(long, value_name = "SECS", default_value = "300", value_parser = parse_seconds)]
    idle_timeout: Duration,
    /// The tools the model may use, comma-separated [default: read,bash,edit,write].
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    tools: Option<Vec<String>>,
    /// Replace the default system prompt (project context, date and cwd are still added).
    #[arg(long, value_name = "TEXT")]
    system_prompt: Option<String>,
    /// Text appended to the system prompt (repeatable).
    #[arg(long, value_name = "TEXT")]
    append_system_prompt: Vec<String>,
    /// A skill: a path (with a `/`, or starting with `.` or `~`) adds the skill directory,
    /// `SKILL.md` or directory of skills there; a name forces that skill's instructions into the
    /// prompt (repeatable).
    #[arg(long = "skill", value_name = "PATH|NAME")]
    skills: Vec<String>,
    /// Do not discover skills (user, project, settings); --skill paths still load.
    #[arg(long)]
    no_skills: bool,
    /// Stop after this many model requests.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_turns: Option<u32>,
    /// The model's context window in tokens [default: the settings file's, else the model table
    /// (the settings' models, then jig's known models), else 128000].
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1000..))]
    context_window: Option<u64>,
    /// Compact the conversation (summarise its older turns with the model) when a request's
    /// input tokens reach this fraction of the context window.
    #[arg(long, value_name = "FRACTION", default_value = "0.8", value_parser = parse_fraction)]
    compact_threshold: f64,
    /// Output-token limit per reply [default: the provider's].
    #[arg(long, value_name = "N")]
    max_output_tokens: Option<u32>,
    /// Reasoning effort: off, low, medium, high [default: the resumed session's, else the
    /// settings file's, else off].
    #[arg(long, value_name = "LEVEL")]
    thinking: Option<ThinkingLevel>,
    /// Resume this session file (created there if missing) or the session with this id.
    #[arg(
        long,
        visible_alias = "resume",
        value_name = "FILE|ID",
        conflicts_with_all = ["continue_session", "no_session"]
    )]
    session: Option<String>,
    /// Continue the most recent session of this working directory.
    #[arg(short = 'c', long = "continue", conflicts_with = "no_session")]
    continue_session: bool,
    /// Do not save the session.
    #[arg(long)]
    pub(crate) no_session: bool,
    /// Working directory: tools act there and it is the containment root [default: the current
    /// directory].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Whether file tools are confined to the working directory.
    #[arg(long, value_enum, default_value_t = ContainmentArg::Workspace)]
    containment: ContainmentArg,
    #[command(flatten)]
    project: ProjectArgs,
    #[command(flatten)]
    env: crate::flags::EnvFlags,
    #[command(flatten)]
    pub(crate) sandbox: crate::sandbox_cmd::SandboxFlags,
    /// What runs without asking: read-only, ask, auto-edit, full-auto [default: the settings
    /// file's permissionMode, else ask in an interactive session and full-auto in print mode;
    /// print mode never asks: it denies what `ask` would ask about].
    #[arg(long, value_name = "MODE")]
    pub(crate) permission_mode: Option<PermissionMode>,
}

impl RunArgs {
    /// What the session is asked for, as the harness takes it.
    pub(crate) fn options(&self) -> RunOptions {
        self.agent.options()
    }

    /// The arguments of a bare `jig run` (what `jig` alone starts with).
    pub(crate) fn defaults() -> Self {
        use clap::{Args as _, FromArgMatches as _};
        let matches = Self::augment_args(clap::Command::new("run")).get_matches_from(["run"]);
        #[expect(clippy::expect_used, reason = "the defaults of the flags always parse")]
        Self::from_arg_matches(&matches).expect("default arguments")
    }

    /// True when this is an interactive session: no prompt, no print or JSON mode, and both
    /// stdin and stdout are terminals.
    pub(crate) fn is_interactive(&self) -> bool {
        self.prompt.is_none()
            && !self.print
            && self.mode == OutputMode::Text
            && io::stdin().is_terminal()
            && io::stdout().is_terminal()
    }
}

impl AgentArgs {
    /// What the session is asked for, as the harness takes it.
    pub(crate) fn options(&self) -> RunOptions {
        RunOptions {
            open: OpenOptions {
                verbose: self.verbose,
                ..crate::flags::open_options(
                    (self.cwd.iter().cloned().collect(), "--cwd"),
                    self.containment,
                    &self.project,
                    &self.env,
                    &self.sandbox,
                )
            },
            provider: self.provider.clone(),
            model: self.model.clone(),
            api_key: self.api_key.clone(),
            base_url: self.base_url.clone(),
            connect_timeout: self.connect_timeout,
            idle_timeout: self.idle_timeout,
            tools: self.tools.clone(),
            system_prompt: self.system_prompt.clone(),
            append_system_prompt: self.append_system_prompt.clone(),
            skills: self.skills.clone(),
            no_skills: self.no_skills,
            max_turns: self.max_turns,
            context_window: self.context_window,
            compact_threshold: self.compact_threshold,
            max_output_tokens: self.max_output_tokens,
            thinking: self.thinking,
            session: self.session.clone(),
            continue_session: self.continue_session,
            no_session: self.no_session,
            permission_mode: self.permission_mode,
            reserved_commands: jig_tui::interactive::command_names(),
        }
    }
}

/// Checks the combinations of `jig run`'s flags that clap cannot, for print mode and the
/// interactive session alike.
pub(crate) fn check_args(args: &RunArgs) -> Result<(), CliError> {
    // `-p` only names the default behaviour; it is accepted for compatibility.
    let _ = args.print;
    if args.mode == OutputMode::Rpc {
        if args.prompt.is_some() {
            return Err(CliError::usage(
                "--mode rpc reads commands on stdin: send the prompt as {\"type\":\"prompt\",\"message\":\"…\"} instead of an argument",
            ));
        }
        if args.compact || args.agent.max_turns.is_some() {
            return Err(CliError::usage(
                "--mode rpc takes neither --compact (send {\"type\":\"compact\"}) nor --max-turns",
            ));
        }
    }
    if args.compact && args.agent.session.is_none() && !args.agent.continue_session {
        return Err(CliError::usage(
            "--compact compacts a resumed session: add --continue or --session",
        ));
    }
    Ok(())
}

/// Runs `jig run` in print mode (`main` starts the interactive session instead when
/// [`RunArgs::is_interactive`]).
pub(crate) fn run(args: RunArgs) -> CliResult {
    if args.mode == OutputMode::Rpc {
        return jig_rpc::run(&args.options());
    }
    let prompt = read_prompt(args.prompt.as_deref())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(CliError::Failure)?;
    runtime.block_on(run_async(args, prompt))
}

/// The prompt: the argument, followed by piped stdin when there is any (`git diff | jig run
/// "review this"`); `-` or no argument reads the whole prompt from stdin. A terminal stdin is
/// never read: it would wait for typing nobody knows is expected.
fn read_prompt(argument: Option<&str>) -> Result<String, CliError> {
    let stdin_is_terminal = io::stdin().is_terminal();
    let prompt = match argument {
        Some("-") | None if stdin_is_terminal => {
            return Err(CliError::usage(
                "no prompt: pass it as an argument (jig run \"fix the test\") or pipe it on stdin",
            ));
        }
        Some("-") | None => read_stdin()?,
        Some(prompt) if stdin_is_terminal => prompt.to_owned(),
        Some(prompt) => join_piped(prompt, &read_stdin()?),
    };
    if prompt.trim().is_empty() {
        return Err(CliError::usage("the prompt is empty"));
    }
    Ok(prompt)
}

fn read_stdin() -> Result<String, CliError> {
    let mut bytes = Vec::new();
    io::stdin()
        .read_to_end(&mut bytes)
        .context("cannot read stdin")
        .map_err(CliError::Failure)?;
    String::from_utf8(bytes).map_err(|_| {
        CliError::usage("stdin is not UTF-8 text: pipe text (or pass the prompt as an argument)")
    })
}

/// The prompt argument, a blank line, then the piped text (nothing added when stdin is empty).
fn join_piped(prompt: &str, piped: &str) -> String {
    if piped.trim().is_empty() {
        return prompt.to_owned();
    }
    format!("{prompt}\n\n{}", piped.trim_end_matches(['\n', '\r']))
}

/// A fraction above 0 and at most 1.
fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value > 0.0 && value <= 1.0 => Ok(value),
        _ => Err(format!(
            "`{text}`: give a fraction above 0 and at most 1, e.g. 0.8"
        )),
    }
}

/// A positive number of seconds (fractions allowed).
fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 1e9 {
        return Err(format!("`{text}`: give a positive number of seconds"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

async fn run_async(args: RunArgs, prompt: String) -> CliResult {
    let options = args.options();
    let opened = startup::open(&options.open, Face::Print, None).await?;
    let outcome = run_with_project(&args, &options, prompt, &opened).await;
    opened.close().await;
    outcome
}

/// One print-mode run in an opened env and project.
async fn run_with_project(
    args: &RunArgs,
    options: &RunOptions,
    prompt: String,
    opened: &Opened,
) -> CliResult {
    let progress = args.agent.verbose || io::stderr().is_terminal();
    let printer = output::Printer::new(args.mode, progress);
    let cancel = CancellationToken::new();
    let interrupts = tokio::spawn(watch_interrupts(cancel.clone()));
    // A silent model or a long command still shows, every 15 s, what the run waits for.
    let quiet = tokio::spawn({
        let printer = Arc::clone(&printer);
        async move {
            let mut reported = Duration::ZERO;
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                reported = printer.report_quiet(reported);
            }
        }
    });
    let end = print::run(options, opened, prompt, args.compact, printer, &cancel).await;
    interrupts.abort();
    quiet.abort();
    match end? {
        PrintEnd::Handled => Ok(ExitCode::SUCCESS),
        PrintEnd::CompactionFailed(message) => {
            output::error(&format!("--compact: {message}"));
            Ok(ExitCode::from(1))
        }
        PrintEnd::Ran(outcome) => report(&outcome, args.mode),
    }
}

/// Prints the final reply (text mode) or the reason the run did not finish; the exit code.
fn report(outcome: &RunOutcome, mode: OutputMode) -> CliResult {
    let code = match &outcome.end {
        RunEnd::Completed => {
            if mode == OutputMode::Text {
                let text = outcome
                    .final_reply()
                    .map(jig_protocol::AssistantMessage::text)
                    .unwrap_or_default();
                let mut stdout = io::stdout().lock();
                let written = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
                if let Err(error) = written
                    && error.kind() != io::ErrorKind::BrokenPipe
                {
                    return Err(CliError::Failure(
                        anyhow::Error::new(error).context("cannot write the reply"),
                    ));
                }
            }
            0
        }
        RunEnd::MaxTurns { max_turns } => {
            output::error(&format!(
                "stopped after --max-turns {max_turns}: the model was still calling tools"
            ));
            1
        }
        RunEnd::Aborted => {
            output::error("the run was aborted");
            1
        }
        RunEnd::Error { message } => {
            output::error(message);
            1
        }
    };
    Ok(ExitCode::from(code))
}

/// First Ctrl-C: cancel the run. Second: exit now.
async fn watch_interrupts(cancel: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    output::warn("aborting: cancelling running tools (press Ctrl-C again to exit now)");
    cancel.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        std::process::exit(INTERRUPTED);
    }
}
