//! The `before_tool_call` hook that applies the permission policy: allowed calls run, denied
//! ones become an error result the model reads, and asked ones go to an [`Approver`] (the
//! interactive prompt) — or, with no approver, are denied without waiting.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use jig_agent::{BeforeToolCall, ToolHooks};
use jig_protocol::ToolCall;
use jig_tool::{Effects, ToolRegistry};
use serde_json::Value;

use crate::policy::{Allowlist, PermissionMode, Verdict, bash_command, decide, suggested_prefix};

/// A call the user is asked about.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub args: Value,
    /// The prefix offered for "allow commands starting with …" (bash only).
    pub prefix: Option<String>,
}

/// Where an allowance applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Until the session ends.
    Session,
    /// Saved for this project.
    Project,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Run this call.
    AllowOnce,
    /// Run this call and every later call of the tool.
    AllowTool(Scope),
    /// Run this call and later bash commands starting with the prefix.
    AllowPrefix(String, Scope),
    /// Do not run it; the model sees the reason when there is one.
    Deny(Option<String>),
}

/// Asks the user about a call (the interactive session implements it).
#[async_trait]
pub trait Approver: Send + Sync {
    /// The answer; dropping the question (an aborted turn) should answer `Deny`.
    async fn ask(&self, request: ApprovalRequest) -> Answer;
}

/// Saves the project's allowlist (called when the user allows something for the project).
pub type SaveAllowlist = Box<dyn Fn(&Allowlist) -> Result<(), String> + Send + Sync>;

/// The text of a call the user denied.
pub fn denied_text(tool: &str, reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("The user denied this `{tool}` call: {reason}"),
        None => format!("The user denied this `{tool}` call."),
    }
}

/// The permission policy as [`ToolHooks`].
pub struct PermissionHooks {
    mode: Mutex<PermissionMode>,
    effects: HashMap<String, Effects>,
    session: Mutex<Allowlist>,
    project: Mutex<Allowlist>,
    approver: Option<Arc<dyn Approver>>,
    save: Option<SaveAllowlist>,
}

impl std::fmt::Debug for PermissionHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionHooks")
            .field("mode", &self.mode())
            .field("interactive", &self.approver.is_some())
            .finish_non_exhaustive()
    }
}

impl PermissionHooks {
    /// Hooks for `tools` in `mode`, with the project's saved allowlist. Without an `approver`
    /// what would be asked is denied.
    pub fn new(
        mode: PermissionMode,
        tools: &ToolRegistry,
        project: Allowlist,
        approver: Option<Arc<dyn Approver>>,
        save: Option<SaveAllowlist>,
    ) -> Self {
        Self {
            mode: Mutex::new(mode),
            effects: tools
                .iter()
                .map(|tool| (tool.name().to_owned(), tool.effects()))
                .collect(),
            session: Mutex::new(Allowlist::default()),
            project: Mutex::new(project),
            approver,
            save,
        }
    }

    /// The current mode.
    pub fn mode(&self) -> PermissionMode {
        *self.mode.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the mode for the rest of the session.
    pub fn set_mode(&self, mode: PermissionMode) {
        *self.mode.lock().unwrap_or_else(PoisonError::into_inner) = mode;
    }

    /// What is allowed for this session only, and what is saved for the project.
    pub fn allowlists(&self) -> (Allowlist, Allowlist) {
        (
            self.session
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            self.project
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        )
    }

    fn allowed(&self) -> Allowlist {
        let (mut all, project) = self.allowlists();
        all.extend(&project);
        all
    }

    fn remember(&self, scope: Scope, add: impl FnOnce(&mut Allowlist)) -> Option<String> {
        match scope {
            Scope::Session => {
                add(&mut self.session.lock().unwrap_or_else(PoisonError::into_inner));
                None
            }
            Scope::Project => {
                let snapshot = {
                    let mut project = self.project.lock().unwrap_or_else(PoisonError::into_inner);
                    add(&mut project);
                    project.clone()
                };
                self.save.as_ref().and_then(|save| save(&snapshot).err())
            }
        }
    }
}

#[async_trait]
impl ToolHooks for PermissionHooks {
    async fn before_tool_call(&self, call: &ToolCall) -> BeforeToolCall {
        let mode = self.mode();
        let effects = self
            .effects
            .get(&call.name)
            .copied()
            .unwrap_or(Effects::Process);
        let verdict = decide(mode, &call.name, effects, &call.arguments, &self.allowed());
        let verdict = match (&self.approver, verdict) {
            (Some(approver), Verdict::Ask) => {
                let prefix = bash_command(&call.name, &call.arguments).and_then(suggested_prefix);
                let answer = approver
                    .ask(ApprovalRequest {
                        tool: call.name.clone(),
                        args: call.arguments.clone(),
                        prefix,
                    })
                    .await;
                let failed = match answer {
                    Answer::AllowOnce => None,
                    Answer::AllowTool(scope) => self.remember(scope, |list| {
                        list.tools.insert(call.name.clone());
                    }),
                    Answer::AllowPrefix(prefix, scope) => self.remember(scope, |list| {
                        list.bash_prefixes.insert(prefix);
                    }),
                    Answer::Deny(reason) => {
                        return BeforeToolCall::Block {
                            reason: Some(denied_text(&call.name, reason.as_deref())),
                        };
                    }
                };
                if let Some(error) = failed {
                    // The allowance still holds for this session; only saving it failed.
                    tracing::warn!(%error, "cannot save the project's allowlist");
                }
                Verdict::Allow
            }
            (_, verdict) => verdict.without_asking(mode, &call.name),
        };
        match verdict {
            Verdict::Allow | Verdict::Ask => BeforeToolCall::Continue,
            Verdict::Deny(reason) => BeforeToolCall::Block {
                reason: Some(reason),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// No registered tools: every call counts as running processes.
    fn registry() -> ToolRegistry {
        ToolRegistry::new()
    }

    struct Fixed(Answer);

    #[async_trait]
    impl Approver for Fixed {
        async fn ask(&self, _request: ApprovalRequest) -> Answer {
            self.0.clone()
        }
    }

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: args,
            raw_arguments: None,
        }
    }

    #[tokio::test]
    async fn without_an_approver_asking_denies() {
        let hooks = PermissionHooks::new(
            PermissionMode::Ask,
            &registry(),
            Allowlist::default(),
            None,
            None,
        );
        let got = hooks
            .before_tool_call(&call("bash", json!({"command": "ls"})))
            .await;
        assert!(matches!(got, BeforeToolCall::Block { .. }), "{got:?}");
        hooks.set_mode(PermissionMode::FullAuto);
        let got = hooks
            .before_tool_call(&call("bash", json!({"command": "ls"})))
            .await;
        assert_eq!(got, BeforeToolCall::Continue);
    }

    #[tokio::test]
    async fn answers_are_remembered_where_asked() {
        let saved = Arc::new(Mutex::new(None::<Allowlist>));
        let sink = Arc::clone(&saved);
        let hooks = PermissionHooks::new(
            PermissionMode::Ask,
            &registry(),
            Allowlist::default(),
            Some(Arc::new(Fixed(Answer::AllowPrefix(
                "cargo test".into(),
                Scope::Project,
            )))),
            Some(Box::new(move |list: &Allowlist| {
                *sink.lock().unwrap() = Some(list.clone());
                Ok(())
            })),
        );
        let got = hooks
            .before_tool_call(&call("bash", json!({"command": "cargo test -q"})))
            .await;
        assert_eq!(got, BeforeToolCall::Continue);
        let saved = saved.lock().unwrap().clone().unwrap();
        assert!(saved.bash_prefixes.contains("cargo test"));

        let deny = PermissionHooks::new(
            PermissionMode::Ask,
            &registry(),
            Allowlist::default(),
            Some(Arc::new(Fixed(Answer::Deny(Some("not now".into()))))),
            None,
        );
        let got = deny
            .before_tool_call(&call("bash", json!({"command": "rm x"})))
            .await;
        assert_eq!(
            got,
            BeforeToolCall::Block {
                reason: Some("The user denied this `bash` call: not now".into())
            }
        );
    }
}
