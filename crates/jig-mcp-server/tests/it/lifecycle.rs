//! Shutdown: end of input finishes the calls already received, the host's signal aborts them;
//! both clean the env up.

use std::sync::atomic::Ordering;
use std::time::Duration;

use jig_env::ExecutionEnv;
use jig_mcp_server::StopReason;
use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
use rmcp::service::PeerRequestOptions;
use serde_json::json;

use crate::support::{Setup, args, eventually, start};

#[tokio::test]
async fn end_of_input_finishes_received_calls_then_cleans_up() {
    let h = start(Setup::default()).await;
    let temp = h.env.create_temp_file("jig-test", ".log").await.unwrap();
    assert!(h.env.exists(&temp).await.unwrap());
    let _handle = h
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(
                CallToolRequestParams::new("slow").with_arguments(args(json!({"steps": 10}))),
            )),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    h.client.cancel().await.unwrap();
    let stop = tokio::time::timeout(Duration::from_secs(5), h.served)
        .await
        .expect("the server stops once the call has finished")
        .unwrap()
        .unwrap();
    assert_eq!(stop, StopReason::InputClosed);
    assert!(
        !h.saw_cancel.load(Ordering::SeqCst),
        "a call received before the end of input was aborted"
    );
    assert!(!h.env.exists(&temp).await.unwrap(), "temp file left behind");
}

#[tokio::test]
async fn shutdown_signal_aborts_calls_and_cleans_up() {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let h = start(Setup {
        shutdown: Some(rx),
        ..Setup::default()
    })
    .await;
    let temp = h.env.create_temp_dir("jig-test").await.unwrap();
    let _handle = h
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(
                CallToolRequestParams::new("slow").with_arguments(args(json!({}))),
            )),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let saw_cancel = h.saw_cancel.clone();
    tokio::time::sleep(Duration::from_millis(60)).await;
    tx.send(()).unwrap();
    let stop = tokio::time::timeout(Duration::from_secs(8), h.served)
        .await
        .expect("the server stops promptly")
        .unwrap()
        .unwrap();
    assert_eq!(stop, StopReason::Signal);
    assert!(eventually(|| saw_cancel.load(Ordering::SeqCst)).await);
    assert!(!h.env.exists(&temp).await.unwrap(), "temp dir left behind");
}
