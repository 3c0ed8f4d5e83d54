//! `jig sessions`: the saved sessions of a working directory, newest first (the first one is
//! what `jig run --continue` resumes); with `--env URL`, of that remote project (stored under
//! its URL, apart from a directory of the same path on this machine).

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use jig_agent::{Session, SessionStore};
use jig_protocol::Message;

use crate::CliResult;
use crate::exit::CliError;

/// Arguments of `jig sessions`.
#[derive(Debug, Args)]
pub(crate) struct SessionsArgs {
    /// The working directory whose sessions are listed [default: the current directory].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// List the sessions `jig run --env URL` saved for the project there (`--cwd` taken far
    /// side); connects to find the project's directory.
    #[arg(long = "env", value_name = "URL")]
    env: Option<String>,
}

/// The project's key in the session store and how to name it: the canonical directory, or
/// with `--env` the remote project's URL (`ProjectPlace::key`); and the directory its
/// sessions were created in.
fn project_key(args: &SessionsArgs) -> Result<(PathBuf, PathBuf), CliError> {
    let Some(url) = &args.env else {
        let cwd = match &args.cwd {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()
                .context("cannot read the current directory")
                .map_err(CliError::Failure)?,
        };
        let dir = std::fs::canonicalize(&cwd)
            .map_err(|error| CliError::usage(format!("--cwd {}: {error}", cwd.display())))?;
        return Ok((dir.clone(), dir));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(CliError::Failure)?;
    runtime.block_on(async {
        let flags = jig_session::workspace::EnvOptions {
            url: Some(url.clone()),
            audit: None,
            audit_best_effort: false,
        };
        let (env, cwd) = jig_session::workspace::open_place(
            &flags,
            || jig_session::workspace::open_env(false),
            args.cwd.as_deref(),
        )
        .await?;
        let dir =
            jig_session::workspace::directory_arg(env.as_ref(), "--cwd", cwd.as_deref()).await;
        let key = dir.map(|dir| {
            (
                jig_session::workspace::project_place(&flags, &env, &dir).key(),
                dir,
            )
        });
        env.cleanup().await;
        key
    })
}

/// One listed session.
struct Row {
    id: String,
    created: String,
    turns: usize,
    first_prompt: String,
}

/// The first line of `text`, at most `limit` characters (an ellipsis marks a cut).
fn one_line(text: &str, limit: usize) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut cut: String = line.chars().take(limit).collect();
    if cut.len() < line.len() || text.trim().lines().nth(1).is_some() {
        cut.push('…');
    }
    cut
}

fn row(session: &Session) -> Row {
    let messages = session.messages();
    let first_prompt = messages
        .iter()
        .find_map(|message| match message {
            Message::User(user) => Some(
                user.content
                    .iter()
                    .filter_map(|block| block.as_text())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        })
        .unwrap_or_default();
    let created = session.header().timestamp.clone();
    // RFC 3339 → `YYYY-MM-DD HH:MM` (UTC).
    let created = match created.get(..16) {
        Some(minutes) => format!("{} UTC", minutes.replacen('T', " ", 1)),
        None => created,
    };
    Row {
        id: session.id().to_owned(),
        created,
        turns: messages
            .iter()
            .filter(|message| matches!(message, Message::Assistant(_)))
            .count(),
        first_prompt: one_line(&first_prompt, 60),
    }
}

/// Runs `jig sessions`.
pub(crate) fn run_sessions(args: &SessionsArgs) -> CliResult {
    let (key, cwd) = project_key(args)?;
    let store = SessionStore::from_env().ok_or_else(|| {
        CliError::Failure(anyhow::anyhow!(
            "cannot find a data directory for sessions: set XDG_DATA_HOME or HOME"
        ))
    })?;
    let mut rows = Vec::new();
    let mut damaged = Vec::new();
    jig_session::session_choice::tidy(&store, &key, &cwd);
    for path in store.sessions(&key, &cwd) {
        match Session::open(&path) {
            Ok(session) => rows.push(row(&session)),
            Err(error) => damaged.push(format!("{error}")),
        }
    }
    let mut stdout = io::stdout().lock();
    let mut stderr = io::stderr().lock();
    if rows.is_empty() {
        let _ = writeln!(stderr, "jig: no sessions for {}", key.display());
    } else {
        let width = rows
            .iter()
            .map(|r| r.id.chars().count())
            .max()
            .unwrap_or(2)
            .max(2);
        let mut text = format!(
            "{:<width$}  {:<20}  {:>5}  FIRST PROMPT\n",
            "ID", "CREATED", "TURNS"
        );
        for r in &rows {
            let _ = writeln!(
                text,
                "{:<width$}  {:<20}  {:>5}  {}",
                r.id, r.created, r.turns, r.first_prompt
            );
        }
        if let Err(error) = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            return Err(CliError::Failure(
                anyhow::Error::new(error).context("cannot write the list"),
            ));
        }
    }
    for message in damaged {
        let _ = writeln!(stderr, "jig: warning: skipped {message}");
    }
    Ok(ExitCode::SUCCESS)
}
