//! Results bigger than one chunk: a search whose records span several `data` frames, each
//! cut inside a line, arrives the same as the local search's.

use jig_env::{ExecutionEnv, SearchRequest, WalkRequest};

#[tokio::test]
async fn a_search_result_bigger_than_a_chunk_arrives_whole() {
    let dir = tempfile::tempdir().unwrap();
    let line = "fn matching_line() { let padding = \"0123456789abcdef0123456789\"; }\n";
    let lines = 40_000;
    std::fs::write(dir.path().join("big.rs"), line.repeat(lines)).unwrap();
    let (env, _server) = crate::support::in_process().await;
    let found = env
        .search(SearchRequest::new(dir.path(), "matching_line"))
        .await
        .unwrap();
    assert_eq!(found.matches, lines);
    assert_eq!(found.files.len(), 1);
    assert_eq!(found.files[0].lines.len(), lines);
    let local = jig_env_local::LocalEnv::new()
        .search(SearchRequest::new(dir.path(), "matching_line"))
        .await
        .unwrap();
    assert_eq!(found, local);
    let walked = env.walk(WalkRequest::new(dir.path())).await.unwrap();
    assert_eq!(walked.entries.len(), 1);
}
