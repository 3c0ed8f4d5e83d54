//! Running a command again outside the sandbox, with the user's approval.
//!
//! When a sandboxed `bash` command fails in a way the sandbox likely caused (its result carries
//! the `[sandbox]` note), the interactive session asks the user whether to run it again with
//! the sandbox off: once, for every such command this session (`t`), or for commands starting
//! with a prefix this session (`p`, the same prefix rules as the approval prompt). An allowance
//! lives only as long as the session: it is never saved, and no project file can grant it.
//! Declining returns the sandboxed result, with the user's reason when given.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use jig_env::SandboxPolicy;
use jig_protocol::{ContentBlock, ToolResult};
use jig_session::approval::{Answer, ApprovalRequest, Approver};
use jig_session::policy::bash_command;
use jig_tool::{DynTool, ToolContext, ToolError, ToolRegistry};
use serde_json::Value;

/// What the user allowed to run again outside the sandbox without asking, this session.
#[derive(Debug, Default)]
struct Allowed {
    /// Every command the sandbox denies.
    any: bool,
    /// Commands starting with one of these prefixes.
    prefixes: BTreeSet<String>,
}

/// `bash`, offering to run a command the sandbox denied again outside it.
pub(super) struct SandboxRerun {
    inner: Arc<dyn DynTool>,
    approver: Arc<dyn Approver>,
    allowed: Mutex<Allowed>,
}

impl std::fmt::Debug for SandboxRerun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxRerun")
            .field("inner", &self.inner.name())
            .finish_non_exhaustive()
    }
}

/// Wraps `bash` in `tools` so that the user can approve a rerun outside the sandbox.
pub(super) fn wrap(tools: &mut ToolRegistry, approver: Arc<dyn Approver>) {
    if let Some(bash) = tools.get("bash").cloned() {
        tools.register(Arc::new(SandboxRerun {
            inner: bash,
            approver,
            allowed: Mutex::new(Allowed::default()),
        }));
    }
}

impl SandboxRerun {
    /// Whether `command` may run again outside the sandbox without asking.
    fn allowed(&self, command: &str) -> bool {
        let allowed = self.allowed.lock().unwrap_or_else(PoisonError::into_inner);
        allowed.any
            || allowed
                .prefixes
                .iter()
                .any(|prefix| jig_session::prefix::prefix_matches(prefix, command))
    }

    /// Asks the user; `Ok(())` to run it again, `Err(reason)` when declined.
    async fn ask(&self, args: &Value, note: &str) -> Result<(), Option<String>> {
        let request = ApprovalRequest::rerun_outside_sandbox(self.inner.name(), args, note);
        let offered = request.prefix.clone();
        // Whatever scope was answered, an allowance to leave the sandbox lasts only this
        // session: it is never saved where a project could bring it back.
        match self.approver.ask(request).await {
            Answer::AllowOnce => Ok(()),
            Answer::AllowTool(_) => {
                self.allowed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .any = true;
                Ok(())
            }
            Answer::AllowPrefix(prefix, _) => {
                // Only the prefix the question offered can be remembered.
                if offered.as_ref() == Some(&prefix) {
                    self.allowed
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .prefixes
                        .insert(prefix);
                }
                Ok(())
            }
            Answer::Deny(reason) => Err(reason),
        }
    }
}

#[async_trait]
impl DynTool for SandboxRerun {
    jig_tool::delegate_tool_metadata!();

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolResult, ToolError> {
        let result = self.inner.execute(ctx, args.clone()).await?;
        let note = result
            .details
            .get("sandboxDenied")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let (Some(note), Some(command)) = (note, bash_command(self.inner.name(), &args)) else {
            return Ok(result);
        };
        if !ctx.sandbox.is_on() || ctx.cancel.is_cancelled() {
            return Ok(result);
        }
        if !self.allowed(command)
            && let Err(reason) = self.ask(&args, &note).await
        {
            let said = reason
                .as_deref()
                .map(str::trim)
                .filter(|reason| !reason.is_empty())
                .map_or_else(String::new, |reason| format!(": {reason}"));
            return Ok(with_text(
                result,
                &format!("The user declined to run it again outside the sandbox{said}."),
                false,
            ));
        }
        let mut outside = ctx.clone();
        outside.sandbox = SandboxPolicy::off();
        let rerun = self.inner.execute(&outside, args).await?;
        Ok(with_text(
            rerun,
            "[sandbox] The sandbox denied this command; with the user's approval it ran again \
             outside the sandbox, and this is that run's result.",
            true,
        ))
    }
}

/// `result` with `text` added as a paragraph of its first text block: before it (`first`) or
/// after it.
fn with_text(mut result: ToolResult, text: &str, first: bool) -> ToolResult {
    match result.content.iter_mut().find_map(|block| match block {
        ContentBlock::Text { text } => Some(text),
        ContentBlock::Image { .. } => None,
    }) {
        Some(existing) if first => *existing = format!("{text}\n\n{existing}"),
        Some(existing) => {
            existing.push_str("\n\n");
            existing.push_str(text);
        }
        None => result.content.insert(0, ContentBlock::text(text)),
    }
    result
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use jig_env::SandboxMode;
    use jig_tool::Effects;
    use serde_json::json;

    use super::*;

    /// `bash` as far as the wrapper can tell: denied by the sandbox whenever it is on.
    #[derive(Debug)]
    struct FakeBash {
        schema: Value,
        outside: AtomicUsize,
    }

    #[async_trait]
    impl DynTool for FakeBash {
        fn name(&self) -> &'static str {
            "bash"
        }
        fn title(&self) -> &'static str {
            "Bash"
        }
        fn description(&self) -> String {
            String::new()
        }
        fn input_schema(&self) -> &Value {
            &self.schema
        }
        fn details_schema(&self) -> &Value {
            &self.schema
        }
        fn effects(&self) -> Effects {
            Effects::Process
        }
        fn sequential(&self) -> bool {
            false
        }
        async fn execute(&self, ctx: &ToolContext, _args: Value) -> Result<ToolResult, ToolError> {
            if ctx.sandbox.is_on() {
                return Ok(ToolResult::text("Read-only file system")
                    .with_details(json!({"sandboxDenied": "[sandbox] denied a write"})));
            }
            self.outside.fetch_add(1, Ordering::SeqCst);
            Ok(ToolResult::text("written"))
        }
    }

    /// Answers from a script, counting the questions.
    struct Script {
        answers: Mutex<Vec<Answer>>,
        asked: AtomicUsize,
    }

    #[async_trait]
    impl Approver for Script {
        async fn ask(&self, request: ApprovalRequest) -> Answer {
            assert!(request.sandbox_denial.is_some(), "{request:?}");
            self.asked.fetch_add(1, Ordering::SeqCst);
            self.answers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(0)
        }
    }

    fn session(answers: Vec<Answer>) -> (SandboxRerun, Arc<FakeBash>, Arc<Script>, ToolContext) {
        let bash = Arc::new(FakeBash {
            schema: json!({"type": "object"}),
            outside: AtomicUsize::new(0),
        });
        let script = Arc::new(Script {
            answers: Mutex::new(answers),
            asked: AtomicUsize::new(0),
        });
        let wrapper = SandboxRerun {
            inner: bash.clone(),
            approver: script.clone(),
            allowed: Mutex::new(Allowed::default()),
        };
        let env: Arc<dyn jig_env::ExecutionEnv> = Arc::new(jig_env_local::LocalEnv::new());
        let mut ctx = ToolContext::new(env, std::env::temp_dir());
        ctx.sandbox = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            ..SandboxPolicy::default()
        };
        (wrapper, bash, script, ctx)
    }

    async fn call(wrapper: &SandboxRerun, ctx: &ToolContext, command: &str) -> String {
        wrapper
            .execute(ctx, json!({"command": command}))
            .await
            .unwrap()
            .text_content()
    }

    #[tokio::test]
    async fn once_asks_again_and_a_denial_keeps_the_sandboxed_result() {
        let (wrapper, bash, script, ctx) =
            session(vec![Answer::AllowOnce, Answer::Deny(Some("no".to_owned()))]);
        assert!(
            call(&wrapper, &ctx, "make install")
                .await
                .contains("ran again outside")
        );
        let denied = call(&wrapper, &ctx, "make install").await;
        assert!(denied.contains("Read-only file system"), "{denied}");
        assert!(
            denied.contains("declined to run it again outside the sandbox: no"),
            "{denied}"
        );
        assert_eq!(script.asked.load(Ordering::SeqCst), 2);
        assert_eq!(bash.outside.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_prefix_covers_its_commands_only_and_any_covers_all() {
        let offered = jig_session::policy::suggested_prefix("cargo build").unwrap();
        let (wrapper, bash, script, ctx) = session(vec![
            Answer::AllowPrefix(offered.clone(), jig_session::approval::Scope::Project),
            Answer::AllowTool(jig_session::approval::Scope::Session),
        ]);
        call(&wrapper, &ctx, "cargo build").await;
        call(&wrapper, &ctx, &format!("{offered} --release")).await;
        assert_eq!(
            script.asked.load(Ordering::SeqCst),
            1,
            "`{offered} …` is allowed now"
        );
        call(&wrapper, &ctx, "npm ci").await;
        assert_eq!(
            script.asked.load(Ordering::SeqCst),
            2,
            "npm is another prefix"
        );
        call(&wrapper, &ctx, "npm i -g y").await;
        assert_eq!(
            script.asked.load(Ordering::SeqCst),
            2,
            "t allows any command"
        );
        assert_eq!(bash.outside.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn nothing_is_asked_with_the_sandbox_off() {
        let (wrapper, bash, script, mut ctx) = session(Vec::new());
        ctx.sandbox = SandboxPolicy::off();
        assert_eq!(call(&wrapper, &ctx, "make install").await, "written");
        assert_eq!(script.asked.load(Ordering::SeqCst), 0);
        assert_eq!(bash.outside.load(Ordering::SeqCst), 1);
    }
}
