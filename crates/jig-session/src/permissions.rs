//! The tools and bash command prefixes a project allows without asking, saved when the user
//! says so: `$XDG_CONFIG_HOME/jig/permissions/<project>.json` (default `~/.config/jig/…`), one
//! file per project directory, named like its session directory (`/home/me/proj` →
//! `--home-me-proj--.json`, `/x/a-b` → `--x-a%2Db--.json`: two projects never share a name),
//! outside the project so a repository cannot grant itself anything.
//!
//! The file names its project, and a file whose `project` is another is ignored with a
//! warning, never applied. A file under the name earlier versions used (every `/` turned into
//! `-`, so `/x/a-b` and `/x/a/b` shared one) is moved to the new name when it names this
//! project.
//!
//! ```json
//! {"project": "/home/me/proj", "allow": {"tools": ["edit"], "bashPrefixes": ["cargo test"]}}
//! ```

use std::path::{Path, PathBuf};

use crate::policy::Allowlist;
use jig_agent::SessionStore;
use serde::{Deserialize, Serialize};

/// The saved file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    project: PathBuf,
    allow: Allowlist,
}

/// Where `project`'s allowlist is saved; `None` without a config directory.
pub fn path(project: &Path) -> Option<PathBuf> {
    // The same spelling of a directory as the session store's.
    let store = SessionStore::new(jig_project::config_dir()?.join("permissions"));
    Some(json_file(store.dir_for(project)))
}

/// Where earlier versions saved it.
fn legacy_path(project: &Path) -> Option<PathBuf> {
    let store = SessionStore::new(jig_project::config_dir()?.join("permissions"));
    Some(json_file(store.legacy_dir_for(project)))
}

fn json_file(dir: PathBuf) -> PathBuf {
    let mut file = dir.into_os_string();
    file.push(".json");
    PathBuf::from(file)
}

/// Moves the file earlier versions saved for `project` to its new name, when there is no
/// file under the new name and the old one names `project`.
fn migrate(project: &Path, path: &Path) {
    let Some(legacy) = legacy_path(project).filter(|legacy| legacy != path) else {
        return;
    };
    if path.exists() {
        return;
    }
    let Ok(text) = std::fs::read_to_string(&legacy) else {
        return;
    };
    let Ok(saved) = serde_json::from_str::<Saved>(&text) else {
        return;
    };
    if saved.project != project {
        return;
    }
    if let Err(error) = std::fs::rename(&legacy, path) {
        crate::warn(&format!(
            "the saved permissions {} could not be moved to {}: {error}",
            legacy.display(),
            path.display()
        ));
    }
}

/// `project`'s saved allowlist (empty when there is none; a damaged file, or one saved for
/// another project, is reported and ignored: it then allows nothing).
pub fn load(project: &Path) -> Allowlist {
    let Some(path) = path(project) else {
        return Allowlist::default();
    };
    migrate(project, &path);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Allowlist::default();
    };
    match serde_json::from_str::<Saved>(&text) {
        Ok(saved) if saved.project != project => {
            crate::warn(&format!(
                "ignoring the saved permissions {}: they are for {}, not {}",
                path.display(),
                saved.project.display(),
                project.display()
            ));
            Allowlist::default()
        }
        Ok(saved) => saved.allow,
        Err(error) => {
            crate::warn(&format!(
                "ignoring the saved permissions {}: {error}",
                path.display()
            ));
            Allowlist::default()
        }
    }
}

/// Writes `text` to `path`, readable and writable by the user alone (`0600`, also when the
/// file existed with another mode).
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(text.as_bytes())
}

/// Why a project's allowlist could not be saved (it still holds for the session).
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// Neither `XDG_CONFIG_HOME` nor `HOME` names a config directory.
    #[error("no config directory: set XDG_CONFIG_HOME or HOME")]
    NoConfigDir,
    /// A file or directory on the way could not be created or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// Saves `allow` for `project`.
pub fn save(project: &Path, allow: &Allowlist) -> Result<PathBuf, SaveError> {
    let path = path(project).ok_or(SaveError::NoConfigDir)?;
    if let Some(dir) = path.parent() {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| SaveError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
    }
    let saved = Saved {
        project: project.to_path_buf(),
        allow: allow.clone(),
    };
    // Paths and names only: serialising cannot fail.
    let text = serde_json::to_string_pretty(&saved).unwrap_or_default();
    write_private(&path, &(text + "\n")).map_err(|source| SaveError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::disallowed_methods, reason = "test fixtures on the host")]

    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn saved_permissions_are_written_0600_also_over_a_file_that_was_readable_by_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("--p--.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&path, "{}\n").unwrap();
        let metadata = std::fs::metadata(&path).unwrap();
        assert_eq!(metadata.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
    }
}
