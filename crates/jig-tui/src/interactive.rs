//! The interactive session: `jig` alone (or `jig run` without a prompt) in a terminal.
//!
//! The prompt editor is reedline (`editor`); a turn is drawn inline by this crate's view and
//! screen (finished lines go to the scrollback, a live region shows the unfinished reply line,
//! running tools with their output's tail, questions and the status line). While a turn runs
//! the terminal is in raw mode and keys are read here: Esc or Ctrl-C interrupt the turn (its
//! token is cancelled: running tools are cancelled and their process trees killed, and every
//! call still gets its result), typing is queued as the next message, and approval questions
//! from the permission hook are answered. `commands` are the slash commands (with the
//! extensions' own); `trust` asks whether to trust the project at startup and is `/trust`;
//! `ui` shows the extensions' `ui/*` questions. Each typed message goes through the
//! extensions' `input` and `before_agent_start` first. The extensions' actions are live: the
//! session's `SessionHost` queues their messages into a running turn, starts a turn they ask
//! for while idle (stopping the prompt editor if it waits), writes their entries into the
//! current session file and follows `/new` and `/resume`.

mod commands;
mod editor;
mod export;
mod models;
mod rerun;
mod trust;
mod ui;

use std::collections::VecDeque;
use std::future::Future;
use std::io::{self, Stdout};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use crate::screen::{Screen, color_enabled, live_columns};
use crate::view::{Line, Status, Style, View, brief};
use crate::wrap::{field, text_rows};
use anyhow::Context as _;
use async_trait::async_trait;
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal;
use jig_agent::{Agent, AgentConfig, AgentEvent, AgentObserver, Session, SessionStore};
use jig_extensions::{ExtensionRunner, UiRequest, events};
use jig_protocol::Message;
use jig_session::approval::{Answer, ApprovalRequest, Approver, PermissionHooks, Scope};
use jig_session::policy::PermissionMode;
use reedline::{Reedline, Signal};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use jig_session::StartError;
use jig_session::chain;
use jig_session::extensions::{IdleTurn, Sent, SessionHost, tool_hooks};
use jig_session::permissions;
use jig_session::startup::RunOptions;
use jig_session::startup::{self, Face, Prepared};
use jig_session::writer::SessionWriter;

/// The names of the built-in commands (`/help`, …), which prompt templates may not take.
pub fn command_names() -> Vec<&'static str> {
    COMMANDS.iter().map(|(name, _)| *name).collect()
}

/// The commands with a line of help each (also what Tab completes).
const COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list"),
    (
        "/model",
        "pick a model, also of another usable provider; or switch: /model [--force] [PROVIDER/]ID",
    ),
    (
        "/thinking",
        "show or set the reasoning effort: off, low, medium, high",
    ),
    ("/new", "start a new session"),
    ("/resume", "pick a session of this directory to continue"),
    (
        "/compact",
        "summarise the older part of the conversation now",
    ),
    ("/tools", "the tools the model may use"),
    (
        "/index",
        "the warm search index of each root: ready, building or cold, and what it holds",
    ),
    (
        "/permissions",
        "show the permission mode and allowlists, or set: /permissions MODE",
    ),
    (
        "/trust",
        "this project's trust decision; change the saved one",
    ),
    (
        "/export",
        "write the conversation to a file: /export [FILE.md | FILE.html]",
    ),
    ("/quit", "exit (also Ctrl-D, or Ctrl-C twice)"),
];

/// The trust decision an [`App`] holds until the session's own is set.
fn placeholder_trust(cwd: &std::path::Path) -> jig_project::TrustDecision {
    jig_project::TrustDecision {
        project_dir: cwd.to_path_buf(),
        trusted: true,
        step: jig_project::TrustStep::NothingToGate,
        gated: Vec::new(),
        snapshot: None,
    }
}

/// What the running turn tells the terminal loop.
enum UiMsg {
    Event(Box<AgentEvent>),
    Ask(ApprovalRequest, oneshot::Sender<Answer>),
    /// An extension's `ui/*` request: (extension, request, where the answer goes).
    Extension(String, UiRequest, oneshot::Sender<Value>),
    /// A message an extension sent, as the transcript shows it.
    Line(Line),
}

/// The extensions' `ui/*` requests, asked through the terminal loop. They are answered while a
/// turn, a command or a message's hooks run (the loop reads keys then); an unanswered one gets
/// what a host without a user interface answers.
struct ExtensionQuestions {
    tx: Sender<UiMsg>,
}

#[async_trait]
impl jig_session::extensions::ExtensionUi for ExtensionQuestions {
    async fn ask(&self, extension: &str, request: UiRequest) -> Value {
        let fallback = request.no_ui_answer();
        let (reply, answer) = oneshot::channel();
        if self
            .tx
            .send(UiMsg::Extension(extension.to_owned(), request, reply))
            .is_err()
        {
            return fallback;
        }
        answer.await.unwrap_or(fallback)
    }
}

/// Writes the session and forwards every event to the terminal loop. A message an extension
/// sent is recorded with its `customType` and `display`, and shown unless `display` is false.
struct Forward {
    printer: Arc<SessionWriter>,
    tx: Sender<UiMsg>,
    host: Arc<SessionHost>,
}

impl AgentObserver for Forward {
    fn on_event(&self, event: &AgentEvent) {
        let sent = match event {
            AgentEvent::MessageEnd {
                message: message @ Message::User(_),
            } => self.host.take_sent(message).map(|sent| (message, sent)),
            _ => None,
        };
        match sent {
            Some((message, sent)) => {
                self.printer.append_sent(message, &sent);
                if sent.display {
                    let _ = self.tx.send(UiMsg::Line(sent_line(message, &sent)));
                }
            }
            None => self.printer.on_event(event),
        }
        let _ = self.tx.send(UiMsg::Event(Box::new(event.clone())));
    }
}

/// How the transcript shows a message an extension sent: `sendUserMessage`'s like a typed
/// message, `sendMessage`'s after its `customType` in brackets.
fn sent_line(message: &Message, sent: &Sent) -> Line {
    let text = match message {
        Message::User(user) => user
            .content
            .iter()
            .filter_map(|block| block.as_text())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    };
    if sent.user {
        return Line::styled(format!("› {text}"), Style::Plain);
    }
    let label = sent.custom_type.as_deref().unwrap_or("extension");
    Line::styled(format!("[{label}] "), Style::Dim).with(text, Style::Plain)
}

/// Asks through the terminal loop; an unanswered question (the turn was interrupted) denies.
struct Ask {
    tx: Sender<UiMsg>,
}

#[async_trait]
impl Approver for Ask {
    async fn ask(&self, request: ApprovalRequest) -> Answer {
        let (reply, answer) = oneshot::channel();
        if self.tx.send(UiMsg::Ask(request, reply)).is_err() {
            return Answer::Deny(None);
        }
        answer
            .await
            .unwrap_or(Answer::Deny(Some("the turn was interrupted".to_owned())))
    }
}

/// A question on screen.
struct Asking {
    request: ApprovalRequest,
    reply: oneshot::Sender<Answer>,
    /// `Some` once the user chose to deny and is typing the reason.
    reason: Option<String>,
}

/// What Ctrl+O says when no result was shortened, or all were shown whole already.
const NOTHING_TO_EXPAND: &str = "ctrl+o: no shortened result left to show whole";

/// Rows an input field (a deny reason, an extension's question) may take before it scrolls.
const FIELD_ROWS: usize = 4;

impl Asking {
    /// The question as drawn on a terminal `width` columns wide.
    fn lines(&self, width: usize) -> Vec<Line> {
        if let Some(note) = &self.request.sandbox_denial {
            return self.rerun_lines(note, width);
        }
        let mut lines = vec![
            Line::styled("? allow ", Style::Prompt)
                .with(&self.request.tool, Style::Accent)
                .with(" ", Style::Plain)
                .with(brief(&self.request.args), Style::Plain),
        ];
        lines.extend(edit_preview(&self.request.args));
        if let Some(reason) = &self.reason {
            lines.extend(field(
                &Line::styled(
                    "  deny — reason for the model (Enter sends, Esc none): ",
                    Style::Prompt,
                )
                .with(reason, Style::Plain),
                width,
                FIELD_ROWS,
            ));
            return lines;
        }
        if let Some(dir) = self.request.protected {
            lines.push(Line::styled(
                format!(
                    "  changes `{dir}`: its files decide what later commands run, so this is always asked"
                ),
                Style::Prompt,
            ));
        }
        let every = if self.request.tool == "bash" {
            " (any command)"
        } else {
            ""
        };
        lines.push(Line::styled(
            format!(
                "  [y] yes  [t] always {}{every} (session)  [T] always (project)",
                self.request.tool
            ),
            Style::Prompt,
        ));
        if let Some(prefix) = &self.request.prefix {
            lines.push(Line::styled(
                format!("  [p] always `{prefix} …` (session)  [P] (project)"),
                Style::Prompt,
            ));
        }
        if let Some(note) = &self.request.prefix_note {
            let (first, rest) = if self.request.prefix.is_some() {
                ("      ", "      ")
            } else {
                ("  no [p]: ", "      ")
            };
            // Wrapped, not cut: the question says exactly what an allowance covers.
            let room = live_columns(u16::try_from(width).unwrap_or(u16::MAX)).saturating_sub(10);
            for (index, line) in text_rows(note, room.max(20)).into_iter().enumerate() {
                let lead = if index == 0 { first } else { rest };
                lines.push(Line::styled(format!("{lead}{line}"), Style::Dim));
            }
        }
        lines.push(Line::styled(
            "  [n] no, with a reason  [Esc] no",
            Style::Prompt,
        ));
        lines
    }
}

impl Asking {
    /// The question whether to run a command the sandbox denied again outside it: only for
    /// this call or this session, never for the project.
    fn rerun_lines(&self, note: &str, width: usize) -> Vec<Line> {
        let mut lines = vec![
            Line::styled("? run again OUTSIDE the sandbox ", Style::Prompt)
                .with(&self.request.tool, Style::Accent)
                .with(" ", Style::Plain)
                .with(brief(&self.request.args), Style::Plain),
        ];
        let note = note.strip_prefix("[sandbox] ").unwrap_or(note);
        let room = live_columns(u16::try_from(width).unwrap_or(u16::MAX)).saturating_sub(2);
        for line in text_rows(note, room.max(20)) {
            lines.push(Line::styled(format!("  {line}"), Style::Dim));
        }
        if let Some(reason) = &self.reason {
            lines.extend(field(
                &Line::styled(
                    "  no — reason for the model (Enter sends, Esc none): ",
                    Style::Prompt,
                )
                .with(reason, Style::Plain),
                width,
                FIELD_ROWS,
            ));
            return lines;
        }
        lines.push(Line::styled(
            "  [y] yes, once  [t] any command the sandbox denies (session)",
            Style::Prompt,
        ));
        if let Some(prefix) = &self.request.prefix {
            lines.push(Line::styled(
                format!("  [p] commands starting `{prefix} …` (session)"),
                Style::Prompt,
            ));
        }
        lines.push(Line::styled(
            "  [n] no, with a reason  [Esc] no",
            Style::Prompt,
        ));
        lines
    }
}

/// The first lines of an edit's or a write's change, `-`/`+`.
fn edit_preview(args: &Value) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut add = |text: &str, mark: &str, style: Style| {
        for line in text.lines().take(6) {
            lines.push(Line::styled(format!("  {mark} {line}"), style));
        }
    };
    if let (Some(old), Some(new)) = (
        args.get("oldText").and_then(Value::as_str),
        args.get("newText").and_then(Value::as_str),
    ) {
        add(old, "-", Style::Removed);
        add(new, "+", Style::Added);
    } else if let Some(edits) = args.get("edits").and_then(Value::as_array) {
        for edit in edits.iter().take(3) {
            add(
                edit.get("oldText").and_then(Value::as_str).unwrap_or(""),
                "-",
                Style::Removed,
            );
            add(
                edit.get("newText").and_then(Value::as_str).unwrap_or(""),
                "+",
                Style::Added,
            );
        }
    } else if let Some(content) = args.get("content").and_then(Value::as_str) {
        add(content, "+", Style::Added);
    }
    lines
}

/// The interactive session.
struct App {
    runtime: tokio::runtime::Runtime,
    /// The configuration new agents start from (model and thinking as last chosen).
    config: AgentConfig,
    agent: Option<Agent>,
    printer: Arc<SessionWriter>,
    hooks: Arc<PermissionHooks>,
    tx: Sender<UiMsg>,
    rx: Receiver<UiMsg>,
    view: View,
    screen: Screen<Stdout>,
    editor: Reedline,
    store: Option<SessionStore>,
    /// The project's name in the store (with `--env`, its URL): whose sessions `/new` and
    /// `/resume` use.
    session_key: PathBuf,
    no_session: bool,
    provider_name: String,
    custom_base_url: Option<String>,
    /// How a provider the user defined is reached (recorded with every model change).
    custom_endpoint: Option<jig_agent::CustomEndpoint>,
    /// Messages typed while a turn ran, sent next.
    queued: VecDeque<String>,
    /// What is being typed while a turn runs.
    typeahead: String,
    /// The last prompt ended with Ctrl-C.
    interrupted_prompt: bool,
    /// How the project's trust was decided at startup.
    trust: jig_project::TrustDecision,
    /// What the sandbox enforces, for `/permissions`.
    sandbox_report: String,
    /// The roots' warm indexes, for `/index` (none when they are off).
    indexes: Option<Arc<jig_index::WarmIndexes>>,
    /// When the running turn started (the spinner's clock).
    turn_started: Option<Instant>,
    /// How to configure a provider, shown at the start when the session opened without the
    /// key it needs.
    setup_note: Option<String>,
    /// The loaded extensions (their commands, `input` and `before_agent_start`).
    runner: Arc<ExtensionRunner>,
    /// The extensions' questions waiting for an answer, the first on screen.
    extension_questions: VecDeque<ui::ExtensionQuestion>,
    /// The extensions' actions on the session (it follows `/new` and `/resume`).
    host: Arc<SessionHost>,
    /// Raised by the host when an extension asks for a turn while idle: the prompt editor
    /// stops waiting (its text is kept) and the turn starts.
    wake: Arc<AtomicBool>,
    /// Skills (`/skill:NAME`) and prompt templates (`/NAME`).
    knowledge: jig_session::skills::Knowledge,
    /// The agent loop's events for the extensions that subscribe to them.
    lifecycle: Option<jig_session::extensions::LifecycleEvents>,
    /// How `/model` and Ctrl-P reach other providers.
    switch: jig_session::model::ProviderSwitch,
    /// A note shown above the status line of the next prompt (after Ctrl-P changed the model
    /// or Ctrl+O had nothing to show, while the prompt was open: the prompt is drawn again in
    /// place, with the note).
    prompt_note: Option<String>,
    /// Lines of the open prompt above its input (the status line, and a note over it).
    prompt_head_rows: usize,
}

/// What Tab completes after the built-in commands: the extensions' commands, `/skill:NAME`
/// and the prompt templates, each with its help.
fn completions(
    runner: &ExtensionRunner,
    knowledge: &jig_session::skills::Knowledge,
) -> Vec<(String, String)> {
    runner
        .commands()
        .into_iter()
        .map(|command| {
            (
                format!("/{}", command.name),
                command.description.unwrap_or_default(),
            )
        })
        .chain(knowledge.commands().into_iter().map(|(usage, help)| {
            // Completion inserts the command; the hint goes with the help.
            match usage.split_once(' ') {
                Some((name, hint)) => (name.to_owned(), format!("{hint} · {help}")),
                None => (usage, help),
            }
        }))
        .collect()
}

/// Runs the interactive session asked for by `options` in this terminal, until the user
/// leaves it.
///
/// # Errors
/// Startup failed (the env, trust, settings, the model), or the terminal failed.
pub fn run(options: &RunOptions) -> Result<ExitCode, StartError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(StartError::Failure)?;
    // Trust is decided (and asked, when the chain gets that far) before anything the project
    // brings is loaded.
    let mut opened = runtime.block_on(startup::open(
        &options.open,
        Face::Interactive,
        Some(&trust::TerminalTrustPrompt),
    ))?;
    let (tx, rx) = channel();
    opened.ui = Some(Arc::new(ExtensionQuestions { tx: tx.clone() }));
    let mut prepared = match runtime.block_on(startup::prepare(options, &opened)) {
        Ok(prepared) => prepared,
        Err(error) => {
            runtime.block_on(opened.close());
            return Err(error);
        }
    };
    let runner = opened.runner();
    let setup_note = prepared.setup_note.take();
    let mut app = App::new(runtime, prepared, options, &runner, (tx, rx));
    app.setup_note = setup_note;
    app.trust = opened.project.decision.clone();
    app.sandbox_report.clone_from(&opened.sandbox_report);
    app.indexes.clone_from(&opened.indexes);
    let forced = startup::forced_skills(options);
    if !forced.is_empty() {
        app.note(&format!(
            "--skill {} forces a skill into jig run's prompt; here, type /skill:NAME with your \
             message",
            forced.join(", ")
        ));
    }
    app.runtime.block_on(runner.notify(
        events::SESSION_START,
        || serde_json::json!({"reason": "startup"}),
    ));
    let ended = app.main_loop();
    let host = Arc::clone(&app.host);
    let lifecycle = app.lifecycle.take();
    app.runtime.block_on(async {
        if let Some(lifecycle) = lifecycle {
            lifecycle.finish().await;
        }
    });
    host.finish();
    app.runtime.block_on(async {
        runner
            .notify(events::SESSION_SHUTDOWN, || serde_json::json!({}))
            .await;
        host.close();
        opened.close().await;
    });
    ended.map_err(|e| StartError::Failure(e.into()))?;
    Ok(ExitCode::SUCCESS)
}

impl App {
    fn new(
        runtime: tokio::runtime::Runtime,
        prepared: Prepared,
        args: &RunOptions,
        runner: &Arc<ExtensionRunner>,
        (tx, rx): (Sender<UiMsg>, Receiver<UiMsg>),
    ) -> Self {
        let Prepared {
            mut config,
            session,
            provider_name,
            context_window,
            settings_permission_mode,
            host,
            project_key,
            knowledge,
            switch,
            ..
        } = prepared;
        if !runner.extensions().is_empty() {
            config.turn_hooks = Arc::new(jig_session::extensions::ExtensionTurnHooks {
                host: Arc::clone(&host),
                runner: Arc::clone(runner),
            });
        }
        let mode = settings_permission_mode.resolve(args.permission_mode, PermissionMode::Ask);
        let cwd = config.tool_context.cwd.clone();
        // Saved per project: with `--env` under its URL, not a local directory's name.
        let save_key = project_key.clone();
        let approver: Arc<dyn Approver> = Arc::new(Ask { tx: tx.clone() });
        if config.tool_context.sandbox.is_on() {
            rerun::wrap(&mut config.tools, Arc::clone(&approver));
        }
        let hooks = Arc::new(
            PermissionHooks::new(
                mode,
                &config.tools,
                permissions::load(&project_key),
                Some(approver),
                Some(Box::new(move |allow| {
                    permissions::save(&save_key, allow).map(|_| ())
                })),
            )
            .with_workspace(config.tool_context.clone()),
        );
        // The permission policy decides first, then the extensions' `tool_call`.
        let shared: Arc<dyn jig_tool::ToolHooks> = hooks.clone();
        config.hooks = chain::agent_hooks(shared, tool_hooks(runner));
        let color = color_enabled();
        let (width, _) = terminal::size().unwrap_or((80, 24));
        let status = Status {
            model: format!("{provider_name}/{}", config.model),
            thinking: commands::thinking_shown(config.thinking),
            mode: mode.to_string(),
            context_window,
            ..Status::default()
        };
        let store = SessionStore::from_env();
        let history = store
            .as_ref()
            .and_then(|store| store.root().parent().map(|dir| dir.join("history.txt")));
        let custom_base_url = session.base_url();
        let custom_endpoint = session.custom_endpoint();
        let wake = Arc::new(AtomicBool::new(false));
        host.wake_with(Arc::clone(&wake));
        let runtime_handle = &runtime.handle().clone();
        let mut app = Self {
            editor: editor::editor(&cwd, history, color, completions(runner, &knowledge))
                .with_break_signal(Arc::clone(&wake)),
            runtime,
            config,
            agent: None,
            printer: SessionWriter::new(Session::in_memory(&cwd)),
            hooks,
            tx,
            rx,
            view: View::new(width, status),
            screen: Screen::new(io::stdout(), width, color),
            store,
            session_key: project_key.clone(),
            no_session: args.no_session,
            provider_name,
            custom_base_url,
            custom_endpoint,
            queued: VecDeque::new(),
            typeahead: String::new(),
            interrupted_prompt: false,
            runner: Arc::clone(runner),
            extension_questions: VecDeque::new(),
            trust: placeholder_trust(&cwd),
            sandbox_report: String::new(),
            indexes: None,
            turn_started: None,
            setup_note: None,
            lifecycle: jig_session::extensions::LifecycleEvents::start(runner, runtime_handle),
            host,
            wake,
            knowledge,
            switch,
            prompt_note: None,
            prompt_head_rows: 1,
        };
        app.install(session);
        app
    }

    fn cwd(&self) -> PathBuf {
        self.config.tool_context.cwd.clone()
    }

    /// Makes `session` the current one: a new agent continues its conversation.
    fn install(&mut self, session: Session) {
        let (summary, history) = session.context();
        let mut config = self.config.clone();
        config.tool_context.session_env =
            session.tool_variables(&self.provider_name, &config.model, config.thinking);
        self.view.status.input = 0;
        self.view.status.output = 0;
        self.view.status.context_used = None;
        for reply in session.messages().iter().filter_map(Message::as_assistant) {
            let usage = &reply.usage;
            let input = usage.input + usage.cache_read + usage.cache_write;
            self.view.status.input += input;
            self.view.status.output += usage.output;
            if input > 0 {
                self.view.status.context_used = Some(input);
            }
        }
        self.agent = Some(match summary {
            Some(summary) => Agent::with_summary(config, summary, history),
            None => Agent::with_messages(config, history),
        });
        self.printer = SessionWriter::new(session);
        self.host
            .write_into(Arc::clone(&self.printer) as Arc<dyn jig_session::extensions::EntrySink>);
        self.sync_host();
    }

    /// What `getSessionInfo` answers: the current session, model and thinking level.
    fn sync_host(&self) {
        let session = self.printer.session();
        let count = self
            .agent
            .as_ref()
            .map_or_else(|| session.message_count(), |agent| agent.messages().len());
        self.host.follow(count, |info| {
            info.session_id = Some(session.id().to_owned());
            info.session_file = session.path().map(|path| path.display().to_string());
            info.model = Some(format!("{}/{}", self.provider_name, self.config.model));
            info.provider = Some(self.provider_name.clone());
            info.thinking_level = Some(format!("{:?}", self.config.thinking).to_lowercase());
        });
    }

    /// Prints finished lines (outside a turn).
    fn say(&mut self, lines: &[Line]) {
        let _ = self.screen.draw(lines, &[]);
    }

    fn note(&mut self, text: &str) {
        self.say(
            &text
                .lines()
                .map(|l| Line::styled(l, Style::Dim))
                .collect::<Vec<_>>(),
        );
    }

    fn main_loop(&mut self) -> io::Result<()> {
        let banner = format!(
            "jig · {} · {}\n/help for commands · Esc interrupts a turn · Ctrl-C twice exits",
            self.view.status.model,
            self.cwd().display()
        );
        self.note(&banner);
        self.show_history(4);
        if let Some(note) = self.setup_note.take() {
            // One line: the screen wraps it at the terminal's width.
            self.say(&[Line::styled(note, Style::Error)]);
        }
        loop {
            // Lowered before looking: a turn asked for from now on stops the editor.
            self.wake.store(false, Ordering::Release);
            if self.queued.is_empty()
                && let Some(turn) = self.host.take_idle_turn()
            {
                match turn {
                    IdleTurn::User(text) => {
                        self.say(&[Line::styled(format!("› {text}"), Style::Plain)]);
                        self.send(text, "extension")?;
                    }
                    IdleTurn::Messages(messages) => self.send_messages(messages)?,
                }
                continue;
            }
            let input = if let Some(text) = self.queued.pop_front() {
                self.say(&[Line::styled(format!("› {text}"), Style::Plain)]);
                text
            } else {
                if !self.typeahead.is_empty() {
                    let text = std::mem::take(&mut self.typeahead);
                    self.editor
                        .run_edit_commands(&[reedline::EditCommand::InsertString(text)]);
                }
                let status = self.view.status.line(false).text();
                let prompt = editor::StatusPrompt {
                    status: match self.prompt_note.take() {
                        Some(note) => format!("{note}\n{status}"),
                        None => status,
                    },
                    indicator: "› ",
                };
                self.prompt_head_rows = prompt.status.lines().count().max(1);
                match self.editor.read_line(&prompt)? {
                    Signal::Success(text) => {
                        self.interrupted_prompt = false;
                        text
                    }
                    Signal::HostCommand(command) if command == editor::NEXT_MODEL => {
                        // The prompt stays open with what was typed, drawn again in place.
                        self.prompt_note = Some(self.next_model());
                        continue;
                    }
                    Signal::CtrlC => {
                        if self.interrupted_prompt {
                            return Ok(());
                        }
                        self.interrupted_prompt = true;
                        self.note("(Ctrl-C again to exit, or /quit)");
                        continue;
                    }
                    Signal::CtrlD => return Ok(()),
                    Signal::HostCommand(command) if command == editor::EXPAND => {
                        self.expand_at_prompt()?;
                        continue;
                    }
                    Signal::ExternalBreak(_) => {
                        // An extension asked for a turn. The editor keeps what was typed
                        // for after it; its prompt stays on screen as it was.
                        leave_prompt()?;
                        continue;
                    }
                    _ => continue,
                }
            };
            let text = input.trim_end().to_owned();
            if text.trim().is_empty() {
                continue;
            }
            // A prompt template or `/skill:NAME` is sent as the text it expands to.
            let text = match self.knowledge.expand(&text) {
                Some(Ok(expanded)) => {
                    self.send(expanded, "interactive")?;
                    continue;
                }
                Some(Err(message)) => {
                    self.say(&[Line::styled(message.to_string(), Style::Error)]);
                    continue;
                }
                None => text,
            };
            if let Some(line) = text.strip_prefix('!') {
                self.shell(line)?;
                continue;
            }
            if is_command(&text) {
                if self.command(&text)? == commands::Flow::Quit {
                    return Ok(());
                }
                continue;
            }
            self.send(text, "interactive")?;
        }
    }

    /// `!CMD`: runs CMD with `bash` in the workspace and shows its output, which the model does
    /// not see; `!!CMD` then sends the command and its output as a message. The user typed it,
    /// so it runs with the user's rights (no sandbox, no approval); Esc stops it.
    fn shell(&mut self, line: &str) -> io::Result<()> {
        let (send, command) = match line.strip_prefix('!') {
            Some(rest) => (true, rest.trim()),
            None => (false, line.trim()),
        };
        if command.is_empty() {
            self.say(&[Line::styled(
                "! needs a command: !ls runs it here, !!ls also sends its output to the model",
                Style::Error,
            )]);
            return Ok(());
        }
        let Some(bash) = self.config.tools.get("bash").cloned() else {
            self.say(&[Line::styled(
                "!: this session has no bash tool (see --tools)",
                Style::Error,
            )]);
            return Ok(());
        };
        self.say(&[Line::styled(format!("$ {command}"), Style::Accent)]);
        let cancel = CancellationToken::new();
        let mut ctx = self.config.tool_context.clone();
        ctx.sandbox = jig_env::SandboxPolicy::off();
        ctx.cancel = cancel.clone();
        let args = serde_json::json!({ "command": command });
        let result = self.drive(&cancel, async move { bash.run(&ctx, args).await })?;
        let output = result.text_content();
        let style = if result.is_error {
            Style::Error
        } else {
            Style::Plain
        };
        let lines: Vec<Line> = output
            .lines()
            .map(|line| Line::styled(format!("  {line}"), style))
            .collect();
        self.say(&lines);
        if send {
            let message = format!("I ran `{command}` in the workspace:\n\n```\n{output}\n```");
            self.note("(the command and its output go to the model)");
            self.send(message, "interactive")?;
        }
        Ok(())
    }

    fn observer(&self) -> Arc<dyn AgentObserver> {
        let forward: Arc<dyn AgentObserver> = Arc::new(Forward {
            printer: Arc::clone(&self.printer),
            tx: self.tx.clone(),
            host: Arc::clone(&self.host),
        });
        match &self.lifecycle {
            Some(lifecycle) => lifecycle.observer(forward),
            None => forward,
        }
    }

    /// Sends one message and runs the turn. The extensions' `input` (told `source`:
    /// `interactive` for a typed message, `extension` for one an extension sent) may transform
    /// the message or handle it (then nothing is sent); `before_agent_start` may add to it and
    /// change the system prompt for this turn. The messages extensions held for the next
    /// prompt follow it.
    fn send(&mut self, text: String, source: &'static str) -> io::Result<()> {
        let Some(mut agent) = self.agent.take() else {
            return Ok(());
        };
        let base_prompt = self.config.system_prompt.clone();
        let runner = Arc::clone(&self.runner);
        let observer = self.observer();
        let host = Arc::clone(&self.host);
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        // Messages sent while the hooks run join this turn.
        self.host.set_turn_running(true);
        let driven = self.drive(&cancel, async move {
            let Some((message, system_prompt)) =
                startup::extension_prompt(&runner, text, base_prompt, source).await
            else {
                return (agent, false);
            };
            agent.set_system_prompt(system_prompt);
            host.deliver_next_turn();
            let _outcome = agent.run(message, &token, &observer).await;
            (agent, true)
        });
        self.host.set_turn_running(false);
        let (agent, sent) = driven?;
        self.agent = Some(agent);
        if !sent {
            self.note("(handled by an extension: nothing sent)");
        }
        self.after_turn();
        Ok(())
    }

    /// Runs a turn an extension started with its messages (`sendMessage` with `triggerTurn`):
    /// the first is the turn's message, the others follow it.
    fn send_messages(&mut self, mut messages: Vec<Message>) -> io::Result<()> {
        if messages.is_empty() {
            return Ok(());
        }
        let Some(mut agent) = self.agent.take() else {
            return Ok(());
        };
        let first = messages.remove(0);
        self.host.steer(messages);
        agent.set_system_prompt(self.config.system_prompt.clone());
        let observer = self.observer();
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        self.host.set_turn_running(true);
        let driven = self.drive(&cancel, async move {
            let _outcome = agent.run(first, &token, &observer).await;
            agent
        });
        self.host.set_turn_running(false);
        self.agent = Some(driven?);
        self.after_turn();
        Ok(())
    }

    /// After a turn: the session's message count for the extensions, and a write error.
    fn after_turn(&mut self) {
        self.sync_host();
        if let Some(error) = self.printer.session_error() {
            self.say(&[Line::styled(
                format!("warning: the session could not be saved: {error:#}"),
                Style::Error,
            )]);
        }
    }

    /// Runs `task` while drawing its events and reading keys (raw mode); returns its output.
    fn drive<T: Send + 'static>(
        &mut self,
        cancel: &CancellationToken,
        task: impl Future<Output = T> + Send + 'static,
    ) -> io::Result<T> {
        let handle = self.runtime.spawn(task);
        terminal::enable_raw_mode()?;
        let mut asking: Option<Asking> = None;
        let drawn = self.turn_loop(&handle, cancel, &mut asking);
        // Whatever happened, the task must end before the terminal is handed back.
        if drawn.is_err() {
            cancel.cancel();
        }
        drop(asking);
        // Unanswered questions get the no-UI answer (their senders are dropped).
        self.extension_questions.clear();
        let output = self.runtime.block_on(handle);
        self.drain(&mut None);
        let _ = self.draw(None, false);
        let finished = self.screen.finish();
        terminal::disable_raw_mode()?;
        drawn?;
        finished?;
        output.map_err(io::Error::other)
    }

    fn drain(&mut self, asking: &mut Option<Asking>) -> bool {
        let mut any = false;
        while let Ok(message) = self.rx.try_recv() {
            any = true;
            match message {
                UiMsg::Event(event) => self.view.apply(&event),
                UiMsg::Ask(request, reply) => {
                    *asking = Some(Asking {
                        request,
                        reply,
                        reason: None,
                    });
                }
                UiMsg::Extension(extension, UiRequest::Notify { message }, reply) => {
                    self.view.push(
                        Line::styled(format!("{}: ", ui::short_name(&extension)), Style::Dim)
                            .with(message, Style::Plain),
                    );
                    let _ = reply.send(Value::Null);
                }
                UiMsg::Extension(extension, request, reply) => {
                    self.extension_questions
                        .push_back(ui::ExtensionQuestion::new(extension, request, reply));
                }
                UiMsg::Line(line) => self.view.push(line),
            }
        }
        any
    }

    fn turn_loop<T>(
        &mut self,
        handle: &tokio::task::JoinHandle<T>,
        cancel: &CancellationToken,
        asking: &mut Option<Asking>,
    ) -> io::Result<()> {
        let mut dirty = true;
        self.turn_started = Some(Instant::now());
        let mut spun = Instant::now();
        loop {
            dirty |= self.drain(asking);
            if handle.is_finished() {
                self.turn_started = None;
                return Ok(());
            }
            // The spinner turns ten times a second.
            if spun.elapsed() >= Duration::from_millis(100) {
                dirty = true;
                spun = Instant::now();
            }
            if dirty {
                self.draw(asking.as_ref(), true)?;
                dirty = false;
            }
            if event::poll(Duration::from_millis(16))? {
                dirty = true;
                match event::read()? {
                    Event::Key(key) if key.kind != KeyEventKind::Release => {
                        self.on_key(key, cancel, asking);
                    }
                    Event::Paste(text) => match asking {
                        Some(Asking {
                            reason: Some(reason),
                            ..
                        }) => reason.push_str(&text),
                        _ => self.typeahead.push_str(&text),
                    },
                    // Drawn again at once (below): the live rows are cut to the new width
                    // before the window narrows further (see `live_columns`).
                    Event::Resize(width, _) => {
                        self.view.set_width(width);
                        self.screen.resize(width);
                    }
                    _ => {}
                }
            }
        }
    }

    fn on_key(&mut self, key: KeyEvent, cancel: &CancellationToken, asking: &mut Option<Asking>) {
        let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(key.code, KeyCode::Char('c' | 'C'));
        if let Some(question) = self.extension_questions.front_mut() {
            if let Some(answer) = question.on_key(key)
                && let Some(question) = self.extension_questions.pop_front()
            {
                self.view.push(question.answer_line(&answer));
                question.answer(answer);
            }
            return;
        }
        if let Some(question) = asking.take() {
            let Asking {
                request,
                reply,
                reason,
            } = question;
            if ctrl_c {
                let _ = reply.send(Answer::Deny(None));
                cancel.cancel();
                return;
            }
            let answer = match (reason, key.code) {
                (_, KeyCode::Esc) => Some(Answer::Deny(None)),
                (Some(reason), KeyCode::Enter) => Some(Answer::Deny(Some(reason))),
                (Some(mut reason), KeyCode::Backspace) => {
                    reason.pop();
                    *asking = Some(Asking {
                        request,
                        reply,
                        reason: Some(reason),
                    });
                    return;
                }
                (Some(mut reason), KeyCode::Char(c)) => {
                    reason.push(c);
                    *asking = Some(Asking {
                        request,
                        reply,
                        reason: Some(reason),
                    });
                    return;
                }
                (None, code) if let Some(answer) = key_answer(&request, code) => Some(answer),
                (None, KeyCode::Char('n' | 'N')) => {
                    *asking = Some(Asking {
                        request,
                        reply,
                        reason: Some(String::new()),
                    });
                    return;
                }
                (reason, _) => {
                    *asking = Some(Asking {
                        request,
                        reply,
                        reason,
                    });
                    return;
                }
            };
            if let Some(answer) = answer {
                let line = answer_line(&request, &answer);
                self.view.push(line);
                let _ = reply.send(answer);
            }
            return;
        }
        match key.code {
            KeyCode::Char('o') if key.modifiers.contains(KeyModifiers::CONTROL) => self.expand(),
            // Interrupting a turn sends nothing more: what was queued goes back to the editor.
            KeyCode::Esc => {
                self.unqueue();
                cancel.cancel();
            }
            _ if ctrl_c => {
                self.unqueue();
                cancel.cancel();
            }
            KeyCode::Enter => {
                let text = std::mem::take(&mut self.typeahead);
                if !text.trim().is_empty() {
                    self.queued.push_back(text);
                }
            }
            KeyCode::Backspace => {
                self.typeahead.pop();
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.typeahead.push(c);
            }
            _ => {}
        }
    }

    /// Ctrl+O: the most recent collapsed tool result, whole, in the transcript.
    fn expand(&mut self) {
        if !self.view.expand() {
            self.view
                .push(Line::styled(format!("({NOTHING_TO_EXPAND})"), Style::Dim));
        }
    }

    /// Ctrl+O at the prompt: the prompt is taken off the screen, the result printed whole, and
    /// the prompt drawn again below it with what was typed.
    fn expand_at_prompt(&mut self) -> io::Result<()> {
        use crossterm::cursor::{MoveToColumn, MoveToPreviousLine};
        use crossterm::terminal::{Clear, ClearType};
        if !self.view.can_expand() {
            // Said above the prompt's status line: the editor draws the prompt again in place.
            self.prompt_note = Some(NOTHING_TO_EXPAND.to_owned());
            return Ok(());
        }
        let (columns, _) = terminal::size().unwrap_or((80, 24));
        let columns = usize::from(columns.max(1));
        // Rows from the prompt's first (a note, the status line) to the cursor's.
        let typed = self.editor.current_buffer_contents();
        let before = &typed[..self.editor.current_insertion_point().min(typed.len())];
        let mut rows = self.prompt_head_rows;
        let mut lines = before.split('\n').peekable();
        while let Some(line) = lines.next() {
            let width = 2 + Line::plain(line).width();
            rows += if lines.peek().is_some() {
                width.div_ceil(columns).max(1)
            } else {
                width / columns
            };
        }
        let mut out = io::stdout();
        crossterm::queue!(
            out,
            MoveToColumn(0),
            MoveToPreviousLine(u16::try_from(rows).unwrap_or(u16::MAX)),
            Clear(ClearType::FromCursorDown)
        )?;
        self.expand();
        let lines = self.view.take_finished();
        self.say(&lines);
        Ok(())
    }

    /// Moves the messages typed for after the turn back into the editor's text, unsent, before
    /// what is being typed.
    fn unqueue(&mut self) {
        if self.queued.is_empty() {
            return;
        }
        let mut parts: Vec<String> = self.queued.drain(..).collect();
        if !self.typeahead.is_empty() {
            parts.push(std::mem::take(&mut self.typeahead));
        }
        self.typeahead = parts.join("\n");
    }

    /// Draws finished lines and the live region (busy: a turn runs).
    fn draw(&mut self, asking: Option<&Asking>, busy: bool) -> io::Result<()> {
        // The terminal's width now, not as of the last resize event: a window being dragged
        // narrower has re-wrapped the live rows before its event arrives, and clearing them
        // with the old width would leave their first rows behind as copies.
        let (columns, height) = terminal::size().unwrap_or((80, 24));
        self.view.set_width(columns);
        self.screen.resize(columns);
        let finished = self.view.take_finished();
        let mut live = self.view.live();
        let width = usize::from(columns);
        if let Some(asking) = asking {
            live.extend(asking.lines(width));
        }
        if let Some(question) = self.extension_questions.front() {
            live.extend(question.lines(width));
        }
        for text in &self.queued {
            live.push(Line::styled(format!("queued › {text}"), Style::Dim));
        }
        if busy && !self.typeahead.is_empty() {
            live.extend(field(
                &Line::plain(format!("› {}", self.typeahead)),
                width,
                FIELD_ROWS,
            ));
        }
        if busy {
            live.push(match self.turn_started {
                Some(started) => self.view.status.busy_line(started.elapsed()),
                None => self.view.status.line(true),
            });
        }
        let room = usize::from(height.saturating_sub(1)).max(1);
        if live.len() > room {
            // The question and the status line matter most: drop from the top.
            live.drain(..live.len() - room);
        }
        self.screen.draw(&finished, &live)
    }

    /// The last `count` messages of the conversation, in short (after resuming).
    fn show_history(&mut self, count: usize) {
        let recent = recent_messages(&self.printer.session(), count);
        let lines: Vec<Line> = recent
            .into_iter()
            .map(|(mark, text, style)| {
                let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                Line::styled(format!("{mark} {first}"), style).truncated(100)
            })
            .collect();
        if !lines.is_empty() {
            self.say(&lines);
        }
    }
}

/// The last `count` messages shown of `session`'s conversation, as (mark, text, style) lines:
/// prompts (`›`), replies (`•`), each tool call with its main argument (`⋯ bash cargo test`),
/// and each result marked `✓`, or `✗` when it failed or was denied, with its first line.
/// Messages an extension sent show after their `customType` in brackets, or not at all when
/// sent with `display: false`.
fn recent_messages(session: &Session, count: usize) -> Vec<(String, String, Style)> {
    let shown: Vec<(&Message, Option<&String>)> = session
        .branch()
        .into_iter()
        .filter_map(|kind| match kind {
            jig_agent::session::EntryKind::Message {
                message,
                custom_type,
                display,
            } if *display != Some(false) => Some((message, custom_type.as_ref())),
            _ => None,
        })
        .collect();
    let start = shown.len().saturating_sub(count);
    let mut lines = Vec::new();
    for (message, custom_type) in &shown[start..] {
        match message {
            Message::User(user) => lines.push((
                custom_type.map_or_else(|| "›".to_owned(), |tag| format!("[{tag}]")),
                user.content
                    .iter()
                    .filter_map(|b| b.as_text())
                    .collect::<Vec<_>>()
                    .join(" "),
                Style::Plain,
            )),
            Message::Assistant(reply) => {
                let text = reply.text();
                if !text.trim().is_empty() {
                    lines.push(("•".to_owned(), text, Style::Dim));
                }
                for call in reply.tool_calls() {
                    lines.push((
                        "⋯".to_owned(),
                        format!("{} {}", call.name, brief(&call.arguments)),
                        Style::Dim,
                    ));
                }
            }
            Message::ToolResult(result) => {
                let text = result
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        jig_protocol::ContentBlock::Text { text } => Some(text.as_str()),
                        jig_protocol::ContentBlock::Image { .. } => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                let first = text
                    .lines()
                    .find(|line| !line.trim().is_empty())
                    .unwrap_or("");
                let (mark, style) = if result.is_error {
                    ("✗", Style::Error)
                } else {
                    ("✓", Style::Dim)
                };
                lines.push((
                    mark.to_owned(),
                    format!("{}: {first}", result.tool_name),
                    style,
                ));
            }
        }
    }
    lines
}

/// The editor stopped without a line: the cursor goes below its prompt, which is left as
/// it was (the editor, asked again, then starts a new prompt below what was printed).
fn leave_prompt() -> io::Result<()> {
    use std::io::Write as _;
    let mut out = io::stdout();
    crossterm::queue!(out, crossterm::cursor::MoveToColumn(0))?;
    out.write_all(b"\r\n")?;
    out.flush()
}

/// The answer a key gives to `request` (`n`, Esc and the reason field are handled apart);
/// `None` when the key is no answer to it.
fn key_answer(request: &ApprovalRequest, code: KeyCode) -> Option<Answer> {
    // Leaving the sandbox is never allowed for the project: `T`, `P` are no answer then.
    let project = request.sandbox_denial.is_none();
    let prefix = || request.prefix.clone();
    match code {
        KeyCode::Char('y' | 'Y') => Some(Answer::AllowOnce),
        KeyCode::Char('t') => Some(Answer::AllowTool(Scope::Session)),
        KeyCode::Char('T') if project => Some(Answer::AllowTool(Scope::Project)),
        KeyCode::Char('p') => prefix().map(|prefix| Answer::AllowPrefix(prefix, Scope::Session)),
        KeyCode::Char('P') if project => {
            prefix().map(|prefix| Answer::AllowPrefix(prefix, Scope::Project))
        }
        _ => None,
    }
}

/// What the user answered, as a finished line.
fn answer_line(request: &ApprovalRequest, answer: &Answer) -> Line {
    let outside = request.sandbox_denial.is_some();
    let text = match answer {
        Answer::AllowOnce if outside => "  running it again outside the sandbox, once".to_owned(),
        Answer::AllowTool(_) if outside => {
            "  commands the sandbox denies run again outside it, this session".to_owned()
        }
        Answer::AllowPrefix(prefix, _) if outside => {
            format!("  `{prefix} …` runs again outside the sandbox when denied, this session")
        }
        Answer::Deny(Some(reason)) if outside => format!("  not run again: {reason}"),
        Answer::Deny(None) if outside => "  not run again".to_owned(),
        Answer::AllowOnce => format!("  allowed {} once", request.tool),
        Answer::AllowTool(Scope::Session) => format!("  allowed {} for this session", request.tool),
        Answer::AllowTool(Scope::Project) => format!("  allowed {} for this project", request.tool),
        Answer::AllowPrefix(prefix, Scope::Session) => {
            format!("  allowed `{prefix} …` for this session")
        }
        Answer::AllowPrefix(prefix, Scope::Project) => {
            format!("  allowed `{prefix} …` for this project")
        }
        Answer::Deny(Some(reason)) => format!("  denied: {reason}"),
        Answer::Deny(None) => "  denied".to_owned(),
    };
    let style = if matches!(answer, Answer::Deny(_)) {
        Style::Error
    } else {
        Style::Dim
    };
    Line::styled(text, style)
}

/// Whether a typed line is a slash command (`/help`, `/model x`, `/skill:name …`) rather than a
/// message that starts with a path (`/usr/bin/env is…`, `//comment`): the command's name holds
/// no other `/`.
fn is_command(text: &str) -> bool {
    text.strip_prefix('/').is_some_and(|rest| {
        let name = rest.split_whitespace().next().unwrap_or("");
        !name.contains('/')
    })
}

/// A session for tests: `prompt`, a reply (with `text`, if any) calling `bash rm -rf build`,
/// and the user's denial of that call with `reason`.
#[cfg(test)]
pub(crate) fn denied_call_session(prompt: &str, text: Option<&str>, reason: &str) -> Session {
    use jig_protocol::{ContentBlock, ToolCall, ToolResultMessage};
    let mut session = Session::in_memory(std::path::Path::new("/work/p"));
    session
        .append_message(&Message::user_text(prompt))
        .unwrap_or_else(|error| panic!("{error}"));
    let mut reply = jig_protocol::AssistantMessage::empty("openai", "m");
    if let Some(text) = text {
        reply
            .content
            .push(jig_protocol::AssistantBlock::Text { text: text.into() });
    }
    reply
        .content
        .push(jig_protocol::AssistantBlock::ToolCall(ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: serde_json::json!({"command": "rm -rf build"}),
            raw_arguments: None,
        }));
    session
        .append_message(&Message::Assistant(reply))
        .unwrap_or_else(|error| panic!("{error}"));
    session
        .append_message(&Message::ToolResult(ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "bash".into(),
            content: vec![ContentBlock::text(format!(
                "The user denied this `bash` call: {reason}"
            ))],
            details: serde_json::Value::Null,
            is_error: true,
            timestamp: 0,
        }))
        .unwrap_or_else(|error| panic!("{error}"));
    session
}

#[cfg(test)]
mod tests {
    use super::*;
    use jig_protocol::{AssistantBlock, AssistantMessage};
    use std::path::Path;

    /// The question's lines as text.
    fn question(request: jig_session::approval::ApprovalRequest) -> String {
        let (reply, _answer) = oneshot::channel();
        Asking {
            request,
            reply,
            reason: None,
        }
        .lines(80)
        .iter()
        .map(Line::text)
        .collect::<Vec<_>>()
        .join("\n")
    }

    #[test]
    fn a_question_about_a_protected_file_says_why_it_is_asked() {
        let args =
            serde_json::json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = x\n"});
        let text = question(jig_session::approval::ApprovalRequest::new(
            "write",
            &args,
            Some(".git"),
        ));
        insta::assert_snapshot!(text, @r#"
            ? allow write .git/config
              + [core]
              + 	fsmonitor = x
              changes `.git`: its files decide what later commands run, so this is always asked
              [y] yes  [t] always write (session)  [T] always (project)
              [n] no, with a reason  [Esc] no
        "#);
        let text = question(jig_session::approval::ApprovalRequest::new(
            "bash",
            &serde_json::json!({"command": "git -c core.pager=x log"}),
            None,
        ));
        insta::assert_snapshot!(text, @r#"
            ? allow bash git -c core.pager=x log
              [y] yes  [t] always bash (any command) (session)  [T] always (project)
              no [p]: `git -c` can run or delete other programs' work, so no
                  prefix allows it
              [n] no, with a reason  [Esc] no
        "#);
    }

    #[test]
    fn resumed_history_hides_what_extensions_sent_unshown_and_labels_the_rest() {
        let mut session = Session::in_memory(Path::new("/work/p"));
        let mut reply = AssistantMessage::empty("openai", "m");
        reply.content.push(AssistantBlock::Text {
            text: "the answer\nsecond line".into(),
        });
        session
            .append_message(&Message::user_text("typed"))
            .unwrap();
        session
            .append_tagged_message(
                &Message::user_text("hidden"),
                Some("memo".into()),
                Some(false),
            )
            .unwrap();
        session
            .append_tagged_message(&Message::user_text("shown"), Some("memo".into()), None)
            .unwrap();
        session.append_message(&Message::Assistant(reply)).unwrap();
        let recent = |count| -> Vec<(String, String)> {
            recent_messages(&session, count)
                .into_iter()
                .map(|(mark, text, _)| (mark, text))
                .collect()
        };
        let pair = |mark: &str, text: &str| (mark.to_owned(), text.to_owned());
        assert_eq!(
            recent(2),
            [
                pair("[memo]", "shown"),
                pair("•", "the answer\nsecond line")
            ]
        );
        assert_eq!(
            recent(10),
            [
                pair("›", "typed"),
                pair("[memo]", "shown"),
                pair("•", "the answer\nsecond line")
            ]
        );
    }

    #[test]
    fn the_recap_shows_calls_with_their_arguments_and_marks_denied_results() {
        let session = denied_call_session("clean up", None, "not now");
        let recent: Vec<(String, String)> = recent_messages(&session, 10)
            .into_iter()
            .map(|(mark, text, _)| (mark, text))
            .collect();
        let pair = |mark: &str, text: &str| (mark.to_owned(), text.to_owned());
        assert_eq!(
            recent,
            [
                pair("›", "clean up"),
                pair("⋯", "bash rm -rf build"),
                pair("✗", "bash: The user denied this `bash` call: not now"),
            ]
        );
    }
}

#[cfg(test)]
mod command_tests {
    use super::is_command;

    #[test]
    fn a_line_starting_with_a_path_is_a_message() {
        for command in ["/help", "/model gpt-5", "/skill:review now", "/", "/quit"] {
            assert!(is_command(command), "{command}");
        }
        for message in [
            "/usr/bin/env is what?",
            "//comment",
            "/tmp/x.txt: why empty",
            "hi",
        ] {
            assert!(!is_command(message), "{message}");
        }
    }
}
