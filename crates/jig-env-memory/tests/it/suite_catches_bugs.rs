//! The conformance suite is only worth something if it fails on a broken env: each test here
//! breaks one rule on top of `MemoryEnv` and checks that the matching case panics.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use jig_env::conformance::{Fixture, cases};
use jig_env::{
    Bytes, DirEntry, EnvResult, ExecOutcome, ExecRequest, ExecSink, ExecutionEnv, FileInfo,
    LineWindow, LinesRead, Recursive, SearchRequest, SearchResult, WalkRequest, WalkResult,
    WriteOutcome,
};
use jig_env_memory::MemoryEnv;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bug {
    /// A trailing newline counts as one more (empty) line.
    TrailingNewlineIsALine,
    /// `write` replaces the file with a fresh one (mode lost).
    WriteDropsMode,
    /// `remove` of a symlink removes its target too.
    RemoveFollowsLinks,
}

#[derive(Debug)]
struct Broken {
    inner: MemoryEnv,
    bug: Bug,
}

#[async_trait]
impl ExecutionEnv for Broken {
    fn name(&self) -> &'static str {
        "broken"
    }
    fn home_dir(&self) -> Option<PathBuf> {
        self.inner.home_dir()
    }
    async fn canonical_path(&self, path: &Path) -> EnvResult<PathBuf> {
        self.inner.canonical_path(path).await
    }
    async fn file_info(&self, path: &Path) -> EnvResult<FileInfo> {
        self.inner.file_info(path).await
    }
    async fn stat(&self, path: &Path) -> EnvResult<FileInfo> {
        self.inner.stat(path).await
    }
    async fn read_link(&self, path: &Path) -> EnvResult<PathBuf> {
        self.inner.read_link(path).await
    }
    async fn read(&self, path: &Path) -> EnvResult<Vec<u8>> {
        self.inner.read(path).await
    }
    async fn read_start(&self, path: &Path, max_bytes: usize) -> EnvResult<Vec<u8>> {
        self.inner.read_start(path, max_bytes).await
    }
    async fn read_lines(&self, path: &Path, window: LineWindow) -> EnvResult<LinesRead> {
        let mut read = self.inner.read_lines(path, window).await?;
        if self.bug == Bug::TrailingNewlineIsALine && self.inner.read(path).await?.ends_with(b"\n")
        {
            read.total_lines += 1;
        }
        Ok(read)
    }
    async fn write(&self, path: &Path, data: Bytes) -> EnvResult<WriteOutcome> {
        if self.bug == Bug::WriteDropsMode && self.inner.exists(path).await? {
            let target = self.inner.canonical_path(path).await?;
            self.inner.remove(&target, Recursive::No).await?;
            self.inner.write(&target, data).await?;
            return Ok(WriteOutcome { created: false });
        }
        self.inner.write(path, data).await
    }
    async fn append(&self, path: &Path, data: Bytes) -> EnvResult<()> {
        self.inner.append(path, data).await
    }
    async fn rename(&self, from: &Path, to: &Path) -> EnvResult<()> {
        self.inner.rename(from, to).await
    }
    async fn remove(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        if self.bug == Bug::RemoveFollowsLinks
            && let Ok(target) = self.inner.canonical_path(path).await
            && target != path
        {
            self.inner.remove(&target, Recursive::Yes).await?;
        }
        self.inner.remove(path, recursive).await
    }
    async fn create_dir(&self, path: &Path, recursive: Recursive) -> EnvResult<()> {
        self.inner.create_dir(path, recursive).await
    }
    async fn read_dir(&self, path: &Path) -> EnvResult<Vec<DirEntry>> {
        self.inner.read_dir(path).await
    }
    async fn create_temp_file(&self, prefix: &str, suffix: &str) -> EnvResult<PathBuf> {
        self.inner.create_temp_file(prefix, suffix).await
    }
    async fn create_temp_dir(&self, prefix: &str) -> EnvResult<PathBuf> {
        self.inner.create_temp_dir(prefix).await
    }
    async fn exec(&self, request: ExecRequest, sink: &mut dyn ExecSink) -> EnvResult<ExecOutcome> {
        self.inner.exec(request, sink).await
    }
    async fn walk(&self, request: WalkRequest) -> EnvResult<WalkResult> {
        jig_search::walk_with_env(self, request).await
    }
    async fn search(&self, request: SearchRequest) -> EnvResult<SearchResult> {
        jig_search::search_with_env(self, request).await
    }
    async fn cleanup(&self) {
        self.inner.cleanup().await;
    }
}

#[expect(
    clippy::unwrap_used,
    reason = "test setup: a failure is a test failure"
)]
fn fixture(bug: Bug) -> Fixture {
    let inner = MemoryEnv::new();
    inner.add_dir("/root").unwrap();
    let env = Arc::new(Broken { inner, bug });
    let links = Arc::clone(&env);
    let modes = Arc::clone(&env);
    Fixture::new(env, "/root")
        .with_symlink(move |target, link| links.inner.symlink(target, link))
        .with_set_mode(move |path, mode| modes.inner.set_mode(path, mode))
}

/// Runs `case` on a fixture with `bug` in its own task and reports whether it panicked.
async fn fails<F>(bug: Bug, case: F) -> bool
where
    F: for<'a> Fn(&'a Fixture) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + 'a>>
        + Send
        + 'static,
{
    let outcome = tokio::spawn(async move {
        let fixture = fixture(bug);
        case(&fixture).await;
    })
    .await;
    outcome.is_err_and(|error| error.is_panic())
}

#[tokio::test]
async fn the_suite_catches_a_wrong_line_count() {
    assert!(
        fails(Bug::TrailingNewlineIsALine, |f| Box::pin(
            cases::read_lines_counts_lines_like_the_contract(f)
        ))
        .await
    );
}

#[tokio::test]
async fn the_suite_catches_a_write_that_loses_the_mode() {
    assert!(
        fails(Bug::WriteDropsMode, |f| Box::pin(
            cases::write_keeps_permission_bits(f)
        ))
        .await
    );
}

#[tokio::test]
async fn the_suite_catches_a_remove_that_follows_symlinks() {
    assert!(
        fails(Bug::RemoveFollowsLinks, |f| Box::pin(
            cases::remove_files_links_and_directories(f)
        ))
        .await
    );
}

#[tokio::test]
async fn the_cases_pass_on_the_unbroken_env() {
    // The same harness reports no failure for a correct env, so the checks above are real.
    let fixture_ok = || {
        let env = Arc::new(MemoryEnv::new());
        env.add_dir("/root").unwrap();
        let links = Arc::clone(&env);
        let modes = Arc::clone(&env);
        Fixture::new(env, "/root")
            .with_symlink(move |target, link| links.symlink(target, link))
            .with_set_mode(move |path, mode| modes.set_mode(path, mode))
    };
    cases::read_lines_counts_lines_like_the_contract(&fixture_ok()).await;
    cases::write_keeps_permission_bits(&fixture_ok()).await;
    cases::remove_files_links_and_directories(&fixture_ok()).await;
}
