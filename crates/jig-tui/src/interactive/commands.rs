//! Slash commands of the interactive session.

use std::fmt::Write as _;
use std::io;

use crate::view::{Line, Style};
use jig_agent::Session;
use jig_agent::compaction::CompactionReason;
use jig_extensions::SessionRequest;
use jig_llm::ThinkingLevel;
use jig_protocol::Message;
use jig_session::policy::PermissionMode;
use reedline::Signal;
use tokio_util::sync::CancellationToken;

use super::{App, COMMANDS};
use jig_session::permissions;

/// Whether the session goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    Continue,
    Quit,
}

impl App {
    /// Runs one slash command.
    pub(super) fn command(&mut self, input: &str) -> io::Result<Flow> {
        let mut words = input.split_whitespace();
        let name = words.next().unwrap_or("");
        let argument = words.collect::<Vec<_>>().join(" ");
        let argument = argument.trim();
        // For extensions: the text after the name as typed.
        let raw = input.trim_start().get(name.len()..).unwrap_or("").trim();
        match name {
            "/help" => {
                let mut text = String::from("commands:\n");
                for (name, help) in COMMANDS {
                    let _ = writeln!(text, "  {name:<13} {help}");
                }
                let extension_commands = self.runner.commands();
                if !extension_commands.is_empty() {
                    text.push_str("from extensions:\n");
                    for command in extension_commands {
                        let name = format!("/{}", command.name);
                        let help = command.description.unwrap_or_default();
                        let _ = writeln!(text, "  {name:<13} {help}");
                    }
                }
                let offered = self.knowledge.commands();
                if !offered.is_empty() {
                    text.push_str("skills and prompt templates:\n");
                    for (usage, help) in offered {
                        let _ = writeln!(text, "  {usage:<13} {help}");
                    }
                }
                text.push_str(
                    "shell: !CMD runs CMD in the workspace and shows its output (not sent to the model); !!CMD also sends it\n",
                );
                text.push_str(
                    "keys: Enter sends · Alt-Enter or Ctrl-J new line · Tab completes /commands and @paths\n      Ctrl-P next model of the provider · Esc or Ctrl-C interrupts a turn · typing during a turn queues the next message",
                );
                self.note(&text);
            }
            "/quit" | "/exit" => return Ok(Flow::Quit),
            "/model" => self.model(argument)?,
            "/thinking" => self.thinking(argument),
            "/new" => self.new_session(),
            "/resume" => self.resume()?,
            "/compact" => self.compact()?,
            "/tools" => {
                let chosen = self.host.chosen_tools();
                let lines = self
                    .config
                    .tools
                    .iter()
                    .map(|tool| {
                        let off = chosen
                            .as_ref()
                            .is_some_and(|active| !active.iter().any(|name| name == tool.name()));
                        format!(
                            "  {:<6} {:?}: {}{}",
                            tool.name(),
                            tool.effects(),
                            tool.title(),
                            if off {
                                " (turned off by an extension)"
                            } else {
                                ""
                            }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                self.note(&format!("tools:\n{lines}"));
            }
            "/index" => self.note(&index_report(self.indexes.as_deref())),
            "/permissions" => self.permissions(argument),
            "/trust" => self.trust()?,
            "/export" => self.export(argument),
            _ => return Ok(self.extension_command(name, raw)),
        }
        Ok(Flow::Continue)
    }

    /// An extension's command: `/name args` sends the extension a `command` request; its reply
    /// text is shown. A new session or the end it asked for (`session/new`, `session/quit`)
    /// follows once it has finished.
    fn extension_command(&mut self, name: &str, argument: &str) -> Flow {
        let bare = name.trim_start_matches('/');
        if !self.runner.commands().iter().any(|c| c.name == bare) {
            self.say(&[Line::styled(
                format!("unknown command {name}: /help lists them"),
                Style::Error,
            )]);
            return Flow::Continue;
        }
        let runner = std::sync::Arc::clone(&self.runner);
        let (name, args) = (bare.to_owned(), argument.to_owned());
        // Through the terminal loop: the command may ask the user (`ui/*`).
        let cancel = CancellationToken::new();
        let ran = self.drive(
            &cancel,
            async move { runner.run_command(&name, &args).await },
        );
        let ran = match ran {
            Ok(ran) => ran,
            Err(error) => {
                self.say(&[Line::styled(error.to_string(), Style::Error)]);
                return Flow::Continue;
            }
        };
        match ran {
            Ok(Some(text)) => self.say(
                &text
                    .lines()
                    .map(|line| Line::plain(line.to_owned()))
                    .collect::<Vec<_>>(),
            ),
            Ok(None) => {}
            Err(error) => self.say(&[Line::styled(error.to_string(), Style::Error)]),
        }
        match self.host.take_session_request() {
            Some(SessionRequest::New) => {
                self.new_session();
                Flow::Continue
            }
            Some(SessionRequest::Quit) => Flow::Quit,
            None => Flow::Continue,
        }
    }

    fn thinking(&mut self, argument: &str) {
        if argument.is_empty() {
            let text = format!("thinking: {}", thinking_name(self.config.thinking));
            self.note(&text);
            return;
        }
        let Ok(level) = argument.parse::<ThinkingLevel>() else {
            self.say(&[Line::styled(
                format!("unknown level `{argument}`: off, low, medium or high"),
                Style::Error,
            )]);
            return;
        };
        self.config.thinking = level;
        self.view.status.thinking = thinking_shown(level);
        let written = self.printer.session().append_thinking_level(level);
        self.report_session_error(written);
        self.reload();
        self.note(&format!("thinking: {}", thinking_name(level)));
    }

    pub(super) fn report_session_error(&mut self, written: Result<(), jig_agent::SessionError>) {
        if let Err(error) = written {
            self.say(&[Line::styled(
                format!("warning: the session could not be saved: {error}"),
                Style::Error,
            )]);
        }
    }

    /// A new agent on the current session (after a model or thinking change).
    pub(super) fn reload(&mut self) {
        let path = self
            .printer
            .session()
            .path()
            .map(std::path::Path::to_path_buf);
        let session = match path.filter(|p| p.exists()) {
            Some(path) => Session::open(&path).ok(),
            None => None,
        };
        match session {
            Some(session) => self.install(session),
            None => {
                // Not written yet (no reply so far): only the configuration changes.
                if let Some(agent) = self.agent.take() {
                    let mut config = self.config.clone();
                    config.tool_context.session_env = self.printer.session().tool_variables(
                        &self.provider_name,
                        &config.model,
                        config.thinking,
                    );
                    self.agent = Some(jig_agent::Agent::with_messages(
                        config,
                        agent.messages().to_vec(),
                    ));
                }
            }
        }
        // The model or thinking level `getSessionInfo` answers.
        self.sync_host();
    }

    fn new_session(&mut self) {
        let cwd = self.cwd();
        let mut session = match (&self.store, self.no_session) {
            (Some(store), false) => Session::create_in(&store.dir_for(&self.session_key), &cwd),
            _ => Session::in_memory(&cwd),
        };
        let written = session
            .append_model_change(
                &self.provider_name,
                &self.config.model,
                self.custom_base_url.as_deref(),
                self.custom_endpoint.clone(),
            )
            .and_then(|()| session.append_thinking_level(self.config.thinking));
        self.report_session_error(written);
        self.install(session);
        self.note("new session");
    }

    fn resume(&mut self) -> io::Result<()> {
        let Some(store) = &self.store else {
            self.note("no data directory for sessions (set XDG_DATA_HOME or HOME)");
            return Ok(());
        };
        let current = self
            .printer
            .session()
            .path()
            .map(std::path::Path::to_path_buf);
        let cwd = self.cwd();
        let sessions: Vec<(std::path::PathBuf, String)> = store
            .sessions(&self.session_key, &cwd)
            .into_iter()
            .filter(|path| Some(path) != current.as_ref())
            .filter_map(|path| {
                let session = Session::open(&path).ok()?;
                let label = describe(&session);
                Some((path, label))
            })
            .take(9)
            .collect();
        if sessions.is_empty() {
            self.note("no other session in this directory");
            return Ok(());
        }
        let mut lines = vec![Line::styled(
            "sessions of this directory, newest first:",
            Style::Dim,
        )];
        for (index, (_, label)) in sessions.iter().enumerate() {
            lines.push(Line::plain(format!("  {}  {label}", index + 1)).truncated(200));
        }
        self.say(&lines);
        let prompt = super::editor::StatusPrompt {
            status: format!("resume which? 1-{} (Enter cancels)", sessions.len()),
            indicator: "# ",
        };
        let choice = match self.editor.read_line(&prompt)? {
            Signal::Success(text) => text.trim().parse::<usize>().ok(),
            _ => None,
        };
        let Some((path, _)) = choice
            .and_then(|n| n.checked_sub(1))
            .and_then(|n| sessions.get(n))
        else {
            self.note("not resumed");
            return Ok(());
        };
        match Session::open(path) {
            Ok(session) => {
                let id = session.id().to_owned();
                self.install(session);
                self.note(&format!("resumed session {id}"));
                self.show_history(4);
            }
            Err(error) => self.say(&[Line::styled(
                format!("cannot resume: {error}"),
                Style::Error,
            )]),
        }
        Ok(())
    }

    fn compact(&mut self) -> io::Result<()> {
        let Some(mut agent) = self.agent.take() else {
            return Ok(());
        };
        let observer = self.observer();
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let (agent, result) = self.drive(&cancel, async move {
            let result = agent
                .compact(CompactionReason::Manual, &token, &observer)
                .await;
            (agent, result)
        })?;
        self.agent = Some(agent);
        if let Err(message) = result {
            self.say(&[Line::styled(
                format!("not compacted: {message}"),
                Style::Error,
            )]);
        }
        Ok(())
    }

    /// `/export [FILE]`: the conversation as Markdown, or HTML for a `.html` name.
    fn export(&mut self, argument: &str) {
        let session = self.printer.session();
        let path = super::export::target(argument, session.id());
        let text = if super::export::is_html(&path) {
            super::export::html(&session)
        } else {
            super::export::markdown(&session)
        };
        drop(session);
        match super::export::write(&path, &text) {
            Ok(()) => {
                let shown = std::fs::canonicalize(&path).unwrap_or(path);
                self.note(&format!("exported the session to {}", shown.display()));
            }
            Err(error) => self.say(&[Line::styled(
                format!(
                    "/export: cannot write {}: {error}; nothing was written (give another \
                     path: /export FILE.md or FILE.html)",
                    path.display()
                ),
                Style::Error,
            )]),
        }
    }

    fn permissions(&mut self, argument: &str) {
        if !argument.is_empty() {
            match argument.parse::<PermissionMode>() {
                Ok(mode) => {
                    self.hooks.set_mode(mode);
                    self.view.status.mode = mode.to_string();
                }
                Err(error) => {
                    self.say(&[Line::styled(error.to_string(), Style::Error)]);
                    return;
                }
            }
        }
        let (session, project) = self.hooks.allowlists();
        let list = |items: Vec<String>| {
            if items.is_empty() {
                "none".to_owned()
            } else {
                items.join(", ")
            }
        };
        let file = permissions::path(&self.cwd()).map_or_else(
            || "(no config directory)".to_owned(),
            |p| p.display().to_string(),
        );
        let text = format!(
            "permission mode: {} (read-only, ask, auto-edit, full-auto: /permissions MODE)\nallowed this session: tools {}; commands {}\nallowed for this project ({file}): tools {}; commands {}\n{}",
            self.hooks.mode(),
            list(session.tools.into_iter().collect()),
            list(
                session
                    .bash_prefixes
                    .into_iter()
                    .map(|p| shown_prefix(&p))
                    .collect()
            ),
            list(project.tools.into_iter().collect()),
            list(
                project
                    .bash_prefixes
                    .into_iter()
                    .map(|p| shown_prefix(&p))
                    .collect()
            ),
            self.sandbox_report,
        );
        self.note(&text);
    }
}

/// The reasoning level as the status line shows it: nothing when it is off.
pub(super) fn thinking_shown(level: ThinkingLevel) -> Option<String> {
    (level != ThinkingLevel::default()).then(|| thinking_name(level))
}

fn thinking_name(level: ThinkingLevel) -> String {
    serde_json::to_value(level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{level:?}").to_lowercase())
}

/// `2026-01-02 10:11 · 3 replies · first prompt`.
fn describe(session: &Session) -> String {
    let messages = session.messages();
    let first = messages
        .iter()
        .find_map(|message| match message {
            Message::User(user) => user
                .content
                .iter()
                .find_map(|b| b.as_text())
                .map(|t| t.lines().next().unwrap_or("").to_owned()),
            _ => None,
        })
        .unwrap_or_default();
    let replies = messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant(_)))
        .count();
    let created = session
        .header()
        .timestamp
        .get(..16)
        .unwrap_or("")
        .replace('T', " ");
    format!("{created} · {replies} replies · {first}")
}

/// A saved prefix as `/permissions` lists it; one that can never match (saved by hand or by an
/// older jig for a program no prefix allows, such as `rm`) says so.
fn shown_prefix(prefix: &str) -> String {
    let program = prefix.split_whitespace().next().unwrap_or_default();
    if jig_session::prefix::never_allowed(program) {
        format!("`{prefix} …` (never matches: `{program}` can delete files or run other programs)")
    } else {
        format!("`{prefix} …`")
    }
}

/// What `/index` shows: each root's warm index, or why there is none.
fn index_report(indexes: Option<&jig_index::WarmIndexes>) -> String {
    let statuses = indexes
        .map(jig_index::WarmIndexes::status)
        .unwrap_or_default();
    if statuses.is_empty() {
        return "no warm index: `grep` and `find` walk the tree on every call (it is off with \
                `\"warmIndex\": false` in your settings or a trusted project's, and with `--env`)"
            .to_owned();
    }
    statuses
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}
