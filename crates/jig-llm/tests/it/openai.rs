use jig_llm::LlmError;
use jig_llm::testing::ReplayResponse;
use jig_protocol::{
    AssistantBlock, ContentBlock, Message, StopReason, ToolCall, ToolResult, ToolResultMessage,
    UserMessage,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{collect, fixture, openai, request, serve};

#[tokio::test]
async fn text_stream_is_assembled_with_usage() {
    let server = serve(vec![ReplayResponse::sse(fixture("openai", "text"))]).await;
    let message = collect(&openai(&server), request(vec![Message::user_text("hi")]))
        .await
        .unwrap();
    insta::assert_json_snapshot!(message, @r#"
    {
      "content": [
        {
          "type": "text",
          "text": "The test passes now — ✓."
        }
      ],
      "provider": "openai",
      "model": "test-model",
      "usage": {
        "input": 180,
        "output": 9,
        "cacheRead": 1024,
        "cacheWrite": 0
      },
      "stopReason": "stop",
      "timestamp": 0
    }
    "#);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test"));
    let body = requests[0].json();
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are a test."})
    );
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "hi"})
    );
    assert_eq!(body["tools"][0]["function"]["name"], "read");
}

#[tokio::test]
async fn tool_call_split_across_many_deltas_is_joined() {
    let server = serve(vec![ReplayResponse::sse(fixture(
        "openai",
        "tool_call_split",
    ))])
    .await;
    let message = collect(&openai(&server), request(vec![Message::user_text("go")]))
        .await
        .unwrap();
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_Qx7v2");
    assert_eq!(calls[0].name, "edit");
    assert_eq!(
        calls[0].arguments,
        json!({"path": "task.txt", "oldText": "status: draft", "newText": "status: done\n"})
    );
    assert_eq!(message.usage.input, 2210);
}

#[tokio::test]
async fn parallel_tool_calls_keep_their_order_and_arguments() {
    let server = serve(vec![ReplayResponse::sse(fixture(
        "openai",
        "parallel_tool_calls",
    ))])
    .await;
    let message = collect(&openai(&server), request(vec![Message::user_text("go")]))
        .await
        .unwrap();
    let calls: Vec<(String, String, serde_json::Value)> = message
        .tool_calls()
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_A1".into(), "read".into(), json!({"path": "a.rs"})),
            ("call_B2".into(), "read".into(), json!({"path": "b.rs"})),
            (
                "call_C3".into(),
                "bash".into(),
                json!({"command": "cargo test"})
            ),
        ]
    );
    assert_eq!(message.text(), "Reading both files.");
}

#[tokio::test]
async fn an_error_chunk_mid_stream_ends_the_reply_with_the_provider_message() {
    let server = serve(vec![ReplayResponse::sse(fixture(
        "openai",
        "error_mid_stream",
    ))])
    .await;
    let (partial, error) = collect(&openai(&server), request(vec![Message::user_text("go")]))
        .await
        .unwrap_err();
    assert_eq!(partial.text(), "Let me check");
    assert!(matches!(error, LlmError::Provider { .. }), "{error:?}");
    insta::assert_snapshot!(error.to_string(), @"openai reported an error: The server had an error while processing your request. Sorry about that! (server_error)");
}

#[tokio::test]
async fn a_connection_cut_before_the_finish_is_an_error() {
    let server = serve(vec![ReplayResponse::sse(fixture(
        "openai",
        "cut_connection",
    ))])
    .await;
    let (partial, error) = collect(&openai(&server), request(vec![Message::user_text("go")]))
        .await
        .unwrap_err();
    insta::assert_snapshot!(error.to_string(), @"openai stream failed: the stream ended before the reply was complete");
    let call = partial.tool_calls().next().unwrap();
    assert_eq!(call.raw_arguments.as_deref(), Some("{\"comm"));
}

#[tokio::test]
async fn reasoning_deltas_become_thinking_and_length_is_reported() {
    let server = serve(vec![ReplayResponse::sse(fixture("openai", "reasoning"))]).await;
    let mut req = request(vec![Message::user_text("hi")]);
    req.thinking = jig_llm::ThinkingLevel::High;
    req.max_output_tokens = Some(12);
    let message = collect(&openai(&server), req).await.unwrap();
    assert_eq!(
        message.content,
        vec![
            AssistantBlock::Thinking {
                thinking: "The user wants a greeting.".into(),
                signature: None
            },
            AssistantBlock::Text {
                text: "Hello!".into()
            },
        ]
    );
    assert_eq!(message.stop_reason, StopReason::Length);
    let body = server.requests()[0].json();
    assert_eq!(body["reasoning_effort"], "high");
    assert_eq!(body["max_completion_tokens"], 12);
}

#[tokio::test]
async fn images_in_user_messages_and_tool_results_are_sent() {
    let server = serve(vec![ReplayResponse::sse(fixture("openai", "text"))]).await;
    let call = ToolCall {
        id: "call_1".into(),
        name: "read".into(),
        arguments: json!({"path": "shot.png"}),
        raw_arguments: None,
    };
    let mut reply = jig_protocol::AssistantMessage::empty("openai", "test-model");
    reply.content.push(AssistantBlock::ToolCall(call.clone()));
    reply.stop_reason = StopReason::ToolUse;
    let image = ContentBlock::Image {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
    };
    let result = ToolResult {
        content: vec![
            ContentBlock::text("Read image file [image/png]"),
            image.clone(),
        ],
        details: serde_json::Value::Null,
        is_error: false,
    };
    let messages = vec![
        Message::User(UserMessage {
            content: vec![ContentBlock::text("what is this?"), image],
            timestamp: 0,
        }),
        Message::Assistant(reply),
        Message::ToolResult(ToolResultMessage::new(&call, result)),
    ];
    collect(&openai(&server), request(messages)).await.unwrap();
    let body = server.requests()[0].json();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        ])
    );
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        "{\"path\":\"shot.png\"}"
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert_eq!(
        messages[3]["content"],
        "Read image file [image/png]\n(image attached in the next message)"
    );
    assert_eq!(messages[4]["role"], "user");
    assert_eq!(
        messages[4]["content"][1],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}})
    );
}
