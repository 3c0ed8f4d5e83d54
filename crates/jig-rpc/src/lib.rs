//! `jig run --mode rpc`: a long-lived jig session driven by an app over Pi's RPC protocol.
//!
//! The app writes one JSON command per line on stdin (`prompt`, `steer`, `follow_up`,
//! `abort`, `get_state`, `compact`, `bash`, …); jig answers each with a `response` record
//! (`id` echoed, `success`, `data` or `error`) and streams the agent's events (`agent_start`,
//! `message_update`, `tool_execution_*`, `agent_end`, …) on stdout, one JSON object per line.
//! Framing is strict JSONL: records end at LF only (a trailing CR is dropped), so U+2028 and
//! U+2029 inside strings are data. Extensions' dialogs (and jig's own permission questions,
//! with `--permission-mode ask`) are `extension_ui_request` records the app answers with an
//! `extension_ui_response`.
//!
//! The session is opened by the harness ([`jig_session::startup`], face [`Face::Rpc`]) with
//! every flag and setting `jig run` takes; a run holds the agent in a task of its own while
//! the app's commands go on being read, so a turn can be steered, queued onto or aborted while
//! it streams. Commands jig cannot honour answer `success: false` with the reason. docs/rpc.md
//! is the protocol's reference, with where it differs from Pi's.
//!
//! Modules: `wire` (framing, commands, the stdout writer), `events` (the agent's events in
//! Pi's shapes), `ui` (dialogs), `server` (the commands and the jobs).

mod events;
mod server;
mod ui;
mod wire;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use jig_extensions::events as extension_events;
use jig_session::StartError;
use jig_session::approval::{Approver, PermissionHooks};
use jig_session::chain;
use jig_session::extensions::{ExtensionTurnHooks, LifecycleEvents, tool_hooks};
use jig_session::policy::PermissionMode;
use jig_session::startup::{self, Face, RunOptions};
use tokio::sync::mpsc;

use crate::events::Events;
use crate::server::{Parts, Queues, Server};
use crate::ui::Dialogs;
use crate::wire::{Command, Out};

/// The type of a dialog's answer.
const ANSWER: &[u8] = b"extension_ui_response";

/// How often an idle session looks for a turn an extension asked for.
const IDLE_POLL: Duration = Duration::from_millis(20);

/// Runs the session `options` ask for, driven over stdin/stdout, until stdin closes or the
/// process is told to stop (SIGTERM, SIGINT): the running turn is aborted, its commands
/// killed, the session saved, the environment cleaned up.
///
/// # Errors
/// Startup failed (the env, trust, settings, the model).
pub fn run(options: &RunOptions) -> Result<ExitCode, StartError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(StartError::Failure)?;
    runtime.block_on(serve(options, Box::new(std::io::stdout())))
}

async fn serve(
    options: &RunOptions,
    stdout: Box<dyn std::io::Write + Send>,
) -> Result<ExitCode, StartError> {
    let out = Arc::new(Out::new(stdout));
    let dialogs = Dialogs::new(Arc::clone(&out));
    // No terminal to ask on: trust is decided as in print mode (settings and flags).
    let mut opened = startup::open(&options.open, Face::Rpc, None).await?;
    opened.ui = Some(Arc::clone(&dialogs) as Arc<dyn jig_session::extensions::ExtensionUi>);
    let prepared = match startup::prepare(options, &opened).await {
        Ok(prepared) => prepared,
        Err(error) => {
            opened.close().await;
            return Err(error);
        }
    };
    if let Some(note) = &prepared.setup_note {
        jig_session::warn(note);
    }
    let runner = opened.runner();
    let mut config = prepared.config;
    if !runner.extensions().is_empty() {
        config.turn_hooks = Arc::new(ExtensionTurnHooks {
            host: Arc::clone(&prepared.host),
            runner: Arc::clone(&runner),
        });
    }
    let mode = prepared
        .settings_permission_mode
        .resolve(options.permission_mode, PermissionMode::FullAuto);
    let hooks = PermissionHooks::for_session(
        mode,
        &config,
        &prepared.project_key,
        Arc::clone(&dialogs) as Arc<dyn Approver>,
    );
    let shared: Arc<dyn jig_tool::ToolHooks> = hooks.clone();
    config.hooks = chain::agent_hooks(shared, tool_hooks(&runner));
    let events = Events::new(Arc::clone(&out));
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let host = Arc::clone(&prepared.host);
    let mut server = Server::new(
        Parts {
            out: Arc::clone(&out),
            events,
            config,
            session: prepared.session,
            hooks,
            host: Arc::clone(&host),
            runner: Arc::clone(&runner),
            lifecycle: LifecycleEvents::start(&runner, &tokio::runtime::Handle::current()),
            knowledge: prepared.knowledge,
            switch: prepared.switch,
            provider_name: prepared.provider_name,
            session_key: prepared.project_key,
            no_session: options.no_session,
            queues: Queues::new(Arc::clone(&out)),
        },
        done_tx,
    );
    runner
        .notify(
            extension_events::SESSION_START,
            || serde_json::json!({"reason": "startup"}),
        )
        .await;

    let mut lines = read_stdin(Arc::clone(&dialogs));
    let mut stop = stop_signals()?;
    let mut idle = tokio::time::interval(IDLE_POLL);
    idle.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            line = lines.recv() => match line {
                Some(line) => server.handle(&line, &mut done_rx).await,
                None => break,
            },
            Some(done) = done_rx.recv() => server.finished(done),
            _ = stop.recv() => break,
            _ = idle.tick() => {}
        }
        server.start_pending();
    }

    // The app went away: nothing is left to answer a dialog or read an event.
    dialogs.cancel_all();
    if server.stop().await
        && let Some(done) = done_rx.recv().await
    {
        server.finished(done);
    }
    if let Some(lifecycle) = server.lifecycle.take() {
        lifecycle.finish().await;
    }
    host.finish();
    runner
        .notify(extension_events::SESSION_SHUTDOWN, || serde_json::json!({}))
        .await;
    host.close();
    drop(server);
    opened.close().await;
    Ok(ExitCode::SUCCESS)
}

/// Reads stdin: the answers to dialogs go straight to the dialog waiting for them (a dialog may
/// hold the command that asked it); the other records go to the session.
fn read_stdin(dialogs: Arc<Dialogs>) -> mpsc::UnboundedReceiver<Vec<u8>> {
    jig_session::jsonl::read_stdin(move |record| {
        // Parsed here only when it may be an answer: the session parses the rest.
        if !record.windows(ANSWER.len()).any(|window| window == ANSWER) {
            return false;
        }
        match Command::parse(record) {
            Ok(command) if command.kind == "extension_ui_response" => {
                dialogs.answer(&command.body);
                true
            }
            _ => false,
        }
    })
}

/// SIGTERM and SIGINT, as one stream: either ends the session as the end of stdin does.
fn stop_signals() -> Result<mpsc::UnboundedReceiver<()>, StartError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())
        .context("cannot listen for SIGTERM")
        .map_err(StartError::Failure)?;
    let mut interrupt = signal(SignalKind::interrupt())
        .context("cannot listen for SIGINT")
        .map_err(StartError::Failure)?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = interrupt.recv() => {}
        }
        let _ = tx.send(());
    });
    Ok(rx)
}
