//! The saved trust decisions: `$XDG_CONFIG_HOME/jig/trust.json`.
//!
//! One JSON object; each key is a canonical absolute directory, each value `true` (trusted),
//! `false` (untrusted) or `null` (no decision). Keys are written sorted, indented by two spaces,
//! with a trailing newline:
//!
//! ```json
//! {
//!   "/home/me/src/app": true,
//!   "/home/me/src/untrusted": false
//! }
//! ```
//!
//! A lookup walks from the directory up to the filesystem root; the nearest directory with a
//! decision wins, so trusting `~/src` trusts every project below it unless one says otherwise.
//!
//! Every write is a read-modify-write under an exclusive `flock` on `trust.json.lock` (next to
//! the store), and replaces the file atomically (a temporary file in the same directory, synced,
//! renamed over it): concurrent writers never lose each other's decisions and a reader never sees
//! a half-written file, so reads take no lock.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The store's file name in the config directory.
pub const STORE_FILE: &str = "trust.json";
/// The lock file's name in the config directory.
pub const LOCK_FILE: &str = "trust.json.lock";

/// How long a writer waits for the lock before giving up.
const LOCK_TIMEOUT: Duration = Duration::from_secs(5);
/// The pause between two attempts to take the lock.
const LOCK_RETRY: Duration = Duration::from_millis(10);

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustStoreError {
    /// The file could not be read or is not JSON.
    #[error("Failed to read trust store {}: {message}", path.display())]
    Read {
        /// The store.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The file is JSON but not the store's shape.
    #[error("Invalid trust store {}: {message}", path.display())]
    Invalid {
        /// The store.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The lock could not be taken in time, or the lock file could not be opened.
    #[error("Failed to acquire trust store lock {}: {message}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The new store could not be written.
    #[error("Failed to write trust store {}: {source}", path.display())]
    Write {
        /// The store.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// A saved decision and the directory it was saved for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDecision {
    /// The directory whose key held the decision (the project or an ancestor).
    pub dir: PathBuf,
    /// Trusted or not.
    pub trusted: bool,
}

/// The trust store file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
    lock_path: PathBuf,
}

impl TrustStore {
    /// The store `<config_dir>/trust.json` (the file need not exist).
    pub fn in_config_dir(config_dir: &Path) -> Self {
        Self {
            path: config_dir.join(STORE_FILE),
            lock_path: config_dir.join(LOCK_FILE),
        }
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The nearest saved decision for `dir` (canonical, absolute): `dir`'s own, else its
    /// parent's, and so on up to the root. `None` when no ancestor has one or the store does not
    /// exist.
    ///
    /// Keys are compared in their normal form ([`normal_keys`]): a key written by hand as
    /// `/work/app/`, `//work//app`, `/work/x/../app` or through a symlink names the same
    /// directory as `/work/app`. When several spellings hold a decision, "do not trust" wins,
    /// and a "do not trust" applies under every form of its key (as written, lexically normal,
    /// and canonical).
    pub fn lookup(&self, dir: &Path) -> Result<Option<StoredDecision>, TrustStoreError> {
        let mut decisions: BTreeMap<String, Option<bool>> = BTreeMap::new();
        for (key, decision) in self.read()? {
            let forms = normal_keys(&key);
            let forms = if decision == Some(false) {
                forms
            } else {
                // A trust (or no decision) counts for the directory the key names now.
                forms.into_iter().last().into_iter().collect()
            };
            for form in forms {
                let slot = decisions.entry(form).or_insert(decision);
                if decision == Some(false) {
                    *slot = Some(false);
                } else if slot.is_none() {
                    *slot = decision;
                }
            }
        }
        let dir = normal_keys(&dir.to_string_lossy())
            .pop()
            .map_or_else(|| dir.to_path_buf(), PathBuf::from);
        Ok(dir.ancestors().find_map(|ancestor| {
            let key = ancestor.to_string_lossy();
            decisions
                .get(key.as_ref())
                .copied()
                .flatten()
                .map(|trusted| StoredDecision {
                    dir: ancestor.to_path_buf(),
                    trusted,
                })
        }))
    }

    /// Saves `decision` for `dir` (`None` removes it), replacing any other spelling of the same
    /// key (`/work/app/`).
    pub fn set(&self, dir: &Path, decision: Option<bool>) -> Result<(), TrustStoreError> {
        self.set_many(&[(dir.to_path_buf(), decision)])
    }

    /// Applies several updates in one locked read-modify-write; `None` removes a key.
    pub fn set_many(&self, updates: &[(PathBuf, Option<bool>)]) -> Result<(), TrustStoreError> {
        let dir = self.path.parent().unwrap_or_else(|| Path::new("."));
        // The user's alone: a directory jig creates is 0700 (the file itself is written 0600,
        // as every temp file).
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(dir)
            .map_err(|source| TrustStoreError::Write {
                path: self.path.clone(),
                source,
            })?;
        let _lock = self.lock()?;
        let mut decisions = self.read()?;
        for (key, decision) in updates {
            let forms = normal_keys(&key.to_string_lossy());
            let Some(key) = forms.last().cloned() else {
                continue;
            };
            // Every spelling of the directory goes: the saved choice is the one that counts.
            decisions
                .retain(|other, _| !normal_keys(other).iter().any(|form| forms.contains(form)));
            match decision {
                Some(trusted) => {
                    decisions.insert(key, Some(*trusted));
                }
                None => {
                    decisions.remove(&key);
                }
            }
        }
        self.write(dir, &decisions)
    }

    /// The whole store; empty when the file does not exist.
    pub fn read(&self) -> Result<BTreeMap<String, Option<bool>>, TrustStoreError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(BTreeMap::new());
            }
            Err(error) => {
                return Err(TrustStoreError::Read {
                    path: self.path.clone(),
                    message: error.to_string(),
                });
            }
        };
        let value: Value = serde_json::from_str(&text).map_err(|error| TrustStoreError::Read {
            path: self.path.clone(),
            message: error.to_string(),
        })?;
        let Value::Object(object) = value else {
            return Err(TrustStoreError::Invalid {
                path: self.path.clone(),
                message: "expected an object".to_owned(),
            });
        };
        object
            .into_iter()
            .map(|(key, value)| match value {
                Value::Bool(trusted) => Ok((key, Some(trusted))),
                Value::Null => Ok((key, None)),
                _ => Err(TrustStoreError::Invalid {
                    path: self.path.clone(),
                    message: format!("value for \"{key}\" must be true, false, or null"),
                }),
            })
            .collect()
    }

    fn write(
        &self,
        dir: &Path,
        decisions: &BTreeMap<String, Option<bool>>,
    ) -> Result<(), TrustStoreError> {
        let error = |source| TrustStoreError::Write {
            path: self.path.clone(),
            source,
        };
        let mut text =
            serde_json::to_string_pretty(decisions).map_err(|e| error(std::io::Error::other(e)))?;
        text.push('\n');
        let mut temp = tempfile::Builder::new()
            .prefix(".trust.json.")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(error)?;
        temp.write_all(text.as_bytes()).map_err(error)?;
        temp.as_file().sync_all().map_err(error)?;
        temp.persist(&self.path).map_err(|e| error(e.error))?;
        Ok(())
    }

    /// Takes the exclusive lock, retrying for [`LOCK_TIMEOUT`]; released when the file closes.
    fn lock(&self) -> Result<std::fs::File, TrustStoreError> {
        let lock_error = |message: String| TrustStoreError::Lock {
            path: self.lock_path.clone(),
            message,
        };
        let file = std::os::unix::fs::OpenOptionsExt::mode(
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true),
            0o600,
        )
        .open(&self.lock_path)
        .map_err(|e| lock_error(e.to_string()))?;
        let started = Instant::now();
        loop {
            match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(file),
                Err(errno) if errno == rustix::io::Errno::WOULDBLOCK => {
                    if started.elapsed() >= LOCK_TIMEOUT {
                        return Err(lock_error(format!(
                            "still held by another jig after {} s",
                            LOCK_TIMEOUT.as_secs()
                        )));
                    }
                    std::thread::sleep(LOCK_RETRY);
                }
                Err(errno) if errno == rustix::io::Errno::INTR => {}
                Err(errno) => return Err(lock_error(errno.to_string())),
            }
        }
    }
}

/// The normal forms of a store key, the last one the directory it names now: for an absolute
/// path, the path with `.` and empty components dropped and `..` applied lexically
/// (`//work//x/../app/` → `/work/app`), then its canonical path (every symlink and `..`
/// resolved on the file system) when it exists and differs. Other keys (a remote project's URL)
/// only lose trailing slashes. Both forms are kept so that a revocation holds whichever way the
/// path resolves.
pub fn normal_keys(key: &str) -> Vec<String> {
    if !key.starts_with('/') {
        let trimmed = key.trim_end_matches('/');
        return vec![if trimmed.is_empty() {
            key.to_owned()
        } else {
            trimmed.to_owned()
        }];
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in key.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    let lexical = format!("/{}", parts.join("/"));
    let mut forms = vec![lexical.clone()];
    if let Ok(canonical) = std::fs::canonicalize(key)
        && let Some(canonical) = canonical.to_str()
        && canonical != lexical
    {
        forms.push(canonical.to_owned());
    }
    forms
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_store_is_0600_in_a_0700_directory() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("jig");
        let store = TrustStore::in_config_dir(&config);
        store.set(Path::new("/a"), Some(true)).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(store.path()), 0o600);
        assert_eq!(mode(store.path().parent().unwrap()), 0o700);
    }

    #[test]
    fn the_nearest_ancestor_with_a_decision_wins() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::in_config_dir(dir.path());
        assert_eq!(store.lookup(Path::new("/a/b/c")).unwrap(), None);
        store.set(Path::new("/a"), Some(true)).unwrap();
        store.set(Path::new("/a/b"), Some(false)).unwrap();
        assert_eq!(
            store.lookup(Path::new("/a/b/c")).unwrap(),
            Some(StoredDecision {
                dir: "/a/b".into(),
                trusted: false
            })
        );
        assert_eq!(
            store.lookup(Path::new("/a/x")).unwrap(),
            Some(StoredDecision {
                dir: "/a".into(),
                trusted: true
            })
        );
        // `/a/bb` is not below `/a/b`: components, not string prefixes.
        assert_eq!(
            store.lookup(Path::new("/a/bb")).unwrap().unwrap().dir,
            Path::new("/a")
        );
        store.set(Path::new("/a/b"), None).unwrap();
        assert!(store.lookup(Path::new("/a/b/c")).unwrap().unwrap().trusted);
        assert_eq!(store.lookup(Path::new("/z")).unwrap(), None);
    }

    #[test]
    fn a_key_written_with_a_trailing_slash_names_the_same_directory() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::in_config_dir(dir.path());
        std::fs::write(
            store.path(),
            r#"{"/work": true, "/work/app/": false, "/work/lib": true, "/work/lib//": false, "/work/docs/": true}"#,
        )
        .unwrap();
        let trusted = |path: &str| {
            store
                .lookup(Path::new(path))
                .unwrap()
                .map(|d| (d.dir.display().to_string(), d.trusted))
        };
        assert_eq!(trusted("/work/app/src"), Some(("/work/app".into(), false)));
        assert_eq!(trusted("/work/lib"), Some(("/work/lib".into(), false)));
        assert_eq!(trusted("/work/docs"), Some(("/work/docs".into(), true)));
        assert_eq!(trusted("/work/other"), Some(("/work".into(), true)));
        // Saving a decision replaces every spelling of the key, so the new choice counts.
        store.set(Path::new("/work/lib"), Some(true)).unwrap();
        assert_eq!(trusted("/work/lib"), Some(("/work/lib".into(), true)));
        store.set(Path::new("/work/app"), None).unwrap();
        assert_eq!(trusted("/work/app/src"), Some(("/work".into(), true)));
        let saved = store.read().unwrap();
        assert!(!saved.contains_key("/work/lib//") && !saved.contains_key("/work/app/"));
    }

    #[test]
    fn a_revocation_spelled_with_dot_dot_doubled_slashes_or_a_symlink_revokes() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let project = root.join("p");
        std::fs::create_dir_all(root.join("x")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        std::os::unix::fs::symlink(&project, root.join("link")).unwrap();
        let store = TrustStore::in_config_dir(&root.join("config"));
        let r = root.display().to_string();
        for revocation in [
            format!("{r}/x/../p"),
            format!("/{r}//p"),
            format!("{r}//p//"),
            format!("{r}/./p/."),
            format!("{r}/link"),
            format!("{r}/missing/../p"),
        ] {
            std::fs::create_dir_all(root.join("config")).unwrap();
            std::fs::write(
                store.path(),
                serde_json::json!({ r.clone(): true, revocation.clone(): false }).to_string(),
            )
            .unwrap();
            let found = store.lookup(&project).unwrap();
            assert_eq!(
                found.map(|d| d.trusted),
                Some(false),
                "the key `{revocation}` revokes {}",
                project.display()
            );
            // A lookup through another spelling of the project finds the same decision.
            assert_eq!(
                store
                    .lookup(Path::new(&format!("{r}//x/../p/")))
                    .unwrap()
                    .map(|d| d.trusted),
                Some(false),
                "{revocation}"
            );
            // Saving a decision replaces every spelling.
            store.set(&project, Some(true)).unwrap();
            let saved = store.read().unwrap();
            assert!(!saved.contains_key(&revocation), "{saved:?}");
            assert_eq!(saved.get(&project.display().to_string()), Some(&Some(true)));
        }
        // A key saved through a symlink is saved as the directory it names.
        store.set(&root.join("link"), Some(false)).unwrap();
        assert!(
            store
                .read()
                .unwrap()
                .contains_key(&project.display().to_string())
        );
        assert_eq!(normal_keys("ssh://box/srv/repo/"), ["ssh://box/srv/repo"]);
        assert_eq!(normal_keys("/"), ["/"]);
        assert_eq!(normal_keys("//a//b/../c/"), ["/a/c"]);
    }

    #[test]
    fn null_means_no_decision_and_the_format_is_sorted_and_indented() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::in_config_dir(dir.path());
        std::fs::write(store.path(), r#"{"/p": null, "/": true}"#).unwrap();
        assert_eq!(
            store.lookup(Path::new("/p")).unwrap().unwrap().dir,
            Path::new("/")
        );
        store.set(Path::new("/b"), Some(false)).unwrap();
        assert_eq!(
            std::fs::read_to_string(store.path()).unwrap(),
            "{\n  \"/\": true,\n  \"/b\": false,\n  \"/p\": null\n}\n"
        );
    }

    #[test]
    fn a_damaged_store_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::in_config_dir(dir.path());
        let shown = |error: TrustStoreError| {
            error
                .to_string()
                .replace(&dir.path().display().to_string(), "[DIR]")
        };
        std::fs::write(store.path(), "[1]").unwrap();
        assert_eq!(
            shown(store.lookup(Path::new("/")).unwrap_err()),
            "Invalid trust store [DIR]/trust.json: expected an object"
        );
        std::fs::write(store.path(), r#"{"/x": "yes"}"#).unwrap();
        assert_eq!(
            shown(store.lookup(Path::new("/")).unwrap_err()),
            "Invalid trust store [DIR]/trust.json: value for \"/x\" must be true, false, or null"
        );
        std::fs::write(store.path(), "{").unwrap();
        assert!(
            shown(store.set(Path::new("/"), Some(true)).unwrap_err())
                .starts_with("Failed to read trust store [DIR]/trust.json: EOF")
        );
    }

    #[test]
    fn a_held_lock_makes_a_writer_wait() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::in_config_dir(dir.path());
        let held = store.lock().unwrap();
        let writer = {
            let store = store.clone();
            std::thread::spawn(move || store.set(Path::new("/w"), Some(true)))
        };
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(
            store.lookup(Path::new("/w")).unwrap(),
            None,
            "the writer waited"
        );
        drop(held);
        writer.join().unwrap().unwrap();
        assert!(store.lookup(Path::new("/w")).unwrap().unwrap().trusted);
    }
}
