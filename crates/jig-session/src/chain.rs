//! The one chain of hooks around every tool call, the same in every mode (`jig run`, the
//! interactive session, `jig mcp`, `jig tool`). From the caller inward:
//!
//! 1. audit (`--audit`, `audit::layer`): the call runs with the audited env's view that names
//!    it, and its decision and result are recorded;
//! 2. the permission policy (`jig run` and the interactive session): a call it blocks goes no
//!    further; arguments it changes are what the extensions see;
//! 3. the extensions' `tool_call` and `tool_result` (`extensions::tool_hooks`);
//! 4. the registry's tool, with the sandbox policy of the call's context (and, in the
//!    interactive session, the offer to run a command the sandbox denied again outside it,
//!    which wraps `bash` itself).
//!
//! Results come back out the same way, innermost first. A layer with nothing to do is left
//! out: with no extension subscribed, no permission policy and no audit log, there is no chain
//! at all and a call costs nothing more than the tool.
//!
//! The agent loop runs the chain as its `ToolHooks` (each call's `before_tool_call` in call
//! order, then the calls); a mode without one runs every tool through it
//! (`jig_tool::with_hooks`). Whoever dispatches the call names it in its context (the model's
//! call id, or `call-PID-N` from `jig_tool::CallInfo::next`).

use std::sync::Arc;

use async_trait::async_trait;
use jig_env_audit::AuditEnv;
use jig_protocol::{ToolCall, ToolResult};
use jig_tool::{BeforeToolCall, ToolContext, ToolHooks, ToolRegistry};
use serde_json::Value;

/// The agent loop's hooks (`jig run`, the interactive session): the chain of `permissions` and
/// the `extensions`' hooks (`extensions::tool_hooks`).
pub fn agent_hooks(
    permissions: Arc<dyn ToolHooks>,
    extensions: Option<Arc<dyn ToolHooks>>,
) -> Arc<dyn ToolHooks> {
    compose(
        crate::audit::env(),
        Some(Arc::clone(&permissions)),
        extensions,
    )
    .unwrap_or(permissions)
}

/// `registry` as a mode without an agent loop (`jig mcp`, `jig tool`) runs it: every tool
/// through the chain of the `extensions`' hooks (no permission policy), or `registry` as it is
/// when the chain is empty.
pub fn registry(registry: ToolRegistry, extensions: Option<Arc<dyn ToolHooks>>) -> ToolRegistry {
    match compose(crate::audit::env(), None, extensions) {
        Some(hooks) => jig_tool::with_hooks(&registry, &hooks),
        None => registry,
    }
}

/// The chain of the layers present, outermost first; `None` when there is none.
fn compose(
    audit: Option<&AuditEnv>,
    permissions: Option<Arc<dyn ToolHooks>>,
    extensions: Option<Arc<dyn ToolHooks>>,
) -> Option<Arc<dyn ToolHooks>> {
    crate::audit::layer(audit, layered(permissions, extensions))
}

/// `outer` around `inner`, or whichever of them there is.
fn layered(
    outer: Option<Arc<dyn ToolHooks>>,
    inner: Option<Arc<dyn ToolHooks>>,
) -> Option<Arc<dyn ToolHooks>> {
    match (outer, inner) {
        (Some(outer), Some(inner)) => Some(Arc::new(Layered { outer, inner })),
        (outer, None) => outer,
        (None, inner) => inner,
    }
}

/// Two layers: `outer` decides before `inner`, and sees the result after it.
struct Layered {
    outer: Arc<dyn ToolHooks>,
    inner: Arc<dyn ToolHooks>,
}

#[async_trait]
impl ToolHooks for Layered {
    async fn before_tool_call(&self, call: &ToolCall, ctx: &mut ToolContext) -> BeforeToolCall {
        match self.outer.before_tool_call(call, ctx).await {
            block @ BeforeToolCall::Block { .. } => block,
            BeforeToolCall::Continue => self.inner.before_tool_call(call, ctx).await,
            BeforeToolCall::ChangeArguments(arguments) => {
                let changed = ToolCall {
                    arguments: arguments.clone(),
                    ..call.clone()
                };
                match self.inner.before_tool_call(&changed, ctx).await {
                    BeforeToolCall::Continue => BeforeToolCall::ChangeArguments(arguments),
                    other => other,
                }
            }
        }
    }

    async fn after_tool_call(
        &self,
        call: &ToolCall,
        arguments: &Value,
        result: ToolResult,
    ) -> ToolResult {
        let result = self.inner.after_tool_call(call, arguments, result).await;
        self.outer.after_tool_call(call, arguments, result).await
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::PathBuf;
    use std::sync::Mutex;

    use jig_env_audit::AuditLog;
    use jig_env_memory::MemoryEnv;
    use serde_json::json;

    use super::*;

    /// Answers `answer`, remembers the arguments it saw and marks results with `mark`.
    struct Fixed {
        answer: fn() -> BeforeToolCall,
        mark: &'static str,
        seen: Mutex<Vec<Value>>,
    }

    impl Fixed {
        fn new(answer: fn() -> BeforeToolCall) -> Arc<Self> {
            Self::marking(answer, "")
        }

        fn marking(answer: fn() -> BeforeToolCall, mark: &'static str) -> Arc<Self> {
            Arc::new(Self {
                answer,
                mark,
                seen: Mutex::new(Vec::new()),
            })
        }

        fn seen(&self) -> Vec<Value> {
            self.seen
                .lock()
                .map(|seen| seen.clone())
                .unwrap_or_default()
        }
    }

    #[async_trait]
    impl ToolHooks for Fixed {
        async fn before_tool_call(
            &self,
            call: &ToolCall,
            _ctx: &mut ToolContext,
        ) -> BeforeToolCall {
            if let Ok(mut seen) = self.seen.lock() {
                seen.push(call.arguments.clone());
            }
            (self.answer)()
        }

        async fn after_tool_call(
            &self,
            _call: &ToolCall,
            _arguments: &Value,
            mut result: ToolResult,
        ) -> ToolResult {
            if !self.mark.is_empty() {
                result
                    .content
                    .push(jig_protocol::ContentBlock::text(self.mark));
            }
            result
        }
    }

    fn call() -> ToolCall {
        ToolCall {
            id: "c1".to_owned(),
            name: "bash".to_owned(),
            arguments: json!({"command": "ls"}),
            raw_arguments: None,
        }
    }

    fn ctx(env: Arc<dyn jig_env::ExecutionEnv>) -> ToolContext {
        ToolContext::new(env, PathBuf::from("/ws"))
    }

    fn memory() -> Arc<dyn jig_env::ExecutionEnv> {
        let env = MemoryEnv::new();
        env.add_dir("/ws").unwrap();
        Arc::new(env)
    }

    fn chain(first: &Arc<Fixed>, then: &Arc<Fixed>) -> Arc<dyn ToolHooks> {
        layered(
            Some(Arc::clone(first) as Arc<dyn ToolHooks>),
            Some(Arc::clone(then) as Arc<dyn ToolHooks>),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn a_call_the_outer_layer_blocks_never_reaches_the_inner_one() {
        let permissions = Fixed::new(|| BeforeToolCall::Block {
            reason: Some("denied".to_owned()),
        });
        let extensions = Fixed::new(|| BeforeToolCall::Continue);
        let verdict = chain(&permissions, &extensions)
            .before_tool_call(&call(), &mut ctx(memory()))
            .await;
        assert!(
            matches!(verdict, BeforeToolCall::Block { reason: Some(ref r) } if r == "denied"),
            "{verdict:?}"
        );
        assert!(extensions.seen().is_empty());
    }

    #[tokio::test]
    async fn an_allowed_call_is_decided_by_the_inner_layer() {
        let permissions = Fixed::new(|| BeforeToolCall::Continue);
        let extensions = Fixed::new(|| BeforeToolCall::Block { reason: None });
        let verdict = chain(&permissions, &extensions)
            .before_tool_call(&call(), &mut ctx(memory()))
            .await;
        assert!(matches!(verdict, BeforeToolCall::Block { reason: None }));
        assert_eq!(extensions.seen(), vec![json!({"command": "ls"})]);
    }

    #[tokio::test]
    async fn changed_arguments_are_what_the_inner_layer_sees_and_what_runs() {
        let permissions = Fixed::new(|| BeforeToolCall::ChangeArguments(json!({"command": "pwd"})));
        let extensions = Fixed::new(|| BeforeToolCall::Continue);
        let verdict = chain(&permissions, &extensions)
            .before_tool_call(&call(), &mut ctx(memory()))
            .await;
        assert!(
            matches!(verdict, BeforeToolCall::ChangeArguments(ref a) if *a == json!({"command": "pwd"})),
            "{verdict:?}"
        );
        assert_eq!(extensions.seen(), vec![json!({"command": "pwd"})]);
    }

    #[tokio::test]
    async fn results_come_back_out_innermost_first() {
        let permissions = Fixed::marking(|| BeforeToolCall::Continue, " permissions");
        let extensions = Fixed::marking(|| BeforeToolCall::Continue, " extensions");
        let result = chain(&permissions, &extensions)
            .after_tool_call(&call(), &json!({}), ToolResult::text("ran"))
            .await;
        assert_eq!(result.text_content(), "ran\n extensions\n permissions");
    }

    #[test]
    fn without_audit_permissions_or_extensions_there_is_no_chain() {
        assert!(compose(None, None, None).is_none());
        let extensions: Arc<dyn ToolHooks> = Fixed::new(|| BeforeToolCall::Continue);
        let only = compose(None, None, Some(Arc::clone(&extensions))).unwrap();
        assert!(
            Arc::ptr_eq(&only, &extensions),
            "a lone layer is used as it is"
        );
    }

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn records(&self) -> Vec<Value> {
            String::from_utf8(self.0.lock().unwrap().clone())
                .unwrap()
                .lines()
                .map(|line| serde_json::from_str(line).unwrap())
                .collect()
        }
    }

    /// Blocks `bash`, lets everything else run.
    struct NoBash;

    #[async_trait]
    impl ToolHooks for NoBash {
        async fn before_tool_call(
            &self,
            call: &ToolCall,
            _ctx: &mut ToolContext,
        ) -> BeforeToolCall {
            if call.name == "bash" {
                BeforeToolCall::Block {
                    reason: Some("no commands".into()),
                }
            } else {
                BeforeToolCall::Continue
            }
        }
    }

    #[tokio::test]
    async fn audit_is_outermost_and_every_record_of_a_call_names_it() {
        let buffer = Shared::default();
        let audited = AuditEnv::new(memory(), AuditLog::new(buffer.clone()));
        let extensions = Fixed::new(|| BeforeToolCall::Continue);
        let hooks = compose(
            Some(&audited),
            Some(Arc::new(NoBash)),
            Some(Arc::clone(&extensions) as Arc<dyn ToolHooks>),
        )
        .unwrap();
        let tools = jig_tool::with_hooks(
            &jig_tool_builtins::builtin_registry(&jig_tool_builtins::BuiltinsConfig::default()),
            &hooks,
        );
        let base = ctx(Arc::new(audited.clone()));
        let calls = [
            ("write", json!({"path": "a.txt", "content": "hi\n"})),
            ("bash", json!({"command": "ls"})),
            ("read", json!({"path": "a.txt"})),
            ("read", json!({"path": "missing.txt"})),
        ];
        for (name, args) in calls {
            let mut ctx = base.clone();
            ctx.call = Some(jig_tool::CallInfo::next(name));
            tools.get(name).unwrap().run(&ctx, args).await;
        }
        assert_eq!(
            extensions.seen().len(),
            3,
            "the blocked call never reached them"
        );

        let records = buffer.records();
        let tool_calls: Vec<(String, String, String)> = records
            .iter()
            .filter(|record| record["op"] == "tool_call")
            .map(|record| {
                (
                    record["call_id"].as_str().unwrap().to_owned(),
                    record["tool"].as_str().unwrap().to_owned(),
                    record["outcome"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let outcomes: Vec<(&str, &str)> = tool_calls
            .iter()
            .map(|(_, tool, outcome)| (tool.as_str(), outcome.as_str()))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("write", "ok"),
                ("bash", "denied"),
                ("read", "ok"),
                ("read", "error")
            ]
        );
        let mut ids: Vec<&str> = tool_calls.iter().map(|(id, ..)| id.as_str()).collect();
        ids.dedup();
        assert_eq!(ids.len(), 4, "one id per call: {ids:?}");
        for record in &records {
            let id = record["call_id"]
                .as_str()
                .unwrap_or_else(|| panic!("{record}"));
            let (_, tool, _) = tool_calls
                .iter()
                .find(|(call, ..)| call == id)
                .unwrap_or_else(|| panic!("{record} names no call"));
            assert_eq!(record["tool"], json!(tool), "{record}");
        }
        assert!(
            records
                .iter()
                .any(|record| record["op"] == "write" && record["tool"] == "write"),
            "{records:?}"
        );
    }
}
