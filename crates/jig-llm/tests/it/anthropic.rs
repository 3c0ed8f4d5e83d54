use jig_llm::LlmError;
use jig_llm::testing::ReplayResponse;
use jig_protocol::{
    AssistantBlock, AssistantMessage, ContentBlock, Message, StopReason, ToolCall, ToolResult,
    ToolResultMessage,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{anthropic, collect, fixture, request, serve};

#[tokio::test]
async fn text_stream_is_assembled_with_usage_and_headers() {
    let server = serve(vec![ReplayResponse::sse(fixture("anthropic", "text"))]).await;
    let message = collect(&anthropic(&server), request(vec![Message::user_text("hi")]))
        .await
        .unwrap();
    assert_eq!(message.text(), "Hello, world — ✓");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.usage.input, 472);
    assert_eq!(message.usage.cache_read, 2048);
    assert_eq!(message.usage.output, 15);
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-test"));
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    let body = requests[0].json();
    assert_eq!(body["system"], "You are a test.");
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    );
}

#[tokio::test]
async fn thinking_text_and_a_split_tool_call_are_assembled() {
    let server = serve(vec![ReplayResponse::sse(fixture(
        "anthropic",
        "tool_use_split",
    ))])
    .await;
    let message = collect(&anthropic(&server), request(vec![Message::user_text("go")]))
        .await
        .unwrap();
    assert_eq!(
        message.content,
        vec![
            AssistantBlock::Thinking {
                thinking: "I should read the task first.".into(),
                signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".into()),
            },
            AssistantBlock::Text {
                text: "Reading the task.".into()
            },
            AssistantBlock::ToolCall(ToolCall {
                id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                name: "read".into(),
                arguments: json!({"path": "task.txt", "limit": 20}),
                raw_arguments: None,
            }),
        ]
    );
    assert_eq!(message.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn parallel_tool_uses_are_kept_in_order() {
    let server = serve(vec![ReplayResponse::sse(fixture(
        "anthropic",
        "parallel_tool_use",
    ))])
    .await;
    let message = collect(&anthropic(&server), request(vec![Message::user_text("go")]))
        .await
        .unwrap();
    let calls: Vec<(String, serde_json::Value)> = message
        .tool_calls()
        .map(|c| (c.id.clone(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("toolu_A".into(), json!({"path": "src"})),
            ("toolu_B".into(), json!({"pattern": "fn main"})),
        ]
    );
}

#[tokio::test]
async fn an_error_event_mid_stream_keeps_the_partial_text() {
    let server = serve(vec![ReplayResponse::sse(fixture(
        "anthropic",
        "error_mid_stream",
    ))])
    .await;
    let (partial, error) = collect(&anthropic(&server), request(vec![Message::user_text("go")]))
        .await
        .unwrap_err();
    assert_eq!(partial.text(), "Partial");
    assert!(matches!(error, LlmError::Provider { .. }));
    insta::assert_snapshot!(error.to_string(), @"anthropic reported an error: Overloaded (overloaded_error)");
}

#[tokio::test]
async fn tool_results_with_images_and_thinking_are_sent_back() {
    let server = serve(vec![ReplayResponse::sse(fixture("anthropic", "text"))]).await;
    let call = ToolCall {
        id: "toolu_1".into(),
        name: "read".into(),
        arguments: json!({"path": "a.png"}),
        raw_arguments: None,
    };
    let mut reply = AssistantMessage::empty("anthropic", "test-model");
    reply.content = vec![
        AssistantBlock::Thinking {
            thinking: "hmm".into(),
            signature: Some("sig".into()),
        },
        AssistantBlock::ToolCall(call.clone()),
    ];
    reply.stop_reason = StopReason::ToolUse;
    let result = ToolResult {
        content: vec![
            ContentBlock::text("an image"),
            ContentBlock::Image {
                data: "AAAA".into(),
                mime_type: "image/png".into(),
            },
        ],
        details: serde_json::Value::Null,
        is_error: false,
    };
    let mut req = request(vec![
        Message::user_text("look"),
        Message::Assistant(reply),
        Message::ToolResult(ToolResultMessage::new(&call, result)),
    ]);
    req.thinking = jig_llm::ThinkingLevel::Low;
    collect(&anthropic(&server), req).await.unwrap();
    let body = server.requests()[0].json();
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(body["max_tokens"], 2048 + 8192);
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.png"}}
        ])
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [{
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "is_error": false,
            "content": [
                {"type": "text", "text": "an image"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
            ]
        }]})
    );
}
