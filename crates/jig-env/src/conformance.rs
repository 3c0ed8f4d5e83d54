//! The conformance suite every [`ExecutionEnv`] implementation runs (feature `test-support`).
//!
//! An implementation provides a [`Fixture`] factory — a fresh env, an empty directory to work
//! in, and hooks for the two things the trait deliberately cannot do (create a symlink, change
//! permission bits) — and expands [`conformance_tests!`](crate::conformance_tests) in its
//! integration tests. That generates one `#[tokio::test]` per case, so a failure names the
//! broken contract:
//!
//! ```ignore
//! async fn fixture() -> jig_env::conformance::Fixture {
//!     let env = std::sync::Arc::new(jig_env_memory::MemoryEnv::new());
//!     env.add_dir("/work").unwrap();
//!     let hooks = std::sync::Arc::clone(&env);
//!     let modes = std::sync::Arc::clone(&env);
//!     jig_env::conformance::Fixture::new(env, "/work")
//!         .with_symlink(move |target, link| hooks.symlink(target, link))
//!         .with_set_mode(move |path, mode| modes.set_mode(path, mode))
//! }
//! jig_env::conformance_tests!(fixture);
//! ```
//!
//! [`run_all`] runs every case in sequence instead (for envs that are expensive to set up).
//! Cases about processes are gated on [`Capabilities::exec`]: an env that cannot run
//! processes must answer `exec` with [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported), and that is all those cases
//! check for it. Cases about refused access are gated on
//! [`Capabilities::enforces_permissions`] (false for an env running as root).
//!
//! Each case panics with a message naming what went wrong; cases are `pub` async functions in
//! [`cases`] so an implementation can also call a single one.

use std::fmt::Debug;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use crate::{EnvResult, ExecutionEnv};

mod search_cases;

/// Creates a symlink at `link` pointing to `target` (the target stored as given).
pub type SymlinkHook = Arc<dyn Fn(&Path, &Path) -> EnvResult<()> + Send + Sync>;
/// Sets the permission bits of `path` (following symlinks, like `chmod`).
pub type SetModeHook = Arc<dyn Fn(&Path, u32) -> EnvResult<()> + Send + Sync>;

/// What the env under test can do; cases outside its capabilities check only that it refuses
/// cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// `exec` runs processes (otherwise it must be [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported)).
    pub exec: bool,
    /// Permission bits are enforced for the current user (false for root on a host).
    pub enforces_permissions: bool,
}

/// One env under test, fresh for each case.
pub struct Fixture {
    /// The env under test.
    pub env: Arc<dyn ExecutionEnv>,
    /// An existing, empty directory the case may fill (absolute; need not be canonical).
    pub root: PathBuf,
    /// What the env can do.
    pub capabilities: Capabilities,
    /// The env is a view confined beneath `root` ([`ExecutionEnv::beneath`]): its temp files
    /// (the parent env's) are outside its roots.
    pub confined: bool,
    symlink: Option<SymlinkHook>,
    set_mode: Option<SetModeHook>,
    keep_alive: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl Debug for Fixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fixture")
            .field("env", &self.env.name())
            .field("root", &self.root)
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

impl Fixture {
    /// A fixture for `env` working in `root` (which must exist and be empty). Capabilities
    /// default to "no exec, permissions enforced"; add hooks with the `with_*` methods.
    pub fn new(env: Arc<dyn ExecutionEnv>, root: impl Into<PathBuf>) -> Self {
        Self {
            env,
            root: root.into(),
            capabilities: Capabilities {
                exec: false,
                enforces_permissions: true,
            },
            confined: false,
            symlink: None,
            set_mode: None,
            keep_alive: None,
        }
    }

    /// Marks the env as a view confined beneath `root`.
    #[must_use]
    pub fn confined(mut self) -> Self {
        self.confined = true;
        self
    }

    /// How to create a symlink in this env (required by the symlink cases).
    #[must_use]
    pub fn with_symlink(
        mut self,
        hook: impl Fn(&Path, &Path) -> EnvResult<()> + Send + Sync + 'static,
    ) -> Self {
        self.symlink = Some(Arc::new(hook));
        self
    }

    /// How to change permission bits in this env (required by the mode cases).
    #[must_use]
    pub fn with_set_mode(
        mut self,
        hook: impl Fn(&Path, u32) -> EnvResult<()> + Send + Sync + 'static,
    ) -> Self {
        self.set_mode = Some(Arc::new(hook));
        self
    }

    /// Sets the capabilities.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: Capabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Keeps `value` alive as long as the fixture (e.g. a `tempfile::TempDir`).
    #[must_use]
    pub fn keep_alive(mut self, value: impl std::any::Any + Send + Sync) -> Self {
        self.keep_alive = Some(Box::new(value));
        self
    }

    /// `root` joined with `relative`.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// Creates a symlink through the hook.
    ///
    /// # Panics
    /// When the fixture has no symlink hook or the hook fails.
    pub fn symlink(&self, target: impl AsRef<Path>, link: impl AsRef<Path>) {
        let Some(hook) = self.symlink.as_ref() else {
            panic!("this case needs Fixture::with_symlink");
        };
        if let Err(error) = hook(target.as_ref(), link.as_ref()) {
            panic!(
                "creating symlink {} -> {}: {error}",
                link.as_ref().display(),
                target.as_ref().display()
            );
        }
    }

    /// Sets permission bits through the hook.
    ///
    /// # Panics
    /// When the fixture has no set-mode hook or the hook fails.
    pub fn set_mode(&self, path: impl AsRef<Path>, mode: u32) {
        let Some(hook) = self.set_mode.as_ref() else {
            panic!("this case needs Fixture::with_set_mode");
        };
        if let Err(error) = hook(path.as_ref(), mode) {
            panic!("chmod {:o} {}: {error}", mode, path.as_ref().display());
        }
    }
}

/// A boxed case future, as [`run_all`] stores them.
pub type CaseFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// The single list of cases, expanded either into tests (`tests <fixture fn>`) or into the
/// list [`run_all`] walks (`list`), so the two can never disagree.
#[doc(hidden)]
#[macro_export]
macro_rules! __jig_env_conformance_cases {
    ($mode:ident $($fixture:path)?) => {
        $crate::__jig_env_conformance_cases! { @with $mode [$($fixture)?] ;
            paths_are_normalised_lexically,
            relative_paths_are_invalid,
            nul_bytes_are_invalid_and_touch_nothing,
            file_info_reports_kind_size_mode_and_mtime,
            file_info_does_not_follow_and_stat_does,
            read_link_returns_the_stored_target,
            canonical_path_resolves_every_symlink,
            canonical_path_of_a_symlink_loop_is_an_error,
            canonical_path_lenient_appends_missing_components,
            canonical_path_lenient_follows_dangling_symlinks,
            exists_is_true_for_dangling_symlinks,
            read_returns_bytes_and_typed_errors,
            read_start_returns_a_prefix,
            read_head_returns_metadata_and_a_prefix,
            read_lines_returns_the_window,
            read_lines_counts_lines_like_the_contract,
            read_lines_keeps_carriage_returns,
            read_lines_cuts_a_long_line,
            read_lines_stops_at_the_byte_budget,
            read_lines_rejects_bad_input,
            read_lines_streams_across_buffer_boundaries,
            write_creates_files_and_parents,
            write_keeps_permission_bits,
            write_through_a_symlink_keeps_the_link,
            write_through_a_dangling_symlink_creates_its_target,
            write_to_a_directory_is_refused_without_leftovers,
            write_below_a_file_fails_without_leftovers,
            write_to_a_read_only_file_is_refused,
            concurrent_writes_never_interleave,
            chunked_read_and_write_act_like_read_and_write,
            append_creates_and_appends,
            rename_moves_and_replaces,
            rename_moves_a_symlink_not_its_target,
            remove_files_links_and_directories,
            create_dir_plain_and_recursive,
            read_dir_lists_entries_without_following,
            temp_files_are_private_and_cleaned_up,
            errors_name_the_path,
            exec_runs_or_is_unsupported,
            beneath_confines_every_operation,
            // walk and search (conformance/search_cases.rs)
            search_follows_ignore_rules_inside_and_outside_git,
            walk_lists_sorted_entries_with_globs,
            search_limits_are_exact_and_ordered,
            search_context_and_long_lines,
            search_pattern_options,
            walk_and_search_do_not_follow_symlinks,
            search_errors_and_cancellation,
        }
    };
    (@with tests [$fixture:path] ; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() {
                let fixture = $fixture().await;
                $crate::conformance::cases::$case(&fixture).await;
                $crate::ExecutionEnv::cleanup(&*fixture.env).await;
            }
        )*
    };
    (@with list [] ; $($case:ident),* $(,)?) => {{
        $(
            fn $case(fixture: &$crate::conformance::Fixture) -> $crate::conformance::CaseFuture<'_> {
                Box::pin($crate::conformance::cases::$case(fixture))
            }
        )*
        vec![$((stringify!($case), $case as $crate::conformance::CaseFn)),*]
    }};
}

/// Generates one `#[tokio::test]` per conformance case, each calling `$fixture().await` for a
/// fresh [`Fixture`] and cleaning the env up afterwards. `$fixture` is a path to an
/// `async fn() -> Fixture`; the calling crate needs `tokio` (with `macros` and `rt`).
#[macro_export]
macro_rules! conformance_tests {
    ($fixture:path) => {
        $crate::__jig_env_conformance_cases! { tests $fixture }
    };
}

/// One case as [`run_all`] stores it.
#[doc(hidden)]
pub type CaseFn = for<'a> fn(&'a Fixture) -> CaseFuture<'a>;

/// Runs every case in order, each on a fresh fixture from `make_fixture`, cleaning the env up
/// after each. Panics (naming the case) on the first failure.
pub async fn run_all<F, Fut>(mut make_fixture: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Fixture>,
{
    let list: Vec<(&str, CaseFn)> = crate::__jig_env_conformance_cases! { list };
    for (name, case) in list {
        let fixture = make_fixture().await;
        tracing::debug!(case = name, env = fixture.env.name(), "conformance case");
        case(&fixture).await;
        fixture.env.cleanup().await;
    }
}

/// The cases; each takes a fresh [`Fixture`] and panics on a contract violation.
pub mod cases {
    pub use super::search_cases::*;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use bytes::Bytes;
    use pretty_assertions::assert_eq;

    use super::Fixture;
    use crate::{
        EnvError, EnvResult, ErrorKind, ExecRequest, ExecutionEnv, FileKind, LineWindow, LinesRead,
        Recursive,
    };

    // ----- helpers -----------------------------------------------------------------------

    async fn put(fixture: &Fixture, relative: &str, content: &str) -> PathBuf {
        let path = fixture.path(relative);
        if let Err(error) = fixture
            .env
            .write(&path, Bytes::copy_from_slice(content.as_bytes()))
            .await
        {
            panic!("setup: writing {}: {error}", path.display());
        }
        path
    }

    async fn mkdir(fixture: &Fixture, relative: &str) -> PathBuf {
        let path = fixture.path(relative);
        if let Err(error) = fixture.env.create_dir(&path, Recursive::Yes).await {
            panic!("setup: mkdir -p {}: {error}", path.display());
        }
        path
    }

    async fn read_string(env: &dyn ExecutionEnv, path: &Path) -> String {
        match env.read(path).await {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(error) => panic!("reading {}: {error}", path.display()),
        }
    }

    /// Sorted names in `dir`.
    async fn names(env: &dyn ExecutionEnv, dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = match env.read_dir(dir).await {
            Ok(entries) => entries
                .into_iter()
                .map(|entry| entry.name.to_string_lossy().into_owned())
                .collect(),
            Err(error) => panic!("listing {}: {error}", dir.display()),
        };
        names.sort();
        names
    }

    #[track_caller]
    fn expect_kind<T: std::fmt::Debug>(
        result: EnvResult<T>,
        kind: ErrorKind,
        what: &str,
    ) -> EnvError {
        match result {
            Ok(value) => panic!("{what}: expected a {kind} error, got Ok({value:?})"),
            Err(error) => {
                assert_eq!(error.kind(), kind, "{what}: wrong error kind: {error}");
                error
            }
        }
    }

    #[track_caller]
    fn ok<T>(result: EnvResult<T>, what: &str) -> T {
        match result {
            Ok(value) => value,
            Err(error) => panic!("{what}: {error}"),
        }
    }

    async fn canonical_root(fixture: &Fixture) -> PathBuf {
        ok(
            fixture.env.canonical_path(&fixture.root).await,
            "canonical path of the fixture root",
        )
    }

    fn window(start_line: u64, max_lines: usize, max_bytes: usize) -> LineWindow {
        LineWindow {
            start_line,
            max_lines,
            max_bytes,
        }
    }

    fn texts(read: &LinesRead) -> Vec<String> {
        read.lines
            .iter()
            .map(|line| String::from_utf8_lossy(&line.bytes).into_owned())
            .collect()
    }

    fn numbers(read: &LinesRead) -> Vec<u64> {
        read.lines.iter().map(|line| line.number).collect()
    }

    // ----- paths ---------------------------------------------------------------------------

    /// `.` and `..` are removed lexically before anything is touched.
    pub async fn paths_are_normalised_lexically(fixture: &Fixture) {
        let env = &*fixture.env;
        mkdir(fixture, "a").await;
        let spelled = fixture.root.join("a/../b.txt");
        ok(
            env.write(&spelled, Bytes::from_static(b"x")).await,
            "write via a/../b.txt",
        );
        assert_eq!(names(env, &fixture.root).await, vec!["a", "b.txt"]);
        let info = ok(
            env.file_info(&fixture.root.join("./a/./../b.txt")).await,
            "file_info via ./a/./../b.txt",
        );
        assert_eq!(
            info.path,
            fixture.path("b.txt"),
            "FileInfo::path is the normalised path"
        );
        assert_eq!(
            env.absolute_path(&fixture.root, Path::new("x/../y/./z")),
            fixture.path("y/z")
        );
        assert_eq!(
            env.absolute_path(&fixture.root, Path::new("/abs/./p")),
            PathBuf::from("/abs/p")
        );
    }

    /// The env never guesses a working directory.
    pub async fn relative_paths_are_invalid(fixture: &Fixture) {
        let env = &*fixture.env;
        expect_kind(
            env.read(Path::new("relative.txt")).await,
            ErrorKind::Invalid,
            "read of a relative path",
        );
        expect_kind(
            env.write(Path::new("relative.txt"), Bytes::from_static(b"x"))
                .await,
            ErrorKind::Invalid,
            "write of a relative path",
        );
        expect_kind(
            env.file_info(Path::new("a/b")).await,
            ErrorKind::Invalid,
            "file_info of a relative path",
        );
    }

    /// A NUL byte anywhere in a path is `Invalid` for every operation, and nothing is created.
    pub async fn nul_bytes_are_invalid_and_touch_nothing(fixture: &Fixture) {
        let env = &*fixture.env;
        let existing = put(fixture, "keep.txt", "keep").await;
        let bad = fixture.root.join("bad\0name.txt");
        let data = || Bytes::from_static(b"data");
        expect_kind(env.read(&bad).await, ErrorKind::Invalid, "read");
        expect_kind(
            env.read_start(&bad, 10).await,
            ErrorKind::Invalid,
            "read_start",
        );
        expect_kind(
            env.read_lines(&bad, window(1, 10, 100)).await,
            ErrorKind::Invalid,
            "read_lines",
        );
        expect_kind(env.write(&bad, data()).await, ErrorKind::Invalid, "write");
        expect_kind(env.append(&bad, data()).await, ErrorKind::Invalid, "append");
        expect_kind(env.file_info(&bad).await, ErrorKind::Invalid, "file_info");
        expect_kind(env.stat(&bad).await, ErrorKind::Invalid, "stat");
        expect_kind(env.exists(&bad).await, ErrorKind::Invalid, "exists");
        expect_kind(
            env.canonical_path(&bad).await,
            ErrorKind::Invalid,
            "canonical_path",
        );
        expect_kind(
            env.canonical_path_lenient(&bad).await,
            ErrorKind::Invalid,
            "canonical_path_lenient",
        );
        expect_kind(env.read_link(&bad).await, ErrorKind::Invalid, "read_link");
        expect_kind(
            env.create_dir(&bad, Recursive::Yes).await,
            ErrorKind::Invalid,
            "create_dir",
        );
        expect_kind(env.read_dir(&bad).await, ErrorKind::Invalid, "read_dir");
        expect_kind(
            env.remove(&bad, Recursive::Yes).await,
            ErrorKind::Invalid,
            "remove",
        );
        expect_kind(
            env.rename(&existing, &bad).await,
            ErrorKind::Invalid,
            "rename to",
        );
        expect_kind(
            env.rename(&bad, &existing).await,
            ErrorKind::Invalid,
            "rename from",
        );
        assert_eq!(
            names(env, &fixture.root).await,
            vec!["keep.txt"],
            "nothing was created or removed"
        );
        assert_eq!(read_string(env, &existing).await, "keep");
    }

    // ----- metadata --------------------------------------------------------------------------

    /// lstat-style metadata: kind, size, permission bits and a recent mtime.
    pub async fn file_info_reports_kind_size_mode_and_mtime(fixture: &Fixture) {
        let env = &*fixture.env;
        let before = SystemTime::now() - Duration::from_secs(5);
        let file = put(fixture, "five.txt", "12345").await;
        let dir = mkdir(fixture, "sub").await;
        let info = ok(env.file_info(&file).await, "file_info of a file");
        assert_eq!((info.kind, info.size), (FileKind::File, 5));
        assert_eq!(
            info.mode & 0o111,
            0,
            "a new file is not executable (mode {:o})",
            info.mode
        );
        assert_eq!(
            info.mode & 0o600,
            0o600,
            "a new file is readable and writable by its owner (mode {:o})",
            info.mode
        );
        assert!(
            info.mode <= 0o7777,
            "mode holds permission bits only: {:o}",
            info.mode
        );
        let Some(modified) = info.modified else {
            panic!("a new file has no mtime")
        };
        assert!(
            modified >= before && modified <= SystemTime::now() + Duration::from_secs(5),
            "mtime is now"
        );
        let info = ok(env.file_info(&dir).await, "file_info of a directory");
        assert_eq!(info.kind, FileKind::Directory);
        assert_eq!(
            info.mode & 0o700,
            0o700,
            "a new directory is accessible by its owner (mode {:o})",
            info.mode
        );
        expect_kind(
            env.file_info(&fixture.path("missing")).await,
            ErrorKind::NotFound,
            "file_info of a missing path",
        );
        expect_kind(
            env.file_info(&fixture.path("five.txt/x")).await,
            ErrorKind::NotADirectory,
            "file_info below a file",
        );
    }

    /// `file_info` describes a symlink itself; `stat` what it points to.
    pub async fn file_info_does_not_follow_and_stat_does(fixture: &Fixture) {
        let env = &*fixture.env;
        put(fixture, "target.txt", "hello").await;
        mkdir(fixture, "dir").await;
        fixture.symlink("target.txt", fixture.path("link"));
        fixture.symlink("dir", fixture.path("dirlink"));
        fixture.symlink("missing.txt", fixture.path("dangling"));
        let link = ok(
            env.file_info(&fixture.path("link")).await,
            "file_info of a symlink",
        );
        assert_eq!(link.kind, FileKind::Symlink);
        assert_eq!(
            link.size,
            "target.txt".len() as u64,
            "a symlink's size is its target's length"
        );
        let target = ok(
            env.stat(&fixture.path("link")).await,
            "stat through a symlink",
        );
        assert_eq!((target.kind, target.size), (FileKind::File, 5));
        assert_eq!(
            ok(env.file_info(&fixture.path("dirlink")).await, "lstat").kind,
            FileKind::Symlink
        );
        assert_eq!(
            ok(env.stat(&fixture.path("dirlink")).await, "stat").kind,
            FileKind::Directory
        );
        assert_eq!(
            ok(
                env.file_info(&fixture.path("dangling")).await,
                "lstat of dangling"
            )
            .kind,
            FileKind::Symlink
        );
        expect_kind(
            env.stat(&fixture.path("dangling")).await,
            ErrorKind::NotFound,
            "stat of a dangling symlink",
        );
        // A symlink in the middle of a path is always followed.
        let through = ok(env.file_info(&fixture.path("dirlink")).await, "lstat");
        assert_eq!(through.kind, FileKind::Symlink);
        put(fixture, "dir/inner.txt", "in").await;
        assert_eq!(
            ok(
                env.file_info(&fixture.path("dirlink/inner.txt")).await,
                "lstat below a dir link"
            )
            .kind,
            FileKind::File
        );
    }

    /// `read_link` returns the target as stored, relative or absolute.
    pub async fn read_link_returns_the_stored_target(fixture: &Fixture) {
        let env = &*fixture.env;
        put(fixture, "f.txt", "x").await;
        fixture.symlink("f.txt", fixture.path("rel"));
        fixture.symlink(fixture.path("f.txt"), fixture.path("abs"));
        fixture.symlink("../nowhere/x", fixture.path("dangling"));
        assert_eq!(
            ok(env.read_link(&fixture.path("rel")).await, "read_link"),
            PathBuf::from("f.txt")
        );
        assert_eq!(
            ok(env.read_link(&fixture.path("abs")).await, "read_link"),
            fixture.path("f.txt")
        );
        assert_eq!(
            ok(env.read_link(&fixture.path("dangling")).await, "read_link"),
            PathBuf::from("../nowhere/x")
        );
        expect_kind(
            env.read_link(&fixture.path("f.txt")).await,
            ErrorKind::Invalid,
            "read_link of a regular file",
        );
        expect_kind(
            env.read_link(&fixture.path("missing")).await,
            ErrorKind::NotFound,
            "read_link of a missing path",
        );
    }

    /// The realpath: absolute, no `.`/`..`, every symlink (middle and final) resolved.
    pub async fn canonical_path_resolves_every_symlink(fixture: &Fixture) {
        let env = &*fixture.env;
        let root = canonical_root(fixture).await;
        put(fixture, "real/deep/file.txt", "x").await;
        fixture.symlink("real", fixture.path("dirlink"));
        fixture.symlink(fixture.path("real/deep"), fixture.path("abslink"));
        fixture.symlink("../dirlink/deep/file.txt", fixture.path("real/chain"));
        fixture.symlink("chain", fixture.path("real/chain2"));
        let cases = [
            ("real/deep/file.txt", "real/deep/file.txt"),
            ("dirlink/deep/file.txt", "real/deep/file.txt"),
            ("abslink/file.txt", "real/deep/file.txt"),
            ("real/chain2", "real/deep/file.txt"),
            ("dirlink", "real"),
            ("dirlink/deep/..", "real"),
        ];
        for (spelled, real) in cases {
            let got = ok(env.canonical_path(&fixture.path(spelled)).await, spelled);
            assert_eq!(got, root.join(real), "canonical_path({spelled})");
        }
        expect_kind(
            env.canonical_path(&fixture.path("real/missing")).await,
            ErrorKind::NotFound,
            "canonical_path of a missing file",
        );
        fixture.symlink("nowhere", fixture.path("dangling"));
        expect_kind(
            env.canonical_path(&fixture.path("dangling")).await,
            ErrorKind::NotFound,
            "canonical_path of a dangling symlink",
        );
    }

    /// A symlink loop is an error (`Invalid`: too many levels of symbolic links), never a hang.
    pub async fn canonical_path_of_a_symlink_loop_is_an_error(fixture: &Fixture) {
        let env = &*fixture.env;
        fixture.symlink("b", fixture.path("a"));
        fixture.symlink("a", fixture.path("b"));
        fixture.symlink("self", fixture.path("self"));
        expect_kind(
            env.canonical_path(&fixture.path("a")).await,
            ErrorKind::Invalid,
            "canonical_path of a loop",
        );
        expect_kind(
            env.canonical_path(&fixture.path("self")).await,
            ErrorKind::Invalid,
            "canonical_path of a self loop",
        );
        expect_kind(
            env.read(&fixture.path("a")).await,
            ErrorKind::Invalid,
            "read of a loop",
        );
        expect_kind(
            env.stat(&fixture.path("a")).await,
            ErrorKind::Invalid,
            "stat of a loop",
        );
        expect_kind(
            env.canonical_path_lenient(&fixture.path("a")).await,
            ErrorKind::Invalid,
            "lenient canonical path of a loop",
        );
        assert_eq!(
            ok(env.file_info(&fixture.path("a")).await, "lstat of a loop").kind,
            FileKind::Symlink
        );
    }

    /// A missing path below a symlinked directory gets the same canonical form as its real path.
    pub async fn canonical_path_lenient_appends_missing_components(fixture: &Fixture) {
        let env = &*fixture.env;
        let root = canonical_root(fixture).await;
        mkdir(fixture, "real").await;
        fixture.symlink("real", fixture.path("link"));
        let via_link = ok(
            env.canonical_path_lenient(&fixture.path("link/new/file.txt"))
                .await,
            "lenient via link",
        );
        let direct = ok(
            env.canonical_path_lenient(&fixture.path("real/new/file.txt"))
                .await,
            "lenient direct",
        );
        assert_eq!(via_link, root.join("real/new/file.txt"));
        assert_eq!(direct, via_link);
        let existing = put(fixture, "real/here.txt", "x").await;
        assert_eq!(
            ok(
                env.canonical_path_lenient(&fixture.path("link/here.txt"))
                    .await,
                "lenient of an existing file"
            ),
            ok(
                env.canonical_path(&existing).await,
                "canonical of an existing file"
            ),
        );
        assert_eq!(
            ok(
                env.canonical_path_lenient(&fixture.path("link/./x/../y"))
                    .await,
                "lenient with dots"
            ),
            root.join("real/y"),
        );
    }

    /// A dangling symlink resolves to its (missing) target, so a link pointing outside a
    /// directory is seen as outside.
    pub async fn canonical_path_lenient_follows_dangling_symlinks(fixture: &Fixture) {
        let env = &*fixture.env;
        let root = canonical_root(fixture).await;
        mkdir(fixture, "inside").await;
        mkdir(fixture, "outside").await;
        fixture.symlink(
            fixture.path("outside/missing.txt"),
            fixture.path("inside/abs"),
        );
        fixture.symlink("../outside/gone/deeper.txt", fixture.path("inside/rel"));
        fixture.symlink("rel", fixture.path("inside/chain"));
        assert_eq!(
            ok(
                env.canonical_path_lenient(&fixture.path("inside/abs"))
                    .await,
                "abs"
            ),
            root.join("outside/missing.txt")
        );
        assert_eq!(
            ok(
                env.canonical_path_lenient(&fixture.path("inside/rel"))
                    .await,
                "rel"
            ),
            root.join("outside/gone/deeper.txt")
        );
        assert_eq!(
            ok(
                env.canonical_path_lenient(&fixture.path("inside/chain"))
                    .await,
                "chain"
            ),
            root.join("outside/gone/deeper.txt")
        );
    }

    /// `exists` is lstat-based: a dangling symlink exists; only "not found" is `false`.
    pub async fn exists_is_true_for_dangling_symlinks(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = put(fixture, "f", "x").await;
        fixture.symlink("nowhere", fixture.path("dangling"));
        assert!(ok(env.exists(&file).await, "exists"));
        assert!(ok(
            env.exists(&fixture.path("dangling")).await,
            "exists of a dangling symlink"
        ));
        assert!(!ok(
            env.exists(&fixture.path("missing")).await,
            "exists of a missing path"
        ));
        assert!(!ok(
            env.exists(&fixture.path("missing/deeper")).await,
            "exists below a missing directory"
        ));
        expect_kind(
            env.exists(&fixture.path("f/below")).await,
            ErrorKind::NotADirectory,
            "exists below a file",
        );
    }

    // ----- reading ---------------------------------------------------------------------------

    /// `read` follows symlinks and fails with the right kind.
    pub async fn read_returns_bytes_and_typed_errors(fixture: &Fixture) {
        let env = &*fixture.env;
        let bytes: Vec<u8> = (0..=255).collect();
        let file = fixture.path("bin");
        ok(
            env.write(&file, Bytes::from(bytes.clone())).await,
            "write binary",
        );
        assert_eq!(ok(env.read(&file).await, "read binary"), bytes);
        fixture.symlink("bin", fixture.path("link"));
        assert_eq!(
            ok(
                env.read(&fixture.path("link")).await,
                "read through a symlink"
            ),
            bytes
        );
        put(fixture, "empty", "").await;
        assert_eq!(
            ok(env.read(&fixture.path("empty")).await, "read empty"),
            Vec::<u8>::new()
        );
        mkdir(fixture, "dir").await;
        expect_kind(
            env.read(&fixture.path("dir")).await,
            ErrorKind::IsADirectory,
            "read of a directory",
        );
        expect_kind(
            env.read(&fixture.path("missing")).await,
            ErrorKind::NotFound,
            "read of a missing file",
        );
        expect_kind(
            env.read(&fixture.path("bin/x")).await,
            ErrorKind::NotADirectory,
            "read below a file",
        );
    }

    /// `read_start` returns at most `max_bytes` from the start.
    pub async fn read_start_returns_a_prefix(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = put(fixture, "f", "0123456789").await;
        assert_eq!(ok(env.read_start(&file, 4).await, "read_start 4"), b"0123");
        assert_eq!(
            ok(env.read_start(&file, 100).await, "read_start 100"),
            b"0123456789"
        );
        assert_eq!(ok(env.read_start(&file, 0).await, "read_start 0"), b"");
        mkdir(fixture, "dir").await;
        expect_kind(
            env.read_start(&fixture.path("dir"), 4).await,
            ErrorKind::IsADirectory,
            "read_start of a directory",
        );
        expect_kind(
            env.read_start(&fixture.path("missing"), 4).await,
            ErrorKind::NotFound,
            "read_start of a missing file",
        );
    }

    /// `read_head` gives the metadata and the start of a regular file, says whether that is
    /// the whole file (also at exactly the limit), and opens nothing else.
    pub async fn read_head_returns_metadata_and_a_prefix(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = put(fixture, "f", "0123456789").await;
        let head = ok(env.read_head(&file, 4).await, "read_head 4");
        assert_eq!(head.bytes, b"0123");
        assert!(!head.complete, "4 of 10 bytes is not the whole file");
        assert_eq!(head.info.kind, FileKind::File);
        assert_eq!(head.info.size, 10);
        let exact = ok(env.read_head(&file, 10).await, "read_head 10");
        assert_eq!(exact.bytes, b"0123456789");
        assert!(
            exact.complete,
            "a limit of exactly the size reads the whole file"
        );
        let more = ok(env.read_head(&file, 100).await, "read_head 100");
        assert_eq!(more.bytes, b"0123456789");
        assert!(more.complete);
        let empty = put(fixture, "empty", "").await;
        let head = ok(env.read_head(&empty, 0).await, "read_head of an empty file");
        assert!(head.bytes.is_empty() && head.complete);
        let none = ok(env.read_head(&file, 0).await, "read_head 0");
        assert!(none.bytes.is_empty() && !none.complete);
        fixture.symlink("f", fixture.path("to-f"));
        let through = ok(
            env.read_head(&fixture.path("to-f"), 100).await,
            "read_head via a link",
        );
        assert_eq!(through.bytes, b"0123456789");
        assert_eq!(through.info.kind, FileKind::File, "the link is followed");
        mkdir(fixture, "dir").await;
        let dir = ok(
            env.read_head(&fixture.path("dir"), 4).await,
            "read_head of a directory",
        );
        assert_eq!(dir.info.kind, FileKind::Directory);
        assert!(dir.bytes.is_empty() && !dir.complete);
        expect_kind(
            env.read_head(&fixture.path("missing"), 4).await,
            ErrorKind::NotFound,
            "read_head of a missing file",
        );
    }

    /// Windows by line number; a start past the end is no lines, not an error.
    pub async fn read_lines_returns_the_window(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = put(fixture, "f", "one\ntwo\nthree\nfour\n").await;
        let read = ok(
            env.read_lines(&file, window(2, 2, 1000)).await,
            "window 2..3",
        );
        assert_eq!(texts(&read), vec!["two", "three"]);
        assert_eq!(numbers(&read), vec![2, 3]);
        assert_eq!((read.total_lines, read.total_bytes), (4, 19));
        assert_eq!(read.lines[1].full_len, 5);
        let read = ok(
            env.read_lines(&file, window(1, 100, 1000)).await,
            "whole file",
        );
        assert_eq!(texts(&read), vec!["one", "two", "three", "four"]);
        let read = ok(
            env.read_lines(&file, window(4, 10, 1000)).await,
            "last line",
        );
        assert_eq!(texts(&read), vec!["four"]);
        for start in [5, 6, 1000] {
            let read = ok(
                env.read_lines(&file, window(start, 10, 1000)).await,
                "start past the end",
            );
            assert!(
                read.lines.is_empty(),
                "start {start} past the end returns no lines"
            );
            assert_eq!(read.total_lines, 4, "the total is still counted");
        }
        let read = ok(
            env.read_lines(&file, window(1, 0, 1000)).await,
            "max_lines 0",
        );
        assert!(read.lines.is_empty());
        assert_eq!(read.total_lines, 4);
        fixture.symlink("f", fixture.path("link"));
        let read = ok(
            env.read_lines(&fixture.path("link"), window(3, 1, 1000))
                .await,
            "through a symlink",
        );
        assert_eq!(texts(&read), vec!["three"]);
    }

    /// A final line without `\n` counts; a trailing `\n` adds none; an empty file has none.
    pub async fn read_lines_counts_lines_like_the_contract(fixture: &Fixture) {
        let env = &*fixture.env;
        let cases: [(&str, u64, Vec<&str>); 7] = [
            ("", 0, vec![]),
            ("\n", 1, vec![""]),
            ("\n\n", 2, vec!["", ""]),
            ("a", 1, vec!["a"]),
            ("a\nb", 2, vec!["a", "b"]),
            ("a\nb\n", 2, vec!["a", "b"]),
            ("a\n\nb\n\n", 4, vec!["a", "", "b", ""]),
        ];
        for (index, (content, total, lines)) in cases.into_iter().enumerate() {
            let file = put(fixture, &format!("f{index}"), content).await;
            let read = ok(
                env.read_lines(&file, window(1, 100, 1000)).await,
                "read_lines",
            );
            assert_eq!(read.total_lines, total, "total_lines of {content:?}");
            assert_eq!(texts(&read), lines, "lines of {content:?}");
            assert_eq!(read.total_bytes, content.len() as u64);
        }
    }

    /// Lines split on `\n` only: the `\r` of CRLF stays on the line.
    pub async fn read_lines_keeps_carriage_returns(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = put(fixture, "crlf", "a\r\nb\r\nc").await;
        let read = ok(
            env.read_lines(&file, window(1, 10, 1000)).await,
            "read_lines",
        );
        assert_eq!(texts(&read), vec!["a\r", "b\r", "c"]);
        assert_eq!(read.total_lines, 3);
        assert_eq!(read.lines[0].full_len, 2);
    }

    /// A line longer than the byte budget is returned cut, with its full length.
    pub async fn read_lines_cuts_a_long_line(fixture: &Fixture) {
        let env = &*fixture.env;
        let long = "x".repeat(100);
        let file = put(fixture, "long", &format!("{long}\nshort\n")).await;
        let read = ok(env.read_lines(&file, window(1, 10, 10)).await, "read_lines");
        assert_eq!(read.lines.len(), 1, "the cut line ends the window");
        assert_eq!(read.lines[0].bytes, b"xxxxxxxxxx");
        assert_eq!(read.lines[0].full_len, 100);
        assert_eq!(read.total_lines, 2);
        let read = ok(
            env.read_lines(&file, window(2, 10, 10)).await,
            "next window",
        );
        assert_eq!(texts(&read), vec!["short"]);
        assert_eq!(read.lines[0].number, 2);
    }

    /// Collecting stops once the collected line bytes reach `max_bytes`; the line that reaches
    /// it is still returned.
    pub async fn read_lines_stops_at_the_byte_budget(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = put(fixture, "f", "aaaa\nbbbb\ncccc\ndddd\n").await;
        let read = ok(env.read_lines(&file, window(1, 10, 6)).await, "budget 6");
        assert_eq!(texts(&read), vec!["aaaa", "bbbb"]);
        let read = ok(env.read_lines(&file, window(1, 10, 8)).await, "budget 8");
        assert_eq!(texts(&read), vec!["aaaa", "bbbb"]);
        let read = ok(
            env.read_lines(&file, window(2, 10, 9)).await,
            "budget 9 from line 2",
        );
        assert_eq!(texts(&read), vec!["bbbb", "cccc", "dddd"]);
        assert_eq!(read.total_lines, 4);
    }

    /// `start_line` is 1-based; directories and missing files fail with their kinds.
    pub async fn read_lines_rejects_bad_input(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = put(fixture, "f", "a\n").await;
        expect_kind(
            env.read_lines(&file, window(0, 10, 100)).await,
            ErrorKind::Invalid,
            "start_line 0",
        );
        mkdir(fixture, "dir").await;
        expect_kind(
            env.read_lines(&fixture.path("dir"), window(1, 10, 100))
                .await,
            ErrorKind::IsADirectory,
            "read_lines of a directory",
        );
        expect_kind(
            env.read_lines(&fixture.path("missing"), window(1, 10, 100))
                .await,
            ErrorKind::NotFound,
            "read_lines of a missing file",
        );
    }

    /// A file of several MB with lines of every length (one longer than any sane buffer):
    /// windows anywhere and the total agree with a plain split of the content.
    pub async fn read_lines_streams_across_buffer_boundaries(fixture: &Fixture) {
        let env = &*fixture.env;
        let mut content = Vec::new();
        let mut expected: Vec<Vec<u8>> = Vec::new();
        for index in 0..6000_usize {
            let len = match index {
                2500 => 3 * 1024 * 1024 + 17,
                _ => (index * 7919) % 1500,
            };
            #[expect(clippy::cast_possible_truncation, reason = "modulo 26 fits a byte")]
            let line: Vec<u8> = (0..len).map(|i| b'a' + ((i + index) % 26) as u8).collect();
            content.extend_from_slice(&line);
            content.push(b'\n');
            expected.push(line);
        }
        content.extend_from_slice(b"tail without newline");
        expected.push(b"tail without newline".to_vec());
        let file = fixture.path("big");
        ok(
            env.write(&file, Bytes::from(content.clone())).await,
            "write big file",
        );
        for (start, max_lines) in [
            (1_u64, 3_usize),
            (700, 50),
            (2499, 3),
            (2502, 1000),
            (5990, 100),
            (6001, 5),
        ] {
            let read = ok(
                env.read_lines(&file, window(start, max_lines, usize::MAX))
                    .await,
                "read_lines big",
            );
            assert_eq!(read.total_lines, expected.len() as u64);
            assert_eq!(read.total_bytes, content.len() as u64);
            let first = usize::try_from(start - 1).unwrap_or(usize::MAX);
            let want: Vec<&Vec<u8>> = expected.iter().skip(first).take(max_lines).collect();
            assert_eq!(
                read.lines.len(),
                want.len(),
                "window {start}+{max_lines}: line count"
            );
            for (line, want) in read.lines.iter().zip(want) {
                assert!(
                    line.bytes == *want,
                    "window {start}+{max_lines}: line {} differs",
                    line.number
                );
                assert_eq!(line.full_len, want.len() as u64);
            }
        }
        // The long line with a small budget: cut, full length known, and the scan goes on.
        let read = ok(
            env.read_lines(&file, window(2501, 5, 100)).await,
            "long line cut",
        );
        assert_eq!(read.lines.len(), 1);
        assert_eq!(read.lines[0].bytes, expected[2500][..100].to_vec());
        assert_eq!(read.lines[0].full_len, expected[2500].len() as u64);
        assert_eq!(read.total_lines, expected.len() as u64);
    }

    // ----- writing ---------------------------------------------------------------------------

    /// `write` creates missing parents, reports `created`, replaces content, leaves no temp.
    pub async fn write_creates_files_and_parents(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = fixture.path("a/b/c.txt");
        let outcome = ok(
            env.write(&file, Bytes::from_static(b"first")).await,
            "write new",
        );
        assert!(outcome.created, "a new file is reported as created");
        assert_eq!(read_string(env, &file).await, "first");
        let outcome = ok(
            env.write(&file, Bytes::from_static(b"2nd")).await,
            "overwrite",
        );
        assert!(
            !outcome.created,
            "an existing file is not reported as created"
        );
        assert_eq!(
            read_string(env, &file).await,
            "2nd",
            "shorter content replaces the old fully"
        );
        ok(env.write(&file, Bytes::new()).await, "write empty");
        assert_eq!(read_string(env, &file).await, "");
        assert_eq!(
            names(env, &fixture.path("a/b")).await,
            vec!["c.txt"],
            "no temp file is left behind"
        );
        assert_eq!(names(env, &fixture.root).await, vec!["a"]);
    }

    /// Collects the chunks of a `read_chunks`.
    #[derive(Default)]
    struct Chunks(Vec<Bytes>);

    #[async_trait::async_trait]
    impl crate::ChunkSink for Chunks {
        async fn chunk(&mut self, chunk: Bytes) -> EnvResult<()> {
            self.0.push(chunk);
            Ok(())
        }
    }

    /// Feeds the given chunks to a `write_chunks`, then fails instead of ending when `fail`.
    struct Feed {
        chunks: std::collections::VecDeque<Bytes>,
        fail: bool,
    }

    impl Feed {
        fn of(chunks: &[&[u8]]) -> Self {
            Self {
                chunks: chunks.iter().map(|c| Bytes::copy_from_slice(c)).collect(),
                fail: false,
            }
        }
    }

    #[async_trait::async_trait]
    impl crate::ChunkSource for Feed {
        async fn next_chunk(&mut self) -> EnvResult<Option<Bytes>> {
            match self.chunks.pop_front() {
                Some(chunk) => Ok(Some(chunk)),
                None if self.fail => Err(EnvError::aborted("feed")),
                None => Ok(None),
            }
        }
    }

    /// `read_chunks` and `write_chunks` are `read` and `write` in pieces: the same bytes, the
    /// same rules (symlinks written through, modes kept, directories refused), chunks of at
    /// most `FILE_CHUNK`, and a write whose content fails before its end changes nothing.
    pub async fn chunked_read_and_write_act_like_read_and_write(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = fixture.path("new/dir/file.bin");
        let outcome = ok(
            env.write_chunks(&file, &mut Feed::of(&[b"ab", b"", b"cdef"]))
                .await,
            "chunked write of a new file",
        );
        assert!(outcome.created, "the file was created");
        assert_eq!(read_string(env, &file).await, "abcdef");

        // Bigger than a chunk: read back in chunks of at most FILE_CHUNK, in order.
        let big: Vec<u8> = (0..crate::FILE_CHUNK * 5 / 2)
            .map(|i| u8::try_from(i % 251).unwrap_or(0))
            .collect();
        let pieces: Vec<&[u8]> = big.chunks(300_000).collect();
        let outcome = ok(
            env.write_chunks(&file, &mut Feed::of(&pieces)).await,
            "chunked write replacing the file",
        );
        assert!(!outcome.created, "the file existed");
        let mut chunks = Chunks::default();
        let size = ok(env.read_chunks(&file, &mut chunks).await, "chunked read");
        assert_eq!(size, big.len() as u64);
        assert!(chunks.0.len() >= 3, "{} chunks", chunks.0.len());
        assert!(chunks.0.iter().all(|c| c.len() <= crate::FILE_CHUNK));
        assert_eq!(chunks.0.concat(), big, "the same bytes in order");
        assert_eq!(ok(env.read(&file).await, "read"), big);

        // An empty file gives no chunk.
        let empty = put(fixture, "empty.txt", "").await;
        let mut chunks = Chunks::default();
        assert_eq!(ok(env.read_chunks(&empty, &mut chunks).await, "read"), 0);
        assert!(chunks.0.is_empty());

        // A content that fails before its end leaves the old file and no temp file.
        let kept = put(fixture, "kept/file.txt", "old").await;
        let mut feed = Feed::of(&[b"new ", b"but cut off"]);
        feed.fail = true;
        expect_kind(
            env.write_chunks(&kept, &mut feed).await,
            ErrorKind::Aborted,
            "a failing content",
        );
        assert_eq!(read_string(env, &kept).await, "old");
        assert_eq!(names(env, &fixture.path("kept")).await, vec!["file.txt"]);

        // Through a symlink: the target is written, keeps its mode, the link survives.
        fixture.set_mode(&kept, 0o640);
        fixture.symlink("kept/file.txt", fixture.path("link"));
        ok(
            env.write_chunks(&fixture.path("link"), &mut Feed::of(&[b"via ", b"link"]))
                .await,
            "chunked write through a link",
        );
        assert_eq!(read_string(env, &kept).await, "via link");
        assert_eq!(
            ok(env.file_info(&fixture.path("link")).await, "lstat").kind,
            FileKind::Symlink
        );
        assert_eq!(ok(env.stat(&kept).await, "stat").mode & 0o7777, 0o640);
        assert_eq!(names(env, &fixture.path("kept")).await, vec!["file.txt"]);

        // Typed errors, like read and write.
        let dir = mkdir(fixture, "adir").await;
        expect_kind(
            env.write_chunks(&dir, &mut Feed::of(&[b"x"])).await,
            ErrorKind::IsADirectory,
            "chunked write to a directory",
        );
        expect_kind(
            env.read_chunks(&dir, &mut Chunks::default()).await,
            ErrorKind::IsADirectory,
            "chunked read of a directory",
        );
        expect_kind(
            env.read_chunks(&fixture.path("missing"), &mut Chunks::default())
                .await,
            ErrorKind::NotFound,
            "chunked read of a missing file",
        );
        assert_eq!(names(env, &dir).await, Vec::<String>::new());
    }

    /// An existing file keeps its permission bits across an atomic write.
    pub async fn write_keeps_permission_bits(fixture: &Fixture) {
        let env = &*fixture.env;
        for mode in [0o600, 0o755, 0o640, 0o664] {
            let file = put(fixture, &format!("f{mode:o}"), "old").await;
            fixture.set_mode(&file, mode);
            ok(env.write(&file, Bytes::from_static(b"new")).await, "write");
            let info = ok(env.stat(&file).await, "stat");
            assert_eq!(info.mode & 0o7777, mode, "mode {mode:o} is kept by write");
            assert_eq!(read_string(env, &file).await, "new");
        }
    }

    /// Writing through a symlink writes its target; the link itself survives.
    pub async fn write_through_a_symlink_keeps_the_link(fixture: &Fixture) {
        let env = &*fixture.env;
        let target = put(fixture, "real/target.txt", "old").await;
        fixture.set_mode(&target, 0o640);
        fixture.symlink("real/target.txt", fixture.path("link"));
        fixture.symlink(fixture.path("link"), fixture.path("link2"));
        let outcome = ok(
            env.write(&fixture.path("link2"), Bytes::from_static(b"new"))
                .await,
            "write through two links",
        );
        assert!(!outcome.created, "the target existed");
        assert_eq!(
            ok(env.file_info(&fixture.path("link")).await, "lstat").kind,
            FileKind::Symlink,
            "the link survives"
        );
        assert_eq!(
            ok(env.file_info(&fixture.path("link2")).await, "lstat").kind,
            FileKind::Symlink,
            "the outer link survives"
        );
        assert_eq!(read_string(env, &target).await, "new");
        assert_eq!(
            ok(env.stat(&target).await, "stat").mode & 0o7777,
            0o640,
            "the target keeps its mode"
        );
        assert_eq!(
            names(env, &fixture.root).await,
            vec!["link", "link2", "real"],
            "no temp next to the link"
        );
        assert_eq!(
            names(env, &fixture.path("real")).await,
            vec!["target.txt"],
            "no temp next to the target"
        );
        // A symlinked directory in the middle of the path.
        fixture.symlink("real", fixture.path("dirlink"));
        ok(
            env.write(&fixture.path("dirlink/other.txt"), Bytes::from_static(b"o"))
                .await,
            "write below a dir link",
        );
        assert_eq!(
            names(env, &fixture.path("real")).await,
            vec!["other.txt", "target.txt"]
        );
        assert_eq!(
            ok(env.file_info(&fixture.path("dirlink")).await, "lstat").kind,
            FileKind::Symlink
        );
    }

    /// Writing through a dangling symlink creates its target (like a shell redirection); the
    /// link survives.
    pub async fn write_through_a_dangling_symlink_creates_its_target(fixture: &Fixture) {
        let env = &*fixture.env;
        mkdir(fixture, "dir").await;
        fixture.symlink("dir/new.txt", fixture.path("link"));
        let outcome = ok(
            env.write(&fixture.path("link"), Bytes::from_static(b"made"))
                .await,
            "write through a dangling link",
        );
        assert!(outcome.created, "the target was created");
        assert_eq!(read_string(env, &fixture.path("dir/new.txt")).await, "made");
        assert_eq!(
            ok(env.file_info(&fixture.path("link")).await, "lstat").kind,
            FileKind::Symlink
        );
    }

    /// A directory target is `IsADirectory`; nothing changes and no temp is left anywhere.
    pub async fn write_to_a_directory_is_refused_without_leftovers(fixture: &Fixture) {
        let env = &*fixture.env;
        put(fixture, "dir/inner.txt", "in").await;
        expect_kind(
            env.write(&fixture.path("dir"), Bytes::from_static(b"x"))
                .await,
            ErrorKind::IsADirectory,
            "write to a directory",
        );
        expect_kind(
            env.append(&fixture.path("dir"), Bytes::from_static(b"x"))
                .await,
            ErrorKind::IsADirectory,
            "append to a directory",
        );
        fixture.symlink("dir", fixture.path("dirlink"));
        expect_kind(
            env.write(&fixture.path("dirlink"), Bytes::from_static(b"x"))
                .await,
            ErrorKind::IsADirectory,
            "write to a symlinked directory",
        );
        assert_eq!(names(env, &fixture.root).await, vec!["dir", "dirlink"]);
        assert_eq!(names(env, &fixture.path("dir")).await, vec!["inner.txt"]);
        assert_eq!(
            ok(env.file_info(&fixture.path("dir")).await, "lstat").kind,
            FileKind::Directory
        );
    }

    /// A parent that is a file is `NotADirectory`; nothing is created.
    pub async fn write_below_a_file_fails_without_leftovers(fixture: &Fixture) {
        let env = &*fixture.env;
        put(fixture, "file.txt", "content").await;
        expect_kind(
            env.write(&fixture.path("file.txt/x"), Bytes::from_static(b"x"))
                .await,
            ErrorKind::NotADirectory,
            "write below a file",
        );
        expect_kind(
            env.write(&fixture.path("file.txt/a/b"), Bytes::from_static(b"x"))
                .await,
            ErrorKind::NotADirectory,
            "write deep below a file",
        );
        expect_kind(
            env.append(&fixture.path("file.txt/x"), Bytes::from_static(b"x"))
                .await,
            ErrorKind::NotADirectory,
            "append below a file",
        );
        assert_eq!(
            names(env, &fixture.root).await,
            vec!["file.txt"],
            "no temp file is left behind"
        );
        assert_eq!(read_string(env, &fixture.path("file.txt")).await, "content");
    }

    /// A file the user may not write is `PermissionDenied`, not silently replaced by the rename.
    pub async fn write_to_a_read_only_file_is_refused(fixture: &Fixture) {
        let env = &*fixture.env;
        if !fixture.capabilities.enforces_permissions {
            return;
        }
        let file = put(fixture, "ro.txt", "original").await;
        fixture.set_mode(&file, 0o444);
        expect_kind(
            env.write(&file, Bytes::from_static(b"x")).await,
            ErrorKind::PermissionDenied,
            "write to a 0444 file",
        );
        expect_kind(
            env.append(&file, Bytes::from_static(b"x")).await,
            ErrorKind::PermissionDenied,
            "append to a 0444 file",
        );
        fixture.set_mode(&file, 0o644);
        assert_eq!(read_string(env, &file).await, "original");
        assert_eq!(
            names(env, &fixture.root).await,
            vec!["ro.txt"],
            "no temp file is left behind"
        );
    }

    /// Concurrent writes to one file (through alias spellings) each replace it whole: the
    /// result is exactly one writer's content and no temp file remains.
    pub async fn concurrent_writes_never_interleave(fixture: &Fixture) {
        let env = &fixture.env;
        mkdir(fixture, "real").await;
        fixture.symlink("real", fixture.path("link"));
        let aliases = [
            fixture.path("real/f.txt"),
            fixture.path("link/f.txt"),
            fixture.path("real/../link/./f.txt"),
        ];
        let mut tasks = Vec::new();
        for index in 0..60_usize {
            let env = Arc::clone(env);
            let path = aliases[index % aliases.len()].clone();
            let content = format!("{index:03}|").repeat(2000 + index);
            tasks.push(tokio::spawn(async move {
                env.write(&path, Bytes::from(content)).await.map(|_| ())
            }));
        }
        for task in tasks {
            match task.await {
                Ok(result) => ok(result, "concurrent write"),
                Err(error) => panic!("a write task failed: {error}"),
            }
        }
        let content = read_string(&**env, &fixture.path("real/f.txt")).await;
        let Some(writer) = content
            .get(..3)
            .and_then(|prefix| prefix.parse::<usize>().ok())
        else {
            panic!(
                "the file does not start with a writer number: {:?}",
                &content[..content.len().min(20)]
            );
        };
        assert_eq!(
            content,
            format!("{writer:03}|").repeat(2000 + writer),
            "the file is exactly one writer's content"
        );
        assert_eq!(
            names(&**env, &fixture.path("real")).await,
            vec!["f.txt"],
            "no temp file is left behind"
        );
    }

    /// `append` creates the file and parents, appends, follows symlinks.
    pub async fn append_creates_and_appends(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = fixture.path("new/dir/log.txt");
        ok(
            env.append(&file, Bytes::from_static(b"one\n")).await,
            "append new",
        );
        ok(
            env.append(&file, Bytes::from_static(b"two\n")).await,
            "append again",
        );
        assert_eq!(read_string(env, &file).await, "one\ntwo\n");
        fixture.symlink("new/dir/log.txt", fixture.path("link"));
        ok(
            env.append(&fixture.path("link"), Bytes::from_static(b"three\n"))
                .await,
            "append through a link",
        );
        assert_eq!(read_string(env, &file).await, "one\ntwo\nthree\n");
        assert_eq!(
            ok(env.file_info(&fixture.path("link")).await, "lstat").kind,
            FileKind::Symlink
        );
        let existing = put(fixture, "kept.txt", "k").await;
        fixture.set_mode(&existing, 0o600);
        ok(
            env.append(&existing, Bytes::from_static(b"+")).await,
            "append to existing",
        );
        assert_eq!(ok(env.stat(&existing).await, "stat").mode & 0o7777, 0o600);
        assert_eq!(read_string(env, &existing).await, "k+");
    }

    // ----- rename, remove, mkdir, list -------------------------------------------------------

    /// `rename` moves files and directories and replaces a file target.
    pub async fn rename_moves_and_replaces(fixture: &Fixture) {
        let env = &*fixture.env;
        let a = put(fixture, "a.txt", "A").await;
        let b = put(fixture, "b.txt", "B").await;
        ok(env.rename(&a, &b).await, "rename over an existing file");
        assert_eq!(read_string(env, &b).await, "A");
        assert_eq!(names(env, &fixture.root).await, vec!["b.txt"]);
        let c = fixture.path("c.txt");
        ok(env.rename(&b, &c).await, "rename to a new name");
        assert_eq!(names(env, &fixture.root).await, vec!["c.txt"]);
        put(fixture, "dir/inner.txt", "in").await;
        ok(
            env.rename(&fixture.path("dir"), &fixture.path("moved"))
                .await,
            "rename a directory",
        );
        assert_eq!(
            read_string(env, &fixture.path("moved/inner.txt")).await,
            "in"
        );
        ok(env.rename(&c, &c).await, "rename onto itself is a no-op");
        assert_eq!(read_string(env, &c).await, "A");
        expect_kind(
            env.rename(&fixture.path("missing"), &fixture.path("x"))
                .await,
            ErrorKind::NotFound,
            "rename of a missing file",
        );
        expect_kind(
            env.rename(&c, &fixture.path("nodir/x")).await,
            ErrorKind::NotFound,
            "rename into a missing directory",
        );
        expect_kind(
            env.rename(&c, &fixture.path("moved")).await,
            ErrorKind::IsADirectory,
            "rename a file over a directory",
        );
        assert_eq!(names(env, &fixture.root).await, vec!["c.txt", "moved"]);
    }

    /// `rename` of a symlink moves the link; the target is untouched.
    pub async fn rename_moves_a_symlink_not_its_target(fixture: &Fixture) {
        let env = &*fixture.env;
        put(fixture, "target.txt", "T").await;
        fixture.symlink("target.txt", fixture.path("link"));
        ok(
            env.rename(&fixture.path("link"), &fixture.path("link2"))
                .await,
            "rename a link",
        );
        assert_eq!(names(env, &fixture.root).await, vec!["link2", "target.txt"]);
        assert_eq!(
            ok(env.file_info(&fixture.path("link2")).await, "lstat").kind,
            FileKind::Symlink
        );
        assert_eq!(read_string(env, &fixture.path("link2")).await, "T");
    }

    /// `remove` deletes files and links (never a link's target) and directories (non-empty
    /// only when recursive).
    pub async fn remove_files_links_and_directories(fixture: &Fixture) {
        let env = &*fixture.env;
        let file = put(fixture, "f.txt", "x").await;
        ok(env.remove(&file, Recursive::No).await, "remove a file");
        assert!(!ok(env.exists(&file).await, "exists"));
        put(fixture, "dir/inner.txt", "in").await;
        fixture.symlink("dir", fixture.path("dirlink"));
        fixture.symlink("dir/inner.txt", fixture.path("filelink"));
        ok(
            env.remove(&fixture.path("filelink"), Recursive::No).await,
            "remove a file link",
        );
        ok(
            env.remove(&fixture.path("dirlink"), Recursive::Yes).await,
            "remove a dir link, recursively",
        );
        assert_eq!(names(env, &fixture.root).await, vec!["dir"]);
        assert_eq!(
            read_string(env, &fixture.path("dir/inner.txt")).await,
            "in",
            "link targets are untouched"
        );
        let error = env.remove(&fixture.path("dir"), Recursive::No).await;
        assert!(
            error.is_err(),
            "a non-empty directory is not removed without Recursive::Yes"
        );
        assert_eq!(read_string(env, &fixture.path("dir/inner.txt")).await, "in");
        mkdir(fixture, "empty").await;
        ok(
            env.remove(&fixture.path("empty"), Recursive::No).await,
            "remove an empty directory",
        );
        put(fixture, "dir/sub/deep.txt", "d").await;
        fixture.symlink("../../outside", fixture.path("dir/sub/dangling"));
        ok(
            env.remove(&fixture.path("dir"), Recursive::Yes).await,
            "remove a tree",
        );
        assert!(names(env, &fixture.root).await.is_empty());
        fixture.symlink("nowhere", fixture.path("dangling"));
        ok(
            env.remove(&fixture.path("dangling"), Recursive::No).await,
            "remove a dangling link",
        );
        expect_kind(
            env.remove(&fixture.path("missing"), Recursive::No).await,
            ErrorKind::NotFound,
            "remove a missing path",
        );
        expect_kind(
            env.remove(&fixture.path("missing"), Recursive::Yes).await,
            ErrorKind::NotFound,
            "remove a missing path recursively",
        );
    }

    /// `create_dir`: plain needs the parent and a free name; recursive is `mkdir -p`.
    pub async fn create_dir_plain_and_recursive(fixture: &Fixture) {
        let env = &*fixture.env;
        let dir = fixture.path("d");
        ok(env.create_dir(&dir, Recursive::No).await, "mkdir");
        assert_eq!(
            ok(env.file_info(&dir).await, "lstat").kind,
            FileKind::Directory
        );
        assert!(
            env.create_dir(&dir, Recursive::No).await.is_err(),
            "plain mkdir of an existing directory fails"
        );
        ok(
            env.create_dir(&dir, Recursive::Yes).await,
            "mkdir -p of an existing directory is fine",
        );
        expect_kind(
            env.create_dir(&fixture.path("x/y"), Recursive::No).await,
            ErrorKind::NotFound,
            "plain mkdir with a missing parent",
        );
        ok(
            env.create_dir(&fixture.path("x/y/z"), Recursive::Yes).await,
            "mkdir -p",
        );
        assert_eq!(
            ok(env.file_info(&fixture.path("x/y/z")).await, "lstat").kind,
            FileKind::Directory
        );
        let file = put(fixture, "file", "f").await;
        assert!(
            env.create_dir(&file, Recursive::No).await.is_err(),
            "mkdir over a file fails"
        );
        assert!(
            env.create_dir(&file, Recursive::Yes).await.is_err(),
            "mkdir -p over a file fails"
        );
        expect_kind(
            env.create_dir(&fixture.path("file/sub"), Recursive::Yes)
                .await,
            ErrorKind::NotADirectory,
            "mkdir -p below a file",
        );
        fixture.symlink("d", fixture.path("dlink"));
        ok(
            env.create_dir(&fixture.path("dlink/inner"), Recursive::Yes)
                .await,
            "mkdir -p through a dir link",
        );
        assert_eq!(names(env, &dir).await, vec!["inner"]);
        assert_eq!(read_string(env, &file).await, "f");
    }

    /// `read_dir` lists every entry (dotfiles too, not `.`/`..`) with lstat kinds; the
    /// directory path itself is followed.
    pub async fn read_dir_lists_entries_without_following(fixture: &Fixture) {
        let env = &*fixture.env;
        put(fixture, "d/file.txt", "x").await;
        put(fixture, "d/.hidden", "h").await;
        mkdir(fixture, "d/sub").await;
        fixture.symlink("sub", fixture.path("d/sublink"));
        fixture.symlink("file.txt", fixture.path("d/filelink"));
        fixture.symlink("nowhere", fixture.path("d/dangling"));
        let mut entries: Vec<(String, FileKind)> =
            ok(env.read_dir(&fixture.path("d")).await, "read_dir")
                .into_iter()
                .map(|entry| (entry.name.to_string_lossy().into_owned(), entry.kind))
                .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            entries,
            vec![
                (".hidden".to_owned(), FileKind::File),
                ("dangling".to_owned(), FileKind::Symlink),
                ("file.txt".to_owned(), FileKind::File),
                ("filelink".to_owned(), FileKind::Symlink),
                ("sub".to_owned(), FileKind::Directory),
                ("sublink".to_owned(), FileKind::Symlink),
            ]
        );
        fixture.symlink("d", fixture.path("dlink"));
        assert_eq!(
            names(env, &fixture.path("dlink")).await.len(),
            6,
            "read_dir follows a symlinked directory path"
        );
        assert!(names(env, &fixture.path("d/sub")).await.is_empty());
        expect_kind(
            env.read_dir(&fixture.path("d/file.txt")).await,
            ErrorKind::NotADirectory,
            "read_dir of a file",
        );
        expect_kind(
            env.read_dir(&fixture.path("missing")).await,
            ErrorKind::NotFound,
            "read_dir of a missing directory",
        );
    }

    /// Temp files are `0600` inside one `0700` private directory per env, removed by cleanup.
    pub async fn temp_files_are_private_and_cleaned_up(fixture: &Fixture) {
        let env = &*fixture.env;
        let first = ok(
            env.create_temp_file("pre-", "-post").await,
            "create_temp_file",
        );
        let second = ok(
            env.create_temp_file("pre-", "-post").await,
            "create_temp_file again",
        );
        let dir = ok(env.create_temp_dir("work-").await, "create_temp_dir");
        assert_ne!(first, second, "temp files are distinct");
        if fixture.confined {
            // A view's temp files are its env's, outside the view's roots.
            expect_kind(
                env.stat(&first).await,
                ErrorKind::OutsideRoots,
                "a view's temp file is outside its roots",
            );
            return;
        }
        let name = first
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(
            name.starts_with("pre-") && name.ends_with("-post"),
            "prefix and suffix are kept: {name}"
        );
        let private = first.parent().map(Path::to_path_buf).unwrap_or_default();
        assert_eq!(
            second.parent(),
            Some(private.as_path()),
            "one private directory per env"
        );
        assert_eq!(
            dir.parent(),
            Some(private.as_path()),
            "temp dirs live in the private directory too"
        );
        let info = ok(env.stat(&first).await, "stat temp file");
        assert_eq!(
            (info.kind, info.size, info.mode & 0o777),
            (FileKind::File, 0, 0o600)
        );
        let info = ok(env.file_info(&private).await, "stat private dir");
        assert_eq!((info.kind, info.mode & 0o777), (FileKind::Directory, 0o700));
        let info = ok(env.file_info(&dir).await, "stat temp dir");
        assert_eq!((info.kind, info.mode & 0o777), (FileKind::Directory, 0o700));
        ok(
            env.write(&first, Bytes::from_static(b"data")).await,
            "write temp file",
        );
        assert_eq!(
            ok(env.stat(&first).await, "stat").mode & 0o777,
            0o600,
            "a temp file stays private after a write"
        );
        expect_kind(
            env.create_temp_file("a/b", "").await,
            ErrorKind::Invalid,
            "a '/' in a temp prefix",
        );
        env.cleanup().await;
        assert!(
            !ok(env.exists(&private).await, "exists after cleanup"),
            "cleanup removes the private directory"
        );
        env.cleanup().await; // idempotent
        let again = ok(
            env.create_temp_file("x", "").await,
            "create_temp_file after cleanup",
        );
        assert!(
            ok(env.exists(&again).await, "exists"),
            "temp files work again after cleanup"
        );
    }

    /// A view from [`ExecutionEnv::beneath`] acts inside its roots (symlinks that stay inside
    /// are followed, also absolute ones) and refuses everything that leads outside with
    /// `OutsideRoots`, touching nothing outside. An env without views refuses `beneath` with
    /// `Unsupported`.
    #[expect(
        clippy::too_many_lines,
        reason = "one scenario, every operation in turn"
    )]
    pub async fn beneath_confines_every_operation(fixture: &Fixture) {
        if fixture.confined {
            return; // the case builds its own view from an unconfined env
        }
        let env = &fixture.env;
        let root = canonical_root(fixture).await;
        let Some(parent) = root.parent().map(Path::to_path_buf) else {
            panic!("the fixture root has no parent");
        };
        let view = match Arc::clone(env).beneath(std::slice::from_ref(&root)) {
            Ok(view) => view,
            Err(error) => {
                assert_eq!(
                    error.kind(),
                    ErrorKind::Unsupported,
                    "an env without views says so: {error}"
                );
                return;
            }
        };
        let inside = put(fixture, "inside/file.txt", "in").await;
        let outside = parent.join("outside");
        ok(
            env.write(&outside.join("secret.txt"), Bytes::from_static(b"secret"))
                .await,
            "setup: outside file",
        );
        fixture.symlink("../outside", root.join("link_out"));
        fixture.symlink(&outside, root.join("abs_out"));
        fixture.symlink("../outside/secret.txt", root.join("file_out"));
        fixture.symlink("inside/../../outside", root.join("dotdot_out"));
        fixture.symlink("inside", root.join("link_in"));
        fixture.symlink(root.join("inside"), root.join("abs_in"));
        fixture.symlink("../outside/new.txt", root.join("dangling_out"));

        // Inside: plain, through a relative and through an absolute symlink.
        for path in [
            inside.clone(),
            root.join("link_in/file.txt"),
            root.join("abs_in/file.txt"),
        ] {
            assert_eq!(
                ok(view.read(&path).await, "read inside"),
                b"in",
                "{}",
                path.display()
            );
        }
        assert_eq!(
            ok(
                view.canonical_path(&root.join("abs_in/file.txt")).await,
                "canonical"
            ),
            root.join("inside/file.txt")
        );
        ok(
            view.write(&root.join("link_in/new.txt"), Bytes::from_static(b"n"))
                .await,
            "write through a symlink inside",
        );
        assert_eq!(read_string(&**env, &root.join("inside/new.txt")).await, "n");

        // Outside, every way round.
        let secret = outside.join("secret.txt");
        let escapes = [
            root.join("link_out/secret.txt"),
            root.join("abs_out/secret.txt"),
            root.join("file_out"),
            root.join("dotdot_out/secret.txt"),
            secret.clone(),
        ];
        for path in &escapes {
            let what = path.display().to_string();
            let error = expect_kind(view.read(path).await, ErrorKind::OutsideRoots, &what);
            assert!(
                error.to_string().contains(&root.display().to_string()),
                "the refusal names the root: {error}"
            );
            expect_kind(view.stat(path).await, ErrorKind::OutsideRoots, &what);
            expect_kind(
                view.read_start(path, 10).await,
                ErrorKind::OutsideRoots,
                &what,
            );
            expect_kind(
                view.read_head(path, 10).await,
                ErrorKind::OutsideRoots,
                &what,
            );
            expect_kind(
                view.read_lines(path, window(1, 10, 100)).await,
                ErrorKind::OutsideRoots,
                &what,
            );
            expect_kind(
                view.canonical_path(path).await,
                ErrorKind::OutsideRoots,
                &what,
            );
            expect_kind(
                view.write(path, Bytes::from_static(b"pwned")).await,
                ErrorKind::OutsideRoots,
                &what,
            );
            expect_kind(
                view.append(path, Bytes::from_static(b"pwned")).await,
                ErrorKind::OutsideRoots,
                &what,
            );
            let mut chunks = Chunks::default();
            expect_kind(
                view.read_chunks(path, &mut chunks).await,
                ErrorKind::OutsideRoots,
                &what,
            );
            assert!(chunks.0.is_empty(), "nothing read through {what}");
            expect_kind(
                view.write_chunks(path, &mut Feed::of(&[b"pwned"])).await,
                ErrorKind::OutsideRoots,
                &what,
            );
        }
        for dir in [
            root.join("link_out"),
            root.join("abs_out"),
            root.join("dotdot_out"),
        ] {
            let what = dir.display().to_string();
            expect_kind(view.read_dir(&dir).await, ErrorKind::OutsideRoots, &what);
            expect_kind(
                view.create_dir(&dir.join("made"), Recursive::Yes).await,
                ErrorKind::OutsideRoots,
                &what,
            );
            expect_kind(
                view.write(&dir.join("made.txt"), Bytes::from_static(b"x"))
                    .await,
                ErrorKind::OutsideRoots,
                &what,
            );
            expect_kind(
                view.walk(crate::WalkRequest::new(&dir)).await,
                ErrorKind::OutsideRoots,
                &what,
            );
            expect_kind(
                view.search(crate::SearchRequest::new(&dir, "secret")).await,
                ErrorKind::OutsideRoots,
                &what,
            );
        }
        expect_kind(
            view.write(&root.join("dangling_out"), Bytes::from_static(b"x"))
                .await,
            ErrorKind::OutsideRoots,
            "write through a dangling symlink leading outside",
        );
        expect_kind(
            view.write_chunks(&root.join("dangling_out"), &mut Feed::of(&[b"x"]))
                .await,
            ErrorKind::OutsideRoots,
            "chunked write through a dangling symlink leading outside",
        );
        expect_kind(
            view.rename(&inside, &outside.join("moved.txt")).await,
            ErrorKind::OutsideRoots,
            "rename to outside",
        );
        expect_kind(
            view.remove(&secret, Recursive::No).await,
            ErrorKind::OutsideRoots,
            "remove outside",
        );
        // The links themselves are inside: lstat, readlink and removing them work.
        let info = ok(view.file_info(&root.join("file_out")).await, "lstat link");
        assert_eq!(info.kind, FileKind::Symlink);
        ok(view.read_link(&root.join("file_out")).await, "readlink");
        // A search of the root never reads outside files.
        let found = ok(
            view.search(crate::SearchRequest::new(&root, "secret"))
                .await,
            "search root",
        );
        assert_eq!(found.matches, 0, "nothing outside was searched: {found:?}");

        assert_eq!(read_string(&**env, &secret).await, "secret");
        for never in ["new.txt", "made", "made.txt", "moved.txt"] {
            assert!(
                !ok(env.exists(&outside.join(never)).await, "exists"),
                "{never} was created outside"
            );
        }
        ok(
            view.remove(&root.join("file_out"), Recursive::No).await,
            "remove the link",
        );
        assert_eq!(read_string(&**env, &secret).await, "secret");
    }

    /// Errors carry the operation's path.
    pub async fn errors_name_the_path(fixture: &Fixture) {
        let env = &*fixture.env;
        let missing = fixture.path("missing.txt");
        let error = expect_kind(env.read(&missing).await, ErrorKind::NotFound, "read");
        assert_eq!(
            error.path(),
            Some(missing.as_path()),
            "the error names the path: {error}"
        );
        assert!(
            error.to_string().contains("missing.txt"),
            "the message names the path: {error}"
        );
        let error = expect_kind(
            env.read_dir(&missing).await,
            ErrorKind::NotFound,
            "read_dir",
        );
        assert_eq!(error.path(), Some(missing.as_path()));
        let error = expect_kind(
            env.file_info(&missing).await,
            ErrorKind::NotFound,
            "file_info",
        );
        assert_eq!(error.path(), Some(missing.as_path()));
    }

    // ----- exec ------------------------------------------------------------------------------

    /// An env that runs processes runs one and streams its merged output; one that cannot
    /// answers `Unsupported` (and that is all this checks for it).
    pub async fn exec_runs_or_is_unsupported(fixture: &Fixture) {
        let env = &*fixture.env;
        let request = ExecRequest::new(
            "/bin/sh",
            vec![
                "-c".to_owned(),
                "printf out; printf err >&2; exit 3".to_owned(),
            ],
            fixture.root.clone(),
        );
        let mut sink = crate::CollectSink::default();
        let result = env.exec(request, &mut sink).await;
        if !fixture.capabilities.exec {
            expect_kind(
                result,
                ErrorKind::Unsupported,
                "exec on an env without processes",
            );
            return;
        }
        let outcome = ok(result, "exec");
        assert_eq!(outcome.exit_code, 3);
        assert_eq!(
            (outcome.signal, outcome.timed_out, outcome.aborted),
            (None, false, false)
        );
        let mut output = sink.0;
        output.sort_unstable();
        let mut want = b"outerr".to_vec();
        want.sort_unstable();
        assert_eq!(output, want, "stdout and stderr are both streamed");
        let request = ExecRequest::new("/bin/sh", Vec::new(), fixture.path("missing-dir"));
        assert!(
            env.exec(request, &mut crate::CollectSink::default())
                .await
                .is_err(),
            "a missing cwd is an error"
        );
    }
}
