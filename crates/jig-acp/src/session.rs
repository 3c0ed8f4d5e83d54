//! One ACP session: a jig session opened by the harness in the directory the editor names,
//! its agent, its permission policy asking through `session/request_permission`, and what the
//! editor sees of it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use jig_agent::{Agent, AgentObserver, RunEnd};
use jig_extensions::ExtensionRunner;
use jig_protocol::{ContentBlock, Message};
use jig_session::StartError;
use jig_session::approval::{Answer, ApprovalRequest, Approver, PermissionHooks};
use jig_session::chain;
use jig_session::extensions::{ExtensionTurnHooks, tool_hooks};
use jig_session::policy::PermissionMode;
use jig_session::startup::{self, Face, Opened, RunOptions};
use jig_session::writer::SessionWriter;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::client_fs::ClientFs;
use crate::rpc::{Peer, RpcError};
use crate::updates::{self, Updates};

/// jig's permission modes, as the editor's session modes.
const MODES: [(PermissionMode, &str, &str); 4] = [
    (
        PermissionMode::ReadOnly,
        "Read only",
        "Only tools that change nothing run",
    ),
    (
        PermissionMode::Ask,
        "Ask",
        "File changes and commands are asked about",
    ),
    (
        PermissionMode::AutoEdit,
        "Auto edit",
        "File changes run; commands are asked about",
    ),
    (PermissionMode::FullAuto, "Full auto", "Everything runs"),
];

/// An open session.
pub(crate) struct AcpSession {
    pub(crate) id: String,
    opened: Mutex<Option<Opened>>,
    /// The agent, while no prompt runs (a prompt holds it).
    agent: tokio::sync::Mutex<Agent>,
    /// The running prompt's token.
    cancel: Mutex<Option<CancellationToken>>,
    hooks: Arc<PermissionHooks>,
    updates: Arc<Updates>,
    observer: Arc<dyn AgentObserver>,
    runner: Arc<ExtensionRunner>,
    system_prompt: String,
    knowledge: jig_session::skills::Knowledge,
    /// What the harness decided at startup, told in the session's first update.
    trust: String,
    /// The session's file, for the model changes.
    writer: Arc<SessionWriter>,
    /// How the model changes, and where the session is now.
    model: Mutex<ModelState>,
}

/// The model a session talks to, and how to reach another.
struct ModelState {
    switch: jig_session::model::ProviderSwitch,
    provider: String,
    custom_base_url: Option<String>,
    custom: Option<jig_agent::CustomEndpoint>,
}

impl AcpSession {
    /// Opens the session `options` ask for (`options.session` set: the jig session with that
    /// id, resumed) in `cwd`. `editor_files`: `--client-fs` was given (`Some`), and the editor
    /// offers to read and write files (`true`).
    pub(crate) async fn open(
        peer: &Arc<Peer>,
        options: &RunOptions,
        cwd: PathBuf,
        editor_files: Option<bool>,
    ) -> Result<Arc<Self>, StartError> {
        let mut options = options.clone();
        options.open.roots = vec![cwd];
        options.open.roots_flag = "cwd";
        // No terminal to ask on: trust is decided as in print mode (settings and flags).
        let opened = startup::open(&options.open, Face::Acp, None).await?;
        let prepared = match startup::prepare(&options, &opened).await {
            Ok(prepared) => prepared,
            Err(error) => {
                opened.close().await;
                return Err(error);
            }
        };
        let runner = opened.runner();
        let mut config = prepared.config;
        if !runner.extensions().is_empty() {
            config.turn_hooks = Arc::new(ExtensionTurnHooks {
                host: Arc::clone(&prepared.host),
                runner: Arc::clone(&runner),
            });
        }
        let id = prepared.session.id().to_owned();
        let cwd = config.tool_context.cwd.clone();
        let mut trust = opened.project.decision.describe();
        match editor_files {
            Some(true) => {
                config.tool_context.env = Arc::new(ClientFs::new(
                    Arc::clone(&config.tool_context.env),
                    Arc::clone(peer),
                    id.clone(),
                ));
                trust.push_str("\nfiles are read and written through the editor (--client-fs)");
            }
            Some(false) => trust.push_str(
                "\n--client-fs: the editor does not offer fs/read_text_file and fs/write_text_file, so files are read and written on disk",
            ),
            None => {}
        }
        let mode = prepared
            .settings_permission_mode
            .resolve(options.permission_mode, PermissionMode::Ask);
        let approver = Arc::new(Asker {
            peer: Arc::clone(peer),
            session_id: id.clone(),
            cwd: cwd.clone(),
        });
        let hooks = PermissionHooks::for_session(
            mode,
            &config,
            &prepared.project_key,
            approver as Arc<dyn Approver>,
        );
        let shared: Arc<dyn jig_tool::ToolHooks> = hooks.clone();
        config.hooks = chain::agent_hooks(shared, tool_hooks(&runner));
        let updates = Arc::new(Updates::new(Arc::clone(peer), id.clone(), cwd));
        let (summary, history) = prepared.session.context();
        let model = ModelState {
            switch: prepared.switch,
            provider: prepared.provider_name,
            custom_base_url: prepared.session.base_url(),
            custom: prepared.session.custom_endpoint(),
        };
        let writer = SessionWriter::new(prepared.session);
        prepared
            .host
            .write_into(Arc::clone(&writer) as Arc<dyn jig_session::extensions::EntrySink>);
        let observer: Arc<dyn AgentObserver> = Arc::new(Fanout {
            writer: Arc::clone(&writer),
            updates: Arc::clone(&updates),
        });
        let system_prompt = config.system_prompt.clone();
        let agent = match summary {
            Some(summary) => Agent::with_summary(config, summary, history),
            None => Agent::with_messages(config, history),
        };
        if let Some(note) = prepared.setup_note {
            trust.push('\n');
            trust.push_str(&note);
        }
        Ok(Arc::new(Self {
            id,
            opened: Mutex::new(Some(opened)),
            agent: tokio::sync::Mutex::new(agent),
            cancel: Mutex::new(None),
            hooks,
            updates,
            observer,
            runner,
            system_prompt,
            knowledge: prepared.knowledge,
            trust,
            writer,
            model: Mutex::new(model),
        }))
    }

    /// `modes` of `session/new` and `session/load`.
    pub(crate) fn modes(&self) -> Value {
        json!({
            "currentModeId": self.hooks.mode().to_string(),
            "availableModes": MODES
                .iter()
                .map(|(mode, name, description)| json!({"id": mode.to_string(), "name": name, "description": description}))
                .collect::<Vec<_>>(),
        })
    }

    /// `configOptions` of `session/new`, `session/load` and `session/set_config_option`: the
    /// model, chosen among the known models of every provider that can be used now.
    pub(crate) fn config_options(&self, current_model: &str) -> Value {
        let state = self.model.lock().unwrap_or_else(PoisonError::into_inner);
        let options: Vec<Value> = state
            .switch
            .choices((&state.provider, current_model))
            .into_iter()
            .map(|(provider, model)| {
                json!({"value": format!("{provider}/{model}"), "name": format!("{model} ({provider})")})
            })
            .collect();
        json!([{
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": format!("{}/{current_model}", state.provider),
            "options": options,
        }])
    }

    /// The model of the next prompts (`config_options` needs it).
    pub(crate) async fn current_model(&self) -> String {
        self.agent.lock().await.config().model.clone()
    }

    /// `session/set_config_option`: `model` to `PROVIDER/MODEL`; refused while a prompt runs.
    pub(crate) fn set_option(&self, id: &str, value: &str) -> Result<String, RpcError> {
        if id != "model" {
            return Err(RpcError::invalid_params(format!(
                "unknown config option {id:?}: jig offers \"model\""
            )));
        }
        let (provider, model) = value
            .split_once('/')
            .ok_or_else(|| RpcError::invalid_params(format!("{value:?} is no PROVIDER/MODEL")))?;
        let mut agent = self.agent.try_lock().map_err(|_| {
            RpcError::invalid_params(
                "the model cannot change while a prompt runs: cancel it or wait for its end",
            )
        })?;
        let mut state = self.model.lock().unwrap_or_else(PoisonError::into_inner);
        let mut config = agent.config().clone();
        let current = state.provider.clone();
        let (changed, _) = state
            .switch
            .point(&mut config, &current, provider, model)
            .map_err(|error| RpcError::invalid_params(format!("cannot use {value}: {error}")))?;
        if let Some(endpoint) = changed {
            state.provider = endpoint.name;
            state.custom_base_url = endpoint.custom_base_url;
            state.custom = endpoint.custom;
        }
        let written = self.writer.session().append_model_change(
            &state.provider,
            model,
            state.custom_base_url.as_deref(),
            state.custom.clone(),
        );
        if let Err(error) = written {
            jig_session::warn(&format!("the session could not be saved: {error:#}"));
        }
        let messages = agent.messages().to_vec();
        *agent = match agent.summary() {
            Some(summary) => Agent::with_summary(config, summary.to_owned(), messages),
            None => Agent::with_messages(config, messages),
        };
        Ok(model.to_owned())
    }

    /// What the editor is told once the session exists: how trust was decided, and the slash
    /// commands (skills, prompt templates, the extensions' commands).
    pub(crate) fn announce(&self) {
        self.say(&format!("jig: {}", self.trust));
        let mut commands: Vec<Value> = self
            .knowledge
            .commands()
            .into_iter()
            .map(|(usage, help)| {
                let usage = usage.trim_start_matches('/');
                let (name, hint) = usage.split_once(' ').unwrap_or((usage, ""));
                let mut command = json!({"name": name, "description": help});
                if !hint.is_empty() {
                    command["input"] = json!({"hint": hint});
                }
                command
            })
            .collect();
        commands.extend(self.runner.commands().into_iter().map(|command| {
            json!({
                "name": command.name,
                "description": command.description.unwrap_or_default(),
            })
        }));
        self.updates.send(json!({
            "sessionUpdate": "available_commands_update",
            "availableCommands": commands,
        }));
    }

    /// A note from jig to the person in the editor (a thought: it is not the model's reply).
    pub(crate) fn say(&self, text: &str) {
        self.updates
            .send(updates::chunk("agent_thought_chunk", text));
    }

    /// Sends the conversation so far as updates (`session/load`).
    pub(crate) async fn replay(&self) {
        let agent = self.agent.lock().await;
        for message in agent.messages() {
            match message {
                Message::User(user) => {
                    let text = ContentBlock::join_text(&user.content);
                    self.updates
                        .send(updates::chunk("user_message_chunk", &text));
                }
                Message::Assistant(reply) => {
                    let text = reply.text();
                    if !text.is_empty() {
                        self.updates
                            .send(updates::chunk("agent_message_chunk", &text));
                    }
                    for block in &reply.content {
                        if let jig_protocol::AssistantBlock::ToolCall(call) = block {
                            let mut update = updates::tool_call(
                                &call.id,
                                &call.name,
                                &call.arguments,
                                &agent.config().tool_context.cwd,
                            );
                            update["sessionUpdate"] = json!("tool_call");
                            update["status"] = json!("completed");
                            self.updates.send(update);
                        }
                    }
                }
                Message::ToolResult(_) => {}
            }
        }
    }

    /// `session/set_mode`.
    pub(crate) fn set_mode(&self, mode_id: &str) -> Result<(), RpcError> {
        let mode: PermissionMode = mode_id.parse().map_err(|_| {
            RpcError::invalid_params(format!(
                "unknown mode {mode_id:?}: jig's modes are read-only, ask, auto-edit and full-auto"
            ))
        })?;
        self.hooks.set_mode(mode);
        self.updates.send(json!({
            "sessionUpdate": "current_mode_update",
            "currentModeId": mode.to_string(),
        }));
        Ok(())
    }

    /// `session/prompt`: runs the prompt to its end; the stop reason.
    pub(crate) async fn prompt(&self, prompt: &[Value]) -> Result<Value, RpcError> {
        let (text, images) = prompt_parts(prompt)?;
        let text = match self.knowledge.expand(&text) {
            Some(Ok(expanded)) => expanded,
            Some(Err(error)) => return Err(RpcError::invalid_params(error.to_string())),
            None => text,
        };
        let mut agent = self.agent.lock().await;
        let cancel = CancellationToken::new();
        *self.cancel.lock().unwrap_or_else(PoisonError::into_inner) = Some(cancel.clone());
        let prepared = startup::extension_prompt_with_images(
            &self.runner,
            text,
            images,
            self.system_prompt.clone(),
            "acp",
        )
        .await;
        let Some((message, system_prompt)) = prepared else {
            // An extension handled the prompt: nothing was sent to the model.
            return Ok(json!({"stopReason": "end_turn"}));
        };
        agent.set_system_prompt(system_prompt);
        let outcome = agent.run(message, &cancel, &self.observer).await;
        self.cancel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match outcome.end {
            RunEnd::Completed => Ok(json!({"stopReason": "end_turn"})),
            RunEnd::Aborted => Ok(json!({"stopReason": "cancelled"})),
            RunEnd::MaxTurns { .. } => Ok(json!({"stopReason": "max_turn_requests"})),
            RunEnd::Error { message } => Err(RpcError::internal(message)),
        }
    }

    /// `session/cancel`: the running prompt stops, its commands are killed.
    pub(crate) fn cancel(&self) {
        if let Some(cancel) = self
            .cancel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            cancel.cancel();
        }
    }

    /// Closes the env and the extensions (the connection ended).
    pub(crate) async fn close(&self) {
        self.cancel();
        let opened = self
            .opened
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(opened) = opened {
            opened.close().await;
        }
    }
}

/// Writes the session and sends the updates.
struct Fanout {
    writer: Arc<SessionWriter>,
    updates: Arc<Updates>,
}

impl AgentObserver for Fanout {
    fn on_event(&self, event: &jig_agent::AgentEvent) {
        self.writer.on_event(event);
        self.updates.on_event(event);
    }
}

/// The prompt's blocks as the text and images the model is sent: text as it is, a resource
/// link as a Markdown link, an embedded resource's text in a `<resource>` element (a binary
/// one named, not shown), images as images.
fn prompt_parts(prompt: &[Value]) -> Result<(String, Vec<ContentBlock>), RpcError> {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    let text = |value: &Value, key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    for block in prompt {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => texts.push(text(block, "text")),
            Some("image") => images.push(ContentBlock::Image {
                data: text(block, "data"),
                mime_type: text(block, "mimeType"),
            }),
            Some("resource_link") => {
                texts.push(format!("[{}]({})", text(block, "name"), text(block, "uri")));
            }
            Some("resource") => {
                let resource = block.get("resource").cloned().unwrap_or_default();
                let uri = text(&resource, "uri");
                match resource.get("text").and_then(Value::as_str) {
                    Some(body) => {
                        texts.push(format!("<resource uri=\"{uri}\">\n{body}\n</resource>"));
                    }
                    None => texts.push(format!(
                        "<resource uri=\"{uri}\">(binary content not shown)</resource>"
                    )),
                }
            }
            Some("audio") => {
                return Err(RpcError::invalid_params(
                    "jig takes no audio: its prompt capabilities say audio: false",
                ));
            }
            other => {
                return Err(RpcError::invalid_params(format!(
                    "unknown content block type {other:?} in the prompt"
                )));
            }
        }
    }
    Ok((texts.join("\n\n"), images))
}

/// Asks the editor about a call (`session/request_permission`), offering the answers the
/// terminal offers.
struct Asker {
    peer: Arc<Peer>,
    session_id: String,
    cwd: PathBuf,
}

#[async_trait]
impl Approver for Asker {
    async fn ask(&self, request: ApprovalRequest) -> Answer {
        let choices = request.choices();
        let options: Vec<Value> = choices
            .iter()
            .map(|choice| {
                let kind = match choice.id {
                    "allow_once" => "allow_once",
                    "reject" => "reject_once",
                    _ => "allow_always",
                };
                json!({"optionId": choice.id, "name": choice.label, "kind": kind})
            })
            .collect();
        let mut tool_call = updates::tool_call(
            request.call_id.as_deref().unwrap_or_default(),
            &request.tool,
            &request.args,
            &self.cwd,
        );
        tool_call["title"] = json!(request.title());
        tool_call["status"] = json!("pending");
        let asked = self
            .peer
            .request(
                "session/request_permission",
                json!({"sessionId": self.session_id, "toolCall": tool_call, "options": options}),
            )
            .await;
        let outcome = match asked {
            Ok(response) => response.get("outcome").cloned().unwrap_or_default(),
            Err(error) => {
                return Answer::Deny(Some(format!("the editor did not answer: {error}")));
            }
        };
        if outcome.get("outcome").and_then(Value::as_str) != Some("selected") {
            return Answer::Deny(None);
        }
        let chosen = outcome.get("optionId").and_then(Value::as_str);
        choices
            .into_iter()
            .find(|choice| Some(choice.id) == chosen)
            .map_or(Answer::Deny(None), |choice| choice.answer)
    }
}
