//! One print-mode run (`jig run PROMPT`) over an opened session: the prompt through skills,
//! templates and the extensions' `input`/`before_agent_start`, the permission policy (which
//! never asks: it denies what `ask` would ask about), the run itself with the session recorded
//! as it goes, and the extensions' lifecycle around it. How the run is shown is the face's
//! ([`PrintView`]).

use std::sync::Arc;

use jig_agent::compaction::CompactionReason;
use jig_agent::session::SessionHeader;
use jig_agent::{Agent, AgentEvent, AgentObserver, RunOutcome, SessionRecorder};
use jig_extensions::events;
use jig_protocol::Message;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::approval::PermissionHooks;
use crate::extensions::{self, Sent, SessionHost};
use crate::policy::PermissionMode;
use crate::startup::{self, Opened, Prepared, RunOptions};
use crate::{StartError, chain, permissions};

/// How a print-mode run is shown: the face's side of [`run`].
pub trait PrintView: Send + Sync {
    /// The session's header, before the run (a new or resumed session).
    fn on_start(&self, header: &SessionHeader) {
        let _ = header;
    }

    /// An event of the run, after the session recorded it. `sent`: how an extension tagged the
    /// user message this event finished, when an extension sent it.
    fn on_event(&self, event: &AgentEvent, sent: Option<&Sent>);
}

/// How a print-mode run ended.
#[derive(Debug)]
pub enum PrintEnd {
    /// An extension's `input` handled the prompt: nothing was sent to the model.
    Handled,
    /// `--compact` failed before the prompt (nothing was sent); why.
    CompactionFailed(String),
    /// The run happened.
    Ran(RunOutcome),
}

/// Runs `prompt` in `opened` as print mode does: prepares the session ([`startup::prepare`]),
/// compacts a resumed one first when `compact`, runs until the model is done, `cancel` fires
/// or a limit is reached, and closes the session file (a file that could not be written is a
/// warning). `view` shows it.
///
/// # Errors
/// Preparing the session failed (the model, the session file), or the prompt names a skill or
/// template that cannot be used.
pub async fn run(
    options: &RunOptions,
    opened: &Opened,
    prompt: String,
    compact: bool,
    view: Arc<dyn PrintView>,
    cancel: &CancellationToken,
) -> Result<PrintEnd, StartError> {
    let runner = opened.runner();
    let Prepared {
        mut config,
        session,
        settings_permission_mode,
        host,
        project_key,
        knowledge,
        ..
    } = startup::prepare(options, opened).await?;
    // `/skill:NAME …` and `/TEMPLATE …` as the prompt, then skills forced in with --skill NAME.
    let prompt = match knowledge.expand(&prompt) {
        Some(expanded) => expanded.map_err(StartError::usage)?,
        None => prompt,
    };
    let prompt = knowledge.force(&startup::forced_skills(options), prompt)?;
    if !runner.extensions().is_empty() {
        config.turn_hooks = Arc::new(extensions::ExtensionTurnHooks {
            host: Arc::clone(&host),
            runner: Arc::clone(&runner),
        });
    }

    // An extension may transform or handle the input, add messages and change the prompt.
    let Some((prompt, system_prompt)) = startup::extension_prompt(
        &runner,
        prompt,
        std::mem::take(&mut config.system_prompt),
        "cli",
    )
    .await
    else {
        return Ok(PrintEnd::Handled);
    };
    config.system_prompt = system_prompt;

    // Print mode never asks: the mode decides (by default everything runs, as `jig run` always
    // did; `ask` denies what it would ask about, and the model reads why). The permission
    // policy decides first, then the extensions' `tool_call`.
    let mode = settings_permission_mode.resolve(options.permission_mode, PermissionMode::FullAuto);
    config.hooks = chain::agent_hooks(
        Arc::new(
            PermissionHooks::new(
                mode,
                &config.tools,
                permissions::load(&project_key),
                None,
                None,
            )
            .with_workspace(config.tool_context.clone()),
        ),
        extensions::tool_hooks(&runner),
    );

    let (summary, history) = session.context();
    view.on_start(session.header());
    let recorder = SessionRecorder::start(session);
    host.record_into(&recorder);
    let recording = Arc::new(Recording {
        session: recorder,
        host: Arc::clone(&host),
        view,
    });
    let lifecycle = extensions::LifecycleEvents::start(&runner, &tokio::runtime::Handle::current());
    let observer: Arc<dyn AgentObserver> = match &lifecycle {
        Some(lifecycle) => lifecycle.observer(recording.clone()),
        None => recording.clone(),
    };
    let mut agent = match summary {
        Some(summary) => Agent::with_summary(config, summary, history),
        None => Agent::with_messages(config, history),
    };
    runner
        .notify(events::SESSION_START, || json!({"reason": "startup"}))
        .await;
    let end = compact_and_run(&mut agent, compact, prompt, cancel, &observer).await;
    if let Some(lifecycle) = lifecycle {
        lifecycle.finish().await;
    }
    host.finish();
    runner.notify(events::SESSION_SHUTDOWN, || json!({})).await;
    host.close();
    if let Err(error) = recording.session.shutdown().await {
        crate::warn(&format!("the session could not be saved: {error:#}"));
    }
    Ok(end)
}

/// `--compact` first when asked (a failure ends it: nothing is sent), then the run.
async fn compact_and_run(
    agent: &mut Agent,
    compact: bool,
    prompt: Message,
    cancel: &CancellationToken,
    observer: &Arc<dyn AgentObserver>,
) -> PrintEnd {
    if compact
        && let Err(error) = agent
            .compact(CompactionReason::Manual, cancel, observer)
            .await
    {
        return PrintEnd::CompactionFailed(error.to_string());
    }
    PrintEnd::Ran(agent.run(prompt, cancel, observer).await)
}

/// Records each finished message in the session (an extension's with its tag), then shows the
/// event.
struct Recording {
    session: SessionRecorder,
    host: Arc<SessionHost>,
    view: Arc<dyn PrintView>,
}

impl AgentObserver for Recording {
    fn on_event(&self, event: &AgentEvent) {
        // Extensions send user messages only.
        let sent = match event {
            AgentEvent::MessageEnd {
                message: message @ Message::User(_),
            } => self.host.take_sent(message),
            _ => None,
        };
        match (&sent, event) {
            (Some(sent), AgentEvent::MessageEnd { message }) => {
                self.session.record_tagged_message(
                    message.clone(),
                    sent.custom_type.clone(),
                    (!sent.display).then_some(false),
                );
            }
            _ => self.session.record_event(event),
        }
        self.view.on_event(event, sent.as_ref());
    }
}
