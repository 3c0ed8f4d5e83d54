//! `walk` and `search` for the host filesystem: a parallel walk on directory handles
//! ([`walk`]: every directory and file reached by name from its parent's handle, the ignore
//! rules `jig_search`'s), then the sorted file list searched by a pool of threads that emit
//! results in path order.
//!
//! Why two phases: results must be in (path, line) order and a limited search must keep exactly
//! the first `limit` matches in that order. Listing the tree in parallel is fast (tens of
//! milliseconds for 60k files); the search then runs in parallel over the sorted list with a
//! bounded lookahead, and stops as soon as the first `limit + 1` matches in order are known.
//! The per-file searching, binary detection, globs and result assembly are `jig_search`'s,
//! which is what makes the results identical to the generic implementation's.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

mod walk;

use crate::beneath::{ParentHandles, Roots, Scope};
use jig_env::{
    CancellationToken, EntryKinds, EnvError, EnvResult, ErrorKind, FileKind, IgnoreRules,
    SearchRequest, SearchResult, WalkEntry, WalkRequest, WalkResult,
};
use jig_search::{
    CompiledSearch, FileOutcome, FileSearcher, PathGlob, SearchAssembler, finish_walk,
    path_sort_key,
};
use rustix::fs::{Mode, OFlags};

/// How many files past the next one to emit the search threads may run ahead; bounds the
/// memory held by out-of-order results and the work wasted past an early stop.
const LOOKAHEAD_PER_THREAD: usize = 64;

fn thread_count() -> usize {
    std::thread::available_parallelism()
        .map_or(2, std::num::NonZero::get)
        .min(16)
}

/// `walk` on the host: blocking, run it on a blocking thread. With `confine` (a view's roots)
/// the root is resolved beneath them and an entry is reported only when it exists at its path
/// beneath the root, reached without a symlink, when it is checked.
pub(crate) fn walk_blocking(
    request: &WalkRequest,
    confine: Option<&Roots>,
) -> EnvResult<WalkResult> {
    let glob = request.glob.as_deref().map(PathGlob::new).transpose()?;
    let root = resolve_root(&request.root, "walk", confine)?;
    let mut entries = if root.kind == FileKind::Directory {
        let keep = |relative: &Path, kind: FileKind| {
            let listed = match kind {
                FileKind::File | FileKind::Symlink => true,
                FileKind::Directory => request.kinds == EntryKinds::FilesAndDirectories,
                FileKind::Other => false,
            };
            listed
                && glob
                    .as_ref()
                    .is_none_or(|glob| glob.is_match(relative, kind))
        };
        walk_parallel(
            &root.path,
            request.ignore,
            &request.cancel,
            keep,
            None,
            confine,
        )?
        .into_iter()
        .map(|found| WalkEntry {
            path: found.path,
            kind: found.kind,
        })
        .collect()
    } else {
        let name = file_name_of(&root.path);
        if glob
            .as_ref()
            .is_none_or(|glob| glob.is_match(&name, FileKind::File))
        {
            vec![WalkEntry {
                path: name,
                kind: FileKind::File,
            }]
        } else {
            Vec::new()
        }
    };
    Ok(finish_walk(&mut entries, request.limit))
}

/// `search` on the host: blocking, run it on a blocking thread. With `confine` (a view's roots)
/// the root is resolved beneath them and every file searched is opened beneath its root without
/// following any symlink.
pub(crate) fn search_blocking(
    request: &SearchRequest,
    confine: Option<&Roots>,
) -> EnvResult<SearchResult> {
    let compiled = CompiledSearch::new(request)?;
    let root = resolve_root(&request.root, "search", confine)?;
    let mut assembler = compiled.assembler();
    if root.kind != FileKind::Directory {
        let name = file_name_of(&root.path);
        if compiled
            .glob()
            .is_none_or(|glob| glob.is_match(&name, FileKind::File))
        {
            let outcome = search_file(
                &mut compiled.file_searcher(),
                &root.path,
                &mut Opener::new(confine),
            );
            assembler.push(name, outcome);
        }
        return Ok(assembler.finish());
    }
    let eager = EagerSearch {
        compiled: &compiled,
        matches: AtomicUsize::new(0),
        enough: request
            .limit
            .map_or(usize::MAX, |limit| limit.saturating_add(1)),
    };
    let mut files = walk_parallel(
        &root.path,
        request.ignore,
        &request.cancel,
        |relative, kind| {
            kind == FileKind::File
                && compiled
                    .glob()
                    .is_none_or(|glob| glob.is_match(relative, kind))
        },
        Some(&eager),
        confine,
    )?;
    files.sort_by_cached_key(|found| path_sort_key(&found.path));
    search_in_order(
        &compiled,
        &root.path,
        files,
        &mut assembler,
        &request.cancel,
        confine,
    )?;
    Ok(assembler.finish())
}

struct Root {
    path: PathBuf,
    kind: FileKind,
}

/// The canonical root and what it is; a missing or unlistable root is an error (below the root,
/// unreadable entries are skipped).
fn resolve_root(root: &Path, operation: &'static str, confine: Option<&Roots>) -> EnvResult<Root> {
    jig_env::check_no_nul(operation, root)?;
    if let Some(roots) = confine {
        let path = jig_env::check_path(operation, root)?;
        let scope = Scope::Beneath(roots);
        let path = scope.canonical_path(&path)?;
        let info = scope.stat(&path)?;
        let kind = if info.kind == FileKind::Directory {
            scope.check_listable(&path)?;
            FileKind::Directory
        } else {
            FileKind::File
        };
        return Ok(Root { path, kind });
    }
    let path = std::fs::canonicalize(root).map_err(|error| EnvError::io(operation, root, error))?;
    let metadata =
        std::fs::metadata(&path).map_err(|error| EnvError::io(operation, root, error))?;
    let kind = if metadata.is_dir() {
        std::fs::read_dir(&path).map_err(|error| EnvError::io(operation, root, error))?;
        FileKind::Directory
    } else {
        FileKind::File
    };
    Ok(Root { path, kind })
}

fn file_name_of(path: &Path) -> PathBuf {
    path.file_name()
        .map_or_else(|| path.to_path_buf(), PathBuf::from)
}

/// Searching files while the walk finds them, the way ripgrep does, until enough matches are
/// known somewhere in the tree. A search that finds fewer matches than its limit (a full-tree
/// scan) is then complete when the walk ends; one with many matches stops searching early and
/// leaves the rest to the ordered phase, which needs only the first files in path order.
struct EagerSearch<'a> {
    compiled: &'a CompiledSearch,
    matches: AtomicUsize,
    enough: usize,
}

/// One entry the walk kept, with its search outcome when it was searched during the walk.
struct Found {
    path: PathBuf,
    kind: FileKind,
    outcome: Option<FileOutcome>,
}

/// Lists the tree under the directory `root` in parallel; returns the entries `keep` accepts,
/// unsorted, files searched on the way when `eager` is given. Confined, the walk starts from a
/// handle of the root opened beneath the view's roots without a symlink; below it every step
/// is by name from a handle (see [`walk`]), so everything listed is beneath the root.
fn walk_parallel<F>(
    root: &Path,
    rules: IgnoreRules,
    cancel: &CancellationToken,
    keep: F,
    eager: Option<&EagerSearch<'_>>,
    confine: Option<&Roots>,
) -> EnvResult<Vec<Found>>
where
    F: Fn(&Path, FileKind) -> bool + Sync,
{
    let handle = match confine {
        Some(roots) => roots.open_directory(root),
        None => rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok(),
    }
    .ok_or_else(|| {
        EnvError::new(ErrorKind::NotFound, "walk", "the directory is gone").with_path(root)
    })?;
    let scope = confine.map_or(Scope::Host, Scope::Beneath);
    let visitors = (0..thread_count())
        .map(|_| Visitor {
            keep: &keep,
            eager: eager.map(|eager| (eager, eager.compiled.file_searcher())),
            found: Vec::new(),
        })
        .collect();
    let visitors = walk::walk(handle, root, (rules, scope), cancel, visitors);
    if cancel.is_cancelled() {
        return Err(EnvError::aborted("walk"));
    }
    Ok(visitors
        .into_iter()
        .flat_map(|visitor| visitor.found)
        .collect())
}

/// One walk thread: keeps what `keep` accepts, searching files on the way when eager.
struct Visitor<'a, F> {
    keep: &'a F,
    eager: Option<(&'a EagerSearch<'a>, FileSearcher)>,
    found: Vec<Found>,
}

impl<F> walk::Visit for Visitor<'_, F>
where
    F: Fn(&Path, FileKind) -> bool + Sync,
{
    fn visit(&mut self, entry: &walk::Listed<'_>) {
        if !(self.keep)(entry.relative, entry.kind) {
            return;
        }
        let mut outcome = None;
        if entry.kind == FileKind::File
            && let Some((eager, searcher)) = &mut self.eager
            && eager.matches.load(AtomicOrdering::Relaxed) < eager.enough
        {
            // A file that vanished or cannot be read is skipped, as ripgrep does.
            let searched = rustix::fs::openat(entry.dir, entry.name, walk::READ, Mode::empty())
                .ok()
                .and_then(|fd| searcher.search_reader(File::from(fd)).ok())
                .unwrap_or(FileOutcome::Text(Vec::new()));
            let count = searched.match_count();
            if count > 0 {
                eager.matches.fetch_add(count, AtomicOrdering::Relaxed);
            }
            outcome = Some(searched);
        }
        self.found.push(Found {
            path: entry.relative.to_path_buf(),
            kind: entry.kind,
            outcome,
        });
    }
}

/// How a walk's files are opened: as the kernel resolves their paths (`LocalEnv`), or
/// beneath a view's roots without following any symlink, through the handle of the directory
/// of the previous file (a walk and a sorted list visit a directory's files together).
enum Opener<'a> {
    Host,
    Beneath(ParentHandles<'a>),
}

impl<'a> Opener<'a> {
    fn new(confine: Option<&'a Roots>) -> Self {
        match confine {
            Some(roots) => Self::Beneath(ParentHandles::new(roots)),
            None => Self::Host,
        }
    }

    /// The file at `path`, to search; `None` when it vanished, cannot be read, or (confined)
    /// is not a regular file reached beneath the root without a symlink.
    fn open(&mut self, path: &Path) -> Option<File> {
        match self {
            Self::Host => File::open(path).ok(),
            Self::Beneath(handles) => handles.open_for_search(path),
        }
    }
}

fn search_file(searcher: &mut FileSearcher, path: &Path, opener: &mut Opener<'_>) -> FileOutcome {
    // A file that vanished or cannot be read is skipped, as ripgrep does.
    match opener.open(path) {
        Some(file) => searcher
            .search_reader(file)
            .unwrap_or(FileOutcome::Text(Vec::new())),
        None => FileOutcome::Text(Vec::new()),
    }
}

/// Files a search thread claims at once: fewer lock round trips for trees of small files.
const CHUNK: usize = 16;

struct Schedule {
    /// The next position in `pending` to hand out.
    next: usize,
    /// The file index the emitter needs next (everything before it is emitted).
    emitted: usize,
    ready: HashMap<usize, FileOutcome>,
    stop: bool,
    emitter_waiting: bool,
    workers_waiting: usize,
}

/// What the search threads and the emitter share.
struct Ordered<'a> {
    compiled: &'a CompiledSearch,
    root: &'a Path,
    confine: Option<&'a Roots>,
    paths: &'a [PathBuf],
    /// Indices (into `paths`) of the files still to search, in order.
    pending: &'a [usize],
    window: usize,
    cancel: &'a CancellationToken,
    schedule: Mutex<Schedule>,
    // Two condition variables, so a finished file wakes the emitter only when it is the one
    // the emitter waits for, and the emitter wakes workers only when some wait for the window.
    emitter_wakeup: Condvar,
    worker_wakeup: Condvar,
}

impl Ordered<'_> {
    fn lock(&self) -> MutexGuard<'_, Schedule> {
        self.schedule.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stop_all(&self) {
        self.lock().stop = true;
        self.emitter_wakeup.notify_all();
        self.worker_wakeup.notify_all();
    }

    /// Claims the next chunk of pending positions inside the window; `None` when done.
    fn claim(&self) -> Option<(usize, usize)> {
        let mut state = self.lock();
        loop {
            if state.stop || state.next >= self.pending.len() {
                return None;
            }
            if self.pending[state.next] < state.emitted + self.window {
                break;
            }
            state.workers_waiting += 1;
            state = self
                .worker_wakeup
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.workers_waiting -= 1;
        }
        let from = state.next;
        let limit = state.emitted + self.window;
        let mut to = (from + CHUNK).min(self.pending.len());
        while to > from + 1 && self.pending[to - 1] >= limit {
            to -= 1;
        }
        state.next = to;
        Some((from, to))
    }

    /// One search thread: claims chunks, searches them, hands the outcomes to the emitter.
    fn work(&self) {
        let mut searcher = self.compiled.file_searcher();
        let mut opener = Opener::new(self.confine);
        let mut batch = Vec::with_capacity(CHUNK);
        while let Some((from, to)) = self.claim() {
            if self.cancel.is_cancelled() {
                self.stop_all();
                return;
            }
            for &index in &self.pending[from..to] {
                let path = self.root.join(&self.paths[index]);
                batch.push((index, search_file(&mut searcher, &path, &mut opener)));
            }
            let wake = {
                let mut state = self.lock();
                state.ready.extend(batch.drain(..));
                state.emitter_waiting && state.ready.contains_key(&state.emitted)
            };
            if wake {
                self.emitter_wakeup.notify_one();
            }
        }
    }

    /// Waits for the outcome of file `index`; `None` once everything stopped.
    fn outcome(&self, index: usize) -> Option<FileOutcome> {
        let mut state = self.lock();
        loop {
            if let Some(outcome) = state.ready.remove(&index) {
                return Some(outcome);
            }
            if state.stop {
                return None;
            }
            state.emitter_waiting = true;
            state = self
                .emitter_wakeup
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.emitter_waiting = false;
        }
    }

    /// Records that everything before `next` was emitted, waking workers held by the window.
    fn advance(&self, next: usize) {
        let wake = {
            let mut state = self.lock();
            state.emitted = next;
            state.workers_waiting > 0
        };
        if wake {
            self.worker_wakeup.notify_all();
        }
    }
}

/// Feeds the outcomes of `files` (sorted, relative to `root`) to `assembler` in order, searching
/// the files not searched during the walk on a pool of threads that run at most a window ahead
/// of the emitter, and stopping everyone once the assembler has what it needs.
fn search_in_order(
    compiled: &CompiledSearch,
    root: &Path,
    files: Vec<Found>,
    assembler: &mut SearchAssembler,
    cancel: &CancellationToken,
    confine: Option<&Roots>,
) -> EnvResult<()> {
    let total = files.len();
    let mut paths = Vec::with_capacity(total);
    let mut outcomes = Vec::with_capacity(total);
    for found in files {
        paths.push(found.path);
        outcomes.push(found.outcome);
    }
    let pending: Vec<usize> = (0..total)
        .filter(|&index| outcomes[index].is_none())
        .collect();
    if pending.is_empty() {
        for (path, outcome) in paths.into_iter().zip(outcomes) {
            if cancel.is_cancelled() {
                return Err(EnvError::aborted("search"));
            }
            if let Some(outcome) = outcome
                && !assembler.push(path, outcome)
            {
                break;
            }
        }
        return Ok(());
    }
    let threads = thread_count().min(pending.len());
    let ordered = Ordered {
        compiled,
        root,
        confine,
        paths: &paths,
        pending: &pending,
        window: threads * LOOKAHEAD_PER_THREAD,
        cancel,
        schedule: Mutex::new(Schedule {
            next: 0,
            emitted: 0,
            ready: HashMap::new(),
            stop: false,
            emitter_waiting: false,
            workers_waiting: 0,
        }),
        emitter_wakeup: Condvar::new(),
        worker_wakeup: Condvar::new(),
    };
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| ordered.work());
        }
        // This thread emits in order.
        for (index, path) in paths.iter().enumerate() {
            let Some(outcome) = outcomes[index].take().or_else(|| ordered.outcome(index)) else {
                break;
            };
            ordered.advance(index + 1);
            if !assembler.push(path.clone(), outcome) {
                break;
            }
        }
        ordered.stop_all();
    });
    if cancel.is_cancelled() {
        return Err(EnvError::aborted("search"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use jig_env::{CaseSensitivity, PatternSyntax};
    use jig_env_memory::MemoryEnv;
    use jig_search::{search_with_env, walk_with_env};

    use super::*;

    fn write(root: &Path, relative: &str, contents: &[u8]) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    /// A small deterministic generator (xorshift), so failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % n as u64).unwrap()
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    const DIRS: &[&str] = &[
        "src",
        "src/a",
        "src/a/deep",
        "lib",
        ".hidden",
        "build",
        "docs",
        "x-y",
    ];
    const NAMES: &[&str] = &[
        "main.rs",
        "lib.rs",
        "a.txt",
        "b.log",
        ".env",
        "notes.md",
        "gen.gen.rs",
        "keep.rs",
        "data.bin",
        "Z.TXT",
        "a-b.txt",
        "a.b.txt",
    ];
    const RULES: &[&str] = &[
        "*.log",
        "build/",
        "/docs",
        "!keep.rs",
        "*.rs",
        "deep",
        "!*.md",
        "a*",
        "*.gen.rs",
        "/src/a/deep/",
        "**/notes.md",
        "# comment",
        "",
        "x-y/",
        "!important.log",
        "Z.TXT",
    ];
    const WORDS: &[&str] = &["needle", "hay", "Needle", "stack", "needles", "-flag", "fn"];

    /// Writes the same random tree to a host directory and a `MemoryEnv`.
    fn random_tree(seed: u64, host: &Path, memory: &MemoryEnv, memory_root: &Path) {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let put = |relative: String, contents: Vec<u8>| {
            write(host, &relative, &contents);
            memory
                .add_file(memory_root.join(&relative), contents)
                .unwrap();
        };
        for _ in 0..(20 + rng.below(40)) {
            let dir = rng.pick(DIRS);
            let name = rng.pick(NAMES);
            let mut body = Vec::new();
            for line in 0..rng.below(30) {
                let words: Vec<&str> = (0..rng.below(6)).map(|_| rng.pick(WORDS)).collect();
                body.extend(format!("{line} {}", words.join(" ")).bytes());
                body.extend(if rng.below(5) == 0 {
                    &b"\r\n"[..]
                } else {
                    &b"\n"[..]
                });
            }
            if name == "data.bin" {
                body.extend(b"\0binary needle\n");
            }
            put(format!("{dir}/{name}"), body);
        }
        for dir in ["", "src/", "src/a/", ".hidden/", "lib/"] {
            if rng.below(2) == 0 {
                let rules: Vec<&str> = (0..=rng.below(4)).map(|_| rng.pick(RULES)).collect();
                let file = if rng.below(3) == 0 {
                    ".ignore"
                } else {
                    ".gitignore"
                };
                put(format!("{dir}{file}"), rules.join("\n").into_bytes());
            }
        }
        if rng.below(2) == 0 {
            put(
                ".git/info/exclude".to_owned(),
                rng.pick(RULES).as_bytes().to_vec(),
            );
            put(".git/HEAD".to_owned(), b"needle in git\n".to_vec());
        }
        // Symlinks to a directory and a file, never followed.
        symlink(host.join("src"), host.join("linkdir")).unwrap();
        memory
            .symlink(memory_root.join("src"), memory_root.join("linkdir"))
            .unwrap();
    }

    #[tokio::test]
    async fn local_and_generic_implementations_agree_on_random_trees() {
        // Guards against a vacuous pass: the trees must produce matches, hit limits and have
        // ignore rules that change what is listed.
        let (mut matches, mut limited, mut ignore_mattered) = (0, 0, 0);
        for seed in 1..=40_u64 {
            let dir = tempfile::tempdir().unwrap();
            let host = dir.path().join("tree");
            std::fs::create_dir(&host).unwrap();
            let memory = MemoryEnv::new();
            let memory_root = PathBuf::from("/ws/tree");
            memory.add_dir(&memory_root).unwrap();
            random_tree(seed, &host, &memory, &memory_root);

            for (glob, kinds, ignore) in [
                (None, EntryKinds::FilesAndDirectories, IgnoreRules::Respect),
                (Some("*.rs"), EntryKinds::Files, IgnoreRules::Respect),
                (
                    Some("src/**"),
                    EntryKinds::FilesAndDirectories,
                    IgnoreRules::IncludeIgnored,
                ),
            ] {
                let mut local = WalkRequest::new(&host);
                local.glob = glob.map(str::to_owned);
                local.kinds = kinds;
                local.ignore = ignore;
                let mut generic = local.clone();
                generic.root.clone_from(&memory_root);
                let local_result = walk_blocking(&local, None).unwrap();
                let generic_result = walk_with_env(&memory, generic).await.unwrap();
                assert_eq!(
                    local_result, generic_result,
                    "walk seed {seed} glob {glob:?}"
                );
            }
            let mut everything = WalkRequest::new(&host);
            everything.ignore = IgnoreRules::IncludeIgnored;
            let respected = walk_blocking(&WalkRequest::new(&host), None).unwrap();
            if walk_blocking(&everything, None).unwrap().entries.len() > respected.entries.len() {
                ignore_mattered += 1;
            }

            for (pattern, context, limit, glob, ignore_case) in [
                ("needle", 0, None, None, false),
                ("needle", 2, Some(7), None, false),
                ("^[0-9]+ needle$", 0, Some(3), Some("*.rs"), false),
                ("NEEDLE", 1, Some(50), None, true),
                ("-flag", 0, Some(1), Some("src/*.txt"), false),
            ] {
                let mut local = SearchRequest::new(&host, pattern);
                local.context_lines = context;
                local.limit = limit;
                local.glob = glob.map(str::to_owned);
                if ignore_case {
                    local.case = CaseSensitivity::Insensitive;
                    local.syntax = PatternSyntax::Literal;
                }
                let mut generic = local.clone();
                generic.root.clone_from(&memory_root);
                let local_result = search_blocking(&local, None).unwrap();
                let generic_result = search_with_env(&memory, generic).await.unwrap();
                assert_eq!(
                    local_result, generic_result,
                    "search seed {seed} pattern {pattern:?} limit {limit:?}"
                );
                matches += local_result.matches;
                limited += usize::from(local_result.limit_reached);
            }
        }
        assert!(matches > 1000, "only {matches} matches");
        assert!(limited > 40, "only {limited} limited searches");
        assert!(
            ignore_mattered > 20,
            "ignore rules mattered in only {ignore_mattered} trees"
        );
    }

    #[test]
    fn search_keeps_first_matches_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        for index in 0..300 {
            write(
                dir.path(),
                &format!("d{}/f{index:03}.txt", index % 7),
                b"x\nneedle\nneedle\n",
            );
        }
        let mut request = SearchRequest::new(dir.path(), "needle");
        request.limit = Some(101);
        let result = search_blocking(&request, None).unwrap();
        assert_eq!(result.matches, 101);
        assert!(result.limit_reached);
        let mut sorted = result.files.clone();
        sorted.sort_by(|a, b| jig_search::compare_paths(&a.path, &b.path));
        assert_eq!(sorted, result.files);
        assert_eq!(result.files[0].path, PathBuf::from("d0/f000.txt"));
        assert_eq!(result.files.last().unwrap().lines.len(), 1);
        // Whatever the thread scheduling, the same request gives the same answer.
        for _ in 0..5 {
            assert_eq!(search_blocking(&request, None).unwrap(), result);
        }
    }

    #[test]
    fn an_ignore_file_that_is_a_symlink_applies_and_a_symlinked_directory_is_not_entered() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        write(&root, "rules/ignore-me", b"*.log\n");
        write(&root, "a/keep.txt", b"x\n");
        write(&root, "a/drop.log", b"x\n");
        write(&root, "outside/secret.txt", b"x\n");
        std::os::unix::fs::symlink("../rules/ignore-me", root.join("a/.gitignore")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), root.join("a/link")).unwrap();
        let roots = Roots::open(std::slice::from_ref(&root.join("a"))).unwrap();
        for confine in [None, Some(&roots)] {
            let walked = walk_blocking(&WalkRequest::new(root.join("a")), confine).unwrap();
            let paths: Vec<String> = walked
                .entries
                .iter()
                .map(|entry| entry.path.display().to_string())
                .collect();
            if confine.is_none() {
                // Unconfined, the link's target is read as the gitignore it stands for.
                assert_eq!(paths, [".gitignore", "keep.txt", "link"], "host");
            } else {
                // Confined to `a`, the link leads outside the root: its rules are not read.
                assert_eq!(
                    paths,
                    [".gitignore", "drop.log", "keep.txt", "link"],
                    "view"
                );
            }
        }
    }

    #[test]
    fn cancelling_during_the_walk_stops_it_promptly() {
        let dir = tempfile::tempdir().unwrap();
        for index in 0..2000 {
            write(
                dir.path(),
                &format!("d{:02}/f{index:04}.txt", index % 50),
                b"x\n",
            );
        }
        let cancel = CancellationToken::new();
        let seen = AtomicUsize::new(0);
        let keep = |_: &Path, _: FileKind| {
            if seen.fetch_add(1, AtomicOrdering::Relaxed) == 10 {
                cancel.cancel();
            }
            true
        };
        let result = walk_parallel(dir.path(), IgnoreRules::Respect, &cancel, keep, None, None);
        assert_eq!(
            result.err().map(|error| error.kind()),
            Some(jig_env::ErrorKind::Aborted)
        );
        // Each walker thread stops at its next entry once the token is cancelled.
        let seen = seen.load(AtomicOrdering::Relaxed);
        assert!(
            seen < 10 + 4 * thread_count(),
            "{seen} entries visited after cancelling"
        );
    }

    #[test]
    fn cancelled_search_and_walk_are_aborted() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.txt", b"needle\n");
        let request = SearchRequest::new(dir.path(), "needle");
        request.cancel.cancel();
        let error = search_blocking(&request, None).unwrap_err();
        assert_eq!(error.kind(), jig_env::ErrorKind::Aborted);
        let walk = WalkRequest::new(dir.path());
        walk.cancel.cancel();
        assert_eq!(
            walk_blocking(&walk, None).unwrap_err().kind(),
            jig_env::ErrorKind::Aborted
        );
    }
}
