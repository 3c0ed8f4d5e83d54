//! Client roots: asked for after initialization, followed on list_changed, used for containment.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jig_mcp_server::RootsSource;
use serde_json::json;

use crate::support::{Setup, TestClient, call, eventually, start_with, text};

fn client_with_roots(uris: &[&str]) -> (TestClient, Arc<Mutex<Vec<String>>>) {
    let roots = Arc::new(Mutex::new(
        uris.iter().map(|uri| (*uri).to_owned()).collect(),
    ));
    (
        TestClient {
            roots: Some(roots.clone()),
        },
        roots,
    )
}

#[tokio::test]
async fn client_roots_replace_the_default_root() {
    let (client, _roots) = client_with_roots(&["file:///other"]);
    let setup = Setup {
        roots_source: RootsSource::ClientOrDefault,
        ..Setup::default()
    };
    let h = start_with(setup, client).await;
    // The first call waits for the roots/list round trip.
    let listed = call(&h, "ls", json!({})).await;
    assert_eq!(text(&listed), "x.txt");
    let refused = call(&h, "read", json!({"path": "/ws/task.txt"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("/other"), "{}", text(&refused));
}

#[tokio::test]
async fn roots_list_changed_is_followed() {
    let (client, roots) = client_with_roots(&["file:///other"]);
    let setup = Setup {
        roots_source: RootsSource::ClientOrDefault,
        ..Setup::default()
    };
    let h = start_with(setup, client).await;
    assert_eq!(text(&call(&h, "ls", json!({})).await), "x.txt");
    *roots.lock().unwrap() = vec!["file:///ws".to_owned()];
    h.client.notify_roots_list_changed().await.unwrap();
    let server = h.server.clone();
    assert!(eventually(|| server.roots().0 == std::path::Path::new("/ws")).await);
    let read = call(&h, "read", json!({"path": "task.txt"})).await;
    assert_eq!(read.is_error, Some(false), "{}", text(&read));
}

#[tokio::test]
async fn fixed_roots_ignore_the_client() {
    let (client, _roots) = client_with_roots(&["file:///other"]);
    let h = start_with(Setup::default(), client).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let read = call(&h, "read", json!({"path": "task.txt"})).await;
    assert_eq!(read.is_error, Some(false));
    assert_eq!(h.server.roots().0, std::path::Path::new("/ws"));
}

#[tokio::test]
async fn unusable_client_roots_keep_the_default() {
    let (client, _roots) = client_with_roots(&["https://example.com/", "file:///missing"]);
    let setup = Setup {
        roots_source: RootsSource::ClientOrDefault,
        ..Setup::default()
    };
    let h = start_with(setup, client).await;
    let read = call(&h, "read", json!({"path": "task.txt"})).await;
    assert_eq!(read.is_error, Some(false));
}
