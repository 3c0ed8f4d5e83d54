//! The settings this crate takes and reads.
//!
//! From the user's settings, what trust and discovery use ([`UserProjectSettings`]), typed by
//! the caller from the one parse of that file (`jig_session::settings`).
//!
//! The project's settings (`<project>/.jig/settings.json`) are returned only for a trusted
//! project ([`read_project_settings`] takes a [`TrustedProject`]), as a JSON object the caller
//! merges over the user's ([`merge_settings`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::PROJECT_DIR_NAME;
use crate::diagnostics::Diagnostics;
use crate::json_file::{ReadOutcome, read_json_object};
use crate::trust::{DefaultProjectTrust, TrustedProject};

/// What project trust and discovery take from the user's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserProjectSettings {
    /// `defaultProjectTrust` (default `ask`).
    pub default_project_trust: DefaultProjectTrust,
    /// `extensions`: absolute paths (relative entries resolved against the config directory,
    /// `~/` against `$HOME`).
    pub extensions: Vec<PathBuf>,
    /// `piExtensions`: also discover Pi's extension directories (`~/.pi/agent/extensions`, and
    /// a trusted project's `.pi/extensions`). Default `false`.
    pub pi_extensions: bool,
}

/// A trusted project's `.jig/settings.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectSettings {
    /// The file.
    pub path: PathBuf,
    /// Its JSON object.
    pub value: Value,
}

/// The trusted project's settings; `None` when it has no `.jig/settings.json`. A file that
/// cannot be read or is not a JSON object is a warning and reads as `None`.
///
/// Only a [`TrustedProject`] opens this door: an untrusted project's settings are never read as
/// configuration.
///
/// For a local project they are the settings read when trust was decided, through the `.jig`
/// handle of its [`crate::ProjectSnapshot`] (never read again by path); for a project trusted
/// because nothing in it required trust ([`TrustedProject::runs_code`] false), only the inert
/// keys ([`crate::resources::INERT_SETTINGS_KEYS`]) are kept.
pub fn read_project_settings(
    project: &TrustedProject,
    diagnostics: &mut Diagnostics,
) -> Option<ProjectSettings> {
    let (path, outcome) = if let Some(snapshot) = project.snapshot() {
        snapshot.settings()
    } else {
        let path = project
            .dir()
            .join(PROJECT_DIR_NAME)
            .join(crate::SETTINGS_FILE);
        let outcome = read_json_object(&path);
        (path, outcome)
    };
    let outcome = match outcome {
        ReadOutcome::Object(mut object) if !project.runs_code() => {
            object.retain(|key, _| crate::resources::INERT_SETTINGS_KEYS.contains(&key.as_str()));
            ReadOutcome::Object(object)
        }
        other => other,
    };
    project_settings(path, outcome, diagnostics)
}

/// [`read_project_settings`] of a trusted project on another machine, read through its
/// execution environment (`--env`).
pub async fn read_project_settings_in(
    env: &dyn jig_env::ExecutionEnv,
    project_dir: &Path,
    diagnostics: &mut Diagnostics,
) -> Option<ProjectSettings> {
    let path = project_dir
        .join(PROJECT_DIR_NAME)
        .join(crate::SETTINGS_FILE);
    let outcome = crate::json_file::read_json_object_in(env, &path).await;
    project_settings(path, outcome, diagnostics)
}

/// The settings read from `path`: none when missing; a warning when invalid.
fn project_settings(
    path: PathBuf,
    outcome: ReadOutcome,
    diagnostics: &mut Diagnostics,
) -> Option<ProjectSettings> {
    match outcome {
        ReadOutcome::Missing => None,
        ReadOutcome::Invalid(reason) => {
            diagnostics.settings_warning(&path, &reason);
            None
        }
        ReadOutcome::Object(object) => Some(ProjectSettings {
            path,
            value: Value::Object(object),
        }),
    }
}

/// Merges `overlay` over `base`: objects merge key by key (recursively), any other value of
/// `overlay` replaces `base`'s.
pub fn merge_settings(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(&key) {
                    Some(existing) => merge_settings(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, overlay) => *base = overlay,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_is_recursive_for_objects_and_replaces_the_rest() {
        let mut base = json!({"provider": "openai", "deep": {"a": 1, "b": 2}, "list": [1]});
        merge_settings(
            &mut base,
            json!({"model": "m", "deep": {"b": 3}, "list": [2, 3]}),
        );
        assert_eq!(
            base,
            json!({"provider": "openai", "model": "m", "deep": {"a": 1, "b": 3}, "list": [2, 3]})
        );
    }
}
