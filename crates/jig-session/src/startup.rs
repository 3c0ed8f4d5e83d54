//! The startup sequence every face runs, once: [`open`] (place, trust, settings, extensions:
//! an [`Opened`]) and [`prepare`] (tools, model, session, system prompt: a [`Prepared`]), then
//! [`Opened::close`] however the session ended.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::policy::PermissionMode;
use jig_agent::compaction::CompactionConfig;
use jig_agent::system_prompt::{SystemPromptOptions, build_system_prompt};
use jig_agent::{AgentConfig, Session};
use jig_extensions::{ExtensionRunner, InputOutcome, SessionInfo};
use jig_llm::{ModelTable, ThinkingLevel};
use jig_protocol::Message;
use jig_tool::{ContainmentMode, ToolRegistry};
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};

use crate::model::{self, ProviderSwitch};
use crate::project::{self, ProjectOptions};
use crate::sandbox::SandboxRequest;
use crate::workspace::{self, EnvOptions};
use crate::{StartError, context_files, extensions, session_choice, settings, skills};

/// The tools offered when `--tools` is not given.
const DEFAULT_TOOLS: &[&str] = &["read", "bash", "edit", "write"];

/// Which face runs the session: what extensions are told, whether a missing key stops startup,
/// how the extensions' actions reach the agent loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Face {
    /// One prompt, then exit (`jig run`).
    Print,
    /// A person at a terminal (`jig` alone).
    Interactive,
    /// Tools served to another agent (`jig mcp`).
    Mcp,
    /// One tool call typed by the user (`jig tool`).
    Tool,
    /// An app drives a long-lived session over JSONL (`jig run --mode rpc`).
    Rpc,
    /// An editor drives sessions over the Agent Client Protocol (`jig acp`).
    Acp,
}

impl Face {
    /// The mode extensions are told.
    pub fn name(self) -> &'static str {
        match self {
            Self::Print => "print",
            Self::Interactive => "interactive",
            Self::Mcp => "mcp",
            Self::Tool => "tool",
            Self::Rpc => "rpc",
            Self::Acp => "acp",
        }
    }

    /// Whether the face runs jig's own agent (and so reads the model's settings).
    pub fn runs_model(self) -> bool {
        matches!(
            self,
            Self::Print | Self::Interactive | Self::Rpc | Self::Acp
        )
    }

    /// Whether the face is a long-lived session a client steers (the interactive session, an
    /// app over RPC, an editor over ACP): it may open without the model's key (the client can
    /// change the model before the first prompt) and extensions' messages sent while it is idle
    /// start a turn.
    pub fn is_conversation(self) -> bool {
        matches!(self, Self::Interactive | Self::Rpc | Self::Acp)
    }

    /// The sandbox when neither the command line nor the settings name one: on this machine,
    /// commands are sandboxed (except the one command `jig tool` runs by hand); with `--env`
    /// the far machine or container is the boundary, and the far side sandboxes only when
    /// asked.
    pub fn default_sandbox(self, remote: bool) -> jig_env::SandboxMode {
        if remote || self == Self::Tool {
            jig_env::SandboxMode::Off
        } else {
            jig_env::SandboxMode::WorkspaceWrite
        }
    }
}

/// Where a session runs and what it may bring in: the part of the command line every face
/// has.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Where the tools run and what is recorded.
    pub env: EnvOptions,
    /// The workspace roots; the first is the working directory [default: the process's
    /// current directory, or the `--env` URL's directory].
    pub roots: Vec<PathBuf>,
    /// The flag that gave the roots, for errors (`--cwd`, `--root`).
    pub roots_flag: &'static str,
    /// Whether file tools are confined to the roots.
    pub containment: ContainmentMode,
    /// The sandbox the command line asks for.
    pub sandbox: SandboxRequest,
    /// Extensions and trust.
    pub project: ProjectOptions,
    /// Say more on stderr (trust decision, sandbox, context files).
    pub verbose: bool,
    /// Keep the temporary files commands leave (full-output files) after the session.
    pub keep_temp_files: bool,
}

/// What a session is asked for: the command line of `jig run` (and of the interactive
/// session), as data.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where the session runs and what it may bring in.
    pub open: OpenOptions,
    /// The provider's name.
    pub provider: Option<String>,
    /// The model id.
    pub model: Option<String>,
    /// The API key.
    pub api_key: Option<String>,
    /// The provider's base URL.
    pub base_url: Option<String>,
    /// How long connecting to the model's server may take.
    pub connect_timeout: Duration,
    /// How long the model's server may stay silent.
    pub idle_timeout: Duration,
    /// The tools offered [default: read, bash, edit, write and every extension tool].
    pub tools: Option<Vec<String>>,
    /// A system prompt replacing the default one.
    pub system_prompt: Option<String>,
    /// Texts appended to the system prompt.
    pub append_system_prompt: Vec<String>,
    /// `--skill` paths and names.
    pub skills: Vec<String>,
    /// Do not discover skills.
    pub no_skills: bool,
    /// Stop after this many model requests.
    pub max_turns: Option<u32>,
    /// The context window in tokens.
    pub context_window: Option<u64>,
    /// Compact when a request's input reaches this fraction of the context window.
    pub compact_threshold: f64,
    /// Output-token limit per reply.
    pub max_output_tokens: Option<u32>,
    /// Reasoning effort.
    pub thinking: Option<ThinkingLevel>,
    /// Resume this session file or id.
    pub session: Option<String>,
    /// Continue the most recent session of the working directory.
    pub continue_session: bool,
    /// Do not save the session.
    pub no_session: bool,
    /// What runs without asking (`--permission-mode`) [default: the settings', else the
    /// face's].
    pub permission_mode: Option<PermissionMode>,
    /// The face's own commands (`/help`, …), which prompt templates may not take.
    pub reserved_commands: Vec<&'static str>,
}

/// The tools offered: `--tools`, else the default built-ins and every extension tool.
fn select_tools(
    names: Option<&[String]>,
    runner: &ExtensionRunner,
) -> Result<ToolRegistry, StartError> {
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
        return Err(StartError::usage(format!(
            "--tools: unknown tool `{unknown}`; available tools: {}",
            available.join(", ")
        )));
    }
    registry.retain(|tool| wanted.iter().any(|name| name == tool.name()));
    Ok(registry)
}

/// The env (local or `--env`), the user's settings and the project's startup (trust and the
/// extensions it allows): what every session opens first and closes last.
pub struct Opened {
    /// The env the tools act in.
    pub env: Arc<dyn jig_env::ExecutionEnv>,
    /// The context every tool call starts from: cwd, roots, sandbox.
    pub tool_context: jig_tool::ToolContext,
    /// The user's settings (a face that runs no model reads only their sandbox section).
    user_settings: settings::Settings,
    /// With `--env`: the project is far side.
    pub remote: bool,
    /// The project's trust decision and what it allowed (settings, extensions).
    pub project: project::ProjectStartup,
    /// What the sandbox enforces for commands, in one line (`/permissions`, `--verbose`, the
    /// MCP server's instructions); empty where none shows it.
    pub sandbox_report: String,
    /// The face that opened it.
    pub face: Face,
    /// Answers the extensions' `ui/*` requests (the interactive session).
    pub ui: Option<Arc<dyn extensions::ExtensionUi>>,
    /// The warm indexes of the roots (`grep` and `find` answered without walking), when the
    /// face keeps them; their status is what `/index` shows.
    pub indexes: Option<Arc<jig_index::WarmIndexes>>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("cwd", &self.tool_context.cwd)
            .field("project", &self.project)
            .field("face", &self.face)
            .finish_non_exhaustive()
    }
}

impl Opened {
    /// The loaded extensions.
    pub fn runner(&self) -> Arc<ExtensionRunner> {
        Arc::clone(&self.project.extensions)
    }

    /// The built-in tools made with `config`, then the extensions' tools.
    pub fn tools(&self, config: &BuiltinsConfig) -> ToolRegistry {
        let mut registry = builtin_registry(config);
        extensions::add_tools(&mut registry, &self.project.extensions);
        registry
    }

    /// `registry` ready to serve in a face without an agent loop (`jig mcp`, `jig tool`): the
    /// extensions bound (their actions on a session answer that there is none), each tool
    /// wrapped in the extensions' `tool_call`/`tool_result` and the `--audit` records; from
    /// here on a record that cannot be written fails its call.
    pub async fn serve(&self, registry: ToolRegistry) -> ToolRegistry {
        let runner = self.runner();
        extensions::bind(
            &runner,
            extensions::info(self.face.name(), &self.tool_context.cwd),
            &registry,
            None,
        )
        .await;
        let registry = crate::chain::registry(registry, extensions::tool_hooks(&runner));
        workspace::arm_audit();
        registry
    }

    /// Shuts the extensions down, then kills the commands the session left behind and removes
    /// temporary files, however it ended.
    pub async fn close(self) {
        self.project.extensions.shutdown().await;
        self.env.cleanup().await;
    }
}

/// The warm indexes a face keeps: every long-lived face on this machine (not `jig tool`, which
/// runs one call, nor `--env`, whose files are elsewhere). None is started yet.
fn warm_indexes(options: &OpenOptions, face: Face) -> Option<Arc<jig_index::WarmIndexes>> {
    (face != Face::Tool && options.env.url.is_none()).then(|| {
        // With `--verbose`, where stderr is the user's (not the interactive screen), each
        // index says when it is ready or why it is cold.
        let reporter = (options.verbose && face != Face::Interactive).then(|| {
            jig_index::Reporter(Arc::new(|status: &jig_index::IndexStatus| {
                crate::note(&status.to_string());
            }))
        });
        jig_index::WarmIndexes::new(jig_index::IndexOptions {
            reporter,
            ..jig_index::IndexOptions::default()
        })
    })
}

/// Asks the env to keep the roots warm, once trust is decided: here, the local indexes start;
/// with `--env`, the far side's `jig env serve` indexes them next to the files. `warmIndex:
/// false` in the user's settings or in a trusted project's turns the indexes off (a project
/// may turn them off, not on when yours turn them off: the memory is yours). Returns the local
/// indexes when they run.
async fn keep_warm(
    env: &Arc<dyn jig_env::ExecutionEnv>,
    indexes: Option<Arc<jig_index::WarmIndexes>>,
    face: Face,
    user_settings: &settings::Settings,
    project: &project::ProjectStartup,
    roots: &[PathBuf],
) -> Option<Arc<jig_index::WarmIndexes>> {
    let project_choice = project
        .settings
        .as_ref()
        .map(settings::project_layer)
        .filter(|layer| layer.invalid.is_empty())
        .and_then(|layer| layer.settings.warm_index);
    if face == Face::Tool
        || user_settings.warm_index == Some(false)
        || project_choice == Some(false)
    {
        return None;
    }
    env.keep_warm(roots).await;
    indexes
}

/// Opens the env, reads the user's settings, decides the project's trust and loads what it
/// allows: the first stages of every face, in this order (place, sandbox, trust, settings,
/// extensions). `prompt` asks about trust where the face can ask (the interactive session).
///
/// # Errors
/// A bad root, an env that cannot be reached, a settings file or sandbox that cannot be used,
/// a startup diagnostic that stops the session. The env is cleaned up before returning one.
pub async fn open(
    options: &OpenOptions,
    face: Face,
    prompt: Option<&dyn jig_project::TrustPrompt>,
) -> Result<Opened, StartError> {
    let keep = options.keep_temp_files;
    // Long-lived faces on this machine answer `grep` and `find` from warm indexes of their
    // roots, started once the roots and settings are known; `jig tool` has nothing to warm.
    let indexes = warm_indexes(options, face);
    let local = || {
        let env = workspace::open_env(keep)?;
        Ok(match &indexes {
            Some(indexes) => Arc::new(jig_index::IndexedEnv::new(env, Arc::clone(indexes))),
            None => env,
        })
    };
    let (env, far_base) = workspace::open_place(&options.env, local, None).await?;
    let started = async {
        let remote = options.env.url.is_some();
        // Read once, with the same policy in every face.
        let user_settings = settings::load()?;
        let requested = options.sandbox.resolve(
            &user_settings.sandbox.clone().unwrap_or_default(),
            face.default_sandbox(remote),
        )?;
        let policy = if face == Face::Tool {
            // One call the user typed: a sandbox no mechanism can enforce fails the bash call
            // itself, saying so.
            requested.policy
        } else {
            crate::sandbox::enforce(requested, remote)?
        };
        let mut tool_context = workspace::tool_context(
            Arc::clone(&env),
            far_base.as_deref(),
            &options.roots,
            options.roots_flag,
            options.containment,
            policy,
        )
        .await?;
        let place = workspace::project_place(&options.env, &env, &tool_context.cwd);
        let project_options = project::ProjectOptions {
            dialogs: options.project.dialogs || face == Face::Rpc,
            ..options.project.clone()
        };
        let project = project::start_with_prompt(
            &project_options,
            &user_settings,
            place,
            face.name(),
            prompt,
        )
        .await?;
        // Only when it mattered: a project with nothing to gate is not worth a line. Before
        // the indexes start, whose own line comes when they are ready.
        if options.verbose && project.decision.step != jig_project::TrustStep::NothingToGate {
            crate::note(&project.decision.describe());
        }
        let indexes = keep_warm(
            &env,
            indexes,
            face,
            &user_settings,
            &project,
            &tool_context.containment.roots,
        )
        .await;
        let opened = Opened {
            env: Arc::clone(&env),
            tool_context: tool_context.clone(),
            user_settings,
            project,
            sandbox_report: String::new(),
            remote,
            face,
            ui: None,
            indexes,
        };
        if tool_context.sandbox.is_on()
            && let Err(error) = crate::sandbox::add_project_protected(
                &mut tool_context.sandbox,
                opened.project.settings.as_ref(),
            )
        {
            opened.project.extensions.shutdown().await;
            return Err(error);
        }
        let mut opened = Opened {
            tool_context,
            ..opened
        };
        // Only where it is shown: the report names the mechanism, and finding it may start
        // `bwrap` once, which a sandbox that is off would not otherwise need.
        if options.verbose
            || face == Face::Interactive
            || (face == Face::Mcp && opened.tool_context.sandbox.is_on())
        {
            opened.sandbox_report =
                crate::sandbox::report(&opened.tool_context.exec_sandbox(), remote);
        }
        if options.verbose {
            crate::note(&opened.sandbox_report);
        }
        Ok::<_, StartError>(opened)
    }
    .await;
    if started.is_err() {
        env.cleanup().await;
    }
    started
}

/// Everything a session needs before its first prompt: the agent's configuration (no hooks
/// yet: each mode adds the permission policy and the extensions' tool hooks with
/// [`crate::chain::agent_hooks`]), the session and what it resumes.
#[derive(Debug)]
pub struct Prepared {
    /// The agent's configuration: provider, model, tools and their context, system prompt.
    pub config: AgentConfig,
    /// The session, new or resumed.
    pub session: Session,
    /// The provider's name (`openai`, …).
    pub provider_name: String,
    /// The context window compaction counts against.
    pub context_window: u64,
    /// The permission modes the settings ask for: the user's and a trusted project's.
    pub settings_permission_mode: SettingsModes,
    /// The extensions' host: their actions on this session.
    pub host: Arc<extensions::SessionHost>,
    /// The project's name for its saved permissions (its URL with `--env`).
    pub project_key: PathBuf,
    /// The skills and prompt templates offered.
    pub knowledge: skills::Knowledge,
    /// How to configure a provider, when the session opened without the key it needs.
    pub setup_note: Option<String>,
    /// How the interactive session changes provider.
    pub switch: ProviderSwitch,
}

/// The permission modes the settings files ask for.
#[derive(Debug, Clone, Copy, Default)]
pub struct SettingsModes {
    /// The user's settings file's `permissionMode`.
    pub user: Option<PermissionMode>,
    /// A trusted project's `.jig/settings.json` `permissionMode` (only when that file is valid
    /// settings).
    pub project: Option<PermissionMode>,
}

impl SettingsModes {
    /// The session's mode: `--permission-mode` as given; else the user's settings' mode (else
    /// `default`), narrowed by the project's settings — a project may ask for less than the
    /// user allows, never more (a wider mode is ignored with a warning).
    pub fn resolve(self, flag: Option<PermissionMode>, default: PermissionMode) -> PermissionMode {
        if let Some(mode) = flag {
            return mode;
        }
        let user = self.user.unwrap_or(default);
        let Some(project) = self.project else {
            return user;
        };
        let (mode, widened) = user.narrowed_by(project);
        if widened {
            crate::warn(&format!(
                "this project's settings ask for permission mode `{project}`, which allows more than yours (`{user}`); ignoring it (a project may only narrow the mode)"
            ));
        }
        mode
    }
}

/// The skills `--skill NAME` forces into the prompt.
pub fn forced_skills(args: &RunOptions) -> Vec<String> {
    skills::split_skill_args(&args.skills, Path::new(".")).1
}

/// The context files (`AGENTS.md`, `CLAUDE.md`) of `cwd` and its ancestors, read through the
/// env (with `--env` where the project is, never this machine's files of the same name) as
/// `context_files` says; what was skipped or cut is a warning, what was loaded a `--verbose`
/// note.
async fn context_files(
    args: &RunOptions,
    opened: &Opened,
    cwd: &Path,
) -> Vec<jig_agent::system_prompt::ContextFile> {
    let owners = if args.open.env.url.is_none() {
        context_files::Owners::Local
    } else {
        context_files::Owners::ModeOnly
    };
    let found = context_files::load(&opened.env, cwd, owners).await;
    for warning in &found.warnings {
        crate::warn(warning);
    }
    if args.open.verbose
        && let Some(note) = found.loaded_note(opened.project.decision.trusted_project().is_some())
    {
        crate::note(&note);
    }
    found.files
}

/// The skills and prompt templates of the session, and the system prompt's skills section.
/// The skills' directories become readable (never writable) when the model has `read`.
fn offered_skills(
    args: &RunOptions,
    opened: &Opened,
    settings: &settings::Settings,
    tools: &jig_tool::ToolRegistry,
    tool_context: &mut jig_tool::ToolContext,
) -> (skills::Knowledge, String) {
    let project = &opened.project;
    let cwd = tool_context.cwd.clone();
    let trusted = project.decision.trusted_project();
    let place = if args.open.env.url.is_some() {
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
                .and_then(|project| settings::project_layer(project).settings.skills)
                .unwrap_or_default(),
            claude_commands: settings.claude_commands.unwrap_or(false),
            place,
        },
        &args.reserved_commands,
    );
    if !tools.iter().any(|tool| tool.name() == "read") {
        if !knowledge.skills.is_empty() {
            crate::warn("skills are not listed: the model has no read tool to load them");
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
pub async fn prepare(args: &RunOptions, opened: &Opened) -> Result<Prepared, StartError> {
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
            .map(settings::project_layer)
            .filter(|layer| layer.invalid.is_empty())
            .and_then(|layer| layer.settings.permission_mode),
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
        without_key: opened.face.is_conversation(),
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
        opened.face.name(),
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
    crate::workspace::arm_audit();

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
        if opened.face.is_conversation() {
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

/// What extensions see of the session (`mode`: the face's name).
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
pub async fn extension_prompt(
    runner: &ExtensionRunner,
    prompt: String,
    system_prompt: String,
    source: &str,
) -> Option<(Message, String)> {
    extension_prompt_with_images(runner, prompt, Vec::new(), system_prompt, source).await
}

/// [`extension_prompt`] for a prompt that carries images (an app's or an editor's client
/// attaches them): the extensions' `input` sees them and may replace them.
pub async fn extension_prompt_with_images(
    runner: &ExtensionRunner,
    prompt: String,
    images: Vec<jig_protocol::ContentBlock>,
    system_prompt: String,
    source: &str,
) -> Option<(Message, String)> {
    let (text, images) = match runner.input(prompt, images, source).await {
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

/// Records in the session the model, endpoint and thinking level in use, when they changed.
fn record_model(
    session: &mut Session,
    resolved: &model::Resolved,
    thinking: ThinkingLevel,
) -> Result<(), StartError> {
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
            .map_err(|e| StartError::Failure(e.into()))?;
    }
    if session.thinking_level() != Some(thinking) {
        session
            .append_thinking_level(thinking)
            .map_err(|e| StartError::Failure(e.into()))?;
    }
    Ok(())
}

/// Warns about the settings entries that were left out.
fn warn_settings(providers: &[String], models: &[String]) {
    let file = settings::path()
        .map(|path| path.display().to_string())
        .unwrap_or_default();
    for problem in providers.iter().chain(models) {
        crate::warn(&format!("settings file {file}: {problem} (entry left out)"));
    }
}

/// The context window: `--context-window`, else the settings file's (when its model is the one
/// in use, or it names none), else the model table (custom providers' models, then the built-in
/// table), else the default.
fn compaction_config(
    args: &RunOptions,
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
        crate::warn(&format!(
            "skipped {} damaged line(s) in {}",
            session.skipped_lines(),
            session
                .path()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ));
    }
}

#[cfg(test)]
mod tests;
