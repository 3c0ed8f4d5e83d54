//! Project trust and extensions at startup, the same for `jig run`, `jig mcp`, `jig tool` and
//! `jig tools`.
//!
//! [`start`] runs before anything project-sourced is touched: it reads the user's
//! `defaultProjectTrust` and `extensions`, discovers the pre-trust extensions (`-e`, global,
//! settings), loads them ([`load_extensions`]), resolves the project's trust, and only for a
//! trusted project discovers and loads `.jig/extensions/` and reads `.jig/settings.json`. Then
//! it prints the diagnostics: warnings let startup go on, any error stops it with exit 1.
//! Extensions are started and initialised through `jig-extensions` into one
//! [`ExtensionRunner`], returned unbound; each mode binds it (see [`crate::extensions`]).
//!
//! What the command line says (`-e/--extension PATH`, `-ne/--no-extensions`, `-a/--approve`,
//! `-na/--no-approve`, `--flag`) arrives as [`ProjectOptions`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_env::ExecutionEnv;
use jig_extensions::{ExtensionHandle, ExtensionRunner, LoadOptions};
use jig_project::{
    DiagnosticKind, Diagnostics, DiscoveredExtension, DiscoveryInputs, Entry, GatedResource,
    Origin, ProjectSettings, ProjectSnapshot, ProjectTrustHook, Severity, StartupVerdict,
    TrustAnswer, TrustDecision, TrustInputs, TrustPrompt, TrustStore, UserProjectSettings,
    discover, read_project_settings, read_project_settings_in, resolve_project_trust,
    resolve_project_trust_in, resolve_project_trust_of, trust_requiring_resources_in,
};
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};

use crate::StartError;
use crate::settings::Settings;

/// What the command line says about extensions and trust (`-e`, `-ne`, `-a`/`-na`, `--flag`).
#[derive(Debug, Clone, Default)]
pub struct ProjectOptions {
    /// Extensions to load (`-e PATH`), kept with `no_extensions`.
    pub extensions: Vec<PathBuf>,
    /// Do not discover extensions (project, global, settings).
    pub no_extensions: bool,
    /// Trust (`Some(true)`) or distrust (`Some(false)`) the project for this run, saving
    /// nothing; `None` lets the trust chain decide.
    pub trust: Option<bool>,
    /// The values of extension flags, `NAME=VALUE` or `NAME`.
    pub flags: Vec<String>,
    /// Whether the face answers extensions' dialogs (an app over RPC does, through the
    /// extension UI sub-protocol): extensions are told `hasUI`. A face that can ask about
    /// trust always can.
    pub dialogs: bool,
}

/// Where the project the tools act on is: a directory of this machine, or of the remote
/// environment `--env` names. A remote project is never looked for on this machine (a
/// directory of the same name here is another directory): what it brings is read through the
/// env, and it is trusted under its URL.
#[derive(Debug, Clone, Copy)]
pub enum ProjectPlace<'a> {
    /// A directory of this machine (canonical).
    Local(&'a Path),
    /// A directory (canonical, far side) of the env `url` names.
    Remote {
        /// The `--env` URL.
        url: &'a str,
        /// The env, connected.
        env: &'a dyn ExecutionEnv,
        /// The directory far side.
        dir: &'a Path,
    },
}

impl ProjectPlace<'_> {
    /// The project's name in the trust store, the saved permissions and the session store,
    /// and what extensions are told: the directory itself, or for a remote one its URL (`ssh://box/srv/repo`), so
    /// a decision about one never applies to the other.
    pub fn key(&self) -> PathBuf {
        match self {
            Self::Local(dir) => dir.to_path_buf(),
            Self::Remote { url, dir, .. } => {
                PathBuf::from(jig_env_remote::transport::EnvUrl::parse(url).map_or_else(
                    |_| format!("{url} /{}", dir.display()),
                    |parsed| parsed.naming(dir),
                ))
            }
        }
    }
}

impl ProjectPlace<'_> {
    /// Where extensions run: they run on this machine, and a remote project's directory is
    /// not one of its directories.
    fn extensions_cwd(&self) -> PathBuf {
        match self {
            Self::Local(dir) => dir.to_path_buf(),
            Self::Remote { .. } => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        }
    }

    /// The trust chain, a remote project's resources looked at through its env. With
    /// `-ne` what it would not load anyway (extensions, project tools, the settings' `hooks`
    /// and `extensions`) requires no trust, so it is neither asked nor warned about.
    async fn resolve_trust(
        &self,
        inputs: &TrustInputs<'_>,
        args: &ProjectOptions,
        diagnostics: &mut Diagnostics,
    ) -> Result<TrustDecision, jig_project::TrustError> {
        // An override decides without looking (as the local chain does): no round trips for
        // resources the decision would not use.
        if inputs.trust_override.is_some() {
            return match self {
                Self::Local(_) => resolve_project_trust(inputs, diagnostics).await,
                Self::Remote { .. } => {
                    resolve_project_trust_of(inputs, Vec::new(), diagnostics).await
                }
            };
        }
        let no_extensions = args.no_extensions;
        let filter = |gated| {
            if no_extensions {
                without_extensions(gated)
            } else {
                gated
            }
        };
        match self {
            // Looked at once: `.jig` opened now and read through that handle from here on.
            Self::Local(dir) => {
                resolve_project_trust_in(inputs, ProjectSnapshot::take(dir), filter, diagnostics)
                    .await
            }
            Self::Remote { env, dir, .. } => {
                let gated = trust_requiring_resources_in(*env, dir).await;
                resolve_project_trust_of(inputs, filter(gated), diagnostics).await
            }
        }
    }
}

/// `gated` without what `-ne` does not load: `.jig/extensions/`, `.jig/tools/` and the
/// settings' `extensions` and `hooks` (a settings file left with no other key needs no trust).
fn without_extensions(gated: Vec<GatedResource>) -> Vec<GatedResource> {
    gated
        .into_iter()
        .filter_map(|resource| match resource {
            GatedResource::Extensions(_) | GatedResource::Tools(_) => None,
            // Skills and prompt templates still load with -ne.
            GatedResource::Instructions(path) => Some(GatedResource::Instructions(path)),
            GatedResource::Settings { path, keys } => {
                let keys: Vec<String> = keys
                    .into_iter()
                    .filter(|key| !crate::settings::LOADER_KEYS.contains(&key.as_str()))
                    .collect();
                (!keys.is_empty()).then_some(GatedResource::Settings { path, keys })
            }
        })
        .collect()
}

/// What startup decided about the project.
#[derive(Debug)]
pub struct ProjectStartup {
    /// The project's name for trust, saved permissions and the session store
    /// ([`ProjectPlace::key`]).
    pub key: PathBuf,
    /// The trust decision (for `--verbose`).
    pub decision: TrustDecision,
    /// The trusted project's `.jig/settings.json`; `None` when untrusted or absent.
    pub settings: Option<ProjectSettings>,
    /// The loaded extensions, in load order, not yet bound to a host.
    pub extensions: Arc<ExtensionRunner>,
}

/// The extensions loaded so far, and the pre-trust extensions' `project_trust` event.
pub struct LoadedExtensions {
    /// The extensions; shared with [`trust_hook`](Self::trust_hook) while trust is decided.
    runner: Arc<ExtensionRunner>,
    /// How many extensions came from `-e` (project extensions load right after them).
    cli_count: usize,
    /// How many came from the trusted project.
    project_count: usize,
    /// What loaded extensions are told (the working directory, the mode).
    options: LoadOptions,
    /// The pre-trust extensions' `project_trust` event; `None` when none subscribes.
    trust_hook: Option<Arc<RunnerTrustHook>>,
    /// The trust question can be asked (`hasUI` of `project_trust`).
    can_ask: bool,
}

/// The extensions' timeouts, and how long an extension may take to start: the defaults, or
/// `JIG_EXTENSION_TIMEOUT` seconds for events (notifications wait no longer than that either)
/// and for starting when that is longer than the default (a heavy extension on a slow machine).
/// A value that is not a positive number of seconds is a warning, and the defaults are used.
fn timeouts(diagnostics: &mut Diagnostics) -> (jig_extensions::Timeouts, std::time::Duration) {
    let name = jig_protocol::EnvVars::JIG_EXTENSION_TIMEOUT;
    let defaults = jig_extensions::Timeouts::default();
    let start = jig_extensions::DEFAULT_INITIALIZE_TIMEOUT;
    let Some(value) = std::env::var_os(name) else {
        return (defaults, start);
    };
    let value = value.to_string_lossy().into_owned();
    if let Some(decision) = parse_timeout(&value) {
        let timeouts = jig_extensions::Timeouts {
            decision,
            notification: defaults.notification.min(decision),
            ..defaults
        };
        return (timeouts, start.max(decision));
    }
    diagnostics.push(
        Severity::Warning,
        DiagnosticKind::Settings,
        format!(
            "{name}={value:?} is not a timeout: expected a positive number of seconds, such as 60 \
             or 2.5; using the default of {} s",
            defaults.decision.as_secs()
        ),
    );
    (defaults, start)
}

/// A positive number of seconds: digits with an optional decimal fraction (`60`, `2.5`), at most
/// about 31 years.
pub fn parse_timeout(value: &str) -> Option<std::time::Duration> {
    let value = value.trim();
    let (whole, fraction) = value.split_once('.').unwrap_or((value, "0"));
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) {
        return None;
    }
    let seconds: f64 = value.parse().ok()?;
    (seconds > 0.0 && seconds < 1e9).then(|| std::time::Duration::from_secs_f64(seconds))
}

impl LoadedExtensions {
    fn new(options: LoadOptions, timeouts: jig_extensions::Timeouts) -> Self {
        Self {
            runner: Arc::new(ExtensionRunner::new(timeouts)),
            cli_count: 0,
            project_count: 0,
            options,
            trust_hook: None,
            can_ask: false,
        }
    }

    /// Where an extension from `origin` goes in load order: `-e`, project, global, settings.
    fn place(&self, origin: Origin) -> usize {
        match origin {
            Origin::Cli => self.cli_count,
            Origin::Project => self.cli_count + self.project_count,
            Origin::Global | Origin::Settings => usize::MAX,
        }
    }

    /// Counts an extension added from `origin`.
    fn count(&mut self, origin: Origin) {
        match origin {
            Origin::Cli => self.cli_count += 1,
            Origin::Project => self.project_count += 1,
            Origin::Global | Origin::Settings => {}
        }
    }
}

impl std::fmt::Debug for LoadedExtensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedExtensions")
            .field("runner", &self.runner)
            .field("trust_hook", &self.trust_hook.is_some())
            .finish_non_exhaustive()
    }
}

/// What [`load_extensions`] is asked to load.
#[derive(Debug, Clone, Copy)]
pub struct LoadRequest<'a> {
    /// Extensions to load, in order.
    pub extensions: &'a [DiscoveredExtension],
    /// The trusted project's settings, whose `extensions` and `hooks` name more extensions and
    /// commands to run on events.
    pub project_settings: Option<&'a ProjectSettings>,
}

/// The pre-trust extensions' `project_trust` event as a step of the trust chain. Failing
/// handlers are kept as warnings for the diagnostics.
struct RunnerTrustHook {
    runner: Arc<ExtensionRunner>,
    mode: String,
    has_ui: bool,
    warnings: std::sync::Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl ProjectTrustHook for RunnerTrustHook {
    async fn project_trust(&self, project_dir: &Path) -> Option<TrustAnswer> {
        let outcome = self
            .runner
            .project_trust(project_dir, &self.mode, self.has_ui)
            .await;
        if let Ok(mut warnings) = self.warnings.lock() {
            warnings.extend(outcome.warnings.iter().map(ToString::to_string));
        }
        outcome.answer.map(|answer| TrustAnswer {
            trusted: answer.trusted,
            remember: answer.remember,
        })
    }
}

/// Starts one discovered extension.
async fn load_one(
    entry: &Entry,
    options: &LoadOptions,
) -> Result<Arc<dyn ExtensionHandle>, jig_extensions::LoadError> {
    match entry {
        Entry::Executable(path) => jig_extensions::load_executable(path, options).await,
        Entry::Manifest(dir) => jig_extensions::load_manifest_dir(dir, options).await,
        Entry::Pi { dir, modules } => jig_extensions::load_pi(dir, modules, options).await,
        Entry::Index { dir, file, runtime } => {
            let argv = [OsString::from(runtime), file.clone().into_os_string()];
            jig_extensions::load_process(dir, &argv, options).await
        }
    }
}

/// How a path named in the project settings' `extensions` is started: a directory with
/// `extension.toml`, another directory (its `index.*`), or a file run directly.
fn entry_for(path: &Path) -> Entry {
    if path.join(jig_extensions::MANIFEST_FILE).is_file() {
        Entry::Manifest(path.to_owned())
    } else if path.is_dir() {
        let file = path.join("index");
        Entry::Index {
            dir: path.to_owned(),
            runtime: String::new(),
            file,
        }
    } else {
        Entry::Executable(path.to_owned())
    }
}

/// Adds `extension` at `index` unless one of its tools is named like a built-in tool or like
/// an earlier extension's tool, or one of its flags like an earlier extension's flag (error
/// diagnostics). Returns whether it was added.
fn add_checked(
    loaded: &mut LoadedExtensions,
    origin: Origin,
    extension: Arc<dyn ExtensionHandle>,
    diagnostics: &mut Diagnostics,
) {
    let path = PathBuf::from(extension.path());
    let registrations = extension.registrations();
    // A newer extension may subscribe to events this host does not have: it loads, and the
    // user learns which of its handlers will never run.
    for event in registrations.unknown_events() {
        diagnostics.push(
            Severity::Warning,
            DiagnosticKind::ExtensionLoad,
            format!(
                "Extension \"{}\": unknown event \"{event}\", which this jig never sends \
                 (known events: {})",
                path.display(),
                jig_extensions::events::ALL.join(", ")
            ),
        );
    }
    if let Err(reason) = check_providers(registrations, loaded.runner.extensions()) {
        diagnostics.provider_registration_error(&path, &reason);
        extension_shutdown(extension);
        return;
    }
    let builtins = builtin_registry(&BuiltinsConfig::default());
    if let Some(tool) = registrations
        .tools
        .iter()
        .find(|tool| builtins.get(&tool.name).is_some() && !tool.replaces_builtin)
    {
        diagnostics.tool_conflict(&path, &tool.name, Path::new("the built-in tool"));
        extension_shutdown(extension);
        return;
    }
    for tool in registrations
        .tools
        .iter()
        .filter(|tool| builtins.get(&tool.name).is_some())
    {
        diagnostics.push(
            Severity::Warning,
            DiagnosticKind::ExtensionLoad,
            format!(
                "Extension \"{}\" replaces the built-in tool \"{}\": its calls run the extension's code, outside jig's workspace containment",
                path.display(),
                tool.name
            ),
        );
    }
    for earlier in loaded.runner.extensions() {
        let theirs = earlier.registrations();
        let first = Path::new(earlier.path());
        if let Some(tool) = registrations
            .tools
            .iter()
            .find(|tool| theirs.tools.iter().any(|t| t.name == tool.name))
        {
            diagnostics.tool_conflict(&path, &tool.name, first);
            extension_shutdown(extension);
            return;
        }
        if let Some(flag) = registrations
            .flags
            .iter()
            .find(|flag| theirs.flags.iter().any(|f| f.name == flag.name))
        {
            diagnostics.flag_conflict(&path, &flag.name, first);
            extension_shutdown(extension);
            return;
        }
    }
    let index = loaded.place(origin);
    let Some(runner) = Arc::get_mut(&mut loaded.runner) else {
        diagnostics.extension_load_error(&path, "the extension runtime is already in use");
        return;
    };
    match runner.insert(index, extension) {
        Ok(()) => loaded.count(origin),
        Err(error) => diagnostics.extension_load_error(&path, &error.reason),
    }
}

/// The providers an extension registers in its `initialize` reply: each needs a `name` that is
/// neither a built-in provider's nor an earlier extension's, and a `baseUrl`, when given, must
/// be an http(s) URL.
fn check_providers(
    registrations: &jig_extensions::Registrations,
    earlier: &[Arc<dyn ExtensionHandle>],
) -> Result<(), String> {
    for provider in &registrations.providers {
        let Some(name) = provider
            .get("name")
            .and_then(serde_json::Value::as_str)
            .filter(|name| !name.trim().is_empty())
        else {
            return Err("Provider config is required when registering by name".to_owned());
        };
        if jig_llm::KnownProvider::find(name).is_some() {
            return Err(format!(
                "Provider \"{name}\" conflicts with the built-in provider"
            ));
        }
        if let Some(first) =
            earlier.iter().find(|extension| {
                extension.registrations().providers.iter().any(|theirs| {
                    theirs.get("name").and_then(serde_json::Value::as_str) == Some(name)
                })
            })
        {
            return Err(format!(
                "Provider \"{name}\" conflicts with {}",
                first.path()
            ));
        }
        match provider.get("baseUrl") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::String(url))
                if ["http://", "https://"].iter().any(|scheme| {
                    url.strip_prefix(scheme)
                        .is_some_and(|rest| !rest.is_empty() && !rest.contains(char::is_whitespace))
                }) => {}
            Some(other) => {
                return Err(format!(
                    "Provider \"{name}\": baseUrl must be an http(s) URL, got {other}"
                ));
            }
        }
    }
    Ok(())
}

/// Stops an extension that was started but not added.
fn extension_shutdown(extension: Arc<dyn ExtensionHandle>) {
    tokio::spawn(async move { extension.shutdown().await });
}

/// Loads `request` into `loaded`: each extension is started and initialised (its
/// registrations only: it cannot act until bound). A trusted project's extensions come right
/// after the `-e` ones. The project settings' `extensions` (paths relative to the project) load
/// like discovered ones, and its `hooks` (`{"<event>": ["program", "arg", …]}`) become one
/// command-hook extension named by the settings file. Failures are load errors; tool and flag
/// name conflicts are conflict errors. Afterwards `loaded`'s trust hook asks the extensions
/// that subscribe to `project_trust`.
pub async fn load_extensions(
    request: LoadRequest<'_>,
    loaded: &mut LoadedExtensions,
    diagnostics: &mut Diagnostics,
) {
    loaded.trust_hook = None;
    let options = loaded.options.clone();
    for extension in request.extensions {
        match load_one(&extension.entry, &options).await {
            Ok(handle) => {
                add_checked(loaded, extension.origin, handle, diagnostics);
            }
            Err(error) => diagnostics.extension_load_error(&extension.path, &error.reason),
        }
    }
    if let Some(settings) = request.project_settings {
        let project_dir = settings
            .path
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."))
            .to_owned();
        load_settings_extensions(settings, &project_dir, &options, loaded, diagnostics).await;
    }
    if loaded
        .runner
        .has_handlers(jig_extensions::events::PROJECT_TRUST)
    {
        loaded.trust_hook = Some(Arc::new(RunnerTrustHook {
            runner: Arc::clone(&loaded.runner),
            mode: options.mode.clone(),
            has_ui: loaded.can_ask,
            warnings: std::sync::Mutex::default(),
        }));
    }
}

/// The project settings' `extensions` and `hooks`.
async fn load_settings_extensions(
    settings: &ProjectSettings,
    project_dir: &Path,
    options: &LoadOptions,
    loaded: &mut LoadedExtensions,
    diagnostics: &mut Diagnostics,
) {
    match settings.value.get("extensions") {
        None => {}
        Some(serde_json::Value::Array(paths)) => {
            for path in paths {
                let Some(path) = path.as_str() else {
                    diagnostics.settings_warning(
                        &settings.path,
                        &format!("extensions: {path} is not a path"),
                    );
                    continue;
                };
                let path = project_dir.join(path);
                let entry = entry_for(&path);
                let loaded_one = match &entry {
                    Entry::Index { dir, .. } => {
                        jig_extensions::load_index_dir(dir, None, options).await
                    }
                    other => load_one(other, options).await,
                };
                match loaded_one {
                    Ok(handle) => {
                        add_checked(loaded, Origin::Project, handle, diagnostics);
                    }
                    Err(error) => diagnostics.extension_load_error(&path, &error.reason),
                }
            }
        }
        Some(_) => {
            diagnostics.settings_warning(&settings.path, "extensions: expected an array of paths");
        }
    }
    if let Some(hooks) = settings.value.get("hooks") {
        match parse_settings_hooks(hooks) {
            Ok(layers) => {
                for hooks in layers {
                    let handle = jig_extensions::HookExtension::new(
                        settings.path.display().to_string(),
                        hooks,
                        &options.cwd,
                    )
                    .into_handle();
                    add_checked(loaded, Origin::Project, handle, diagnostics);
                }
            }
            Err(reason) => {
                // A settings problem (a warning), but one that leaves guards off: say so.
                diagnostics.settings_warning(
                    &settings.path,
                    &format!("hooks: {reason}; none of its hooks run"),
                );
            }
        }
    }
}

/// Command hooks by event.
type Hooks = std::collections::BTreeMap<String, Vec<OsString>>;

/// `{"<event>": ["program", "arg", …]}` or, for several commands on one event, `{"<event>":
/// [["program", …], ["program", …]]}`: one set of hooks per position, run in that order.
fn parse_settings_hooks(hooks: &serde_json::Value) -> Result<Vec<Hooks>, String> {
    let object = hooks
        .as_object()
        .ok_or("expected an object of event names to commands")?;
    let argv = |value: &serde_json::Value| -> Option<Vec<OsString>> {
        let words = value.as_array()?;
        let argv: Option<Vec<OsString>> = words
            .iter()
            .map(|word| word.as_str().map(OsString::from))
            .collect();
        argv.filter(|argv| !argv.is_empty())
    };
    let mut layers: Vec<Hooks> = Vec::new();
    for (event, value) in object {
        // A typo must not silently switch a guard off.
        if !jig_extensions::events::is_known(event) {
            return Err(jig_extensions::events::unknown(event));
        }
        let commands: Option<Vec<Vec<OsString>>> = match value.as_array() {
            Some(items) if items.iter().all(serde_json::Value::is_array) && !items.is_empty() => {
                items.iter().map(argv).collect()
            }
            _ => argv(value).map(|argv| vec![argv]),
        };
        let Some(commands) = commands else {
            return Err(format!(
                "{event}: expected a command as an array of strings, e.g. [\"./check.sh\"], or an array of such commands"
            ));
        };
        for (position, command) in commands.into_iter().enumerate() {
            if layers.len() <= position {
                layers.push(Hooks::new());
            }
            layers[position].insert(event.clone(), command);
        }
    }
    Ok(layers)
}

/// Resolves the trust of `project_dir` (canonical) and loads what it allows; prints the
/// diagnostics. An error diagnostic (or a damaged trust store) stops startup with exit 1.
/// For the commands that run no model (`jig tool`, `jig tools`, `jig mcp`) a user settings file
/// `jig run` would refuse is a warning: they use only its trust and extension keys, but a typo
/// there must not pass unnoticed.
pub async fn start(
    args: &ProjectOptions,
    user: &Settings,
    place: ProjectPlace<'_>,
    mode: &str,
) -> Result<ProjectStartup, StartError> {
    start_with_prompt(args, user, place, mode, None).await
}

/// What project trust and discovery take from the user's settings (`defaultProjectTrust`,
/// `extensions` as absolute paths: relative ones against the config directory, `~/` against
/// the home directory; `piExtensions`).
fn trust_settings(user: &Settings, config_dir: Option<&Path>) -> UserProjectSettings {
    let home = std::env::var_os(jig_protocol::EnvVars::HOME).map(PathBuf::from);
    let resolve = |entry: &str| match (entry.strip_prefix("~/"), &home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => config_dir.map_or_else(|| PathBuf::from(entry), |dir| dir.join(entry)),
    };
    UserProjectSettings {
        default_project_trust: user
            .default_project_trust
            .map(Into::into)
            .unwrap_or_default(),
        extensions: user
            .extensions
            .iter()
            .flatten()
            .filter(|entry| !entry.is_empty())
            .map(|entry| resolve(entry))
            .collect(),
        pi_extensions: user.pi_extensions.unwrap_or(false),
    }
}

/// [`start`] in a mode that can ask: when the chain reaches its last step, `prompt` asks the
/// user (before any project extension is discovered or started).
#[expect(
    clippy::too_many_lines,
    reason = "the startup steps in order: pre-trust extensions, trust, what the project brings"
)]
pub async fn start_with_prompt(
    args: &ProjectOptions,
    user: &Settings,
    place: ProjectPlace<'_>,
    mode: &str,
    prompt: Option<&dyn TrustPrompt>,
) -> Result<ProjectStartup, StartError> {
    let key = place.key();
    let project_dir = key.as_path();
    let mut diagnostics = Diagnostics::default();
    let config_dir = jig_project::config_dir();
    let user = trust_settings(user, config_dir.as_deref());
    let inputs = DiscoveryInputs {
        cli_paths: args.extensions.clone(),
        base_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        no_extensions: args.no_extensions,
        config_dir: config_dir.clone(),
        settings_paths: user.extensions.clone(),
        pi_user_dir: user
            .pi_extensions
            .then(|| std::env::var_os(jig_protocol::EnvVars::HOME))
            .flatten()
            .map(|home| jig_project::pi_user_extensions_dir(Path::new(&home))),
    };

    // Pre-trust: everything but the project.
    let pre_trust = discover(&inputs, None, &mut diagnostics);
    // A mode that can ask about trust has a user interface: extensions are told so.
    let (timeouts, initialize_timeout) = timeouts(&mut diagnostics);
    let mut loaded = LoadedExtensions::new(
        LoadOptions {
            mode: mode.to_owned(),
            has_ui: prompt.is_some() || args.dialogs,
            initialize_timeout,
            ..LoadOptions::new(place.extensions_cwd())
        },
        timeouts,
    );
    loaded.can_ask = prompt.is_some();
    load_extensions(
        LoadRequest {
            extensions: &pre_trust,
            project_settings: None,
        },
        &mut loaded,
        &mut diagnostics,
    )
    .await;

    let store = config_dir.as_deref().map(TrustStore::in_config_dir);
    let trust_inputs = TrustInputs {
        project_dir,
        trust_override: args.trust,
        hook: loaded
            .trust_hook
            .as_deref()
            .map(|hook| hook as &dyn ProjectTrustHook),
        store: store.as_ref(),
        default_trust: user.default_project_trust,
        prompt,
    };
    let decision = place
        .resolve_trust(&trust_inputs, args, &mut diagnostics)
        .await
        .map_err(|error| {
            let _ = diagnostics.report_to_stderr();
            StartError::Failure(
                anyhow::Error::new(error).context("cannot decide the project's trust"),
            )
        })?;
    if let Some(hook) = loaded.trust_hook.take()
        && let Ok(warnings) = hook.warnings.lock()
    {
        for warning in warnings.iter() {
            diagnostics.trust_warning(warning.clone());
        }
    }
    if let Some(warning) = decision.untrusted_warning() {
        diagnostics.trust_warning(warning);
    }

    // Trusted: the project's extensions and settings.
    let mut settings = None;
    if let ProjectPlace::Remote { env, dir, .. } = place {
        if decision.trusted {
            settings = remote_project(env, dir, &key, &decision, &mut diagnostics).await;
        }
    } else if let Some(project) = decision.trusted_project() {
        let project_extensions: Vec<DiscoveredExtension> =
            discover(&inputs, Some(&project), &mut diagnostics)
                .into_iter()
                .filter(|found| !pre_trust.iter().any(|pre| pre.path == found.path))
                .collect();
        settings = read_project_settings(&project, &mut diagnostics);
        load_extensions(
            LoadRequest {
                extensions: &project_extensions,
                // `-ne` also leaves the project settings' hooks alone.
                project_settings: settings.as_ref().filter(|_| !args.no_extensions),
            },
            &mut loaded,
            &mut diagnostics,
        )
        .await;
    }

    if let Some(settings) = &settings {
        let runs_hooks = matches!(place, ProjectPlace::Local(_)) && !args.no_extensions;
        warn_invalid_settings(settings, runs_hooks, &mut diagnostics);
    }

    loaded.trust_hook = None;
    if let Err(reason) = loaded.runner.apply_flag_values(&args.flags) {
        diagnostics.flag_error(&reason.to_string());
    }
    match diagnostics.report_to_stderr() {
        StartupVerdict::Continue => Ok(ProjectStartup {
            key,
            decision,
            settings,
            extensions: loaded.runner,
        }),
        StartupVerdict::Exit(code) => {
            loaded.runner.shutdown().await;
            Err(StartError::Reported(code))
        }
    }
}

/// A trusted project's settings that are not valid settings (an unknown key, a wrong type): a
/// warning in every mode, as `jig run` does not apply them (`run_cmd::settings::with_project`).
/// Their `extensions` and `hooks` are read on their own and still load (`runs_hooks`: a local
/// project without `-ne`), so a typo elsewhere in the file does not switch a guard off.
fn warn_invalid_settings(
    settings: &ProjectSettings,
    runs_hooks: bool,
    diagnostics: &mut Diagnostics,
) {
    let parsed = crate::settings::project_layer(settings);
    if let Some(problem) = parsed.unknown_problem() {
        diagnostics.settings_warning(&settings.path, &problem);
    }
    let Some(problem) = parsed.invalid_problem() else {
        return;
    };
    let problem = format!("{problem} (keys: {})", crate::settings::KEYS.join(", "));
    let loads_hooks = runs_hooks
        && crate::settings::LOADER_KEYS
            .iter()
            .any(|key| settings.value.get(key).is_some());
    diagnostics.settings_warning(
        &settings.path,
        &format!(
            "{problem}; none of its settings apply{}",
            if loads_hooks {
                " (its extensions and hooks still load)"
            } else {
                ""
            }
        ),
    );
}

/// What a trusted remote project brings: its `.jig/settings.json`, read through the env,
/// applies; what would run here (its `.jig/extensions/`, `.jig/tools/`, and the settings'
/// `extensions` and `hooks`) is not loaded, and a warning says so.
async fn remote_project(
    env: &dyn ExecutionEnv,
    dir: &Path,
    key: &Path,
    decision: &TrustDecision,
    diagnostics: &mut Diagnostics,
) -> Option<ProjectSettings> {
    let mut settings = read_project_settings_in(env, dir, diagnostics).await;
    // Looked at again: a trust decided by -a/--approve did not look.
    let gated = if decision.gated.is_empty() {
        trust_requiring_resources_in(env, dir).await
    } else {
        decision.gated.clone()
    };
    let mut unsupported: Vec<String> = gated
        .iter()
        .filter(|gated| !matches!(gated, jig_project::GatedResource::Settings { .. }))
        .map(jig_project::GatedResource::label)
        .collect();
    if let Some(serde_json::Value::Object(values)) = settings.as_mut().map(|s| &mut s.value) {
        for name in ["extensions", "hooks"] {
            if values.remove(name).is_some() {
                unsupported.push(format!(".jig/settings.json `{name}`"));
            }
        }
    }
    if !unsupported.is_empty() {
        diagnostics.trust_warning(format!(
            "project {}: {} not loaded: a project's extensions, tools and hooks are not \
             supported over --env (they would run on this machine, not where the project is)",
            key.display(),
            unsupported.join(", ")
        ));
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extension_timeout_is_a_positive_number_of_seconds() {
        use std::time::Duration;
        assert_eq!(parse_timeout("90"), Some(Duration::from_secs(90)));
        assert_eq!(parse_timeout(" 2.5 "), Some(Duration::from_millis(2500)));
        assert_eq!(parse_timeout("0.1"), Some(Duration::from_millis(100)));
        for bad in [
            "",
            "abc",
            "0",
            "0.0",
            "-1",
            "1e3",
            "+5",
            ".5",
            "5.",
            "inf",
            "NaN",
            "1 000",
            "9999999999",
        ] {
            assert_eq!(parse_timeout(bad), None, "{bad:?}");
        }
    }
}
