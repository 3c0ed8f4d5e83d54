//! `jig mcp`: serve the tools to an MCP client over stdio.
//!
//! stdout carries the protocol only; logs go to stderr (`JIG_LOG` sets the filter, default
//! `warn`). End of input finishes the calls already received, then exits 0; SIGINT, SIGTERM or
//! a client that is gone abort running calls, kill their processes, remove temp files and exit.

use std::io::{self, IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use jig_mcp_server::{JigMcpServer, RootsSource, ServerOptions, serve_stdio};
use jig_session::startup::{self, Face, OpenOptions};
use jig_tool::ToolRegistry;
use jig_tool_builtins::BuiltinsConfig;

use crate::CliResult;
use crate::exit::{self, CliError};
use crate::flags::{ContainmentArg, ProjectArgs};

/// Shown on stderr when stdin is a terminal.
const TERMINAL_HINT: &str = "jig mcp: serving MCP over stdin/stdout. An MCP client starts this \
command (setup: docs/mcp.md); by hand, type one JSON-RPC message per line, starting with \
`initialize`. Ctrl-D quits.";

/// Arguments of `jig mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// A workspace root; repeat for several. The first is the working directory. File tools are
    /// confined to the roots [default: the current directory, replaced by the client's roots when
    /// the client offers them].
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Whether file tools are confined to the roots.
    #[arg(long, value_enum, default_value_t = ContainmentArg::Workspace)]
    containment: ContainmentArg,
    /// Serve only these tools (comma-separated names, e.g. `read,grep,find`).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    tools: Option<Vec<String>>,
    /// Serve only the tools that change nothing (read, grep, find, ls).
    #[arg(long)]
    read_only: bool,
    #[command(flatten)]
    project: ProjectArgs,
    #[command(flatten)]
    env: crate::flags::EnvFlags,
    #[command(flatten)]
    pub(crate) sandbox: crate::sandbox_cmd::SandboxFlags,
}

/// Runs `jig mcp`.
pub(crate) fn run_mcp(args: &McpArgs) -> CliResult {
    init_logging();
    if io::stdin().is_terminal() {
        // Typed by hand, `jig mcp` would otherwise sit silent waiting for JSON-RPC.
        let _ = writeln!(io::stderr().lock(), "{TERMINAL_HINT}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(CliError::Failure)?;
    let outcome = runtime.block_on(async {
        let termination = crate::signals::termination();
        let shutdown = async move {
            let signal = termination.await;
            tracing::info!(signal = signal.name(), "stopping");
        };
        // The first root is the project: its trust is decided before anything it brings is
        // loaded, and before serving.
        let opened = startup::open(&args.options(), Face::Mcp, None).await?;
        tracing::info!(trust = %opened.project.decision.describe(), "project");
        let registry = match select_tools(
            opened.tools(&BuiltinsConfig::default()),
            args.tools.as_deref(),
            args.read_only,
        ) {
            Ok(registry) => registry,
            Err(error) => {
                opened.close().await;
                return Err(error);
            }
        };
        let registry = opened.serve(registry).await;
        let options = ServerOptions {
            // The client's roots are its own machine's directories: not the remote env's.
            roots_source: if args.roots.is_empty() && !opened.remote {
                RootsSource::ClientOrDefault
            } else {
                RootsSource::Fixed
            },
            sandbox_report: (!opened.sandbox_report.is_empty())
                .then(|| opened.sandbox_report.clone()),
            ..ServerOptions::default()
        };
        let base = opened.tool_context.clone();
        tracing::info!(tools = ?registry.names(), roots = ?base.containment.roots, "serving over stdio");
        let server = JigMcpServer::new(registry, base, options);
        let outcome_of_serving = serve_stdio(server, shutdown)
            .await
            .map_err(|error| CliError::Failure(error.into()));
        opened.close().await;
        outcome_of_serving
    });
    // A blocking stdin read (stdin not a pipe) must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_millis(200));
    let reason = outcome?;
    tracing::info!(?reason, "stopped");
    Ok(ExitCode::from(exit::SUCCESS))
}

/// The registry narrowed by `--tools` and `--read-only`.
fn select_tools(
    mut registry: ToolRegistry,
    names: Option<&[String]>,
    read_only: bool,
) -> Result<ToolRegistry, CliError> {
    if let Some(names) = names {
        // `--tools "read, grep"`: spaces around the names are not part of them.
        let names: Vec<&str> = names
            .iter()
            .map(|name| name.trim())
            .filter(|name| !name.is_empty())
            .collect();
        if names.is_empty() {
            return Err(CliError::usage(format!(
                "--tools: no tool named; available tools: {}",
                registry.names().join(", ")
            )));
        }
        let unknown: Vec<&str> = names
            .iter()
            .copied()
            .filter(|name| registry.get(name).is_none())
            .collect();
        if !unknown.is_empty() {
            return Err(CliError::usage(format!(
                "--tools: unknown tool{} {}; available tools: {}",
                if unknown.len() == 1 { "" } else { "s" },
                unknown.join(", "),
                registry.names().join(", ")
            )));
        }
        registry.retain(|tool| names.contains(&tool.name()));
    }
    if read_only {
        registry.retain(|tool| tool.effects().is_read_only());
    }
    if registry.is_empty() {
        return Err(CliError::usage(
            "no tools left to serve: --tools and --read-only together select none",
        ));
    }
    Ok(registry)
}

impl McpArgs {
    /// Where the server runs and what it may bring in, as the harness takes it.
    fn options(&self) -> OpenOptions {
        crate::flags::open_options(
            (self.roots.clone(), "--root"),
            self.containment,
            &self.project,
            &self.env,
            &self.sandbox,
        )
    }
}

/// Logs to stderr only: stdout belongs to the protocol.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env(jig_protocol::EnvVars::JIG_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(io::stderr().is_terminal())
        .try_init();
}
