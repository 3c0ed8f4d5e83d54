//! The tools and bash command prefixes a project allows without asking, saved when the user
//! says so: `$XDG_CONFIG_HOME/jig/permissions/<project>.json` (default `~/.config/jig/…`), one
//! file per project directory (`/home/me/proj` → `--home-me-proj--.json`), outside the project
//! so a repository cannot grant itself anything.
//!
//! ```json
//! {"project": "/home/me/proj", "allow": {"tools": ["edit"], "bashPrefixes": ["cargo test"]}}
//! ```

use std::path::{Path, PathBuf};

use jig_agent::SessionStore;
use jig_tui::policy::Allowlist;
use serde::{Deserialize, Serialize};

/// The saved file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    project: PathBuf,
    allow: Allowlist,
}

/// Where `project`'s allowlist is saved; `None` without a config directory.
pub(crate) fn path(project: &Path) -> Option<PathBuf> {
    // The same spelling of a directory as the session store's.
    let dir = SessionStore::new(jig_project::config_dir()?.join("permissions")).dir_for(project);
    let mut file = dir.into_os_string();
    file.push(".json");
    Some(PathBuf::from(file))
}

/// `project`'s saved allowlist (empty when there is none; a damaged file is reported and
/// ignored: it then allows nothing).
pub(crate) fn load(project: &Path) -> Allowlist {
    let Some(path) = path(project) else {
        return Allowlist::default();
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Allowlist::default();
    };
    match serde_json::from_str::<Saved>(&text) {
        Ok(saved) => saved.allow,
        Err(error) => {
            crate::exit::warn(&format!(
                "ignoring the saved permissions {}: {error}",
                path.display()
            ));
            Allowlist::default()
        }
    }
}

/// Saves `allow` for `project`.
pub(crate) fn save(project: &Path, allow: &Allowlist) -> Result<PathBuf, String> {
    let path = path(project).ok_or("no config directory: set XDG_CONFIG_HOME or HOME")?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let saved = Saved {
        project: project.to_path_buf(),
        allow: allow.clone(),
    };
    let text = serde_json::to_string_pretty(&saved).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}
