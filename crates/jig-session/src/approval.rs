//! The `before_tool_call` hook that applies the permission policy: allowed calls run, denied
//! ones become an error result the model reads, and asked ones go to an [`Approver`] (the
//! interactive prompt) — or, with no approver, are denied without waiting.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use jig_protocol::ToolCall;
use jig_tool::{BeforeToolCall, Effects, ToolContext, ToolHooks, ToolRegistry};
use serde_json::Value;

use crate::policy::{
    Allowlist, PermissionMode, Verdict, bash_command, decide, protected_path, suggested_prefix,
};
use crate::prefix;

/// A call the user is asked about.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The model's id of the call, when the question is about one (a client that shows its
    /// calls shows the question on it).
    pub call_id: Option<String>,
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub args: Value,
    /// The prefix offered for "allow commands starting with …" (bash only).
    pub prefix: Option<String>,
    /// What allowing the prefix covers, in words (with `prefix`), or why no prefix is offered
    /// (without it), for bash commands.
    pub prefix_note: Option<String>,
    /// The protected directory the call changes (`.git`, `.jig`): why it is asked about even
    /// in `auto-edit` or with its tool allowed.
    pub protected: Option<&'static str>,
    /// Set when the call already ran in the sandbox and the sandbox likely denied it (the
    /// `[sandbox]` note): the question is whether to run it again **outside** the sandbox.
    /// Such an allowance is never saved for the project.
    pub sandbox_denial: Option<String>,
}

impl ApprovalRequest {
    /// The question about `tool` called with `args`; `protected` as found by the hooks.
    pub fn new(tool: &str, args: &Value, protected: Option<&'static str>) -> Self {
        let command = bash_command(tool, args);
        let prefix = command.and_then(suggested_prefix);
        let prefix_note = match (&prefix, command) {
            (Some(prefix), _) => Some(prefix::covers(prefix)),
            (None, Some(command)) => prefix::why_no_prefix(command),
            (None, None) => None,
        };
        Self {
            call_id: None,
            tool: tool.to_owned(),
            args: args.clone(),
            prefix,
            prefix_note,
            protected,
            sandbox_denial: None,
        }
    }

    /// The question in one line, for a client that shows it in its own dialog: `Allow bash:
    /// cargo test?`, `Run bash again OUTSIDE the sandbox: …?`.
    pub fn title(&self) -> String {
        let what = match self.args.get("command").or_else(|| self.args.get("path")) {
            Some(Value::String(text)) => text.clone(),
            _ => self.args.to_string(),
        };
        let what: String = if what.chars().count() > 200 {
            what.chars().take(199).chain(['…']).collect()
        } else {
            what
        };
        let protected = self
            .protected
            .map(|dir| format!(" (changes `{dir}`, which decides what later commands run)"))
            .unwrap_or_default();
        if self.sandbox_denial.is_some() {
            format!("Run {} again OUTSIDE the sandbox: {what}?", self.tool)
        } else {
            format!("Allow {}: {what}?{protected}", self.tool)
        }
    }

    /// The answers a client offers when it shows the question in its own dialog (an app's
    /// `select`, an editor's permission request), in order: once, always the tool (session,
    /// then project), always the bash prefix (session, then project), reject. Running a call
    /// again outside the sandbox is never allowed for the project.
    pub fn choices(&self) -> Vec<Choice> {
        let project = self.sandbox_denial.is_none();
        let every = if self.tool == "bash" {
            " (any command)"
        } else {
            ""
        };
        let mut choices = vec![Choice {
            id: "allow_once",
            label: "Allow once".to_owned(),
            answer: Answer::AllowOnce,
        }];
        choices.push(Choice {
            id: "allow_tool_session",
            label: format!("Always allow {}{every} in this session", self.tool),
            answer: Answer::AllowTool(Scope::Session),
        });
        if project {
            choices.push(Choice {
                id: "allow_tool_project",
                label: format!("Always allow {}{every} in this project", self.tool),
                answer: Answer::AllowTool(Scope::Project),
            });
        }
        if let Some(prefix) = &self.prefix {
            choices.push(Choice {
                id: "allow_prefix_session",
                label: format!("Always allow `{prefix} …` in this session"),
                answer: Answer::AllowPrefix(prefix.clone(), Scope::Session),
            });
            if project {
                choices.push(Choice {
                    id: "allow_prefix_project",
                    label: format!("Always allow `{prefix} …` in this project"),
                    answer: Answer::AllowPrefix(prefix.clone(), Scope::Project),
                });
            }
        }
        choices.push(Choice {
            id: "reject",
            label: "Reject".to_owned(),
            answer: Answer::Deny(None),
        });
        choices
    }

    /// The question whether to run `tool` with `args` again outside the sandbox, which likely
    /// denied it (`note` says what).
    pub fn rerun_outside_sandbox(tool: &str, args: &Value, note: &str) -> Self {
        Self {
            sandbox_denial: Some(note.to_owned()),
            ..Self::new(tool, args, None)
        }
    }
}

/// One answer a client offers for an [`ApprovalRequest`] ([`ApprovalRequest::choices`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// A stable name for the answer (`allow_once`, `allow_tool_session`,
    /// `allow_tool_project`, `allow_prefix_session`, `allow_prefix_project`, `reject`).
    pub id: &'static str,
    /// What the client shows.
    pub label: String,
    /// What choosing it answers.
    pub answer: Answer,
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
pub type SaveAllowlist =
    Box<dyn Fn(&Allowlist) -> Result<(), crate::permissions::SaveError> + Send + Sync>;

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
    /// Where relative paths resolve and what the workspace roots are, to find protected
    /// paths through symlinks.
    workspace: Option<ToolContext>,
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
            workspace: None,
        }
    }

    /// The policy of a long-lived session in `mode` over `config`'s tools and workspace: it
    /// asks `approver`, starts from the allowlist saved for the project `project_key`, and
    /// saves there what is allowed for the project.
    pub fn for_session(
        mode: PermissionMode,
        config: &jig_agent::AgentConfig,
        project_key: &std::path::Path,
        approver: Arc<dyn Approver>,
    ) -> Arc<Self> {
        let save_key = project_key.to_path_buf();
        Arc::new(
            Self::new(
                mode,
                &config.tools,
                crate::permissions::load(project_key),
                Some(approver),
                Some(Box::new(move |allow| {
                    crate::permissions::save(&save_key, allow).map(|_| ())
                })),
            )
            .with_workspace(config.tool_context.clone()),
        )
    }

    /// Resolves the paths of file changes in `workspace` (its working directory and roots,
    /// through the env of the call's context, so the lookups are on record as the call's) to
    /// find protected ones also when spelled through a symlink or `..`; without it only the
    /// path as written is checked.
    #[must_use]
    pub fn with_workspace(mut self, workspace: ToolContext) -> Self {
        self.workspace = Some(workspace);
        self
    }

    /// The protected directory the call's `path` argument names or is in, as written, as an
    /// absolute path, and with every symlink resolved.
    async fn protected(
        &self,
        effects: Effects,
        args: &Value,
        call: &ToolContext,
    ) -> Option<&'static str> {
        if effects.is_read_only() {
            return None;
        }
        let raw = args.get("path").and_then(Value::as_str)?;
        if let Some(dir) = protected_path(std::path::Path::new(raw)) {
            return Some(dir);
        }
        let ctx = self.workspace.as_ref()?;
        let Ok(absolute) = jig_tool::paths::absolute_path(call.env.as_ref(), &ctx.cwd, raw) else {
            return None;
        };
        let canonical = call.env.canonical_path_lenient(&absolute).await.ok();
        let roots: Vec<&std::path::Path> = std::iter::once(ctx.cwd.as_path())
            .chain(
                ctx.containment
                    .roots
                    .iter()
                    .map(std::path::PathBuf::as_path),
            )
            .collect();
        std::iter::once(absolute).chain(canonical).find_map(|path| {
            let inside = roots
                .iter()
                .find_map(|root| path.strip_prefix(root).ok())
                .map(std::path::Path::to_path_buf);
            protected_path(inside.as_deref().unwrap_or(&path))
        })
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

    fn remember(
        &self,
        scope: Scope,
        add: impl FnOnce(&mut Allowlist),
    ) -> Option<crate::permissions::SaveError> {
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
    async fn before_tool_call(&self, call: &ToolCall, ctx: &mut ToolContext) -> BeforeToolCall {
        let mode = self.mode();
        let effects = self
            .effects
            .get(&call.name)
            .copied()
            .unwrap_or(Effects::Process);
        let protected = if matches!(mode, PermissionMode::Ask | PermissionMode::AutoEdit) {
            self.protected(effects, &call.arguments, ctx).await
        } else {
            None
        };
        let verdict = decide(
            mode,
            &call.name,
            effects,
            &call.arguments,
            &self.allowed(),
            protected.is_some(),
        );
        let verdict = match (&self.approver, verdict) {
            (Some(approver), Verdict::Ask) => {
                let request = ApprovalRequest {
                    call_id: Some(call.id.clone()),
                    ..ApprovalRequest::new(&call.name, &call.arguments, protected)
                };
                let offered = request.prefix.clone();
                let answer = approver.ask(request).await;
                let failed = match answer {
                    Answer::AllowTool(scope) => self.remember(scope, |list| {
                        list.tools.insert(call.name.clone());
                    }),
                    // Only the prefix the question offered can be remembered.
                    Answer::AllowPrefix(prefix, scope) if offered.as_ref() == Some(&prefix) => self
                        .remember(scope, |list| {
                            list.bash_prefixes.insert(prefix);
                        }),
                    Answer::AllowOnce | Answer::AllowPrefix(..) => None,
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
            (_, Verdict::Ask) if let Some(dir) = protected => Verdict::Deny(format!(
                "The `{}` call was not run: it changes a file in `{dir}`, whose files decide what later commands run, so it needs the user's approval even in permission mode `{mode}`, and this session cannot ask (non-interactive). Do not retry it; continue without it or explain what is needed.",
                call.name
            )),
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

    #[test]
    fn a_client_is_offered_the_answers_the_terminal_offers() {
        let bash = ApprovalRequest::new("bash", &json!({"command": "cargo test --all"}), None);
        assert_eq!(bash.title(), "Allow bash: cargo test --all?");
        let offered: Vec<(&str, String)> = bash
            .choices()
            .into_iter()
            .map(|choice| (choice.id, choice.label))
            .collect();
        insta::assert_debug_snapshot!(offered);
        let outside = ApprovalRequest::rerun_outside_sandbox(
            "bash",
            &json!({"command": "curl example.com"}),
            "[sandbox] network denied",
        );
        assert!(
            outside
                .title()
                .starts_with("Run bash again OUTSIDE the sandbox")
        );
        assert!(
            outside
                .choices()
                .iter()
                .all(|choice| !choice.id.ends_with("_project")),
            "leaving the sandbox is never allowed for the project"
        );
        let edit = ApprovalRequest::new("edit", &json!({"path": ".git/config"}), Some(".git"));
        assert_eq!(
            edit.title(),
            "Allow edit: .git/config? (changes `.git`, which decides what later commands run)"
        );
        assert_eq!(edit.choices().last().unwrap().answer, Answer::Deny(None));
    }

    /// A call's context in an empty workspace.
    fn ctx() -> ToolContext {
        ToolContext::new(
            Arc::new(jig_env_memory::MemoryEnv::new()),
            std::path::PathBuf::from("/ws"),
        )
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
            .before_tool_call(&call("bash", json!({"command": "ls"})), &mut ctx())
            .await;
        assert!(matches!(got, BeforeToolCall::Block { .. }), "{got:?}");
        hooks.set_mode(PermissionMode::FullAuto);
        let got = hooks
            .before_tool_call(&call("bash", json!({"command": "ls"})), &mut ctx())
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
            .before_tool_call(&call("bash", json!({"command": "cargo test"})), &mut ctx())
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
            .before_tool_call(&call("bash", json!({"command": "rm x"})), &mut ctx())
            .await;
        assert_eq!(
            got,
            BeforeToolCall::Block {
                reason: Some("The user denied this `bash` call: not now".into())
            }
        );
    }

    /// Answers `AllowOnce` and keeps what it was asked.
    #[derive(Default)]
    struct Recording(Mutex<Vec<ApprovalRequest>>);

    #[async_trait]
    impl Approver for Recording {
        async fn ask(&self, request: ApprovalRequest) -> Answer {
            self.0.lock().unwrap().push(request);
            Answer::AllowOnce
        }
    }

    fn writing_registry() -> ToolRegistry {
        jig_tool_builtins::builtin_registry(&jig_tool_builtins::BuiltinsConfig::default())
    }

    #[tokio::test]
    async fn auto_edit_asks_before_writing_git_config() {
        let asked = Arc::new(Recording::default());
        let hooks = PermissionHooks::new(
            PermissionMode::AutoEdit,
            &writing_registry(),
            Allowlist::default(),
            Some(asked.clone()),
            None,
        );
        let hook = "[core]\n\tfsmonitor = touch /tmp/pwned\n";
        for path in [
            ".git/config",
            "./.git/hooks/pre-commit",
            ".jig/settings.json",
            "a/../.git/config",
        ] {
            let got = hooks
                .before_tool_call(
                    &call("write", json!({"path": path, "content": hook})),
                    &mut ctx(),
                )
                .await;
            assert_eq!(got, BeforeToolCall::Continue, "{path}");
        }
        let got = hooks
            .before_tool_call(
                &call("write", json!({"path": "src/a.rs", "content": "x"})),
                &mut ctx(),
            )
            .await;
        assert_eq!(got, BeforeToolCall::Continue);
        let asked = asked.0.lock().unwrap().clone();
        let paths: Vec<_> = asked
            .iter()
            .map(|request| (request.args["path"].as_str().unwrap(), request.protected))
            .collect();
        assert_eq!(
            paths,
            [
                (".git/config", Some(".git")),
                ("./.git/hooks/pre-commit", Some(".git")),
                (".jig/settings.json", Some(".jig")),
                ("a/../.git/config", Some(".git")),
            ],
            "src/a.rs runs without asking, the protected paths are asked about"
        );

        // Without anyone to ask, the write is not done and the model is told why.
        let print = PermissionHooks::new(
            PermissionMode::AutoEdit,
            &writing_registry(),
            Allowlist::default(),
            None,
            None,
        );
        let got = print
            .before_tool_call(
                &call("write", json!({"path": ".git/config", "content": hook})),
                &mut ctx(),
            )
            .await;
        let BeforeToolCall::Block {
            reason: Some(reason),
        } = got
        else {
            panic!("expected a block, got {got:?}");
        };
        insta::assert_snapshot!(reason, @"The `write` call was not run: it changes a file in `.git`, whose files decide what later commands run, so it needs the user's approval even in permission mode `auto-edit`, and this session cannot ask (non-interactive). Do not retry it; continue without it or explain what is needed.");
    }

    #[tokio::test]
    async fn only_the_offered_prefix_is_remembered() {
        let hooks = PermissionHooks::new(
            PermissionMode::Ask,
            &registry(),
            Allowlist::default(),
            Some(Arc::new(Fixed(Answer::AllowPrefix(
                "rm".into(),
                Scope::Session,
            )))),
            None,
        );
        let got = hooks
            .before_tool_call(
                &call("bash", json!({"command": "rm -rf build"})),
                &mut ctx(),
            )
            .await;
        assert_eq!(got, BeforeToolCall::Continue, "the call itself was allowed");
        assert!(hooks.allowlists().0.is_empty(), "{:?}", hooks.allowlists());
    }

    #[test]
    fn questions_say_what_a_prefix_covers_or_why_there_is_none() {
        let text = [
            "cargo test -p x",
            "rm -rf build",
            "python3 x.py",
            "find . -exec rm {} +",
            "make && rm x",
        ]
        .map(|command| {
            let request = ApprovalRequest::new("bash", &json!({"command": command}), None);
            format!(
                "{command}\n  prefix: {:?}\n  note: {}",
                request.prefix,
                request.prefix_note.unwrap_or_default()
            )
        })
        .join("\n");
        insta::assert_snapshot!(text, @r#"
            cargo test -p x
              prefix: Some("cargo test -p")
              note: covers `cargo test -p` + any arguments, as one simple command (no ; & | < > $ `, parentheses or unquoted globs), never with --config --manifest-path -Z -C --target-dir
            rm -rf build
              prefix: None
              note: `rm` can delete files or run other programs, so no prefix allows it
            python3 x.py
              prefix: None
              note: `python3` can delete files or run other programs, so no prefix allows it
            find . -exec rm {} +
              prefix: None
              note: `find -exec` can run or delete other programs' work, so no prefix allows it
            make && rm x
              prefix: None
              note: more than one simple command (or an expansion), which no prefix allows
        "#);
    }
}
