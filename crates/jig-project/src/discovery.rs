//! Where extensions come from. Discovery only looks at the filesystem; it never executes
//! anything.
//!
//! Sources, in load order, deduplicated by canonical path (the first occurrence stays):
//!
//! 1. `-e/--extension PATH` (repeatable; relative to the current directory) — kept with
//!    `-ne/--no-extensions`;
//! 2. the project's `.jig/extensions/`, then `.jig/tools/` (the same forms; by convention
//!    extensions that offer tools) — only for a [`TrustedProject`];
//! 3. the global `$XDG_CONFIG_HOME/jig/extensions/`;
//! 4. with the user settings' `piExtensions: true`, Pi's directories: a trusted project's
//!    `.pi/extensions/` (after `.jig/tools/`) and `~/.pi/agent/extensions/` (after the global
//!    directory);
//! 5. the user settings' `extensions: [...]`.
//!
//! `-ne/--no-extensions` drops sources 2–5.
//!
//! Inside an extensions directory, one level deep, each entry (names starting with `.` are
//! skipped) is one extension when it is:
//!
//! - an executable file → [`Entry::Executable`];
//! - a directory with `extension.toml` → [`Entry::Manifest`];
//! - a Pi extension (written against Pi's `ExtensionAPI`, run by jig's Node host) →
//!   [`Entry::Pi`]: a `.ts`/`.mts`/`.cts` file, a `.js`/`.mjs` file that is not executable and
//!   has a default export (`export default`), a directory with `package.json` naming its
//!   modules under `pi.extensions`, or a directory whose `index.ts` (or `index.js` with a
//!   default export) is such a module;
//! - a directory with `index.<ext>` for a known runtime → [`Entry::Index`] (`index.py` →
//!   `python3`, `index.js`/`index.mjs`/`index.cjs` → `node`, `index.sh` → `sh`, `index.rb` →
//!   `ruby`, `index.pl` → `perl`; the first that exists in that order).
//!
//! A script with a known suffix that is not executable, and a directory matching no rule, are
//! warnings; other files are ignored. A path given explicitly
//! (`-e` or settings) may also be such a directory itself, a directory of extensions, or a
//! script with a known suffix run by its runtime. An explicit path that does not exist or
//! matches no rule is a load error (`Failed to load extension "<path>": …`, exit 1).

use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::PROJECT_DIR_NAME;
use crate::diagnostics::{DiagnosticKind, Diagnostics, Severity};
use crate::trust::TrustedProject;

/// Pi's project directory, whose `extensions/` holds Pi extensions (discovered when the user
/// settings' `piExtensions` is on, and only for a trusted project).
pub const PI_PROJECT_DIR: &str = ".pi";

/// Pi's user extensions directory under the home directory.
pub fn pi_user_extensions_dir(home: &Path) -> PathBuf {
    home.join(".pi").join("agent").join("extensions")
}

/// The manifest file of a manifest extension.
pub const MANIFEST_FILE: &str = "extension.toml";

/// `index.<suffix>` files and the program that runs them, in order of preference.
pub const INDEX_RUNTIMES: &[(&str, &str)] = &[
    ("py", "python3"),
    ("js", "node"),
    ("mjs", "node"),
    ("cjs", "node"),
    ("sh", "sh"),
    ("rb", "ruby"),
    ("pl", "perl"),
];

/// Where an extension was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `-e/--extension`.
    Cli,
    /// The trusted project's `.jig/extensions/`.
    Project,
    /// `$XDG_CONFIG_HOME/jig/extensions/`.
    Global,
    /// The user settings' `extensions`.
    Settings,
}

/// How an extension is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// An executable file, run directly.
    Executable(PathBuf),
    /// A directory with `extension.toml`, which says how to run it.
    Manifest(PathBuf),
    /// A Pi extension: modules written against Pi's `ExtensionAPI`, run together in one
    /// process by jig's Node host.
    Pi {
        /// The extension's directory (the module's own for a single file).
        dir: PathBuf,
        /// The modules, in the order their manifest lists them.
        modules: Vec<PathBuf>,
    },
    /// A script run by a known runtime.
    Index {
        /// The extension's directory.
        dir: PathBuf,
        /// The script.
        file: PathBuf,
        /// The program that runs it (`python3`, `node`, …).
        runtime: String,
    },
}

/// One extension found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredExtension {
    /// Canonical path of the extension (its file or directory).
    pub path: PathBuf,
    /// Where it was found.
    pub origin: Origin,
    /// How it is started.
    pub entry: Entry,
}

/// What discovery looks at, apart from the project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryInputs {
    /// `-e/--extension` paths, as given.
    pub cli_paths: Vec<PathBuf>,
    /// The directory relative `-e` paths are resolved against (the process's current
    /// directory).
    pub base_dir: PathBuf,
    /// `-ne/--no-extensions`.
    pub no_extensions: bool,
    /// jig's config directory (`$XDG_CONFIG_HOME/jig`), whose `extensions/` is the global set.
    pub config_dir: Option<PathBuf>,
    /// The user settings' `extensions` (absolute).
    pub settings_paths: Vec<PathBuf>,
    /// Pi's user extensions directory (`~/.pi/agent/extensions`), when the user settings'
    /// `piExtensions` is on; a trusted project's `.pi/extensions` is then discovered too.
    pub pi_user_dir: Option<PathBuf>,
}

/// The extensions to load, in order. Pass `project` only once the project is trusted: without
/// it this is the pre-trust set (the extensions that may answer `project_trust`). Problems are
/// added to `diagnostics`.
pub fn discover(
    inputs: &DiscoveryInputs,
    project: Option<&TrustedProject>,
    diagnostics: &mut Diagnostics,
) -> Vec<DiscoveredExtension> {
    let mut found = Found::default();
    for path in &inputs.cli_paths {
        let path = inputs.base_dir.join(path);
        found.explicit(&path, Origin::Cli, diagnostics);
    }
    if inputs.no_extensions {
        return found.list;
    }
    // A project trusted because nothing in it required trust had no extensions: none load,
    // whatever appeared since. Otherwise they are found through the `.jig` handle opened when
    // trust was decided (a swapped `.jig` is not looked at).
    if let Some(project) = project.filter(|project| project.runs_code()) {
        let jig = match project.snapshot() {
            Some(snapshot) => snapshot.jig_dir(),
            None => Some(project.dir().join(PROJECT_DIR_NAME)),
        };
        // `.jig/tools/` holds extensions too (by convention the ones that offer tools).
        for sub in ["extensions", "tools"] {
            if let Some(jig) = &jig {
                found.directory(&jig.join(sub), Origin::Project, diagnostics);
            }
        }
        if inputs.pi_user_dir.is_some() {
            let pi = match project.snapshot() {
                Some(snapshot) => snapshot.pi_dir(),
                None => Some(project.dir().join(PI_PROJECT_DIR)),
            };
            if let Some(pi) = pi {
                found.directory(&pi.join("extensions"), Origin::Project, diagnostics);
            }
        }
    }
    if let Some(config_dir) = &inputs.config_dir {
        found.directory(&config_dir.join("extensions"), Origin::Global, diagnostics);
    }
    if let Some(pi_user_dir) = &inputs.pi_user_dir {
        found.directory(pi_user_dir, Origin::Global, diagnostics);
    }
    for path in &inputs.settings_paths {
        found.explicit(path, Origin::Settings, diagnostics);
    }
    found.list
}

#[derive(Default)]
struct Found {
    list: Vec<DiscoveredExtension>,
}

impl Found {
    fn add(&mut self, path: &Path, origin: Origin, entry: Entry) {
        let Ok(canonical) = std::fs::canonicalize(path) else {
            return;
        };
        if self.list.iter().any(|e| e.path == canonical) {
            return;
        }
        let entry = match entry {
            Entry::Executable(_) => Entry::Executable(canonical.clone()),
            Entry::Manifest(_) => Entry::Manifest(canonical.clone()),
            Entry::Pi { modules, .. } => Entry::Pi {
                dir: if canonical.is_dir() {
                    canonical.clone()
                } else {
                    canonical.parent().unwrap_or(&canonical).to_path_buf()
                },
                modules: modules
                    .into_iter()
                    .map(|module| std::fs::canonicalize(&module).unwrap_or(module))
                    .collect(),
            },
            Entry::Index { file, runtime, .. } => Entry::Index {
                dir: if canonical.is_dir() {
                    canonical.clone()
                } else {
                    canonical.parent().unwrap_or(&canonical).to_path_buf()
                },
                file: std::fs::canonicalize(&file).unwrap_or(file),
                runtime,
            },
        };
        self.list.push(DiscoveredExtension {
            path: canonical,
            origin,
            entry,
        });
    }

    /// An extensions directory: every matching entry, one level deep. A missing directory is
    /// simply empty.
    fn directory(&mut self, dir: &Path, origin: Origin, diagnostics: &mut Diagnostics) {
        // Listed first, so that a missing directory (the usual case) costs one call rather than
        // a probe for every manifest and index name.
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        if let Some(entry) = directory_entry(dir) {
            self.add(dir, origin, entry);
            return;
        }
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .collect();
        paths.sort();
        for path in paths {
            if path.is_dir() {
                match directory_entry(&path) {
                    Some(entry) => self.add(&path, origin, entry),
                    None => diagnostics.push(
                        Severity::Warning,
                        DiagnosticKind::ExtensionLoad,
                        format!(
                        "ignoring {}: a directory in an extensions directory needs {MANIFEST_FILE} or index.<py|js|mjs|cjs|sh|rb|pl>",
                        path.display()
                    ),
                    ),
                }
            } else if let Some(entry) = pi_file_entry(&path) {
                self.add(&path, origin, entry);
            } else if is_executable_file(&path) {
                self.add(&path, origin, Entry::Executable(path.clone()));
            } else if runtime_for(&path).is_some() {
                // A script that looks meant to run, but is not executable: say so rather than
                // leave a guard silently off.
                diagnostics.push(
                    Severity::Warning,
                    DiagnosticKind::ExtensionLoad,
                    format!(
                        "ignoring {}: a file in an extensions directory runs only when executable (chmod +x it, or move it into a directory as index.<suffix>)",
                        path.display()
                    ),
                );
            }
        }
    }

    /// A path named by `-e` or the settings.
    fn explicit(&mut self, path: &Path, origin: Origin, diagnostics: &mut Diagnostics) {
        if !path.exists() {
            let path = lexically_normal(path);
            diagnostics.extension_load_error(
                &path,
                &format!("Extension path does not exist: {}", path.display()),
            );
            return;
        }
        if path.is_dir() {
            if let Some(entry) = directory_entry(path) {
                self.add(path, origin, entry);
            } else {
                let before = self.list.len();
                self.directory(path, origin, diagnostics);
                if self.list.len() == before && !self.has(path) {
                    diagnostics.extension_load_error(
                        path,
                        &format!(
                            "no extension found: expected {MANIFEST_FILE}, index.<py|js|mjs|cjs|sh|rb|pl>, or executable files"
                        ),
                    );
                }
            }
        } else if let Some(entry) = pi_file_entry(path) {
            self.add(path, origin, entry);
        } else if is_executable_file(path) {
            self.add(path, origin, Entry::Executable(path.to_path_buf()));
        } else if let Some(runtime) = runtime_for(path) {
            self.add(
                path,
                origin,
                Entry::Index {
                    dir: PathBuf::new(),
                    file: path.to_path_buf(),
                    runtime: runtime.to_owned(),
                },
            );
        } else {
            diagnostics.extension_load_error(
                path,
                "not executable, and no known runtime for its name (.py, .js, .mjs, .cjs, .sh, .rb, .pl)",
            );
        }
    }

    /// Whether the entries found under `dir` were all duplicates (then it is not "empty").
    fn has(&self, dir: &Path) -> bool {
        std::fs::canonicalize(dir)
            .is_ok_and(|dir| self.list.iter().any(|e| e.path.starts_with(&dir)))
    }
}

/// `path` with `.` and `..` resolved by name (it need not exist): `/w/app/../nope` is
/// `/w/nope`.
fn lexically_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match normal.components().next_back() {
                Some(Component::Normal(_)) => {
                    normal.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => normal.push(component),
            },
            other => normal.push(other),
        }
    }
    normal
}

/// `dir` as one extension: a manifest, else a Pi package or module, else a known `index.*`.
fn directory_entry(dir: &Path) -> Option<Entry> {
    if dir.join(MANIFEST_FILE).is_file() {
        return Some(Entry::Manifest(dir.to_path_buf()));
    }
    if let Some(modules) = pi_package_modules(dir) {
        return Some(Entry::Pi {
            dir: dir.to_path_buf(),
            modules,
        });
    }
    for index in ["index.ts", "index.mts", "index.js", "index.mjs"] {
        let file = dir.join(index);
        if file.is_file() && is_pi_module(&file) {
            return Some(Entry::Pi {
                dir: dir.to_path_buf(),
                modules: vec![file],
            });
        }
    }
    INDEX_RUNTIMES.iter().find_map(|(suffix, runtime)| {
        let file = dir.join(format!("index.{suffix}"));
        file.is_file().then(|| Entry::Index {
            dir: dir.to_path_buf(),
            file,
            runtime: (*runtime).to_owned(),
        })
    })
}

/// Suffixes of TypeScript modules, which are always Pi extensions.
const PI_TYPESCRIPT: &[&str] = &["ts", "mts", "cts"];

/// How much of a JavaScript file is looked at for a default export.
const PI_SNIFF_BYTES: u64 = 256 * 1024;

/// Whether `file` is a module written against Pi's `ExtensionAPI`: TypeScript, or JavaScript
/// that is not executable and has a default export. (An executable script, or one without a
/// default export, speaks jig's own protocol on stdin.)
fn is_pi_module(file: &Path) -> bool {
    let Some(suffix) = file.extension().and_then(|s| s.to_str()) else {
        return false;
    };
    if PI_TYPESCRIPT.contains(&suffix) {
        return std::fs::metadata(file).is_ok_and(|m| m.is_file());
    }
    if !matches!(suffix, "js" | "mjs") || is_executable_file(file) {
        return false;
    }
    let Ok(handle) = std::fs::File::open(file) else {
        return false;
    };
    if !handle.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut text = String::new();
    if handle
        .take(PI_SNIFF_BYTES)
        .read_to_string(&mut text)
        .is_err()
    {
        return false;
    }
    text.contains("export default")
}

/// A file that is a Pi module, as a one-module Pi extension.
fn pi_file_entry(path: &Path) -> Option<Entry> {
    is_pi_module(path).then(|| Entry::Pi {
        dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
        modules: vec![path.to_path_buf()],
    })
}

/// The modules a directory's `package.json` lists under `pi.extensions` (paths relative to
/// the directory), when it has such a manifest. A listed directory stands for its `index.ts`
/// or `index.js`.
fn pi_package_modules(dir: &Path) -> Option<Vec<PathBuf>> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    let listed = manifest.get("pi")?.get("extensions")?.as_array()?;
    let modules: Vec<PathBuf> = listed
        .iter()
        .filter_map(serde_json::Value::as_str)
        .map(|relative| {
            let path = dir.join(relative);
            if path.is_dir() {
                ["index.ts", "index.js", "index.mjs"]
                    .iter()
                    .map(|index| path.join(index))
                    .find(|file| file.is_file())
                    .unwrap_or(path)
            } else {
                path
            }
        })
        .collect();
    (!modules.is_empty()).then_some(modules)
}

/// The runtime for a script by its suffix.
fn runtime_for(path: &Path) -> Option<&'static str> {
    let suffix = path.extension()?.to_str()?;
    INDEX_RUNTIMES
        .iter()
        .find(|(known, _)| *known == suffix)
        .map(|(_, runtime)| *runtime)
}

/// A regular file (through symlinks) with an execute bit.
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_made_normal_by_name() {
        for (path, normal) in [
            ("/w/app/../nope", "/w/nope"),
            ("/w/./a/b/../../c", "/w/c"),
            ("/../x", "/x"),
            ("a/../../x", "../x"),
            ("a/..", ""),
        ] {
            assert_eq!(
                lexically_normal(Path::new(path)),
                Path::new(normal),
                "{path}"
            );
        }
    }
}
