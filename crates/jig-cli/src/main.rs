//! The `jig` command: the composition root that picks concrete implementations (the host's
//! `LocalEnv`, the built-in tools) and exposes them on the command line.
//!
//! Subcommands, one module each:
//! - `jig tool <name>` / `jig tools` ([`tool_cmd`]): run one tool call, list the tools.
//! - `jig mcp` ([`mcp_cmd`]): serve the tools to an MCP client over stdio.
//! - `jig run` ([`run_cmd`]): run the agent on a prompt (providers, sessions, settings).
//! - `jig sessions` ([`sessions_cmd`]): list the saved `jig run` sessions of a directory.
//! - `jig run` ([`run_cmd`]): one agent run in print mode; `jig` alone (or `jig run` without a
//!   prompt) in a terminal is an interactive session ([`interactive`]). Both decide tool calls
//!   with the permission policy of `jig-tui` ([`permissions`] saves a project's allowlist).
//! - `jig env serve` / `jig env install` ([`env_cmd`]): serve this machine as an environment,
//!   put jig on another; `--env URL` of the tool-running commands connects there.
//!
//! Project trust and extension loading at startup are in [`project`]; how the loaded
//! extensions take part in each mode (their tools, `tool_call`/`tool_result`, the host side of
//! their actions) is in [`extensions`]; the one chain of hooks around every tool call (audit,
//! permissions, extensions), the same in every mode, is [`chain`].
//!
//! Every subcommand that runs tools builds its environment and [`jig_tool::ToolContext`] through
//! [`workspace`], so containment roots, the canonical cwd and the per-env mutation queue are set
//! up the same way everywhere.
//!
//! Exit codes: 0 success, 1 the tool returned an error result (or the run failed), 2 usage
//! error (unknown tool, invalid JSON, bad flag; the message goes to stderr).
#![expect(
    clippy::disallowed_methods,
    reason = "the CLI is the composition root: it reads --args files and stdin on the host"
)]

/// The metadata methods of a `DynTool` that wraps another one in `self.inner` and changes only
/// how a call runs (the interactive session's rerun outside the sandbox).
macro_rules! delegate_tool_metadata {
    () => {
        fn name(&self) -> &str {
            self.inner.name()
        }
        fn title(&self) -> &str {
            self.inner.title()
        }
        fn description(&self) -> String {
            self.inner.description()
        }
        fn input_schema(&self) -> &serde_json::Value {
            self.inner.input_schema()
        }
        fn details_schema(&self) -> &serde_json::Value {
            self.inner.details_schema()
        }
        fn effects(&self) -> jig_tool::Effects {
            self.inner.effects()
        }
        fn sequential(&self) -> bool {
            self.inner.sequential()
        }
    };
}

mod audit;
mod chain;
mod env_cmd;
mod exit;
mod extensions;
mod interactive;
mod mcp_cmd;
mod permissions;
mod pi_host_cmd;
mod project;
mod render;
mod run_cmd;
mod sandbox_cmd;
mod sessions_cmd;
mod signals;
mod tool_cmd;
mod workspace;

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
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new(workspace::WATCHDOG_ARG))
    {
        jig_env_local::run_watchdog();
        return ExitCode::SUCCESS;
    }
    workspace::watch_processes();
    let mut command = Cli::command();
    let args = project::normalize_args(std::env::args_os(), &command);
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
                interactive::run(&args)
            } else {
                run_cmd::run(*args)
            }
        }),
        Some(Command::Sessions(args)) => sessions_cmd::run_sessions(&args),
        Some(Command::Env(args)) => env_cmd::run_env(&args),
        Some(Command::PiHost(args)) => pi_host_cmd::run_pi_host(&args),
        Some(Command::Install(args)) => pi_host_cmd::run_install(&args),
        Some(Command::Sandbox(args)) => sandbox_cmd::run_sandbox(&args),
        None => {
            use std::io::IsTerminal as _;
            if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
                interactive::run(&run_cmd::RunArgs::defaults())
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
