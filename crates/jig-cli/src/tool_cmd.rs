//! `jig tool <name>` (run one call) and `jig tools` (list the tools).

use std::fmt::Write as _;
use std::io::{self, Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use clap::Args;
use jig_tool::{DynTool, Effects, ToolRegistry};
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};
use serde_json::{Value, json};

use crate::CliResult;
use crate::exit::{self, CliError};
use crate::flags::ContainmentArg;
use crate::flags::ProjectArgs;
use crate::render::render_text;
use crate::signals;
use jig_session::settings::{SandboxSettings, Settings};
use jig_session::startup::{self, Face, OpenOptions};
use jig_session::{extensions, project};

/// Arguments of `jig tool`.
#[derive(Debug, Args)]
pub(crate) struct ToolArgs {
    /// The tool to run (see `jig tools`).
    name: String,
    /// Working directory: relative paths resolve against it and it is the containment root
    /// [default: the current directory].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The call's arguments: a JSON object, `@FILE` to read it from a file, or `-` for stdin
    /// [default: {}].
    #[arg(long, value_name = "JSON|@FILE|-", allow_hyphen_values = true)]
    args: Option<String>,
    /// Print the whole result as one JSON object: {"content":[…],"details":{…},"isError":…}.
    #[arg(long)]
    json: bool,
    /// Whether file tools are confined to the working directory.
    #[arg(long, value_enum, default_value_t = ContainmentArg::Workspace)]
    containment: ContainmentArg,
    /// Keep temporary files after the call (bash then saves truncated output to a file and
    /// prints its path); by default they are removed when the call ends.
    #[arg(long)]
    keep_temp: bool,
    #[command(flatten)]
    project: ProjectArgs,
    #[command(flatten)]
    env: crate::flags::EnvFlags,
    #[command(flatten)]
    pub(crate) sandbox: crate::sandbox_cmd::SandboxFlags,
}

impl ToolArgs {
    /// Where the call runs and what it may bring in, as the harness takes it.
    fn options(&self) -> OpenOptions {
        OpenOptions {
            keep_temp_files: self.keep_temp,
            ..crate::flags::open_options(
                (self.cwd.iter().cloned().collect(), "--cwd"),
                self.containment,
                &self.project,
                &self.env,
                &self.sandbox,
            )
        }
    }
}

/// Arguments of `jig tools`.
#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Print the tools as a JSON array of {name, title, description, effects, inputSchema,
    /// detailsSchema}.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    project: ProjectArgs,
}

/// The usage error for a tool name that is not registered: `unknown tool NAME; available tools: …`.
fn unknown_tool(name: &str, registry: &ToolRegistry) -> CliError {
    CliError::usage(format!(
        "unknown tool `{name}`; available tools: {}",
        registry.names().join(", ")
    ))
}

/// The registry the CLI offers in the current directory: the built-in tools, then the tools of
/// the extensions loaded there (after the project's trust is decided).
fn registry(project_args: &ProjectArgs, settings: &Settings) -> Result<ToolRegistry, CliError> {
    let mut registry = builtin_registry(&BuiltinsConfig::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(CliError::Failure)?;
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .context("cannot read the current directory")
        .map_err(CliError::Failure)?;
    runtime.block_on(async {
        let project = project::start(
            &project_args.options(),
            settings,
            project::ProjectPlace::Local(&cwd),
            "tool",
        )
        .await?;
        extensions::add_tools(&mut registry, &project.extensions);
        project.extensions.shutdown().await;
        Ok(registry)
    })
}

/// Runs `jig tool`.
pub(crate) fn run_tool(args: &ToolArgs) -> CliResult {
    // The env is cleaned when this one call ends, so bash offers a full-output file only when
    // temp files are kept: never a path to a file that is already gone.
    let mut config = BuiltinsConfig::default();
    config.bash.keep_full_output = args.keep_temp;
    let call_args = parse_call_args(args.args.as_deref())?;
    // One call needs no worker threads; a current-thread runtime keeps start-up cheap.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(CliError::Failure)?;
    let outcome = runtime.block_on(async {
        // The cwd is the project: its trust is decided before anything it brings is loaded.
        let opened = startup::open(&args.options(), Face::Tool, None).await?;
        let registry = opened.tools(&config);
        if registry.get(&args.name).is_none() {
            let error = unknown_tool(&args.name, &registry);
            opened.close().await;
            return Err(error);
        }
        let tool = opened
            .serve(registry)
            .await
            .get(&args.name)
            .cloned()
            .unwrap_or_else(|| unreachable!("the tool is registered"));
        let mut ctx = opened.tool_context.clone();
        // The one call of this process, named as an MCP client's calls are (the process id
        // tells calls of several `jig tool` processes in one audit log apart).
        ctx.call = Some(jig_tool::CallInfo::next(&args.name));
        let started = Instant::now();
        let termination = signals::termination();
        let run = tool.run(&ctx, call_args);
        tokio::pin!(run, termination);
        let (result, stopped_by) = tokio::select! {
            result = &mut run => (result, None),
            signal = &mut termination => {
                // Abort the call the way a client's cancel does (bash kills the command's
                // whole process tree), then let it report what it had.
                ctx.cancel.cancel();
                (run.await, Some(signal))
            }
        };
        let elapsed = started.elapsed();
        opened.close().await;
        Ok((result, elapsed, stopped_by))
    });
    let (result, elapsed, stopped_by) = outcome?;
    let output = if args.json {
        let mut line = serde_json::to_string(&result)
            .context("cannot serialise the result")
            .map_err(CliError::Failure)?;
        line.push('\n');
        line
    } else {
        render_text(&result)
    };
    write_stdout(&output)?;
    if std::env::var_os(jig_protocol::EnvVars::JIG_TIMING).is_some_and(|value| value == "1") {
        let millis = elapsed.as_secs_f64() * 1000.0;
        let _ = writeln!(
            io::stderr().lock(),
            "{}",
            json!({"timing": {"exec_ms": millis}})
        );
    }
    if let Some(signal) = stopped_by {
        let _ = writeln!(
            io::stderr().lock(),
            "jig: stopped by {}: the call was aborted, its processes killed and its temporary \
             files removed",
            signal.name()
        );
        return Ok(ExitCode::from(signal.exit_code()));
    }
    Ok(ExitCode::from(if result.is_error {
        exit::TOOL_ERROR
    } else {
        exit::SUCCESS
    }))
}

/// `--args`: inline JSON, `@FILE`, `-` (stdin), or `{}` when absent.
fn parse_call_args(raw: Option<&str>) -> Result<Value, CliError> {
    let (text, source) = match raw {
        None => return Ok(json!({})),
        Some("-") => {
            let mut text = String::new();
            io::stdin().read_to_string(&mut text).map_err(|error| {
                CliError::usage(format!("--args -: cannot read stdin: {error}"))
            })?;
            (text, "stdin".to_owned())
        }
        Some(arg) if arg.starts_with('@') => {
            let file = &arg[1..];
            let text = std::fs::read_to_string(file).map_err(|error| {
                CliError::usage(format!("--args {arg}: cannot read {file}: {error}"))
            })?;
            (text, file.to_owned())
        }
        Some(arg) => (arg.to_owned(), "--args".to_owned()),
    };
    serde_json::from_str(&text)
        .map_err(|error| CliError::usage(format!("invalid JSON in {source}: {error}")))
}

/// Runs `jig tools`.
pub(crate) fn run_tools(args: &ToolsArgs) -> CliResult {
    let settings = jig_session::settings::load()?;
    let registry = registry(&args.project, &settings)?;
    let output = if args.json {
        let tools: Vec<Value> = registry
            .iter()
            .map(|tool| tool_json(tool.as_ref()))
            .collect();
        let mut text = serde_json::to_string_pretty(&tools)
            .context("cannot serialise the tool list")
            .map_err(CliError::Failure)?;
        text.push('\n');
        text
    } else {
        tools_text(&registry, &settings.sandbox.unwrap_or_default())
    };
    write_stdout(&output)?;
    Ok(ExitCode::from(exit::SUCCESS))
}

fn effects_name(effects: Effects) -> &'static str {
    match effects {
        Effects::ReadOnly => "readOnly",
        Effects::Mutates => "mutates",
        Effects::Process => "process",
    }
}

fn tool_json(tool: &dyn DynTool) -> Value {
    json!({
        "name": tool.name(),
        "title": tool.title(),
        "description": tool.description(),
        "effects": effects_name(tool.effects()),
        "inputSchema": tool.input_schema(),
        "detailsSchema": tool.details_schema(),
    })
}

fn tools_text(registry: &ToolRegistry, sandbox: &SandboxSettings) -> String {
    let mut out = String::new();
    for tool in registry.iter() {
        let _ = writeln!(out, "{} — {}", tool.name(), tool.title());
        for line in tool.description().lines() {
            let _ = writeln!(out, "  {line}");
        }
        let _ = writeln!(out, "  Arguments (JSON Schema):");
        let schema = serde_json::to_string_pretty(tool.input_schema()).unwrap_or_default();
        for line in schema.lines() {
            let _ = writeln!(out, "    {line}");
        }
        out.push('\n');
    }
    let uncontained: Vec<&str> = registry
        .iter()
        .filter(|tool| tool.effects() == Effects::Process)
        .map(|tool| tool.name())
        .collect();
    let _ = writeln!(
        out,
        "Workspace containment (--containment workspace, the default) confines the file tools to --cwd."
    );
    if !uncontained.is_empty() {
        let _ = writeln!(
            out,
            "Not contained: {} run{} processes, which can reach any path the user can, unless \
             the sandbox confines them.",
            uncontained.join(", "),
            if uncontained.len() == 1 { "s" } else { "" }
        );
        let _ = writeln!(out, "{}", jig_session::sandbox::defaults_report(sandbox));
    }
    out
}

fn write_stdout(text: &str) -> Result<(), CliError> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("cannot write to stdout")
        .map_err(CliError::Failure)
}
