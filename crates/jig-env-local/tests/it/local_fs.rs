//! Host-specific behaviour of `LocalEnv` the generic conformance suite cannot see: modes from
//! the umask, owners, the private temp directory's lifetime, and cancelled writes.

use std::fmt::Write as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jig_env::{Bytes, ExecutionEnv, LineWindow};
use jig_env_local::LocalEnv;

fn temp_root() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(error) => panic!("creating a temp dir: {error}"),
    }
}

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: a failure is a test failure"
)]
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The process umask, read the same way a shell's `umask` prints it.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: a failure is a test failure"
)]
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("Umask:"))
        .unwrap();
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
}

#[tokio::test]
async fn a_new_file_gets_0666_minus_the_umask_like_any_program() {
    let dir = temp_root();
    let env = LocalEnv::new();
    let file = dir.path().join("new.txt");
    env.write(&file, Bytes::from_static(b"x")).await.unwrap();
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o666 & !umask());
}

#[tokio::test]
async fn write_keeps_the_owner_when_running_as_root() {
    if !rustix::process::geteuid().is_root() {
        return; // only root may give a file away; other users become the owner, as with any editor
    }
    let dir = temp_root();
    let file = dir.path().join("owned.txt");
    std::fs::write(&file, "old").unwrap();
    std::os::unix::fs::chown(&file, Some(4321), Some(4322)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    LocalEnv::new()
        .write(&file, Bytes::from_static(b"new"))
        .await
        .unwrap();
    let metadata = std::fs::metadata(&file).unwrap();
    assert_eq!(
        (metadata.uid(), metadata.gid(), metadata.mode() & 0o7777),
        (4321, 4322, 0o640)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
}

#[tokio::test]
async fn the_private_temp_dir_is_removed_on_drop_too() {
    let env = LocalEnv::new();
    let file = env.create_temp_file("t", "").await.unwrap();
    let private = file.parent().unwrap().to_path_buf();
    assert!(
        private.starts_with(std::env::temp_dir()),
        "{} is under the system temp dir",
        private.display()
    );
    assert!(
        private
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("jig-")
    );
    assert!(private.is_dir());
    drop(env);
    assert!(
        !private.exists(),
        "dropping the env removed {}",
        private.display()
    );
}

#[tokio::test]
async fn a_private_temp_dir_removed_behind_the_envs_back_is_recreated() {
    let env = LocalEnv::new();
    let first = env.create_temp_file("t", "").await.unwrap();
    std::fs::remove_dir_all(first.parent().unwrap()).unwrap();
    let second = env.create_temp_file("t", "").await.unwrap();
    assert!(second.exists());
    env.cleanup().await;
    assert!(!second.parent().unwrap().exists());
}

/// A write dropped at any moment either completed or left the old content, and never leaves
/// a temp file behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_write_leaves_old_or_new_content_and_no_temp() {
    let dir = temp_root();
    let env = Arc::new(LocalEnv::new());
    let file = dir.path().join("big.bin");
    std::fs::write(&file, "old").unwrap();
    let new = Bytes::from(vec![b'n'; 48 * 1024 * 1024]);
    for delay_ms in [0_u64, 1, 5, 20, 60] {
        let write = env.write(&file, new.clone());
        let _ = tokio::time::timeout(Duration::from_millis(delay_ms), write).await;
        // The blocking half may start only after the drop (it then creates its temp file
        // late), and notices the drop at its next chunk; wait until the directory has held just
        // the file for a while.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut settled = 0;
        while settled < 10 && std::time::Instant::now() < deadline {
            settled = if names(dir.path()).len() == 1 {
                settled + 1
            } else {
                0
            };
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(
            names(dir.path()),
            vec!["big.bin"],
            "no temp file after a write dropped at {delay_ms} ms"
        );
        let content = std::fs::read(&file).unwrap();
        assert!(
            content == b"old" || content == new,
            "after a drop at {delay_ms} ms the file is old or new, never partial ({} bytes)",
            content.len()
        );
        std::fs::write(&file, "old").unwrap();
    }
}

/// Paging near the start of a big file returns the page and the whole file's line count.
#[tokio::test]
async fn read_lines_pages_a_big_file_and_counts_all_its_lines() {
    let dir = temp_root();
    let file = dir.path().join("big.txt");
    let mut content = String::with_capacity(24 * 1024 * 1024);
    for index in 0..400_000 {
        writeln!(content, "line {index} {}", "x".repeat(index % 97)).unwrap();
    }
    std::fs::write(&file, &content).unwrap();
    let env = LocalEnv::new();
    let window = LineWindow {
        start_line: 11,
        max_lines: 3,
        max_bytes: 50 * 1024,
    };
    let read = env.read_lines(&file, window).await.unwrap();
    assert_eq!(read.total_lines, 400_000);
    assert_eq!(read.total_bytes, content.len() as u64);
    let numbers: Vec<u64> = read.lines.iter().map(|line| line.number).collect();
    assert_eq!(numbers, vec![11, 12, 13]);
    assert_eq!(
        read.lines[0].bytes,
        format!("line 10 {}", "x".repeat(10)).as_bytes()
    );
}

#[tokio::test]
async fn read_head_of_a_fifo_neither_opens_nor_blocks() {
    let dir = temp_root();
    let fifo = dir.path().join("pipe");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let env = LocalEnv::new();
    // No writer ever comes: opening the FIFO for reading would wait forever.
    let head = tokio::time::timeout(Duration::from_secs(10), env.read_head(&fifo, 4096))
        .await
        .expect("read_head of a FIFO returned")
        .unwrap();
    assert_eq!(head.info.kind, jig_env::FileKind::Other);
    assert!(head.bytes.is_empty() && !head.complete);
}
