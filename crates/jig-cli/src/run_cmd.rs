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

mod context_files;
mod model;
pub(crate) use model::ProviderSwitch;
pub(crate) mod output;
mod session_choice;
pub(crate) use session_choice::tidy as tidy_sessions;
pub(crate) mod settings;
pub(crate) mod skills;

use std::io::{self, IsTerminal as _, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use jig_agent::compaction::{CompactionConfig, CompactionReason};
use jig_agent::system_prompt::{SystemPromptOptions, build_system_prompt};
use jig_agent::{Agent, AgentConfig, AgentObserver, RunEnd, RunOutcome, Session, SessionRecorder};
use jig_extensions::{ExtensionRunner, InputOutcome, SessionInfo, events};
use jig_llm::{ModelTable, ThinkingLevel};
use jig_protocol::Message;
use jig_tool::ToolRegistry;
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};
use jig_tui::approval::PermissionHooks;
use jig_tui::policy::PermissionMode;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::CliResult;
use crate::exit::CliError;
use crate::extensions;
use crate::permissions;
use crate::project::{self, ProjectArgs};
use crate::workspace::{self, ContainmentArg};

/// The tools offered when `--tools` is not given.
const DEFAULT_TOOLS: &[&str] = &["read", "bash", "edit", "write"];

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
}

/// Arguments of `jig run`.
#[derive(Debug, Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "command-line flags: each bool is one independent switch"
)]
pub(crate) struct RunArgs {
    /// The prompt; `-` reads it from stdin. Piped stdin is appended to a prompt argument after
    /// a blank line [default: stdin, when it is not a terminal].
    prompt: Option<String>,
    /// Print mode: send the prompt, print the final reply, exit (this is what `jig run` does).
    #[arg(short = 'p', long = "print")]
    print: bool,
    /// Output: `text` (the final reply) or `json` (one event per line).
    #[arg(long, visible_alias = "output-format", value_enum, default_value_t = OutputMode::Text)]
    mode: OutputMode,
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
    /// Compact the resumed session (--continue or --session) before sending the prompt.
    #[arg(long)]
    compact: bool,
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
    env: crate::env_cmd::EnvFlags,
    #[command(flatten)]
    pub(crate) sandbox: crate::sandbox_cmd::SandboxFlags,
    /// What runs without asking: read-only, ask, auto-edit, full-auto [default: the settings
    /// file's permissionMode, else ask in an interactive session and full-auto in print mode;
    /// print mode never asks: it denies what `ask` would ask about].
    #[arg(long, value_name = "MODE")]
    pub(crate) permission_mode: Option<PermissionMode>,
}

impl RunArgs {
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

/// Checks the combinations of `jig run`'s flags that clap cannot, for print mode and the
/// interactive session alike.
pub(crate) fn check_args(args: &RunArgs) -> Result<(), CliError> {
    // `-p` only names the default behaviour; it is accepted for compatibility.
    let _ = args.print;
    if args.compact && args.session.is_none() && !args.continue_session {
        return Err(CliError::usage(
            "--compact compacts a resumed session: add --continue or --session",
        ));
    }
    Ok(())
}

/// Runs `jig run` in print mode (`main` starts the interactive session instead when
/// [`RunArgs::is_interactive`]).
pub(crate) fn run(args: RunArgs) -> CliResult {
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

/// The tools offered: `--tools`, else the default built-ins and every extension tool.
fn select_tools(
    names: Option<&[String]>,
    runner: &ExtensionRunner,
) -> Result<ToolRegistry, CliError> {
    let mut registry = builtin_registry(&BuiltinsConfig::default());
    extensions::add_tools(&mut registry, runner);
    let wanted: Vec<String> = match names {
        Some(names) => names
            .iter()
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .collect(),
        None => DEFAULT_TOOLS
            .iter()
            .map(|n| (*n).to_owned())
            .chain(runner.tools().iter().map(|tool| tool.name().to_owned()))
            .collect(),
    };
    let available: Vec<String> = registry.names().iter().map(|n| (*n).to_owned()).collect();
    if let Some(unknown) = wanted.iter().find(|name| !available.contains(name)) {
        return Err(CliError::usage(format!(
            "--tools: unknown tool `{unknown}`; available tools: {}",
            available.join(", ")
        )));
    }
    registry.retain(|tool| wanted.iter().any(|name| name == tool.name()));
    Ok(registry)
}

async fn run_async(args: RunArgs, prompt: String) -> CliResult {
    let opened = open(&args, "print", None).await?;
    let outcome = run_with_project(&args, prompt, &opened).await;
    opened.close().await;
    outcome
}

/// The env (local or `--env`), the user's settings and the project's startup (trust and the
/// extensions it allows): what every session opens first and closes last.
pub(crate) struct Opened {
    env: Arc<dyn jig_env::ExecutionEnv>,
    tool_context: jig_tool::ToolContext,
    user_settings: settings::Settings,
    pub(crate) project: project::ProjectStartup,
    /// What the sandbox enforces for commands, in one line (`/permissions`, `--verbose`);
    /// empty where neither shows it.
    pub(crate) sandbox_report: String,
    /// The mode extensions are told: `print` or `interactive`.
    mode: &'static str,
    /// Answers the extensions' `ui/*` requests (the interactive session).
    pub(crate) ui: Option<Arc<dyn extensions::ExtensionUi>>,
}

impl Opened {
    /// The loaded extensions.
    pub(crate) fn runner(&self) -> Arc<ExtensionRunner> {
        Arc::clone(&self.project.extensions)
    }

    /// Shuts the extensions down, then kills the commands the session left behind and removes
    /// temporary files, however it ended.
    pub(crate) async fn close(self) {
        self.project.extensions.shutdown().await;
        self.env.cleanup().await;
    }
}

/// Opens the env, reads the user's settings and starts the project; extensions are told
/// `mode`.
pub(crate) async fn open(
    args: &RunArgs,
    mode: &'static str,
    prompt: Option<&dyn jig_project::TrustPrompt>,
) -> Result<Opened, CliError> {
    let (env, cwd) = crate::env_cmd::open_env(
        &args.env,
        || workspace::open_env(false),
        args.cwd.as_deref(),
    )
    .await?;
    let started = async {
        let user_settings = settings::load()?;
        let remote = args.env.url.is_some();
        // On this machine, commands are sandboxed unless the user says otherwise; with --env
        // the far machine or container is the boundary, and the far side enforces a sandbox
        // only when asked.
        let default = if remote {
            jig_env::SandboxMode::Off
        } else {
            jig_env::SandboxMode::WorkspaceWrite
        };
        let requested = args
            .sandbox
            .resolve(&user_settings.sandbox.clone().unwrap_or_default(), default)?;
        let policy = crate::sandbox_cmd::enforce(requested, remote)?;
        let mut tool_context = workspace::tool_context(
            Arc::clone(&env),
            cwd.as_deref(),
            args.containment.into(),
            policy,
        )
        .await?;
        let place = crate::env_cmd::project_place(&args.env, &env, &tool_context.cwd);
        let project = start_project(args, place, mode, prompt).await?;
        if tool_context.sandbox.is_on() {
            crate::sandbox_cmd::add_project_protected(
                &mut tool_context.sandbox,
                project.settings.as_ref(),
            )?;
        }
        // Only where it is shown: the report names the mechanism, and finding it may start
        // `bwrap` once, which a sandbox that is off would not otherwise need.
        let sandbox_report = if args.verbose || mode == "interactive" {
            crate::sandbox_cmd::report(&tool_context.exec_sandbox(), remote)
        } else {
            String::new()
        };
        if args.verbose {
            output::note(&sandbox_report);
        }
        Ok::<_, CliError>((tool_context, user_settings, project, sandbox_report))
    }
    .await;
    match started {
        Ok((tool_context, user_settings, project, sandbox_report)) => Ok(Opened {
            env,
            tool_context,
            user_settings,
            project,
            sandbox_report,
            mode,
            ui: None,
        }),
        Err(error) => {
            env.cleanup().await;
            Err(error)
        }
    }
}

/// Everything a session needs before its first prompt: the agent's configuration (no hooks
/// yet: each mode adds the chain of the permission policy and the extensions' tool hooks with
/// [`crate::chain::agent_hooks`]), the session and what it resumes.
pub(crate) struct Prepared {
    pub(crate) config: AgentConfig,
    pub(crate) session: Session,
    /// The provider's name (`openai`, …).
    pub(crate) provider_name: String,
    /// The context window compaction counts against.
    pub(crate) context_window: u64,
    /// The permission modes the settings ask for: the user's and a trusted project's.
    pub(crate) settings_permission_mode: SettingsModes,
    /// The extensions' host: their actions on this session.
    pub(crate) host: Arc<extensions::SessionHost>,
    /// The project's name for its saved permissions (its URL with `--env`).
    pub(crate) project_key: PathBuf,
    /// The skills and prompt templates offered.
    pub(crate) knowledge: skills::Knowledge,
    /// How to configure a provider, when the session opened without the key it needs.
    pub(crate) setup_note: Option<String>,
    /// How the interactive session changes provider.
    pub(crate) switch: ProviderSwitch,
}

/// The permission modes the settings files ask for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SettingsModes {
    /// The user's settings file's `permissionMode`.
    pub(crate) user: Option<PermissionMode>,
    /// A trusted project's `.jig/settings.json` `permissionMode` (only when that file is valid
    /// settings).
    pub(crate) project: Option<PermissionMode>,
}

impl SettingsModes {
    /// The session's mode: `--permission-mode` as given; else the user's settings' mode (else
    /// `default`), narrowed by the project's settings — a project may ask for less than the
    /// user allows, never more (a wider mode is ignored with a warning).
    pub(crate) fn resolve(
        self,
        flag: Option<PermissionMode>,
        default: PermissionMode,
    ) -> PermissionMode {
        if let Some(mode) = flag {
            return mode;
        }
        let user = self.user.unwrap_or(default);
        let Some(project) = self.project else {
            return user;
        };
        let (mode, widened) = user.narrowed_by(project);
        if widened {
            crate::exit::warn(&format!(
                "this project's settings ask for permission mode `{project}`, which allows more than yours (`{user}`); ignoring it (a project may only narrow the mode)"
            ));
        }
        mode
    }
}

/// The skills `--skill NAME` forces into the prompt.
pub(crate) fn forced_skills(args: &RunArgs) -> Vec<String> {
    skills::split_skill_args(&args.skills, Path::new(".")).1
}

/// The context files (`AGENTS.md`, `CLAUDE.md`) of `cwd` and its ancestors, read through the
/// env (with `--env` where the project is, never this machine's files of the same name) as
/// `context_files` says; what was skipped or cut is a warning, what was loaded a `--verbose`
/// note.
async fn context_files(
    args: &RunArgs,
    opened: &Opened,
    cwd: &Path,
) -> Vec<jig_agent::system_prompt::ContextFile> {
    let owners = if args.env.url.is_none() {
        context_files::Owners::Local
    } else {
        context_files::Owners::ModeOnly
    };
    let found = context_files::load(&opened.env, cwd, owners).await;
    for warning in &found.warnings {
        output::warn(warning);
    }
    if args.verbose
        && let Some(note) = found.loaded_note(opened.project.decision.trusted_project().is_some())
    {
        output::note(&note);
    }
    found.files
}

/// The skills and prompt templates of the session, and the system prompt's skills section.
/// The skills' directories become readable (never writable) when the model has `read`.
fn offered_skills(
    args: &RunArgs,
    opened: &Opened,
    settings: &settings::Settings,
    tools: &jig_tool::ToolRegistry,
    tool_context: &mut jig_tool::ToolContext,
) -> (skills::Knowledge, String) {
    let project = &opened.project;
    let cwd = tool_context.cwd.clone();
    let trusted = project.decision.trusted_project();
    let place = if args.env.url.is_some() {
        skills::Place::Remote {
            has_instructions: project
                .decision
                .gated
                .iter()
                .any(|gated| matches!(gated, jig_project::GatedResource::Instructions(_))),
        }
    } else {
        skills::Place::Local
    };
    let knowledge = skills::discover(
        &skills::Sources {
            skill_args: &args.skills,
            no_skills: args.no_skills,
            base_dir: &std::env::current_dir().unwrap_or_else(|_| cwd.clone()),
            cwd: &cwd,
            user_settings: &opened.user_settings,
            project: trusted.as_ref(),
            project_skills: project
                .settings
                .as_ref()
                .and_then(|project| project.value.get("skills"))
                .and_then(|skills| serde_json::from_value(skills.clone()).ok())
                .unwrap_or_default(),
            claude_commands: settings.claude_commands.unwrap_or(false),
            place,
        },
        &crate::interactive::command_names(),
    );
    if !tools.iter().any(|tool| tool.name() == "read") {
        if !knowledge.skills.is_empty() {
            output::warn("skills are not listed: the model has no read tool to load them");
        }
        return (knowledge, String::new());
    }
    // The model loads a skill's files with read: its directory is readable, never writable.
    tool_context.containment.read_only_roots = knowledge
        .skills
        .iter()
        .map(|skill| skill.dir().to_path_buf())
        .collect();
    let prompt = jig_project::skills_prompt(&knowledge.skills);
    (knowledge, prompt)
}

/// Tools, session, settings, model and system prompt, as `jig run` and the interactive session
/// build them in an opened env and project.
#[expect(
    clippy::too_many_lines,
    reason = "the session's startup steps in their order, one call each"
)]
pub(crate) async fn prepare(args: &RunArgs, opened: &Opened) -> Result<Prepared, CliError> {
    let mut tool_context = opened.tool_context.clone();
    let user_settings = opened.user_settings.clone();
    let project = &opened.project;
    let cwd = tool_context.cwd.clone();
    let runner = Arc::clone(&project.extensions);
    let tools = select_tools(args.tools.as_deref(), &runner)?;

    let mut session = session_choice::open(
        &cwd,
        &project.key,
        args.session.as_deref(),
        args.continue_session,
        args.no_session,
    )?
    .session;
    warn_damaged(&session);
    let permission_modes = SettingsModes {
        user: user_settings.permission_mode,
        project: project
            .settings
            .as_ref()
            .and_then(settings::project_permission_mode),
    };
    let settings = settings::with_project(user_settings, project.settings.as_ref());
    let providers = settings.providers().with_extensions(&runner);
    let resolved = model::resolve(&model::ModelArgs {
        provider: args.provider.as_deref(),
        model: args.model.as_deref(),
        api_key: args.api_key.as_deref(),
        base_url: args.base_url.as_deref(),
        connect_timeout: args.connect_timeout,
        idle_timeout: args.idle_timeout,
        previous: session.model(),
        previous_base_url: session.base_url(),
        previous_custom: session.custom_endpoint(),
        settings: &settings,
        providers: &providers,
        without_key: opened.mode == "interactive",
    })?;
    let (models, model_problems) = settings.model_table(&providers);
    let provider_problems: Vec<String> = providers
        .bad
        .iter()
        .map(|bad| format!("{}: {}", bad.label, bad.problem))
        .collect();
    warn_settings(&provider_problems, &model_problems);
    let thinking = args
        .thinking
        .or(session.thinking_level())
        .or(settings.thinking)
        .unwrap_or_default();

    record_model(&mut session, &resolved, thinking)?;
    tool_context.session_env =
        session.tool_variables(&resolved.provider_name, &resolved.model, thinking);

    let info = run_session_info(
        &session,
        &cwd,
        &resolved.provider_name,
        &resolved.model,
        thinking,
        opened.mode,
    );
    let offered = providers.from_extensions.clone();
    let host = bind_session_host(&runner, info, &tools, offered, opened).await;
    let (knowledge, skills_prompt) =
        offered_skills(args, opened, &settings, &tools, &mut tool_context);
    let system_prompt = build_system_prompt(&SystemPromptOptions {
        tools: tools
            .iter()
            .map(|tool| (tool.name().to_owned(), tool.description()))
            .collect(),
        cwd: cwd.clone(),
        date: jiff::ZonedDateTime::now().date().to_string(),
        context_files: context_files(args, opened, &cwd).await,
        skills: skills_prompt,
        custom_prompt: args.system_prompt.clone(),
        append: args.append_system_prompt.clone(),
    });

    let compaction = compaction_config(
        args,
        &settings,
        &models,
        &resolved.provider_name,
        &resolved.model,
    );
    let switch = ProviderSwitch::new(
        settings,
        providers,
        models,
        (args.connect_timeout, args.idle_timeout),
        args.context_window,
        &resolved,
    );
    let provider_name = resolved.provider_name.clone();
    let mut config = AgentConfig::new(
        resolved.provider,
        resolved.model,
        system_prompt,
        tools,
        tool_context,
    );
    config.max_turns = args.max_turns;
    config.thinking = thinking;
    config.max_output_tokens = args.max_output_tokens;
    config.compaction = Some(compaction);
    // At a local or custom endpoint a model's built-in price is not its price: the cost is
    // unknown unless the settings give one.
    config.models = Arc::new(switch.started_table());
    // Start-up is over: from the first tool call on, --audit fails closed.
    crate::env_cmd::arm_audit();

    Ok(Prepared {
        config,
        session,
        provider_name,
        context_window: compaction.context_window,
        settings_permission_mode: permission_modes,
        host,
        project_key: opened.project.key.clone(),
        knowledge,
        setup_note: resolved.setup_note,
        switch,
    })
}

/// Binds the extensions to the session's host. The actions reach the agent loop in print mode
/// and in the interactive session (which also answers the extensions' questions through its
/// user interface). `providers` are the extensions' providers already offered (registered while
/// loading).
async fn bind_session_host(
    runner: &Arc<ExtensionRunner>,
    info: SessionInfo,
    tools: &ToolRegistry,
    providers: Vec<String>,
    opened: &Opened,
) -> Arc<extensions::SessionHost> {
    let host = extensions::SessionHost::new(
        info,
        extensions::tool_names(tools),
        if opened.mode == "interactive" {
            extensions::Delivery::Interactive
        } else {
            extensions::Delivery::Run
        },
        opened.ui.clone(),
        providers,
    );
    host.take_late_tools_from(runner);
    runner
        .bind(Arc::clone(&host) as Arc<dyn jig_extensions::ExtensionHost>)
        .await;
    host
}

/// One print-mode run in an opened env and project.
async fn run_with_project(args: &RunArgs, prompt: String, opened: &Opened) -> CliResult {
    let runner = opened.runner();
    let Prepared {
        mut config,
        session,
        settings_permission_mode,
        host,
        project_key,
        knowledge,
        ..
    } = prepare(args, opened).await?;
    // `/skill:NAME …` and `/TEMPLATE …` as the prompt, then skills forced in with --skill NAME.
    let prompt = match knowledge.expand(&prompt) {
        Some(expanded) => expanded.map_err(CliError::usage)?,
        None => prompt,
    };
    let prompt = knowledge.force(&forced_skills(args), prompt)?;
    if !runner.extensions().is_empty() {
        config.turn_hooks = Arc::new(extensions::ExtensionTurnHooks {
            host: Arc::clone(&host),
            runner: Arc::clone(&runner),
        });
    }

    // An extension may transform or handle the input, add messages and change the prompt.
    let Some((prompt, system_prompt)) = extension_prompt(
        &runner,
        prompt,
        std::mem::take(&mut config.system_prompt),
        "cli",
    )
    .await
    else {
        return Ok(ExitCode::SUCCESS);
    };
    config.system_prompt = system_prompt;

    // Print mode never asks: the mode decides (by default everything runs, as `jig run` always
    // did; `ask` denies what it would ask about, and the model reads why). The permission
    // policy decides first, then the extensions' `tool_call`.
    let mode = settings_permission_mode.resolve(args.permission_mode, PermissionMode::FullAuto);
    config.hooks = crate::chain::agent_hooks(
        Arc::new(
            PermissionHooks::new(
                mode,
                &config.tools,
                permissions::load(&project_key),
                None,
                None,
            )
            .with_workspace(config.tool_context.clone()),
        ),
        extensions::tool_hooks(&runner),
    );

    let (summary, history) = session.context();
    let header = session.header().clone();
    let progress = args.verbose || io::stderr().is_terminal();
    let recorder = SessionRecorder::start(session);
    host.record_into(&recorder);
    let printer = output::Printer::new(args.mode, progress, recorder, Arc::clone(&host));
    if args.mode == OutputMode::Json {
        output::print_json(&serde_json::to_value(&header).unwrap_or_default());
    }
    let lifecycle = extensions::LifecycleEvents::start(&runner, &tokio::runtime::Handle::current());
    let observer: Arc<dyn AgentObserver> = match &lifecycle {
        Some(lifecycle) => lifecycle.observer(printer.clone()),
        None => printer.clone(),
    };

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
    let mut agent = match summary {
        Some(summary) => Agent::with_summary(config, summary, history),
        None => Agent::with_messages(config, history),
    };
    runner
        .notify(events::SESSION_START, || json!({"reason": "startup"}))
        .await;
    let outcome = compact_and_run(&mut agent, args.compact, prompt, &cancel, &observer).await;
    interrupts.abort();
    quiet.abort();
    if let Some(lifecycle) = lifecycle {
        lifecycle.finish().await;
    }
    host.finish();
    runner.notify(events::SESSION_SHUTDOWN, || json!({})).await;
    host.close();

    if let Err(error) = printer.close_session().await {
        output::warn(&format!("the session could not be saved: {error:#}"));
    }
    let Some(outcome) = outcome else {
        return Ok(ExitCode::from(1));
    };
    report(&outcome, args.mode)
}

/// The project's trust and what it allows, decided before anything the project brings is
/// loaded or read as configuration.
async fn start_project(
    args: &RunArgs,
    place: project::ProjectPlace<'_>,
    mode: &str,
    prompt: Option<&dyn jig_project::TrustPrompt>,
) -> Result<project::ProjectStartup, CliError> {
    let project = project::start_with_prompt(&args.project, place, mode, prompt).await?;
    // Only when it mattered: a project with nothing to gate is not worth a line.
    if args.verbose && project.decision.step != jig_project::TrustStep::NothingToGate {
        output::note(&project.decision.describe());
    }
    Ok(project)
}

/// What extensions see of the session (`mode`: `print` or `interactive`).
fn run_session_info(
    session: &Session,
    cwd: &Path,
    provider: &str,
    model: &str,
    thinking: ThinkingLevel,
    mode: &str,
) -> SessionInfo {
    SessionInfo {
        session_id: Some(session.id().to_owned()),
        session_file: session.path().map(|path| path.display().to_string()),
        cwd: cwd.display().to_string(),
        model: Some(format!("{provider}/{model}")),
        provider: Some(provider.to_owned()),
        message_count: session.message_count(),
        thinking_level: Some(format!("{thinking:?}").to_lowercase()),
        mode: mode.to_owned(),
        has_ui: false,
    }
}

/// The prompt after the extensions' `input` (transform chain; `None` when one handled it) and
/// `before_agent_start` (their messages follow the prompt's text in the same user message; a
/// changed system prompt replaces the built one for this run). `source` is the `input` event's:
/// `cli` for `jig run`'s prompt, `interactive` for a message typed in the session.
pub(crate) async fn extension_prompt(
    runner: &ExtensionRunner,
    prompt: String,
    system_prompt: String,
    source: &str,
) -> Option<(Message, String)> {
    let (text, images) = match runner.input(prompt, Vec::new(), source).await {
        InputOutcome::Handled => return None,
        InputOutcome::Continue { text, images } => (text, images),
    };
    let before = runner
        .before_agent_start(&text, &images, &system_prompt)
        .await;
    let mut message = Message::user_text(text);
    if let Message::User(user) = &mut message {
        user.content.extend(images);
        for custom in before.messages {
            user.content.extend(custom.content);
        }
    }
    Some((message, before.system_prompt.unwrap_or(system_prompt)))
}

/// `--compact` first when asked (a failure is reported and nothing is sent), then the run.
async fn compact_and_run(
    agent: &mut Agent,
    compact: bool,
    prompt: Message,
    cancel: &CancellationToken,
    observer: &Arc<dyn AgentObserver>,
) -> Option<RunOutcome> {
    if compact
        && let Err(message) = agent
            .compact(CompactionReason::Manual, cancel, observer)
            .await
    {
        output::error(&format!("--compact: {message}"));
        return None;
    }
    Some(agent.run(prompt, cancel, observer).await)
}

/// Records in the session the model, endpoint and thinking level in use, when they changed.
fn record_model(
    session: &mut Session,
    resolved: &model::Resolved,
    thinking: ThinkingLevel,
) -> Result<(), CliError> {
    if session.model().as_ref() != Some(&(resolved.provider_name.clone(), resolved.model.clone()))
        || session.base_url() != resolved.custom_base_url
    {
        session
            .append_model_change(
                &resolved.provider_name,
                &resolved.model,
                resolved.custom_base_url.as_deref(),
                resolved.custom.clone(),
            )
            .map_err(|e| CliError::Failure(e.into()))?;
    }
    if session.thinking_level() != Some(thinking) {
        session
            .append_thinking_level(thinking)
            .map_err(|e| CliError::Failure(e.into()))?;
    }
    Ok(())
}

/// Warns about the settings entries that were left out.
fn warn_settings(providers: &[String], models: &[String]) {
    let file = settings::path()
        .map(|path| path.display().to_string())
        .unwrap_or_default();
    for problem in providers.iter().chain(models) {
        output::warn(&format!("settings file {file}: {problem} (entry left out)"));
    }
}

/// The context window: `--context-window`, else the settings file's (when its model is the one
/// in use, or it names none), else the model table (custom providers' models, then the built-in
/// table), else the default.
fn compaction_config(
    args: &RunArgs,
    settings: &settings::Settings,
    models: &ModelTable,
    provider: &str,
    model: &str,
) -> CompactionConfig {
    CompactionConfig {
        context_window: model::context_window(
            args.context_window,
            settings,
            models,
            provider,
            model,
        ),
        threshold: args.compact_threshold,
        keep_recent_turns: CompactionConfig::DEFAULT_KEEP_RECENT_TURNS,
    }
}

/// Warns about lines of a resumed session that could not be read.
fn warn_damaged(session: &Session) {
    if session.skipped_lines() > 0 {
        output::warn(&format!(
            "skipped {} damaged line(s) in {}",
            session.skipped_lines(),
            session
                .path()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ));
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
