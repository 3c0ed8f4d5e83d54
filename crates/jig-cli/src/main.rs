//! The `jig` command: parses the command line (clap, after [`argv`] rewrites it), hands what
//! it asks for to the harness (`jig-session`), prints what comes back and sets the exit code.
//! Opening the env, trust, settings, extensions, tools, model and session are the harness's
//! (`jig_session::startup`); the interactive session is `jig_tui::interactive`.
//!
//! Subcommands, one module each:
//! - `jig tool <name>` / `jig tools` ([`tool_cmd`]): run one tool call, list the tools.
//! - `jig mcp` ([`mcp_cmd`]): serve the tools to an MCP client over stdio.
//! - `jig run` ([`run_cmd`]): one agent run in print mode (`jig_session::print::run`, shown by
//!   `run_cmd::output`); `jig` alone (or `jig run` without a prompt) in a terminal is the
//!   interactive session.
//! - `jig sessions` ([`sessions_cmd`]): list the saved sessions of a directory.
//! - `jig env serve` / `jig env install` ([`env_cmd`]): serve this machine as an environment,
//!   put jig on another.
//! - `jig sandbox` ([`sandbox_cmd`]): run one command in the sandbox.
//! - `jig pi-host` / `jig install` ([`pi_host_cmd`]): the Node host of Pi extensions.
//!
//! The flag groups several subcommands share, and the harness options they become, are in
//! [`flags`].
//!
//! Exit codes: 0 success, 1 the tool returned an error result (or the run failed), 2 usage
//! error (unknown tool, invalid JSON, bad flag; the message goes to stderr).
#![expect(
    clippy::disallowed_methods,
    reason = "the CLI is the composition root: it reads --args files and stdin on the host"
)]

mod acp_cmd;
mod argv;
mod env_cmd;
mod exit;
mod flags;
mod mcp_cmd;
mod pi_host_cmd;
mod render;
mod run_cmd;
mod sandbox_cmd;
mod sessions_cmd;
mod signals;
mod tool_cmd;

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

use crate::exit::CliError;

/// jig: a coding-agent tool harness. Runs the file and shell tools a language model uses —
/// read, write, ls, … — against a workspace directory.
#[derive(Debug, Parser)]
#[command(
    name = "jig",
    version,
    propagate_version = true,
    after_help = "Interactive session: `jig` alone in a terminal (it takes `jig run`'s options, e.g. \
                  `jig --model gpt-4.1`).\n\
                  Choosing the model: --provider (openai, anthropic, openrouter, ollama, lmstudio, llamacpp, \
                  vllm, openai-compatible, \
                  or one from the settings), --model, --base-url URL for a local or other \
                  OpenAI-compatible server; keys come from OPENAI_API_KEY, ANTHROPIC_API_KEY, …; \
                  defaults live in ~/.config/jig/settings.json. See `jig run --help` and docs/agent.md."
)]
struct Cli {
    /// Without a command, in a terminal: an interactive session (`jig run` with no prompt).
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one tool call and print its result.
    Tool(tool_cmd::ToolArgs),
    /// List the registered tools with their descriptions and JSON Schemas.
    Tools(tool_cmd::ToolsArgs),
    /// Serve the tools to an MCP client over stdio (Claude Code, Codex, Cursor, Zed, …).
    Mcp(mcp_cmd::McpArgs),
    /// Run the agent on a prompt: the model reads, edits and runs commands until it is done.
    Run(Box<run_cmd::RunArgs>),
    /// Serve jig's agent to an editor over the Agent Client Protocol on stdio (Zed, JetBrains,
    /// Neovim, Emacs; see docs/editors.md). Takes the agent options of `jig run`.
    Acp(Box<acp_cmd::AcpArgs>),
    /// List the saved sessions of this directory, newest first (what `jig run --continue` resumes).
    Sessions(sessions_cmd::SessionsArgs),
    /// Serve this machine as an environment for jig elsewhere, or install jig on another one.
    Env(env_cmd::EnvArgs),
    /// Install or locate the Node host that runs Pi extensions (TypeScript or JavaScript
    /// modules written against Pi's ExtensionAPI).
    PiHost(pi_host_cmd::PiHostArgs),
    /// Install a Pi package from the npm registry as a global extension (npm:NAME or npm:NAME@VERSION).
    Install(pi_host_cmd::InstallArgs),
    /// Run one command in the sandbox, to see what it may do (see docs/sandbox.md).
    Sandbox(sandbox_cmd::SandboxArgs),
}

fn main() -> ExitCode {
    if std::env::args_os().nth(1).as_deref()
        == Some(std::ffi::OsStr::new(jig_session::workspace::WATCHDOG_ARG))
    {
        jig_env_local::run_watchdog();
        return ExitCode::SUCCESS;
    }
    jig_session::workspace::watch_processes();
    let mut command = Cli::command();
    let args = argv::normalize_args(std::env::args_os(), &command);
    let cli = match command.try_get_matches_from_mut(args).and_then(|matches| {
        Cli::from_arg_matches(&matches).map_err(|error| error.format(&mut Cli::command()))
    }) {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    let outcome = match cli.command {
        Some(Command::Tool(args)) => tool_cmd::run_tool(&args),
        Some(Command::Tools(args)) => tool_cmd::run_tools(&args),
        Some(Command::Mcp(args)) => mcp_cmd::run_mcp(&args),
        Some(Command::Run(args)) => run_cmd::check_args(&args).and_then(|()| {
            if args.is_interactive() {
                jig_tui::interactive::run(&args.options())
            } else {
                run_cmd::run(*args)
            }
        }),
        Some(Command::Acp(args)) => acp_cmd::run_acp(&args),
        Some(Command::Sessions(args)) => sessions_cmd::run_sessions(&args),
        Some(Command::Env(args)) => env_cmd::run_env(&args),
        Some(Command::PiHost(args)) => pi_host_cmd::run_pi_host(&args),
        Some(Command::Install(args)) => pi_host_cmd::run_install(&args),
        Some(Command::Sandbox(args)) => sandbox_cmd::run_sandbox(&args),
        None => {
            use std::io::IsTerminal as _;
            if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
                jig_tui::interactive::run(&run_cmd::RunArgs::defaults().options())
            } else {
                // Not a terminal: what `jig` alone always did, help as a usage error.
                use std::io::Write as _;
                let help = Cli::command().render_help();
                let _ = write!(std::io::stderr(), "{help}");
                return ExitCode::from(2);
            }
        }
    };
    match outcome {
        Ok(code) => code,
        Err(error) => exit::report(&error),
    }
}

/// The shared result type of subcommands: an exit code, or an error to report.
type CliResult = Result<ExitCode, CliError>;
