//! One conformance test per fold rule, with in-process extensions (the fold lives in the runner,
//! so every transport gets the same semantics; `process.rs` repeats the key ones over JSON-RPC).

use std::sync::Arc;
use std::time::Duration;

use jig_extensions::{
    ExtensionHost, InProcessExtension, InputOutcome, LoadError, NOT_INITIALIZED, RecordedAction,
    ToolCallOutcome, ToolRegistration, TrustAnswer, events,
};
use jig_protocol::{ContentBlock, Message, ToolResult};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{host, runner};

fn ext(name: &str) -> InProcessExtension {
    InProcessExtension::new(format!("<inline:{name}>"))
}

#[tokio::test]
async fn project_trust_first_decisive_answer_wins_and_failures_are_warnings() {
    let runner = runner(vec![
        ext("undecided")
            .on(events::PROJECT_TRUST, |_| {
                Ok(json!({"trusted": "undecided"}))
            })
            .into_handle(),
        ext("throws")
            .on(events::PROJECT_TRUST, |_| Err("cannot decide".to_owned()))
            .into_handle(),
        ext("silent")
            .on(events::PROJECT_TRUST, |_| Ok(Value::Null))
            .into_handle(),
        ext("no")
            .on(events::PROJECT_TRUST, |payload| {
                assert_eq!(payload["cwd"], "/p");
                Ok(json!({"trusted": "no", "remember": true}))
            })
            .into_handle(),
        ext("yes")
            .on(events::PROJECT_TRUST, |_| {
                panic!("never asked: an earlier answer decided")
            })
            .into_handle(),
    ]);
    let outcome = runner
        .project_trust(std::path::Path::new("/p"), "print", false)
        .await;
    assert_eq!(
        outcome.answer,
        Some(TrustAnswer {
            trusted: false,
            remember: true,
            path: "<inline:no>".to_owned()
        })
    );
    let warnings: Vec<String> = outcome.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        ["Extension \"<inline:throws>\" project_trust error: cannot decide"]
    );
}

#[tokio::test]
async fn project_trust_accepts_booleans_and_falls_through_when_nobody_decides() {
    let runner1 = runner(vec![
        ext("yes")
            .on(events::PROJECT_TRUST, |_| Ok(json!({"trusted": true})))
            .into_handle(),
    ]);
    let outcome = runner1
        .project_trust(std::path::Path::new("/p"), "print", false)
        .await;
    assert_eq!(
        outcome.answer.map(|a| (a.trusted, a.remember)),
        Some((true, false))
    );
    let runner2 = runner(vec![
        ext("undecided")
            .on(events::PROJECT_TRUST, |_| {
                Ok(json!({"trusted": "undecided"}))
            })
            .into_handle(),
    ]);
    let outcome = runner2
        .project_trust(std::path::Path::new("/p"), "print", false)
        .await;
    assert_eq!(outcome.answer, None);
    assert!(outcome.warnings.is_empty());
}

#[tokio::test]
async fn tool_call_first_block_wins_and_later_handlers_see_the_replaced_input() {
    let runner = runner(vec![
        ext("rewrite")
            .on(events::TOOL_CALL, |payload| {
                assert_eq!(payload["input"], json!({"command": "ls"}));
                Ok(json!({"input": {"command": "ls -la"}}))
            })
            .into_handle(),
        ext("observe")
            .on(events::TOOL_CALL, |payload| {
                assert_eq!(payload["toolName"], "bash");
                assert_eq!(payload["toolCallId"], "c1");
                assert_eq!(payload["input"], json!({"command": "ls -la"}));
                Ok(json!({}))
            })
            .into_handle(),
    ]);
    let outcome = runner
        .tool_call("c1", "bash", &json!({"command": "ls"}))
        .await;
    assert_eq!(
        outcome,
        ToolCallOutcome::Allow {
            input: Some(json!({"command": "ls -la"}))
        }
    );

    let runner = crate::support::runner(vec![
        ext("first")
            .on(events::TOOL_CALL, |_| {
                Ok(json!({"block": true, "reason": "first says no"}))
            })
            .into_handle(),
        ext("second")
            .on(events::TOOL_CALL, |_| {
                panic!("never asked: the call is already blocked")
            })
            .into_handle(),
    ]);
    assert_eq!(
        runner.tool_call("c2", "bash", &json!({})).await,
        ToolCallOutcome::Block {
            reason: Some("first says no".to_owned())
        }
    );
}

#[tokio::test]
async fn tool_call_handler_errors_and_timeouts_block_fail_closed() {
    let runner = runner(vec![
        ext("throws")
            .on(events::TOOL_CALL, |_| {
                Err("policy file unreadable".to_owned())
            })
            .into_handle(),
    ]);
    assert_eq!(
        runner.tool_call("c1", "write", &json!({})).await,
        ToolCallOutcome::Block {
            reason: Some(
                "Extension \"<inline:throws>\" tool_call error: policy file unreadable".to_owned()
            )
        }
    );
    let errors = runner.take_errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].event, "tool_call");

    let runner = crate::support::runner(vec![
        ext("slow")
            .on_async(events::TOOL_CALL, |_, _| async {
                tokio::time::sleep(Duration::from_hours(1)).await;
                Ok(Value::Null)
            })
            .into_handle(),
    ]);
    assert_eq!(
        runner.tool_call("c1", "write", &json!({})).await,
        ToolCallOutcome::Block {
            reason: Some(
                "Extension \"<inline:slow>\" tool_call error: no answer within 1.5s; its handlers are disabled"
                    .to_owned()
            )
        }
    );
    // The extension dropped out: the next call goes through.
    assert_eq!(
        runner.tool_call("c2", "write", &json!({})).await,
        ToolCallOutcome::Allow { input: None }
    );

    let runner = crate::support::runner(vec![
        ext("garbled")
            .on(events::TOOL_CALL, |_| Ok(json!({"block": "yes please"})))
            .into_handle(),
    ]);
    let ToolCallOutcome::Block {
        reason: Some(reason),
    } = runner.tool_call("c1", "write", &json!({})).await
    else {
        panic!("an unreadable answer must block");
    };
    assert!(
        reason.starts_with("Extension \"<inline:garbled>\" tool_call error: invalid result:"),
        "{reason}"
    );
}

#[tokio::test]
async fn tool_result_patches_chain_field_by_field() {
    let runner = runner(vec![
        ext("mark-error")
            .on(events::TOOL_RESULT, |payload| {
                assert_eq!(payload["content"], json!([{"type": "text", "text": "ok"}]));
                assert_eq!(payload["isError"], false);
                Ok(json!({"isError": true, "details": {"by": "first"}}))
            })
            .into_handle(),
        ext("throws")
            .on(events::TOOL_RESULT, |_| Err("oops".to_owned()))
            .into_handle(),
        ext("rewrite")
            .on(events::TOOL_RESULT, |payload| {
                assert_eq!(payload["isError"], true);
                assert_eq!(payload["details"], json!({"by": "first"}));
                Ok(json!({"content": [{"type": "text", "text": "patched"}]}))
            })
            .into_handle(),
    ]);
    let result = runner
        .tool_result("c1", "read", &json!({"path": "a"}), ToolResult::text("ok"))
        .await;
    assert_eq!(
        result,
        ToolResult {
            content: vec![ContentBlock::text("patched")],
            details: json!({"by": "first"}),
            is_error: true,
        }
    );
    let errors: Vec<String> = runner
        .take_errors()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errors,
        ["Extension \"<inline:throws>\" tool_result error: oops"]
    );
}

#[tokio::test]
async fn input_transforms_chain_and_the_first_handled_wins() {
    let runner = runner(vec![
        ext("upper")
            .on(events::INPUT, |payload| {
                let text = payload["text"].as_str().unwrap().to_uppercase();
                Ok(json!({"action": "transform", "text": text}))
            })
            .into_handle(),
        ext("continue")
            .on(events::INPUT, |_| Ok(json!({"action": "continue"})))
            .into_handle(),
        ext("suffix")
            .on(events::INPUT, |payload| {
                assert_eq!(payload["source"], "rpc");
                let text = format!("{}!", payload["text"].as_str().unwrap());
                Ok(json!({"action": "transform", "text": text}))
            })
            .into_handle(),
    ]);
    assert_eq!(
        runner.input("hello".to_owned(), Vec::new(), "rpc").await,
        InputOutcome::Continue {
            text: "HELLO!".to_owned(),
            images: Vec::new()
        }
    );
    let runner = crate::support::runner(vec![
        ext("handled")
            .on(events::INPUT, |_| Ok(json!({"action": "handled"})))
            .into_handle(),
        ext("after")
            .on(events::INPUT, |_| {
                panic!("never asked: the input was handled")
            })
            .into_handle(),
    ]);
    assert_eq!(
        runner
            .input("/x".to_owned(), Vec::new(), "interactive")
            .await,
        InputOutcome::Handled
    );
}

#[tokio::test]
async fn before_agent_start_collects_messages_and_chains_the_system_prompt() {
    let runner = runner(vec![
        ext("a")
            .on(events::BEFORE_AGENT_START, |payload| {
                assert_eq!(payload["systemPrompt"], "base");
                Ok(json!({"message": {"customType": "note", "content": "from a"},
                          "systemPrompt": "base + a"}))
            })
            .into_handle(),
        ext("b")
            .on(events::BEFORE_AGENT_START, |payload| {
                assert_eq!(payload["systemPrompt"], "base + a");
                assert_eq!(payload["prompt"], "do it");
                Ok(json!({"message": {"content": [{"type": "text", "text": "from b"}], "display": false}}))
            })
            .into_handle(),
    ]);
    let outcome = runner.before_agent_start("do it", &[], "base").await;
    assert_eq!(outcome.system_prompt.as_deref(), Some("base + a"));
    let texts: Vec<String> = outcome
        .messages
        .iter()
        .map(|m| ContentBlock::join_text(&m.content))
        .collect();
    assert_eq!(texts, ["from a", "from b"]);
    assert_eq!(outcome.messages[0].custom_type.as_deref(), Some("note"));
    assert!(!outcome.messages[1].display);
    let none = crate::support::runner(vec![])
        .before_agent_start("p", &[], "base")
        .await;
    assert_eq!(none.system_prompt, None);
}

#[tokio::test]
async fn context_replacements_chain() {
    let runner = runner(vec![
        ext("append")
            .on(events::CONTEXT, |payload| {
                let mut messages = payload["messages"].as_array().unwrap().clone();
                messages.push(serde_json::to_value(Message::user_text("added")).unwrap());
                Ok(json!({"messages": messages}))
            })
            .into_handle(),
        ext("count")
            .on(events::CONTEXT, |payload| {
                assert_eq!(payload["messages"].as_array().unwrap().len(), 2);
                Ok(Value::Null)
            })
            .into_handle(),
    ]);
    let messages = runner.context(vec![Message::user_text("first")]).await;
    assert_eq!(messages.len(), 2);
}

#[tokio::test]
async fn message_end_replacements_chain_but_must_keep_the_role() {
    let assistant = json!({"role": "assistant", "content": [{"type": "text", "text": "x"}],
        "api": "a", "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 0});
    let runner = runner(vec![
        ext("redact")
            .on(events::MESSAGE_END, |_| {
                Ok(json!({"message": {"role": "user", "content": [{"type": "text", "text": "redacted"}]}}))
            })
            .into_handle(),
        ext("wrong-role")
            .on(events::MESSAGE_END, move |_| Ok(json!({"message": assistant})))
            .into_handle(),
    ]);
    let message = runner.message_end(Message::user_text("secret")).await;
    assert_eq!(
        serde_json::to_value(&message).unwrap()["content"][0]["text"],
        "redacted"
    );
    let errors: Vec<String> = runner
        .take_errors()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errors,
        [
            "Extension \"<inline:wrong-role>\" message_end error: message_end handlers must return a message with the same role"
        ]
    );
}

#[tokio::test]
async fn session_before_stops_at_the_first_cancel_else_returns_the_last_result() {
    let runner = runner(vec![
        ext("a")
            .on(events::SESSION_BEFORE_COMPACT, |_| {
                Ok(json!({"summary": "a"}))
            })
            .into_handle(),
        ext("b")
            .on(events::SESSION_BEFORE_COMPACT, |_| {
                Ok(json!({"summary": "b"}))
            })
            .into_handle(),
        ext("silent")
            .on(events::SESSION_BEFORE_COMPACT, |_| Ok(json!({})))
            .into_handle(),
    ]);
    let outcome = runner
        .session_before(events::SESSION_BEFORE_COMPACT, &json!({"reason": "manual"}))
        .await;
    assert!(!outcome.cancel);
    assert_eq!(outcome.result, Some(json!({"summary": "b"})));
    let runner = crate::support::runner(vec![
        ext("cancel")
            .on(events::SESSION_BEFORE_SWITCH, |_| {
                Ok(json!({"cancel": true}))
            })
            .into_handle(),
        ext("after")
            .on(events::SESSION_BEFORE_SWITCH, |_| {
                panic!("never asked: cancelled")
            })
            .into_handle(),
    ]);
    let outcome = runner
        .session_before(events::SESSION_BEFORE_SWITCH, &json!({"reason": "new"}))
        .await;
    assert!(outcome.cancel);
}

#[tokio::test]
async fn notifications_reach_every_subscriber_and_failures_do_not_stop_the_rest() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (s1, s2) = (Arc::clone(&seen), Arc::clone(&seen));
    let runner = runner(vec![
        ext("throws")
            .on(events::SESSION_START, |_| Err("boom".to_owned()))
            .into_handle(),
        ext("a")
            .on(events::SESSION_START, move |p| {
                s1.lock().unwrap().push(format!("a:{}", p["reason"]));
                Ok(Value::Null)
            })
            .into_handle(),
        ext("b")
            .on(events::SESSION_SHUTDOWN, move |_| {
                s2.lock().unwrap().push("b".to_owned());
                Ok(Value::Null)
            })
            .into_handle(),
    ]);
    runner
        .notify(events::SESSION_START, || json!({"reason": "startup"}))
        .await;
    runner
        .notify(events::SESSION_SHUTDOWN, || json!({"reason": "quit"}))
        .await;
    runner
        .notify("turn_end", || {
            panic!("no subscriber: the payload is never built")
        })
        .await;
    assert_eq!(*seen.lock().unwrap(), ["a:\"startup\"", "b"]);
    assert_eq!(runner.take_errors().len(), 1);
}

#[tokio::test]
async fn actions_are_refused_until_bound_and_queued_providers_apply_at_bind() {
    let extension = ext("actions").provider(json!({"name": "local", "baseUrl": "http://x"}));
    let context = extension.context();
    let handle = extension
        .on_async(events::TOOL_CALL, |cx, _| async move {
            let info = cx.action("getSessionInfo", json!({})).await?;
            let confirmed = cx.action("ui/confirm", json!({"title": "Run?"})).await?;
            cx.action(
                "appendEntry",
                json!({"customType": "seen", "data": info["sessionId"]}),
            )
            .await?;
            Ok(json!({"block": confirmed == json!(false), "reason": "not confirmed"}))
        })
        .into_handle();
    assert_eq!(
        context
            .action("sendMessage", json!({"content": "hi"}))
            .await,
        Err(NOT_INITIALIZED.to_owned())
    );
    assert_eq!(
        NOT_INITIALIZED,
        "Extension runtime not initialized. Action methods cannot be called during extension loading."
    );
    let runner = runner(vec![handle]);
    let host = host();
    runner
        .bind(Arc::clone(&host) as Arc<dyn ExtensionHost>)
        .await;
    assert_eq!(
        runner.tool_call("c1", "bash", &json!({})).await,
        ToolCallOutcome::Block {
            reason: Some("not confirmed".to_owned())
        }
    );
    assert_eq!(
        host.actions(),
        vec![
            RecordedAction::RegisterProvider(
                "<inline:actions>".to_owned(),
                json!({"name": "local", "baseUrl": "http://x"})
            ),
            RecordedAction::Ui(
                "<inline:actions>".to_owned(),
                jig_extensions::UiRequest::Confirm {
                    title: "Run?".to_owned(),
                    message: None
                }
            ),
            RecordedAction::AppendEntry(
                "<inline:actions>".to_owned(),
                "seen".to_owned(),
                json!("s-1")
            ),
        ]
    );
}

#[tokio::test]
async fn provider_registration_failures_at_bind_are_errors() {
    let runner = runner(vec![
        ext("bad").provider(json!({"models": []})).into_handle(),
    ]);
    let host = host();
    runner
        .bind(Arc::clone(&host) as Arc<dyn ExtensionHost>)
        .await;
    let errors: Vec<String> = host.errors().iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [
            "Extension \"<inline:bad>\" register_provider error: Provider config is required when registering by name"
        ]
    );
}

fn tool(name: &str) -> ToolRegistration {
    serde_json::from_value(json!({"name": name, "description": "d",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}))
    .unwrap()
}

#[tokio::test]
async fn tool_and_flag_name_conflicts_are_load_errors_and_commands_get_suffixes() {
    let mut runner = jig_extensions::ExtensionRunner::default();
    let noop = |_: jig_extensions::HandlerContext, _: Value| async { Ok(ToolResult::text("")) };
    runner
        .add(ext("a").tool(tool("count"), noop).into_handle())
        .unwrap();
    let error = runner
        .add(ext("b").tool(tool("count"), noop).into_handle())
        .unwrap_err();
    assert_eq!(
        error,
        LoadError::new("<inline:b>", "Tool \"count\" conflicts with <inline:a>")
    );
    assert_eq!(
        error.to_string(),
        "Failed to load extension \"<inline:b>\": Tool \"count\" conflicts with <inline:a>"
    );
    assert_eq!(runner.extensions().len(), 1);
    assert_eq!(runner.tools().len(), 1);
    assert_eq!(
        jig_extensions::LOAD_ERROR_HINT,
        "Hint: Start without extensions using \"jig -ne\"."
    );
}

#[tokio::test]
async fn a_runner_without_subscribers_passes_everything_through() {
    let runner = runner(vec![
        ext("other")
            .on("turn_end", |_| Ok(Value::Null))
            .into_handle(),
    ]);
    assert!(!runner.has_handlers(events::TOOL_CALL));
    assert_eq!(
        runner
            .tool_call("c", "bash", &json!({"command": "x"}))
            .await,
        ToolCallOutcome::Allow { input: None }
    );
    let result = runner
        .tool_result("c", "bash", &json!({}), ToolResult::text("out"))
        .await;
    assert_eq!(result, ToolResult::text("out"));
}

#[test]
fn the_runner_and_its_futures_can_cross_threads() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: &T) {}
    let runner = jig_extensions::ExtensionRunner::default();
    send_sync(&runner);
    let input = json!({});
    send(&runner.tool_call("c", "t", &input));
    send(&runner.tool_result("c", "t", &input, ToolResult::text("")));
    send(&runner.input(String::new(), Vec::new(), "rpc"));
    send(&runner.context(Vec::new()));
    send(&runner.project_trust(std::path::Path::new("/"), "print", false));
    send(&runner.bind(host() as Arc<dyn ExtensionHost>));
}

fn flag(name: &str, kind: &str, default: &Value) -> jig_extensions::FlagRegistration {
    serde_json::from_value(json!({"name": name, "type": kind, "default": default})).unwrap()
}

#[tokio::test]
async fn flag_values_go_to_the_extension_that_registered_them_and_unknown_flags_fail() {
    let a = ext("a")
        .flag(flag("strict", "boolean", &json!(false)))
        .flag(flag("label", "string", &Value::Null));
    let b = ext("b").flag(flag("level", "string", &json!("low")));
    let (a_cx, b_cx) = (a.context(), b.context());
    let runner = runner(vec![a.into_handle(), b.into_handle()]);
    // While loading, getFlag answers null: values arrive after every extension has loaded.
    assert_eq!(
        a_cx.action("getFlag", json!({"name": "strict"})).await,
        Ok(Value::Null)
    );
    runner
        .apply_flag_values(&["strict".to_owned(), "label=nightly".to_owned()])
        .unwrap();
    let get = |cx: &jig_extensions::HandlerContext, name: &str| {
        let cx = cx.clone();
        let name = name.to_owned();
        async move { cx.action("getFlag", json!({"name": name})).await.unwrap() }
    };
    assert_eq!(get(&a_cx, "strict").await, json!(true));
    assert_eq!(get(&a_cx, "label").await, json!("nightly"));
    assert_eq!(get(&a_cx, "level").await, Value::Null, "b's flag");
    assert_eq!(get(&b_cx, "level").await, json!("low"), "the default");

    for (given, message) in [
        (
            "nope",
            "Unknown flag \"--nope\": no loaded extension registers it",
        ),
        (
            "strict=1",
            "Flag \"--strict\" is a boolean: give true or false, not \"1\"",
        ),
        ("label", "Flag \"--label\" needs a value: --label=VALUE"),
    ] {
        assert_eq!(
            runner
                .apply_flag_values(&[given.to_owned()])
                .map_err(|error| error.to_string()),
            Err(message.to_owned())
        );
    }
}
