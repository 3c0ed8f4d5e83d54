//! What in a project requires trust.
//!
//! Looked at in `<project>/.jig/` only (not in ancestors), without executing or applying
//! anything:
//!
//! - `.jig/extensions/` (any entry; its mere existence counts, as its content would run);
//! - `.jig/tools/` (project-defined tools);
//! - `.jig/settings.json` when it sets any key other than the inert ones
//!   ([`INERT_SETTINGS_KEYS`]: `thinking`, `contextWindow`). Commands, hooks, extensions, the
//!   provider, the model and its base URL all require trust: they run code or decide where the
//!   user's prompts and code are sent. A file that cannot be read or parsed requires trust too
//!   (fail closed). To find its keys the file is parsed as data; nothing in it is applied.
//!
//! - `.jig/skills/`, `.jig/prompts/` and `.agents/skills/` (also in the parents up to the
//!   repository root): skills and prompt templates steer the model and point it at scripts.
//!
//! Context files (`AGENTS.md`, …) never require trust: they are text for the model.

use std::path::{Path, PathBuf};

use crate::PROJECT_DIR_NAME;
use jig_env::ExecutionEnv;

use crate::json_file::{ReadOutcome, read_json_object_in};

/// Project settings keys that neither run anything nor send data anywhere: a project whose
/// settings only set these does not need trust for them.
pub const INERT_SETTINGS_KEYS: &[&str] = &["thinking", "contextWindow"];

/// A project resource that is loaded only once the project is trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatedResource {
    /// `.jig/extensions/`: extensions that would run.
    Extensions(PathBuf),
    /// `.jig/tools/`: project-defined tools.
    Tools(PathBuf),
    /// `.jig/skills/`, `.jig/prompts/`, `.agents/skills/`: skills and prompt templates.
    Instructions(PathBuf),
    /// `.jig/settings.json` with the keys that need trust (`<unreadable>` when it could not be
    /// parsed).
    Settings {
        /// The settings file.
        path: PathBuf,
        /// Its keys that need trust, sorted.
        keys: Vec<String>,
    },
}

impl GatedResource {
    /// The resource's path.
    pub fn path(&self) -> &Path {
        match self {
            Self::Extensions(path)
            | Self::Tools(path)
            | Self::Instructions(path)
            | Self::Settings { path, .. } => path,
        }
    }

    /// A short description for messages: `.jig/extensions/`, `.jig/settings.json (hooks)`.
    pub fn label(&self) -> String {
        match self {
            Self::Extensions(_) => format!("{PROJECT_DIR_NAME}/extensions/"),
            Self::Tools(_) => format!("{PROJECT_DIR_NAME}/tools/"),
            Self::Instructions(path) => format!("{}/", path.display()),
            Self::Settings { keys, .. } => {
                format!("{PROJECT_DIR_NAME}/settings.json ({})", keys.join(", "))
            }
        }
    }
}

/// The `.agents/skills/` directories that count for `project_dir`: its own and its ancestors'
/// up to the repository root; outside a repository, the project directory's alone (never the
/// user's own `~/.agents/skills/` above it).
pub(crate) fn agents_skills_dirs(project_dir: &Path) -> Vec<PathBuf> {
    let repository = project_dir
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(project_dir);
    let mut dirs = Vec::new();
    for dir in project_dir.ancestors() {
        dirs.push(dir.join(".agents").join("skills"));
        if dir == repository {
            break;
        }
    }
    dirs
}

/// [`trust_requiring_resources`](crate::trust_requiring_resources) of a project on another machine, looked at through its
/// execution environment (`--env`): the same resources, read there.
pub async fn trust_requiring_resources_in(
    env: &dyn ExecutionEnv,
    project_dir: &Path,
) -> Vec<GatedResource> {
    let dot = project_dir.join(PROJECT_DIR_NAME);
    let extensions = dot.join("extensions");
    let tools = dot.join("tools");
    let settings = dot.join(crate::SETTINGS_FILE);
    // An error other than "not found" counts as present: what cannot be looked at is gated.
    let exists =
        |path: PathBuf| async move { env.exists(&path).await.unwrap_or(true).then_some(path) };
    let extensions = exists(extensions).await;
    let tools = exists(tools).await;
    let outcome = read_json_object_in(env, &settings).await;
    let mut found = gated(extensions, tools, settings, outcome);
    if let Some(path) = exists(project_dir.join(crate::PI_PROJECT_DIR).join("extensions")).await {
        found.push(GatedResource::Extensions(path));
    }
    for path in [
        dot.join("skills"),
        dot.join("prompts"),
        project_dir.join(".agents").join("skills"),
    ] {
        if let Some(path) = exists(path).await {
            found.push(GatedResource::Instructions(path));
        }
    }
    found
}

pub(crate) fn gated(
    extensions: Option<PathBuf>,
    tools: Option<PathBuf>,
    settings: PathBuf,
    outcome: ReadOutcome,
) -> Vec<GatedResource> {
    let mut found = Vec::new();
    if let Some(extensions) = extensions {
        found.push(GatedResource::Extensions(extensions));
    }
    if let Some(tools) = tools {
        found.push(GatedResource::Tools(tools));
    }
    let keys = match outcome {
        ReadOutcome::Missing => Vec::new(),
        ReadOutcome::Invalid(_) => vec!["<unreadable>".to_owned()],
        ReadOutcome::Object(object) => {
            let mut keys: Vec<String> = object
                .keys()
                .filter(|key| !INERT_SETTINGS_KEYS.contains(&key.as_str()))
                .cloned()
                .collect();
            keys.sort();
            keys
        }
    };
    if !keys.is_empty() {
        found.push(GatedResource::Settings {
            path: settings,
            keys,
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust_requiring_resources;

    #[test]
    fn nothing_requires_trust_in_a_plain_project_or_a_bare_dot_jig() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "rules").unwrap();
        assert_eq!(trust_requiring_resources(dir.path()), vec![]);
        std::fs::create_dir(dir.path().join(".jig")).unwrap();
        assert_eq!(trust_requiring_resources(dir.path()), vec![]);
    }

    #[test]
    fn inert_settings_do_not_require_trust_but_any_other_key_does() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".jig")).unwrap();
        let settings = dir.path().join(".jig/settings.json");
        std::fs::write(&settings, r#"{"thinking":"low","contextWindow":9000}"#).unwrap();
        assert_eq!(trust_requiring_resources(dir.path()), vec![]);
        std::fs::write(
            &settings,
            r#"{"thinking":"low","hooks":{},"baseUrl":"http://x"}"#,
        )
        .unwrap();
        assert_eq!(
            trust_requiring_resources(dir.path()),
            vec![GatedResource::Settings {
                path: settings.clone(),
                keys: vec!["baseUrl".into(), "hooks".into()]
            }]
        );
        std::fs::write(&settings, "{not json").unwrap();
        assert_eq!(
            trust_requiring_resources(dir.path())[0].label(),
            ".jig/settings.json (<unreadable>)"
        );
    }

    #[test]
    fn extensions_and_tools_directories_require_trust() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".jig/extensions")).unwrap();
        std::fs::create_dir_all(dir.path().join(".jig/tools")).unwrap();
        let labels: Vec<String> = trust_requiring_resources(dir.path())
            .iter()
            .map(GatedResource::label)
            .collect();
        assert_eq!(labels, [".jig/extensions/", ".jig/tools/"]);
    }

    #[test]
    fn skills_and_prompt_templates_require_trust_up_to_the_repository_root() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let sub = repo.join("crates/sub");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(trust_requiring_resources(&sub), vec![]);
        std::fs::create_dir_all(repo.join(".agents/skills/pdf")).unwrap();
        // Outside a repository, only the project directory's own.
        assert_eq!(trust_requiring_resources(&sub), vec![]);
        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(
            trust_requiring_resources(&sub),
            vec![GatedResource::Instructions(repo.join(".agents/skills"))]
        );
        std::fs::create_dir_all(sub.join(".jig/prompts")).unwrap();
        std::fs::create_dir_all(dir.path().join(".agents/skills")).unwrap();
        // Above the repository root is not the project's.
        assert_eq!(
            trust_requiring_resources(&sub),
            vec![
                GatedResource::Instructions(sub.join(".jig/prompts")),
                GatedResource::Instructions(repo.join(".agents/skills")),
            ]
        );
    }

    /// A project elsewhere is looked at through its env: the same resources, the same labels,
    /// nothing of this machine's directory of the same name.
    #[tokio::test]
    async fn through_an_env_the_same_resources_are_found_there() {
        use jig_env::ExecutionEnv as _;
        let env = jig_env_memory::MemoryEnv::new();
        let project = Path::new("/srv/repo");
        assert_eq!(trust_requiring_resources_in(&env, project).await, vec![]);
        env.create_dir(&project.join(".jig/extensions"), jig_env::Recursive::Yes)
            .await
            .unwrap();
        env.write(
            &project.join(".jig/settings.json"),
            r#"{"thinking":"low","hooks":{}}"#.into(),
        )
        .await
        .unwrap();
        let labels: Vec<String> = trust_requiring_resources_in(&env, project)
            .await
            .iter()
            .map(GatedResource::label)
            .collect();
        assert_eq!(labels, [".jig/extensions/", ".jig/settings.json (hooks)"]);
        env.write(&project.join(".jig/settings.json"), "{not json".into())
            .await
            .unwrap();
        assert_eq!(
            trust_requiring_resources_in(&env, project).await[1].label(),
            ".jig/settings.json (<unreadable>)"
        );
    }
}
