//! The project trust decision: a chain of steps, each its own function, evaluated in order until
//! one decides.
//!
//! | Step | Function | Decides when | Outcome |
//! |---|---|---|---|
//! | 1 | [`step_override`] | `-a/--approve` or `-na/--no-approve` | trusted / untrusted; nothing saved |
//! | 2 | [`step_nothing_to_gate`] | nothing in the project requires trust | trusted |
//! | 3 | [`step_extensions`] | a pre-trust extension answers `project_trust` (first yes/no wins, in the runtime) | its answer; `remember` saves it |
//! | 4 | [`step_stored`] | the trust store has a decision for the project or an ancestor (nearest wins) | the saved decision |
//! | 5 | [`step_default`] | `defaultProjectTrust` is `always` or `never` | trusted / untrusted |
//! | 6 | [`step_no_prompt`] | the mode has no prompt (all but the interactive session) | untrusted |
//! | 7 | [`step_prompt`] | always (the user answers; no answer is untrusted, not saved) | the [`TrustChoice`]; saved as it says |
//!
//! The order is a design choice: extensions speak before the store (a loaded extension may
//! decide for the user), the store before the default, and without a prompt `ask` means
//! untrusted (fail closed).

use std::path::{Path, PathBuf};

use async_trait::async_trait;

use crate::diagnostics::Diagnostics;
use crate::resources::GatedResource;
use crate::snapshot::ProjectSnapshot;
use crate::store::{TrustStore, TrustStoreError};

/// An answer to "trust this project?" from an extension or the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustAnswer {
    /// Trusted or not.
    pub trusted: bool,
    /// Save the answer in the trust store for the project.
    pub remember: bool,
}

/// The pre-trust extensions' `project_trust` event. The extension runtime implements it: it asks
/// its extensions in load order and returns the first yes/no (`None` when all are undecided or
/// there are none); a handler's failure is its own diagnostic and counts as undecided.
#[async_trait]
pub trait ProjectTrustHook: Send + Sync {
    /// The first decisive answer for `project_dir`, if any.
    async fn project_trust(&self, project_dir: &Path) -> Option<TrustAnswer>;
}

/// The interactive question "Trust project folder?" ([`prompt_title`], the choices of
/// [`TrustChoice::at_startup`]). Interactive mode implements it; without it (`jig run`, `jig mcp`,
/// `jig tool`) `ask` means untrusted.
#[async_trait]
pub trait TrustPrompt: Send + Sync {
    /// The user's choice; `None` when they dismissed the question (untrusted, nothing saved).
    async fn ask(&self, project_dir: &Path, gated: &[GatedResource]) -> Option<TrustChoice>;
}

/// The question's title: `Trust project folder?`, the folder, a blank line and what trusting
/// allows.
pub fn prompt_title(project_dir: &Path) -> String {
    format!(
        "Trust project folder?\n{}\n\nThis allows jig to load .jig settings and resources,\nand execute project extensions.",
        project_dir.display()
    )
}

/// An answer at the trust prompt, and what it saves in the trust store.
///
/// | Choice | Trusted | Saved |
/// |---|---|---|
/// | [`Trust`](Self::Trust) | yes | `{project: true}` |
/// | [`TrustParent`](Self::TrustParent) | yes | `{parent: true}`, the project's own key removed |
/// | [`TrustSession`](Self::TrustSession) | yes | nothing |
/// | [`DoNotTrust`](Self::DoNotTrust) | no | `{project: false}` |
/// | [`DoNotTrustSession`](Self::DoNotTrustSession) | no | nothing |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustChoice {
    /// Trust this folder, saved.
    Trust,
    /// Trust the parent folder (and so every project below it), saved; this folder's own
    /// decision is removed so the parent's applies.
    TrustParent,
    /// Trust for this session only; nothing saved.
    TrustSession,
    /// Do not trust this folder, saved.
    DoNotTrust,
    /// Do not trust, for this session only; nothing saved.
    DoNotTrustSession,
}

impl TrustChoice {
    /// The choices offered at startup, in order (no parent choice at the filesystem root).
    pub fn at_startup(project_dir: &Path) -> Vec<Self> {
        let mut choices = vec![Self::Trust];
        if project_dir.parent().is_some() {
            choices.push(Self::TrustParent);
        }
        choices.extend([
            Self::TrustSession,
            Self::DoNotTrust,
            Self::DoNotTrustSession,
        ]);
        choices
    }

    /// The choices `/trust` offers in a running session: only those that are saved.
    pub fn persistent(project_dir: &Path) -> Vec<Self> {
        Self::at_startup(project_dir)
            .into_iter()
            .filter(|choice| !choice.store_updates(project_dir).is_empty())
            .collect()
    }

    /// Whether the project is trusted.
    pub fn trusted(self) -> bool {
        matches!(self, Self::Trust | Self::TrustParent | Self::TrustSession)
    }

    /// The label shown, e.g. `Trust parent folder (/home/me/src)`.
    pub fn label(self, project_dir: &Path) -> String {
        match self {
            Self::Trust => "Trust".to_owned(),
            Self::TrustParent => format!(
                "Trust parent folder ({})",
                project_dir.parent().unwrap_or(project_dir).display()
            ),
            Self::TrustSession => "Trust (this session only)".to_owned(),
            Self::DoNotTrust => "Do not trust".to_owned(),
            Self::DoNotTrustSession => "Do not trust (this session only)".to_owned(),
        }
    }

    /// The trust store updates the choice makes (`None` removes a key); empty for the
    /// session-only choices.
    pub fn store_updates(self, project_dir: &Path) -> Vec<(PathBuf, Option<bool>)> {
        match self {
            Self::Trust => vec![(project_dir.to_path_buf(), Some(true))],
            Self::TrustParent => match project_dir.parent() {
                Some(parent) => vec![
                    (parent.to_path_buf(), Some(true)),
                    (project_dir.to_path_buf(), None),
                ],
                None => vec![(project_dir.to_path_buf(), Some(true))],
            },
            Self::DoNotTrust => vec![(project_dir.to_path_buf(), Some(false))],
            Self::TrustSession | Self::DoNotTrustSession => Vec::new(),
        }
    }

    /// Writes [`store_updates`](Self::store_updates) in one locked write; whether anything was
    /// written.
    pub fn save(self, project_dir: &Path, store: &TrustStore) -> Result<bool, TrustStoreError> {
        let updates = self.store_updates(project_dir);
        if updates.is_empty() {
            return Ok(false);
        }
        store.set_many(&updates)?;
        Ok(true)
    }
}

/// The `defaultProjectTrust` user setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DefaultProjectTrust {
    /// Trust every project without a saved decision.
    Always,
    /// Trust no project without a saved decision.
    Never,
    /// Ask (untrusted where nobody can be asked).
    #[default]
    Ask,
}

impl DefaultProjectTrust {
    /// The setting's value as written: `always`, `never`, `ask`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Always => "always",
            Self::Never => "never",
            Self::Ask => "ask",
        }
    }
}

/// Which step decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustStep {
    /// `-a/--approve` (trusted) or `-na/--no-approve` (untrusted).
    Override,
    /// Nothing in the project requires trust.
    NothingToGate,
    /// A pre-trust extension's `project_trust` handler (saved when it asked to be remembered).
    Extension {
        /// The answer was saved in the store.
        remembered: bool,
    },
    /// A saved decision.
    Stored {
        /// The directory the decision was saved for (the project or an ancestor).
        dir: PathBuf,
        /// The store file.
        store: PathBuf,
    },
    /// `defaultProjectTrust` (`always` or `never`).
    Default(DefaultProjectTrust),
    /// `ask`, and this mode cannot ask.
    NoPrompt,
    /// The user's answer at the prompt.
    Prompt {
        /// The choice; `None` when the question was dismissed (untrusted, nothing saved).
        choice: Option<TrustChoice>,
        /// The answer was saved in the store.
        remembered: bool,
    },
}

/// The outcome of the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustDecision {
    /// The project directory (canonical).
    pub project_dir: PathBuf,
    /// Whether the project's gated resources may be loaded.
    pub trusted: bool,
    /// The step that decided.
    pub step: TrustStep,
    /// What in the project requires trust (empty when step 1 decided: not looked at).
    pub gated: Vec<GatedResource>,
    /// What the decision was made on, for a local project: `.jig` opened once and its settings
    /// read then ([`ProjectSnapshot`]); what a trusted project loads comes from it. `None` for
    /// a project looked at elsewhere (`--env`: read through the env).
    pub snapshot: Option<ProjectSnapshot>,
}

/// Proof that a project was trusted: the only way to reach its gated resources
/// ([`crate::read_project_settings`], project discovery in [`crate::discover`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedProject {
    dir: PathBuf,
    snapshot: Option<ProjectSnapshot>,
    runs_code: bool,
}

impl TrustedProject {
    /// The trusted project directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What the decision was made on (`None` for a project looked at through an env).
    pub fn snapshot(&self) -> Option<&ProjectSnapshot> {
        self.snapshot.as_ref()
    }

    /// False when the project was trusted because nothing in it required trust: then only what
    /// was seen may load — the inert settings keys — and no project extensions, tools, hooks,
    /// skills or prompt templates that appeared since.
    pub fn runs_code(&self) -> bool {
        self.runs_code
    }
}

impl TrustDecision {
    /// The trusted project, when the decision is "trusted".
    pub fn trusted_project(&self) -> Option<TrustedProject> {
        self.trusted.then(|| TrustedProject {
            dir: self.project_dir.clone(),
            snapshot: self.snapshot.clone(),
            runs_code: self.step != TrustStep::NothingToGate,
        })
    }

    /// One line for `--verbose` and diagnostics, e.g.
    /// `project /src/app: untrusted (no saved decision, defaultProjectTrust is "ask" and this mode cannot ask)`.
    pub fn describe(&self) -> String {
        let verdict = if self.trusted { "trusted" } else { "untrusted" };
        let why = match &self.step {
            TrustStep::Override if self.trusted => "--approve".to_owned(),
            TrustStep::Override => "--no-approve".to_owned(),
            TrustStep::NothingToGate => "nothing in it requires trust".to_owned(),
            TrustStep::Extension { remembered } => format!(
                "an extension's project_trust handler decided{}",
                if *remembered { ", saved" } else { "" }
            ),
            TrustStep::Stored { dir, store } => {
                format!(
                    "saved decision for {} in {}",
                    dir.display(),
                    store.display()
                )
            }
            TrustStep::Default(default) => {
                format!("defaultProjectTrust is \"{}\"", default.as_str())
            }
            TrustStep::NoPrompt => {
                "no saved decision, defaultProjectTrust is \"ask\" and this mode cannot ask"
                    .to_owned()
            }
            TrustStep::Prompt { choice: None, .. } => "the question was dismissed".to_owned(),
            TrustStep::Prompt {
                choice: Some(choice),
                remembered,
            } => format!(
                "answered \"{}\" at the prompt{}",
                choice.label(&self.project_dir),
                if *remembered { ", saved" } else { "" }
            ),
        };
        format!("project {}: {verdict} ({why})", self.project_dir.display())
    }

    /// For an untrusted project with gated resources: the warning that says what is not loaded
    /// and how to trust it. `None` otherwise.
    pub fn untrusted_warning(&self) -> Option<String> {
        if self.trusted || self.gated.is_empty() {
            return None;
        }
        let labels: Vec<String> = self.gated.iter().map(GatedResource::label).collect();
        Some(format!(
            "{}; not loading {}. Trust it with -a/--approve, or see docs/trust.md",
            self.describe(),
            labels.join(", ")
        ))
    }
}

/// Why the chain could not decide.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The trust store could not be read (a damaged store is not read as "no decision": it may
    /// hold a "do not trust").
    #[error(transparent)]
    Store(#[from] TrustStoreError),
}

/// Everything the chain looks at.
#[derive(Clone, Copy)]
pub struct TrustInputs<'a> {
    /// The project directory, canonical.
    pub project_dir: &'a Path,
    /// `Some(true)` for `-a/--approve`, `Some(false)` for `-na/--no-approve`.
    pub trust_override: Option<bool>,
    /// The pre-trust extensions, when any are loaded.
    pub hook: Option<&'a dyn ProjectTrustHook>,
    /// The trust store (`None` when there is no config directory: nothing is saved or found).
    pub store: Option<&'a TrustStore>,
    /// The `defaultProjectTrust` setting.
    pub default_trust: DefaultProjectTrust,
    /// The prompt, in a mode that can ask.
    pub prompt: Option<&'a dyn TrustPrompt>,
}

impl std::fmt::Debug for TrustInputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustInputs")
            .field("project_dir", &self.project_dir)
            .field("trust_override", &self.trust_override)
            .field("hook", &self.hook.is_some())
            .field("store", &self.store)
            .field("default_trust", &self.default_trust)
            .field("prompt", &self.prompt.is_some())
            .finish()
    }
}

/// What a step gives: `Some((trusted, step))` decides, `None` falls through.
pub type StepOutcome = Option<(bool, TrustStep)>;

/// Step 1: `-a/--approve` or `-na/--no-approve`.
pub fn step_override(trust_override: Option<bool>) -> StepOutcome {
    trust_override.map(|trusted| (trusted, TrustStep::Override))
}

/// Step 2: nothing in the project requires trust ⇒ trusted.
pub fn step_nothing_to_gate(gated: &[GatedResource]) -> StepOutcome {
    gated.is_empty().then_some((true, TrustStep::NothingToGate))
}

/// Step 3: the pre-trust extensions' `project_trust` answer; `remember` saves it in the store
/// (a failed save is a warning: the answer still decides).
pub async fn step_extensions(
    hook: Option<&dyn ProjectTrustHook>,
    project_dir: &Path,
    store: Option<&TrustStore>,
    diagnostics: &mut Diagnostics,
) -> StepOutcome {
    let answer = hook?.project_trust(project_dir).await?;
    let remembered = remember(answer, project_dir, store, diagnostics);
    Some((answer.trusted, TrustStep::Extension { remembered }))
}

/// Step 4: the nearest saved decision for the project or an ancestor.
pub fn step_stored(
    store: Option<&TrustStore>,
    project_dir: &Path,
) -> Result<StepOutcome, TrustError> {
    let Some(store) = store else {
        return Ok(None);
    };
    Ok(store.lookup(project_dir)?.map(|saved| {
        (
            saved.trusted,
            TrustStep::Stored {
                dir: saved.dir,
                store: store.path().to_path_buf(),
            },
        )
    }))
}

/// Step 5: `defaultProjectTrust` `always` or `never` decides; `ask` falls through.
pub fn step_default(default_trust: DefaultProjectTrust) -> StepOutcome {
    match default_trust {
        DefaultProjectTrust::Always => Some((true, TrustStep::Default(default_trust))),
        DefaultProjectTrust::Never => Some((false, TrustStep::Default(default_trust))),
        DefaultProjectTrust::Ask => None,
    }
}

/// Step 6: a mode that cannot ask ⇒ untrusted.
pub fn step_no_prompt(prompt: Option<&dyn TrustPrompt>) -> StepOutcome {
    prompt.is_none().then_some((false, TrustStep::NoPrompt))
}

/// Step 7: ask. No answer is untrusted and nothing is saved; a choice is saved as
/// [`TrustChoice::store_updates`] says (a failed save is a warning: the choice still decides).
pub async fn step_prompt(
    prompt: &dyn TrustPrompt,
    project_dir: &Path,
    gated: &[GatedResource],
    store: Option<&TrustStore>,
    diagnostics: &mut Diagnostics,
) -> (bool, TrustStep) {
    let Some(choice) = prompt.ask(project_dir, gated).await else {
        return (
            false,
            TrustStep::Prompt {
                choice: None,
                remembered: false,
            },
        );
    };
    let remembered = if choice.store_updates(project_dir).is_empty() {
        false
    } else if let Some(store) = store {
        match choice.save(project_dir, store) {
            Ok(saved) => saved,
            Err(error) => {
                diagnostics.trust_warning(format!("the trust decision was not saved: {error}"));
                false
            }
        }
    } else {
        diagnostics.trust_warning(
            "the trust decision was not saved: no config directory (set XDG_CONFIG_HOME or HOME)",
        );
        false
    };
    (
        choice.trusted(),
        TrustStep::Prompt {
            choice: Some(choice),
            remembered,
        },
    )
}

/// Saves `answer` when it asks to be remembered; whether it was saved.
fn remember(
    answer: TrustAnswer,
    project_dir: &Path,
    store: Option<&TrustStore>,
    diagnostics: &mut Diagnostics,
) -> bool {
    if !answer.remember {
        return false;
    }
    let Some(store) = store else {
        diagnostics.trust_warning(
            "the trust decision was not saved: no config directory (set XDG_CONFIG_HOME or HOME)",
        );
        return false;
    };
    match store.set(project_dir, Some(answer.trusted)) {
        Ok(()) => true,
        Err(error) => {
            diagnostics.trust_warning(format!("the trust decision was not saved: {error}"));
            false
        }
    }
}

/// Runs the chain for `inputs.project_dir`. Nothing project-sourced is executed or applied: the
/// project is only looked at to find what requires trust, once, through a [`ProjectSnapshot`]
/// that the decision keeps (what a trusted project loads comes from it).
pub async fn resolve_project_trust(
    inputs: &TrustInputs<'_>,
    diagnostics: &mut Diagnostics,
) -> Result<TrustDecision, TrustError> {
    let snapshot = ProjectSnapshot::take(inputs.project_dir);
    resolve_project_trust_in(inputs, snapshot, |gated| gated, diagnostics).await
}

/// [`resolve_project_trust`] on a snapshot taken by the caller, with what requires trust in it
/// passed through `filter` (`-ne` leaves out what it would not load).
pub async fn resolve_project_trust_in(
    inputs: &TrustInputs<'_>,
    snapshot: ProjectSnapshot,
    filter: impl FnOnce(Vec<GatedResource>) -> Vec<GatedResource>,
    diagnostics: &mut Diagnostics,
) -> Result<TrustDecision, TrustError> {
    let mut decision = resolve_with(inputs, || filter(snapshot.gated()), diagnostics).await?;
    decision.snapshot = Some(snapshot);
    Ok(decision)
}

/// [`resolve_project_trust`] for a project whose resources were looked at elsewhere: a
/// project on another machine (`--env`), whose `inputs.project_dir` is the name it is trusted
/// under (its URL) and `gated` what requires trust there
/// ([`trust_requiring_resources_in`](crate::resources::trust_requiring_resources_in)).
pub async fn resolve_project_trust_of(
    inputs: &TrustInputs<'_>,
    gated: Vec<GatedResource>,
    diagnostics: &mut Diagnostics,
) -> Result<TrustDecision, TrustError> {
    resolve_with(inputs, || gated, diagnostics).await
}

async fn resolve_with(
    inputs: &TrustInputs<'_>,
    gated: impl FnOnce() -> Vec<GatedResource>,
    diagnostics: &mut Diagnostics,
) -> Result<TrustDecision, TrustError> {
    let decide = |(trusted, step): (bool, TrustStep), gated: Vec<GatedResource>| TrustDecision {
        project_dir: inputs.project_dir.to_path_buf(),
        trusted,
        step,
        gated,
        snapshot: None,
    };
    if let Some(outcome) = step_override(inputs.trust_override) {
        return Ok(decide(outcome, Vec::new()));
    }
    let gated = gated();
    if let Some(outcome) = step_nothing_to_gate(&gated) {
        return Ok(decide(outcome, gated));
    }
    if let Some(outcome) =
        step_extensions(inputs.hook, inputs.project_dir, inputs.store, diagnostics).await
    {
        return Ok(decide(outcome, gated));
    }
    if let Some(outcome) = step_stored(inputs.store, inputs.project_dir)? {
        return Ok(decide(outcome, gated));
    }
    if let Some(outcome) = step_default(inputs.default_trust) {
        return Ok(decide(outcome, gated));
    }
    if let Some(outcome) = step_no_prompt(inputs.prompt) {
        return Ok(decide(outcome, gated));
    }
    let Some(prompt) = inputs.prompt else {
        return Ok(decide((false, TrustStep::NoPrompt), gated));
    };
    let outcome = step_prompt(
        prompt,
        inputs.project_dir,
        &gated,
        inputs.store,
        diagnostics,
    )
    .await;
    Ok(decide(outcome, gated))
}
