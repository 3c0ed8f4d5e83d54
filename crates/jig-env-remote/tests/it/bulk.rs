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

/// A start longer than one answer may carry (16 MiB) crosses as a stream of chunks, and comes
/// back exactly as the local env reads it; a window or an append over the protocol's limits is
/// narrowed or split, never sent as one huge frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starts_longer_than_one_answer_cross_in_chunks() {
    use jig_env::LineWindow;
    use jig_env_remote::protocol::MAX_READ_REPLY;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.bin");
    let size = 40 << 20;
    let content: Vec<u8> = (0..size).map(|i| u8::try_from(i % 251).unwrap()).collect();
    std::fs::write(&path, &content).unwrap();
    let (env, _server) = crate::support::in_process().await;

    let all = env.read_start(&path, 1 << 30).await.unwrap();
    assert!(all == content, "the whole file, as it is");
    let part = env.read_start(&path, 20 << 20).await.unwrap();
    assert!(part[..] == content[..20 << 20], "the first 20 MiB");
    let exact = env.read_start(&path, MAX_READ_REPLY).await.unwrap();
    assert_eq!(exact.len(), MAX_READ_REPLY);

    let head = env.read_head(&path, 64 << 20).await.unwrap();
    assert!(head.complete);
    assert!(head.bytes == content);
    let head = env.read_head(&path, 30 << 20).await.unwrap();
    assert!(!head.complete);
    assert!(head.bytes[..] == content[..30 << 20]);
    let head = env.read_head(&path, size).await.unwrap();
    assert!(
        head.complete,
        "a head of exactly the file's size is the whole file"
    );
    assert_eq!(head.bytes.len(), size);

    // A window over the limits is asked for within them: the lines of the first 8 MiB.
    let lines = "x".repeat(1024) + "\n";
    let text = dir.path().join("lines.txt");
    std::fs::write(&text, lines.repeat(20 << 10)).unwrap();
    let read = env
        .read_lines(
            &text,
            LineWindow {
                start_line: 1,
                max_lines: usize::MAX,
                max_bytes: usize::MAX,
            },
        )
        .await
        .unwrap();
    assert_eq!(read.total_lines, 20 << 10);
    assert_eq!(read.lines.len(), 8 << 10, "8 MiB of 1 KiB lines");

    let log = dir.path().join("log");
    env.append(&log, content.clone().into()).await.unwrap();
    env.append(&log, bytes::Bytes::from_static(b"end"))
        .await
        .unwrap();
    let appended = std::fs::read(&log).unwrap();
    assert_eq!(appended.len(), size + 3);
    assert!(appended[..size] == content[..], "the parts in order");
}
