//! Which session `jig run` uses: `--session FILE|ID`, `--continue`, `--no-session` or a new one.

use std::path::Path;

use jig_agent::{Session, SessionStore};

use crate::StartError;

/// The chosen session.
#[derive(Debug)]
pub struct Choice {
    /// The session, new or resumed.
    pub session: Session,
}

fn store() -> Result<SessionStore, StartError> {
    SessionStore::from_env().ok_or_else(|| {
        StartError::Failure(anyhow::anyhow!(
            "cannot find a data directory for sessions: set XDG_DATA_HOME or HOME, or pass --no-session"
        ))
    })
}

/// The project's sessions moved out of the directory earlier versions named it by, and a
/// warning for each file in its directory that belongs to another directory.
pub fn tidy(store: &SessionStore, key: &Path, cwd: &Path) {
    if let Err(error) = store.migrate(key, cwd) {
        crate::warn(&format!(
            "the sessions of {} could not be moved from {} to {}: {error}",
            key.display(),
            store.legacy_dir_for(key).display(),
            store.dir_for(key).display()
        ));
    }
    for (path, other) in store.foreign(key, cwd) {
        crate::warn(&format!(
            "ignoring the session {}: it was created in {}, not {}",
            path.display(),
            other.display(),
            cwd.display()
        ));
    }
}

fn open_file(path: &Path) -> Result<Session, StartError> {
    Session::open(path).map_err(|error| StartError::Failure(error.into()))
}

/// `cwd` is the tools' working directory (recorded in a new session); `key` names the
/// project in the store (`ProjectPlace::key`: the directory itself, or for a remote project
/// its URL), so a remote project and a directory of the same path on this machine have
/// separate sessions.
pub fn open(
    cwd: &Path,
    key: &Path,
    session: Option<&str>,
    continue_session: bool,
    no_session: bool,
) -> Result<Choice, StartError> {
    if no_session {
        return Ok(Choice {
            session: Session::in_memory(cwd),
        });
    }
    if let Some(argument) = session {
        let looks_like_path = argument.contains('/')
            || argument.contains('\\')
            || Path::new(argument)
                .extension()
                .is_some_and(|ext| ext.eq_ignore_ascii_case("jsonl"));
        if looks_like_path {
            let path = std::path::absolute(argument)
                .map_err(|error| StartError::usage(format!("--session {argument}: {error}")))?;
            if path.exists() {
                return Ok(Choice {
                    session: open_file(&path)?,
                });
            }
            return Ok(Choice {
                session: Session::create_at(path, cwd, None),
            });
        }
        let store = store()?;
        tidy(&store, key, cwd);
        if let Some(path) = store.find(key, argument) {
            return Ok(Choice {
                session: open_file(&path)?,
            });
        }
        return Err(StartError::usage(format!(
            "--session {argument}: no session has this id or id prefix (`jig sessions` lists this directory's sessions; to start a new session in a file, pass a path such as ./{argument}.jsonl)"
        )));
    }
    let store = store()?;
    tidy(&store, key, cwd);
    if continue_session && let Some(path) = store.latest(key, cwd) {
        return Ok(Choice {
            session: open_file(&path)?,
        });
    }
    Ok(Choice {
        session: Session::create_in(&store.dir_for(key), cwd),
    })
}
