//! What trust is decided on, looked at once: the project's `.jig` directory opened as a handle
//! when the decision is made, and its `settings.json` read through that handle then.
//!
//! Everything loaded afterwards for the decision comes from the same snapshot: the settings are
//! the ones read at decision time (never read again by path), and `.jig/extensions/`,
//! `.jig/tools/` and Pi's `.pi/extensions/` are discovered through open handles (`/proc/self/fd/N/…`), so a second
//! process that swaps `.jig` (or the whole directory for a symlink) after the decision changes
//! nothing that is loaded. A decision made because nothing in the project required trust allows
//! only what was seen: the inert settings keys, and no project extensions, tools, hooks, skills
//! or prompt templates, whatever appears later.

use std::os::fd::AsRawFd as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::PROJECT_DIR_NAME;
use crate::json_file::{ReadOutcome, read_json_object};
use crate::resources::{GatedResource, agents_skills_dirs, gated};

/// The resources of `project_dir` that require trust, looked at now; empty when nothing does.
pub fn trust_requiring_resources(project_dir: &Path) -> Vec<GatedResource> {
    ProjectSnapshot::take(project_dir).gated()
}

/// The project's `.jig` as it was when trust was decided.
#[derive(Debug, Clone)]
pub struct ProjectSnapshot {
    /// The project directory.
    dir: PathBuf,
    /// `.jig`, opened once (`None` when there was none, or it was not a directory).
    handle: Option<Arc<std::fs::File>>,
    /// `.pi` (Pi's project directory, whose `extensions/` may load), opened once.
    pi_handle: Option<Arc<std::fs::File>>,
    /// `.jig/settings.json` as read through the handle.
    settings: ReadOutcome,
}

impl PartialEq for ProjectSnapshot {
    fn eq(&self, other: &Self) -> bool {
        self.dir == other.dir
            && self.handle.is_some() == other.handle.is_some()
            && self.pi_handle.is_some() == other.pi_handle.is_some()
            && self.settings == other.settings
    }
}

impl Eq for ProjectSnapshot {}

impl ProjectSnapshot {
    /// Opens `project_dir`'s `.jig` (following a symlink once: what it leads to now is what is
    /// read from here on) and reads its `settings.json` through the handle.
    pub fn take(project_dir: &Path) -> Self {
        Self::take_with(project_dir, || {})
    }

    /// [`ProjectSnapshot::take`], calling `between` after `.jig` is opened and before anything
    /// is read through it (tests swap `.jig` there).
    pub fn take_with(project_dir: &Path, between: impl FnOnce()) -> Self {
        let handle = open_directory(&project_dir.join(PROJECT_DIR_NAME)).map(Arc::new);
        let pi_handle = open_directory(&project_dir.join(crate::PI_PROJECT_DIR)).map(Arc::new);
        between();
        let settings = match &handle {
            Some(handle) => read_json_object(&through(handle).join(crate::SETTINGS_FILE)),
            None => ReadOutcome::Missing,
        };
        Self {
            dir: project_dir.to_path_buf(),
            handle,
            pi_handle,
            settings,
        }
    }

    /// The project directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path that reads the opened `.jig` (`/proc/self/fd/N`), whatever is at
    /// `<project>/.jig` now; `None` when there was no `.jig`.
    pub fn jig_dir(&self) -> Option<PathBuf> {
        self.handle.as_deref().map(through)
    }

    /// The path that reads the opened `.pi` (Pi's project directory); `None` when there was
    /// none.
    pub fn pi_dir(&self) -> Option<PathBuf> {
        self.pi_handle.as_deref().map(through)
    }

    /// What in the project requires trust, as seen through the snapshot (`.jig`'s
    /// extensions, tools and settings through the handle; skills and prompt directories).
    pub fn gated(&self) -> Vec<GatedResource> {
        let dot = self.dir.join(PROJECT_DIR_NAME);
        let seen = |sub: &str| {
            self.jig_dir()
                .is_some_and(|jig| jig.join(sub).exists())
                .then(|| dot.join(sub))
        };
        let mut found = gated(
            seen("extensions"),
            seen("tools"),
            dot.join(crate::SETTINGS_FILE),
            self.settings.clone(),
        );
        // Pi's project extensions: code, loaded only with the user's `piExtensions`, gated
        // always.
        if self
            .pi_dir()
            .is_some_and(|pi| pi.join("extensions").exists())
        {
            found.push(GatedResource::Extensions(
                self.dir.join(crate::PI_PROJECT_DIR).join("extensions"),
            ));
        }
        let mut paths: Vec<PathBuf> = ["skills", "prompts"].into_iter().filter_map(seen).collect();
        paths.extend(
            agents_skills_dirs(&self.dir)
                .into_iter()
                .filter(|path| path.exists()),
        );
        found.extend(paths.into_iter().map(GatedResource::Instructions));
        found
    }

    /// `.jig/settings.json` as read at decision time, and where it was.
    pub(crate) fn settings(&self) -> (PathBuf, ReadOutcome) {
        (
            self.dir.join(PROJECT_DIR_NAME).join(crate::SETTINGS_FILE),
            self.settings.clone(),
        )
    }
}

/// `path` opened as a directory; `None` when it is missing or not a directory.
fn open_directory(path: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_o_directory())
        .open(path)
        .ok()?;
    file.metadata().ok()?.is_dir().then_some(file)
}

/// `O_DIRECTORY`: the open fails unless the path is a directory.
fn libc_o_directory() -> i32 {
    i32::try_from(rustix::fs::OFlags::DIRECTORY.bits()).unwrap_or(0)
}

/// The path of an open file through this process's descriptor table.
fn through(handle: &std::fs::File) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()))
}
