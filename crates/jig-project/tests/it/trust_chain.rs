//! Conformance of the trust chain: each step in isolation decides, and each falls through to the
//! next, with the exact line `--verbose` prints.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use jig_project::trust::{
    step_default, step_extensions, step_no_prompt, step_nothing_to_gate, step_override,
    step_prompt, step_stored,
};
use jig_project::{
    DefaultProjectTrust, Diagnostics, GatedResource, ProjectTrustHook, TrustAnswer, TrustChoice,
    TrustInputs, TrustPrompt, TrustStep, TrustStore, resolve_project_trust,
};
use pretty_assertions::assert_eq;

/// A project with gated resources (`.jig/extensions/`) and a config dir for the store.
struct Fixture {
    _dir: tempfile::TempDir,
    project: PathBuf,
    config: PathBuf,
    store: TrustStore,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let project = root.join("src/app");
        std::fs::create_dir_all(project.join(".jig/extensions")).unwrap();
        let config = root.join("config/jig");
        Self {
            _dir: dir,
            project,
            store: TrustStore::in_config_dir(&config),
            config,
        }
    }

    fn store(&self) -> TrustStore {
        self.store.clone()
    }

    fn redact(&self, text: &str) -> String {
        let root = self.project.parent().unwrap().parent().unwrap();
        text.replace(&root.display().to_string(), "[ROOT]")
    }

    /// The chain with no override, no hook, an empty store, `ask` and no prompt, changed by
    /// `adjust`; returns the decision's `--verbose` line.
    async fn resolve<'a>(&'a self, adjust: impl FnOnce(&mut TrustInputs<'a>)) -> (bool, String) {
        let mut inputs = TrustInputs {
            project_dir: &self.project,
            trust_override: None,
            hook: None,
            store: Some(&self.store),
            default_trust: DefaultProjectTrust::Ask,
            prompt: None,
        };
        adjust(&mut inputs);
        let mut diagnostics = Diagnostics::default();
        let decision = resolve_project_trust(&inputs, &mut diagnostics)
            .await
            .unwrap();
        (decision.trusted, self.redact(&decision.describe()))
    }
}

/// A `project_trust` handler with a fixed answer; counts its calls.
struct Hook(Option<TrustAnswer>, Mutex<u32>);

#[async_trait]
impl ProjectTrustHook for Hook {
    async fn project_trust(&self, _project_dir: &Path) -> Option<TrustAnswer> {
        *self.1.lock().unwrap() += 1;
        self.0
    }
}

/// A prompt with a fixed answer; counts its calls.
struct Prompt(Option<TrustChoice>, Mutex<u32>);

#[async_trait]
impl TrustPrompt for Prompt {
    async fn ask(&self, _project_dir: &Path, gated: &[GatedResource]) -> Option<TrustChoice> {
        assert!(!gated.is_empty(), "the prompt is told what needs trust");
        *self.1.lock().unwrap() += 1;
        self.0
    }
}

const YES: Option<TrustAnswer> = Some(TrustAnswer {
    trusted: true,
    remember: false,
});
const NO_REMEMBER: Option<TrustAnswer> = Some(TrustAnswer {
    trusted: false,
    remember: true,
});

// Step 1 -----------------------------------------------------------------------------------

#[test]
fn step_1_override_decides_or_falls_through() {
    assert_eq!(step_override(Some(true)), Some((true, TrustStep::Override)));
    assert_eq!(
        step_override(Some(false)),
        Some((false, TrustStep::Override))
    );
    assert_eq!(step_override(None), None);
}

#[tokio::test]
async fn step_1_override_wins_over_everything_after_it() {
    let fixture = Fixture::new();
    fixture.store().set(&fixture.project, Some(false)).unwrap();
    let hook = Hook(NO_REMEMBER, Mutex::new(0));
    let (trusted, line) = fixture
        .resolve(|inputs| {
            inputs.trust_override = Some(true);
            inputs.hook = Some(&hook);
            inputs.default_trust = DefaultProjectTrust::Never;
        })
        .await;
    assert!(trusted);
    assert_eq!(line, "project [ROOT]/src/app: trusted (--approve)");
    assert_eq!(*hook.1.lock().unwrap(), 0, "no extension was asked");
    let (trusted, line) = fixture
        .resolve(|inputs| {
            inputs.trust_override = Some(false);
            inputs.default_trust = DefaultProjectTrust::Always;
        })
        .await;
    assert!(!trusted);
    assert_eq!(line, "project [ROOT]/src/app: untrusted (--no-approve)");
}

// Step 2 -----------------------------------------------------------------------------------

#[tokio::test]
async fn step_2_nothing_to_gate_decides_trusted_or_falls_through() {
    assert_eq!(
        step_nothing_to_gate(&[]),
        Some((true, TrustStep::NothingToGate))
    );
    assert_eq!(
        step_nothing_to_gate(&[GatedResource::Tools("/p/.jig/tools".into())]),
        None
    );
    let fixture = Fixture::new();
    std::fs::remove_dir(fixture.project.join(".jig/extensions")).unwrap();
    std::fs::write(fixture.project.join("AGENTS.md"), "context is not gated").unwrap();
    fixture.store().set(&fixture.project, Some(false)).unwrap();
    let (trusted, line) = fixture
        .resolve(|inputs| inputs.default_trust = DefaultProjectTrust::Never)
        .await;
    assert!(trusted);
    assert_eq!(
        line,
        "project [ROOT]/src/app: trusted (nothing in it requires trust)"
    );
}

// Step 3 -----------------------------------------------------------------------------------

#[tokio::test]
async fn step_3_an_extension_answer_decides_and_remember_saves_it() {
    let fixture = Fixture::new();
    let store = fixture.store();
    let mut diagnostics = Diagnostics::default();
    let hook = Hook(NO_REMEMBER, Mutex::new(0));
    assert_eq!(
        step_extensions(
            Some(&hook),
            &fixture.project,
            Some(&store),
            &mut diagnostics
        )
        .await,
        Some((false, TrustStep::Extension { remembered: true }))
    );
    assert!(!store.lookup(&fixture.project).unwrap().unwrap().trusted);

    // Before the store and the default: the extension speaks first.
    let fixture = Fixture::new();
    fixture.store().set(&fixture.project, Some(false)).unwrap();
    let hook = Hook(YES, Mutex::new(0));
    let (trusted, line) = fixture
        .resolve(|inputs| {
            inputs.hook = Some(&hook);
            inputs.default_trust = DefaultProjectTrust::Never;
        })
        .await;
    assert!(trusted);
    assert_eq!(
        line,
        "project [ROOT]/src/app: trusted (an extension's project_trust handler decided)"
    );
    assert!(
        !fixture
            .store()
            .lookup(&fixture.project)
            .unwrap()
            .unwrap()
            .trusted,
        "not remembered: the store is unchanged"
    );
}

#[tokio::test]
async fn step_3_undecided_or_no_extensions_fall_through() {
    let fixture = Fixture::new();
    let store = fixture.store();
    let mut diagnostics = Diagnostics::default();
    assert_eq!(
        step_extensions(None, &fixture.project, Some(&store), &mut diagnostics).await,
        None
    );
    let undecided = Hook(None, Mutex::new(0));
    assert_eq!(
        step_extensions(
            Some(&undecided),
            &fixture.project,
            Some(&store),
            &mut diagnostics
        )
        .await,
        None
    );
    assert_eq!(*undecided.1.lock().unwrap(), 1);
    let (trusted, line) = fixture
        .resolve(|inputs| {
            inputs.hook = Some(&undecided);
            inputs.default_trust = DefaultProjectTrust::Always;
        })
        .await;
    assert!(trusted);
    assert_eq!(
        line,
        "project [ROOT]/src/app: trusted (defaultProjectTrust is \"always\")"
    );
}

// Step 4 -----------------------------------------------------------------------------------

#[tokio::test]
async fn step_4_the_nearest_saved_decision_decides() {
    let fixture = Fixture::new();
    let store = fixture.store();
    assert_eq!(step_stored(Some(&store), &fixture.project).unwrap(), None);
    let parent = fixture.project.parent().unwrap();
    store.set(parent, Some(true)).unwrap();
    assert_eq!(
        step_stored(Some(&store), &fixture.project).unwrap(),
        Some((
            true,
            TrustStep::Stored {
                dir: parent.to_path_buf(),
                store: store.path().to_path_buf()
            }
        ))
    );
    let (trusted, line) = fixture
        .resolve(|inputs| inputs.default_trust = DefaultProjectTrust::Never)
        .await;
    assert!(trusted);
    assert_eq!(
        line,
        "project [ROOT]/src/app: trusted (saved decision for [ROOT]/src in [ROOT]/config/jig/trust.json)"
    );
    store.set(&fixture.project, Some(false)).unwrap();
    let (trusted, line) = fixture
        .resolve(|inputs| inputs.default_trust = DefaultProjectTrust::Always)
        .await;
    assert!(!trusted);
    assert_eq!(
        line,
        "project [ROOT]/src/app: untrusted (saved decision for [ROOT]/src/app in [ROOT]/config/jig/trust.json)"
    );
}

#[tokio::test]
async fn step_4_a_damaged_store_stops_the_chain_instead_of_falling_through() {
    let fixture = Fixture::new();
    std::fs::create_dir_all(&fixture.config).unwrap();
    std::fs::write(fixture.config.join("trust.json"), "{oops").unwrap();
    let store = fixture.store();
    let mut diagnostics = Diagnostics::default();
    let error = resolve_project_trust(
        &TrustInputs {
            project_dir: &fixture.project,
            trust_override: None,
            hook: None,
            store: Some(&store),
            default_trust: DefaultProjectTrust::Always,
            prompt: None,
        },
        &mut diagnostics,
    )
    .await
    .unwrap_err();
    assert!(fixture.redact(&error.to_string()).starts_with(
        "Failed to read trust store [ROOT]/config/jig/trust.json: key must be a string"
    ));
}

// Step 5 -----------------------------------------------------------------------------------

#[tokio::test]
async fn step_5_default_always_and_never_decide_and_ask_falls_through() {
    assert_eq!(
        step_default(DefaultProjectTrust::Always),
        Some((true, TrustStep::Default(DefaultProjectTrust::Always)))
    );
    assert_eq!(
        step_default(DefaultProjectTrust::Never),
        Some((false, TrustStep::Default(DefaultProjectTrust::Never)))
    );
    assert_eq!(step_default(DefaultProjectTrust::Ask), None);
    let fixture = Fixture::new();
    let (trusted, line) = fixture
        .resolve(|inputs| inputs.default_trust = DefaultProjectTrust::Never)
        .await;
    assert!(!trusted);
    assert_eq!(
        line,
        "project [ROOT]/src/app: untrusted (defaultProjectTrust is \"never\")"
    );
}

// Step 6 -----------------------------------------------------------------------------------

#[tokio::test]
async fn step_6_without_a_prompt_ask_is_untrusted() {
    assert_eq!(step_no_prompt(None), Some((false, TrustStep::NoPrompt)));
    let prompt = Prompt(Some(TrustChoice::Trust), Mutex::new(0));
    assert_eq!(step_no_prompt(Some(&prompt)), None);
    let fixture = Fixture::new();
    let (trusted, line) = fixture.resolve(|_| {}).await;
    assert!(!trusted);
    assert_eq!(
        line,
        "project [ROOT]/src/app: untrusted (no saved decision, defaultProjectTrust is \"ask\" and this mode cannot ask)"
    );
}

// Step 7 -----------------------------------------------------------------------------------

#[tokio::test]
async fn step_7_the_prompt_decides_remember_saves_and_dismissing_is_untrusted() {
    let fixture = Fixture::new();
    let store = fixture.store();
    let mut diagnostics = Diagnostics::default();
    let gated = [GatedResource::Extensions(
        fixture.project.join(".jig/extensions"),
    )];
    let dismissed = Prompt(None, Mutex::new(0));
    assert_eq!(
        step_prompt(
            &dismissed,
            &fixture.project,
            &gated,
            Some(&store),
            &mut diagnostics
        )
        .await,
        (
            false,
            TrustStep::Prompt {
                choice: None,
                remembered: false
            }
        )
    );
    assert_eq!(
        store.lookup(&fixture.project).unwrap(),
        None,
        "nothing saved"
    );

    let trust_and_save = Prompt(Some(TrustChoice::Trust), Mutex::new(0));
    let (trusted, line) = fixture
        .resolve(|inputs| inputs.prompt = Some(&trust_and_save))
        .await;
    assert!(trusted);
    assert_eq!(
        line,
        "project [ROOT]/src/app: trusted (answered \"Trust\" at the prompt, saved)"
    );
    assert_eq!(*trust_and_save.1.lock().unwrap(), 1);
    // Saved: the next start is decided by step 4 and nobody is asked.
    let (trusted, line) = fixture
        .resolve(|inputs| inputs.prompt = Some(&trust_and_save))
        .await;
    assert!(trusted);
    assert!(line.contains("saved decision for [ROOT]/src/app"), "{line}");
    assert_eq!(*trust_and_save.1.lock().unwrap(), 1);
}

/// Each choice at the prompt: trusted or not, and exactly what `trust.json` holds afterwards.
#[tokio::test]
async fn step_7_each_choice_writes_what_it_says() {
    let cases = [
        (
            TrustChoice::Trust,
            true,
            "{\n  \"[ROOT]/src/app\": true\n}\n",
        ),
        (
            TrustChoice::TrustParent,
            true,
            "{\n  \"[ROOT]/src\": true\n}\n",
        ),
        (TrustChoice::TrustSession, true, "(no file)"),
        (
            TrustChoice::DoNotTrust,
            false,
            "{\n  \"[ROOT]/src/app\": false\n}\n",
        ),
        (TrustChoice::DoNotTrustSession, false, "(no file)"),
    ];
    for (choice, expect_trusted, expect_store) in cases {
        let fixture = Fixture::new();
        let prompt = Prompt(Some(choice), Mutex::new(0));
        let (trusted, line) = fixture
            .resolve(|inputs| inputs.prompt = Some(&prompt))
            .await;
        assert_eq!(trusted, expect_trusted, "{choice:?}: {line}");
        let store = fixture.store();
        let written = std::fs::read_to_string(store.path())
            .map_or_else(|_| "(no file)".to_owned(), |text| fixture.redact(&text));
        assert_eq!(written, expect_store, "{choice:?}");
    }
}

#[tokio::test]
async fn step_7_trusting_the_parent_replaces_the_projects_own_decision() {
    let fixture = Fixture::new();
    let store = fixture.store();
    store.set(&fixture.project, Some(false)).unwrap();
    TrustChoice::TrustParent
        .save(&fixture.project, &store)
        .unwrap();
    let parent = fixture.project.parent().unwrap();
    assert_eq!(
        store
            .lookup(&fixture.project)
            .unwrap()
            .map(|d| (d.dir, d.trusted)),
        Some((parent.to_path_buf(), true))
    );
    assert_eq!(
        TrustChoice::persistent(&fixture.project),
        [
            TrustChoice::Trust,
            TrustChoice::TrustParent,
            TrustChoice::DoNotTrust
        ]
    );
    assert_eq!(
        TrustChoice::at_startup(Path::new("/")),
        [
            TrustChoice::Trust,
            TrustChoice::TrustSession,
            TrustChoice::DoNotTrust,
            TrustChoice::DoNotTrustSession
        ],
        "no parent at the root"
    );
}

#[tokio::test]
async fn an_untrusted_project_says_what_it_does_not_load() {
    let fixture = Fixture::new();
    std::fs::write(
        fixture.project.join(".jig/settings.json"),
        r#"{"hooks": {"tool_call": [["sh", "-c", "touch marker"]]}, "thinking": "low"}"#,
    )
    .unwrap();
    let store = fixture.store();
    let mut diagnostics = Diagnostics::default();
    let decision = resolve_project_trust(
        &TrustInputs {
            project_dir: &fixture.project,
            trust_override: None,
            hook: None,
            store: Some(&store),
            default_trust: DefaultProjectTrust::Ask,
            prompt: None,
        },
        &mut diagnostics,
    )
    .await
    .unwrap();
    assert_eq!(decision.trusted_project(), None);
    insta::assert_snapshot!(fixture.redact(&decision.untrusted_warning().unwrap()), @r#"project [ROOT]/src/app: untrusted (no saved decision, defaultProjectTrust is "ask" and this mode cannot ask); not loading .jig/extensions/, .jig/settings.json (hooks). Trust it with -a/--approve, or see docs/trust.md"#);
}
