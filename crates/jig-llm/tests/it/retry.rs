use jig_llm::LlmError;
use jig_llm::testing::ReplayResponse;
use jig_protocol::Message;

use crate::{anthropic, collect, fixture, openai, request, serve};

const RATE_LIMITED: &str = r#"{"error":{"message":"Rate limit reached for gpt-4.1 in organization org-x on tokens per min (TPM): Limit 30000, Used 30000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#;

#[tokio::test]
async fn a_429_then_success_is_retried() {
    let server = serve(vec![
        ReplayResponse::status(429, RATE_LIMITED).with_header("retry-after", "0"),
        ReplayResponse::sse(fixture("openai", "text")),
    ])
    .await;
    let message = collect(&openai(&server), request(vec![Message::user_text("hi")]))
        .await
        .unwrap();
    assert_eq!(message.text(), "The test passes now — ✓.");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn overloaded_and_server_errors_are_retried_twice_then_reported() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = serve(vec![
        ReplayResponse::status(529, overloaded),
        ReplayResponse::status(500, overloaded),
        ReplayResponse::status(529, overloaded),
        ReplayResponse::sse(fixture("anthropic", "text")),
    ])
    .await;
    let (_, error) = collect(&anthropic(&server), request(vec![Message::user_text("hi")]))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            LlmError::Http {
                status: 529,
                retries: 2,
                ..
            }
        ),
        "{error:?}"
    );
    insta::assert_snapshot!(error.to_string(), @"anthropic returned HTTP 529: Overloaded (overloaded_error) (gave up after 2 retries)");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn an_overloaded_answer_then_success_is_retried() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = serve(vec![
        ReplayResponse::status(529, overloaded),
        ReplayResponse::status(503, "upstream connect error"),
        ReplayResponse::sse(fixture("anthropic", "text")),
    ])
    .await;
    let message = collect(&anthropic(&server), request(vec![Message::user_text("hi")]))
        .await
        .unwrap();
    assert_eq!(message.text(), "Hello, world — ✓");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn an_authentication_error_is_not_retried_and_names_status_and_message() {
    let server = serve(vec![ReplayResponse::status(
        401,
        r#"{"error":{"message":"Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
    )])
    .await;
    let (_, error) = collect(&openai(&server), request(vec![Message::user_text("hi")]))
        .await
        .unwrap_err();
    insta::assert_snapshot!(error.to_string(), @"openai returned HTTP 401: Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys. (invalid_request_error)");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_unreachable_server_is_a_transport_error() {
    let server = serve(vec![]).await;
    let url = server.url();
    drop(server);
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let mut config = jig_llm::ProviderConfig::new("ollama", format!("{url}/v1"), None);
    config.retry = crate::fast_retry();
    let provider = jig_llm::OpenAiProvider::new(config);
    let (_, error) = collect(&provider, request(vec![Message::user_text("hi")]))
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::Transport { retries: 2, .. }),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("could not reach ollama at http://127.0.0.1:"),
        "{error}"
    );
    // The cause is named, not only reqwest's "error sending request".
    assert!(
        error.to_string().contains("(gave up after 2 retries): ")
            && error.to_string().contains("refused"),
        "{error}"
    );
}
