//! `keep_warm` crosses to the far side: the served env's index of the roots is started, and
//! the far side's searches and walks are answered from it, as the cold path would answer.

use std::sync::Arc;
use std::time::Duration;

use jig_env::{ExecutionEnv, SearchRequest, WalkRequest};
use jig_env_local::LocalEnv;
use jig_env_remote::{RemoteEnv, ServeOptions, serve};
use jig_index::{IndexOptions, IndexedEnv, WarmIndexes};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_warm_indexes_the_roots_far_side() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn alpha() {}\n").unwrap();
    std::fs::write(root.join("src/b.rs"), "fn beta() {}\n").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir(root.join("target")).unwrap();
    std::fs::write(root.join("target/out.rs"), "fn alpha() {}\n").unwrap();

    let indexes = WarmIndexes::new(IndexOptions::default());
    let served: Arc<dyn ExecutionEnv> = Arc::new(IndexedEnv::new(
        Arc::new(LocalEnv::new()),
        Arc::clone(&indexes),
    ));
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    tokio::spawn(async move {
        let _ = serve(served, ServeOptions::default(), server_read, server_write).await;
    });
    let (client_read, client_write) = tokio::io::split(client);
    let env = RemoteEnv::connect("in-process", client_read, client_write, None, None)
        .await
        .unwrap();

    assert!(indexes.indexes().is_empty(), "nothing is indexed unasked");
    env.keep_warm(std::slice::from_ref(&root)).await;
    let index = indexes
        .indexes()
        .first()
        .cloned()
        .expect("an index of the root");
    assert_eq!(index.root(), root);
    assert!(
        index.wait_ready(Duration::from_secs(30)),
        "{:?}",
        index.status()
    );

    let cold = LocalEnv::new();
    let search = SearchRequest::new(&root, "alpha");
    let walk = WalkRequest::new(&root);
    assert_eq!(
        format!("{:?}", env.search(search.clone()).await.unwrap()),
        format!("{:?}", cold.search(search).await.unwrap())
    );
    assert_eq!(
        format!("{:?}", env.walk(walk.clone()).await.unwrap()),
        format!("{:?}", cold.walk(walk).await.unwrap())
    );
    let status = index.status();
    assert_eq!(status.warm_answers, 2, "{status:?}");
    // Asking again starts nothing new.
    env.keep_warm(std::slice::from_ref(&root)).await;
    assert_eq!(indexes.indexes().len(), 1);
}
