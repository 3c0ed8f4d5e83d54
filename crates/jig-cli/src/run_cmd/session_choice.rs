//! Which session `jig run` uses: `--session FILE|ID`, `--continue`, `--no-session` or a new one.

use std::path::Path;

use jig_agent::{Session, SessionStore};

use crate::exit::CliError;

/// The chosen session.
pub(super) struct Choice {
    pub(super) session: Session,
}

fn store() -> Result<SessionStore, CliError> {
    SessionStore::from_env().ok_or_else(|| {
        CliError::Failure(anyhow::anyhow!(
            "cannot find a data directory for sessions: set XDG_DATA_HOME or HOME, or pass --no-session"
        ))
    })
}

fn open_file(path: &Path) -> Result<Session, CliError> {
    Session::open(path).map_err(|error| CliError::Failure(error.into()))
}

pub(super) fn open(
    cwd: &Path,
    session: Option<&str>,
    continue_session: bool,
    no_session: bool,
) -> Result<Choice, CliError> {
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
                .map_err(|error| CliError::usage(format!("--session {argument}: {error}")))?;
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
        if let Some(path) = store.find(cwd, argument) {
            return Ok(Choice {
                session: open_file(&path)?,
            });
        }
        return Err(CliError::usage(format!(
            "--session {argument}: no session has this id or id prefix (`jig sessions` lists this directory's sessions; to start a new session in a file, pass a path such as ./{argument}.jsonl)"
        )));
    }
    let store = store()?;
    if continue_session && let Some(path) = store.latest(cwd) {
        return Ok(Choice {
            session: open_file(&path)?,
        });
    }
    Ok(Choice {
        session: Session::create_in(&store.dir_for(cwd), cwd),
    })
}
