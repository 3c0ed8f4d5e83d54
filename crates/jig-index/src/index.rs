//! One root's warm index: built on a background thread, kept current from inotify, answering
//! walks and searches only when it is sure to answer as the cold path would.

use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use jig_env::{
    EnvError, EnvResult, FileKind, SearchRequest, SearchResult, WalkRequest, WalkResult,
};
use jig_search::{CompiledSearch, FileOutcome, PathGlob};
use rustix::event::{PollFd, PollFlags};

use crate::scan::{Scanner, read_ignore_dir, remote_filesystem};
use crate::status::{IndexOptions, IndexState, IndexStatus};
use crate::tree::{Entry, Tree, child_key, is_below, key_of, parent_key, path_of};
use crate::trigram::{Content, Summarizer, requirement};
use crate::watch::{Change, Watcher, ancestors, name_bytes};

/// The index of one root; dropping it stops its thread.
#[derive(Debug)]
pub struct WarmIndex {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    root: PathBuf,
    options: IndexOptions,
    phase: Mutex<Phase>,
    changed: Condvar,
    stop: AtomicBool,
    warm: AtomicU64,
    cold: AtomicU64,
    rebuilds: AtomicU64,
    considered: AtomicU64,
    read: AtomicU64,
    last_cold: Mutex<Option<String>>,
    build_time: Mutex<Option<Duration>>,
}

#[derive(Debug)]
enum Phase {
    Building,
    Ready(Box<Live>),
    Cold {
        reason: String,
        until: Option<Instant>,
    },
}

#[derive(Debug)]
struct Live {
    tree: Tree,
    watcher: Watcher,
    scanner: Arc<Scanner>,
    summarizer: Summarizer,
    poll_fd: Arc<OwnedFd>,
    changes: Vec<Change>,
}

impl WarmIndex {
    /// Starts indexing the canonical directory `root` on a background thread; until it is
    /// ready every question is answered `None` (cold).
    pub fn start(root: PathBuf, options: IndexOptions) -> Self {
        let shared = Arc::new(Shared {
            root,
            options,
            phase: Mutex::new(Phase::Building),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
            warm: AtomicU64::new(0),
            cold: AtomicU64::new(0),
            rebuilds: AtomicU64::new(0),
            considered: AtomicU64::new(0),
            read: AtomicU64::new(0),
            last_cold: Mutex::new(None),
            build_time: Mutex::new(None),
        });
        let background = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("jig-index".to_owned())
            .spawn(move || background.run());
        if let Err(error) = spawned {
            *shared.lock() = Phase::Cold {
                reason: format!("cannot start the index thread: {error}"),
                until: None,
            };
        }
        Self { shared }
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.shared.root
    }

    /// Waits until the index is ready or cold, at most `timeout`; returns whether it is ready.
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut phase = self.shared.lock();
        loop {
            match &*phase {
                Phase::Ready(_) => return true,
                Phase::Cold { .. } => return false,
                Phase::Building => {}
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            phase = self
                .shared
                .changed
                .wait_timeout(phase, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// What the index holds and how it has answered.
    pub fn status(&self) -> IndexStatus {
        self.shared.status()
    }

    /// The walk `request` of the directory `relative` (below the root, canonical), answered
    /// from the index; `None` when it must be answered cold (not ready, in doubt, a root that
    /// is not an indexed directory, an invalid glob). Blocking.
    pub fn walk(&self, relative: &Path, request: &WalkRequest) -> Option<EnvResult<WalkResult>> {
        let Ok(glob) = request.glob.as_deref().map(PathGlob::new).transpose() else {
            return None;
        };
        let key = key_of(relative);
        let answer = self.shared.with_fresh_tree(|tree, _| {
            if !tree.is_listable_dir(&key) {
                return Err("the walked root is not an indexed directory".to_owned());
            }
            Ok(tree.walk(&key, request, glob.as_ref()))
        });
        self.shared.count(answer)
    }

    /// The search `request` of the directory `relative` (below the root, canonical), answered
    /// from the index: the candidate files (those whose summary may hold a match) searched in
    /// path order by the cold path's searcher and assembler; `None` when it must be answered
    /// cold. Blocking.
    pub fn search(
        &self,
        relative: &Path,
        request: &SearchRequest,
    ) -> Option<EnvResult<SearchResult>> {
        let Ok(compiled) = CompiledSearch::new(request) else {
            return None;
        };
        let requirement = requirement(request);
        let key = key_of(relative);
        let strip = if key.is_empty() { 0 } else { key.len() + 1 };
        let threads = self.shared.options.threads.max(1);
        let mut assembler = compiled.assembler();
        let mut searcher = compiled.file_searcher();
        // Candidates are listed a chunk at a time (the lock held only while listing), so a
        // search that stops at its limit lists little more than it reads. The first chunk
        // applies every change completed before the query; later ones continue the same walk
        // (a change made meanwhile is as concurrent as one during a cold search).
        let mut after: Option<Arc<[u8]>> = None;
        let mut chunk = 32 * threads;
        let answer = loop {
            let listed = self.shared.with_tree(after.is_none(), |tree, scanner| {
                if !tree.is_listable_dir(&key) {
                    return Err("the searched root is not an indexed directory".to_owned());
                }
                tree.candidates(
                    &key,
                    after.as_deref(),
                    chunk,
                    request.ignore,
                    compiled.glob(),
                    &requirement,
                    &request.cancel,
                    threads,
                )
                .map(|found| found.map(|found| (found, Arc::clone(scanner))))
            });
            let ((candidates, considered, complete), scanner) = match listed {
                Ok(Ok(listed)) => listed,
                Ok(Err(error)) => break Ok(Err(error)),
                Err(reason) => break Err(reason),
            };
            self.shared
                .considered
                .fetch_add(considered as u64, Ordering::Relaxed);
            self.shared
                .read
                .fetch_add(candidates.len() as u64, Ordering::Relaxed);
            let more = search_candidates(
                &scanner,
                &compiled,
                &mut searcher,
                &mut assembler,
                &candidates,
                strip,
                request,
                threads,
            );
            match more {
                Err(error) => break Ok(Err(error)),
                Ok(false) => break Ok(Ok(())),
                Ok(true) if complete => break Ok(Ok(())),
                Ok(true) => {
                    after = candidates.last().cloned();
                    chunk = (chunk * 4).min(16_384);
                }
            }
        };
        let answer = answer.map(|done| done.map(|()| assembler.finish()));
        self.shared.count(answer)
    }
}

impl Drop for WarmIndex {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.changed.notify_all();
    }
}

impl Shared {
    /// What the index holds and how it has answered.
    fn status(&self) -> IndexStatus {
        let phase = self.lock();
        let (state, entries, files, watches, memory_bytes) = match &*phase {
            Phase::Building => (IndexState::Building, 0, 0, 0, 0),
            Phase::Cold { reason, .. } => (IndexState::Cold(reason.clone()), 0, 0, 0, 0),
            Phase::Ready(live) => (
                IndexState::Ready,
                live.tree.len(),
                live.tree.file_count(),
                live.watcher.len(),
                live.tree.memory_bytes(),
            ),
        };
        drop(phase);
        IndexStatus {
            root: self.root.clone(),
            state,
            entries,
            files,
            watches,
            memory_bytes,
            build_time: *self
                .build_time
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
            warm_answers: self.warm.load(Ordering::Relaxed),
            cold_answers: self.cold.load(Ordering::Relaxed),
            last_cold_reason: self
                .last_cold
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            rebuilds: self.rebuilds.load(Ordering::Relaxed),
            files_considered: self.considered.load(Ordering::Relaxed),
            files_read: self.read.load(Ordering::Relaxed),
        }
    }

    /// Tells the reporter (when there is one) where the index now is, and logs it.
    fn report(&self) {
        let status = self.status();
        tracing::info!("{status}");
        if let Some(reporter) = &self.options.reporter {
            (reporter.0)(&status);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn count<T>(&self, answer: Result<T, String>) -> Option<T> {
        match answer {
            Ok(answer) => {
                self.warm.fetch_add(1, Ordering::Relaxed);
                Some(answer)
            }
            Err(reason) => {
                self.cold.fetch_add(1, Ordering::Relaxed);
                *self
                    .last_cold
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(reason);
                None
            }
        }
    }

    /// Runs `answer` on the tree brought up to date with every change completed before this
    /// call; `Err` (a reason) when the index cannot answer.
    fn with_fresh_tree<T>(
        &self,
        answer: impl FnOnce(&Tree, &Arc<Scanner>) -> Result<T, String>,
    ) -> Result<T, String> {
        self.with_tree(true, answer)
    }

    /// [`Self::with_fresh_tree`], or without applying changes first when not `refresh`.
    fn with_tree<T>(
        &self,
        refresh: bool,
        answer: impl FnOnce(&Tree, &Arc<Scanner>) -> Result<T, String>,
    ) -> Result<T, String> {
        let mut phase = self.lock();
        let live = match &mut *phase {
            Phase::Ready(live) => live,
            Phase::Building => return Err("the index is being built".to_owned()),
            Phase::Cold { reason, .. } => return Err(reason.clone()),
        };
        if refresh && let Err(reason) = live.refresh(&self.options) {
            self.lose_track(&mut phase);
            return Err(reason);
        }
        answer(&live.tree, &live.scanner)
    }

    /// The index lost track of the tree: rebuild it, unless that happens too often.
    fn lose_track(&self, phase: &mut Phase) {
        let rebuilds = self.rebuilds.fetch_add(1, Ordering::Relaxed) + 1;
        let _ = rebuilds;
        *phase = Phase::Building;
        self.changed.notify_all();
    }

    /// The background thread: builds, then follows the tree's changes between queries (so the
    /// kernel's queue does not overflow while nobody asks), rebuilding when it loses track.
    fn run(self: Arc<Self>) {
        let mut recent_builds: Vec<Instant> = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            let mut phase = self.lock();
            match &mut *phase {
                Phase::Building => {
                    drop(phase);
                    let now = Instant::now();
                    recent_builds.retain(|at| now.duration_since(*at) < Duration::from_mins(1));
                    if recent_builds.len() >= self.options.max_rebuilds_per_minute.max(1) {
                        *self.lock() = Phase::Cold {
                            reason: "the tree changes faster than the index can follow".to_owned(),
                            until: Some(now + Duration::from_mins(1)),
                        };
                        self.report();
                        continue;
                    }
                    recent_builds.push(now);
                    let built = build(&self.root, &self.options, &self.stop);
                    *self
                        .build_time
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Some(now.elapsed());
                    let mut phase = self.lock();
                    *phase = match built {
                        Ok(live) => Phase::Ready(Box::new(live)),
                        Err(reason) => Phase::Cold {
                            reason,
                            until: None,
                        },
                    };
                    self.changed.notify_all();
                    drop(phase);
                    if !self.stop.load(Ordering::Relaxed) {
                        self.report();
                    }
                }
                Phase::Ready(live) => {
                    let fd = Arc::clone(&live.poll_fd);
                    drop(phase);
                    let mut fds = [PollFd::new(&*fd, PollFlags::IN)];
                    let timeout = rustix::event::Timespec {
                        tv_sec: 0,
                        tv_nsec: 200_000_000,
                    };
                    let ready =
                        matches!(rustix::event::poll(&mut fds, Some(&timeout)), Ok(n) if n > 0);
                    if !self.options.follow_between_queries {
                        std::thread::sleep(Duration::from_millis(200));
                    } else if ready {
                        let mut phase = self.lock();
                        if let Phase::Ready(live) = &mut *phase
                            && Arc::ptr_eq(&live.poll_fd, &fd)
                            && live.refresh(&self.options).is_err()
                        {
                            self.lose_track(&mut phase);
                        }
                    }
                }
                Phase::Cold { until, .. } => {
                    if until.is_some_and(|until| Instant::now() >= until) {
                        *phase = Phase::Building;
                        continue;
                    }
                    let _ = self
                        .changed
                        .wait_timeout(phase, Duration::from_millis(500))
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }
}

/// Builds the index of `root` from scratch.
fn build(root: &Path, options: &IndexOptions, stop: &AtomicBool) -> Result<Live, String> {
    if let Some(reason) = remote_filesystem(root) {
        return Err(reason);
    }
    let scanner = Scanner::open(root, options.max_file_bytes)
        .map_err(|error| format!("cannot open {}: {error}", root.display()))?;
    let mut watcher =
        Watcher::new().map_err(|error| format!("no change notifications: {error}"))?;
    let poll_fd = rustix::io::dup(watcher.as_fd())
        .map_err(|error| format!("no change notifications: {error}"))?;
    // The ignore files above the root apply to every walk below it, as the cold walk reads
    // them: watched so that a change there is noticed.
    let mut base = jig_search::IgnoreStack::default();
    let mut above = ancestors(root);
    above.reverse();
    for dir in above {
        watcher
            .watch_above(&dir)
            .map_err(|error| watch_error(&dir, &error))?;
        base = base.child(read_ignore_dir(&dir, None));
    }
    let mut live = Live {
        tree: Tree::new(root.to_path_buf(), base),
        watcher,
        scanner: Arc::new(scanner),
        summarizer: Summarizer::default(),
        poll_fd: Arc::new(poll_fd),
        changes: Vec::new(),
    };
    live.walk_into(&[], options, stop)?;
    live.tree.decide(&[]);
    live.check_bounds(options)?;
    // Changes made while the tree was walked are queued (every directory was watched before it
    // was listed): applying them now makes the index current.
    live.refresh(options)?;
    Ok(live)
}

fn watch_error(path: &Path, error: &std::io::Error) -> String {
    if error.raw_os_error() == Some(libc_enospc()) {
        "the limit of inotify watches is reached (raise fs.inotify.max_user_watches)".to_owned()
    } else {
        format!("cannot watch {}: {error}", path.display())
    }
}

fn libc_enospc() -> i32 {
    rustix::io::Errno::NOSPC.raw_os_error()
}

impl Live {
    fn check_bounds(&self, options: &IndexOptions) -> Result<(), String> {
        if self.tree.len() > options.max_entries {
            return Err(format!(
                "more than {} entries under the root",
                options.max_entries
            ));
        }
        if self.tree.memory_bytes() > options.max_memory_bytes {
            return Err(format!(
                "the index would hold more than {} MiB",
                options.max_memory_bytes >> 20
            ));
        }
        Ok(())
    }

    /// Lists the directory `key` (already in the tree, or the root) and everything below it
    /// into the tree, watching each directory before listing it, then summarises its files.
    fn walk_into(
        &mut self,
        key: &[u8],
        options: &IndexOptions,
        stop: &AtomicBool,
    ) -> Result<(), String> {
        let mut pending: Vec<Vec<u8>> = vec![key.to_vec()];
        let mut files: Vec<Vec<u8>> = Vec::new();
        let root = self.tree.root.clone();
        while let Some(dir) = pending.pop() {
            if stop.load(Ordering::Relaxed) {
                return Err("stopped".to_owned());
            }
            let relative = path_of(&dir).to_path_buf();
            let absolute = root.join(&relative);
            if let Some(reason) = self.scanner.untrusted_mount(&relative) {
                return Err(reason);
            }
            let watched = self.watcher.watch_dir(&absolute, &dir);
            let listing = self.scanner.list_dir(&relative);
            let listing = match (watched, listing) {
                (Ok(()), Ok(listing)) => listing,
                (_, Err(error)) => {
                    if dir.is_empty() {
                        return Err(format!("cannot list {}: {error}", root.display()));
                    }
                    // Listed by the cold walk as a directory with nothing in it.
                    if let Some(entry) = self.tree.get(&dir).cloned() {
                        self.tree.insert(
                            dir.clone(),
                            Entry {
                                listable: false,
                                ..entry
                            },
                        );
                    }
                    continue;
                }
                (Err(error), Ok(_)) => return Err(watch_error(&absolute, &error)),
            };
            let names: Vec<&std::ffi::OsStr> =
                listing.iter().map(|(name, _)| name.as_os_str()).collect();
            if names.contains(&std::ffi::OsStr::new(".git")) {
                self.watcher.watch_git(&absolute, &dir);
            }
            let rules = self.scanner.ignore_dir(&relative, &names);
            self.tree.set_ignore_dir(&dir, rules);
            for (name, kind) in &listing {
                if jig_search::is_skipped_name(name) || *kind == FileKind::Other {
                    continue;
                }
                let child = child_key(&dir, name_bytes(name));
                self.tree.insert(
                    child.clone(),
                    Entry {
                        kind: *kind,
                        ignored: false,
                        listable: true,
                        content: Content::Unknown,
                    },
                );
                match kind {
                    FileKind::Directory => pending.push(child),
                    FileKind::File => files.push(child),
                    _ => {}
                }
            }
            if self.tree.len() > options.max_entries {
                return Err(format!(
                    "more than {} entries under the root",
                    options.max_entries
                ));
            }
        }
        self.summarize(files, options.threads);
        Ok(())
    }

    /// Summarises the files at `keys`, on `threads` threads when there are many.
    fn summarize(&mut self, keys: Vec<Vec<u8>>, threads: usize) {
        if keys.len() < 64 || threads < 2 {
            for key in keys {
                let content = self.scanner.summarize(path_of(&key), &mut self.summarizer);
                self.tree.set_content(&key, content);
            }
            return;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let scanner = &*self.scanner;
        let keys = &keys;
        let results: Vec<Vec<(usize, Content)>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let next = &next;
                    scope.spawn(move || {
                        let mut summarizer = Summarizer::default();
                        let mut out = Vec::new();
                        loop {
                            let from = next.fetch_add(64, Ordering::Relaxed);
                            if from >= keys.len() {
                                return out;
                            }
                            for (index, key) in keys.iter().enumerate().skip(from).take(64) {
                                out.push((index, scanner.summarize(path_of(key), &mut summarizer)));
                            }
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|worker| worker.join().unwrap_or_default())
                .collect()
        });
        for (index, content) in results.into_iter().flatten() {
            self.tree.set_content(&keys[index], content);
        }
    }

    /// Applies every change completed before this call (the queue read until it would block).
    fn refresh(&mut self, options: &IndexOptions) -> Result<(), String> {
        let mut changes = std::mem::take(&mut self.changes);
        changes.clear();
        self.watcher
            .drain(&mut changes, options.max_events_per_drain);
        let applied = self.apply(&changes, options);
        self.changes = changes;
        applied?;
        self.check_bounds(options)
    }

    fn apply(&mut self, changes: &[Change], options: &IndexOptions) -> Result<(), String> {
        if changes.is_empty() {
            return Ok(());
        }
        let mut paths: BTreeMap<&[u8], bool> = BTreeMap::new();
        let mut ignore_dirs: BTreeSet<&[u8]> = BTreeSet::new();
        for change in changes {
            match change {
                Change::Doubt(reason) => return Err(reason.clone()),
                Change::Path { key, rewalk } => *paths.entry(key).or_default() |= rewalk,
                Change::IgnoreFiles(dir) => {
                    ignore_dirs.insert(dir);
                }
            }
        }
        let never = AtomicBool::new(false);
        let mut decide: Vec<Vec<u8>> = Vec::new();
        // Parents sort before their children, so a child is looked at once its parent is
        // settled (and skipped when its parent is gone or is no longer a directory).
        for (&key, &rewalk) in &paths {
            if !self.tree.is_listable_dir(parent_key(key)) {
                self.forget(key);
                continue;
            }
            let old = self.tree.get(key).map(|entry| entry.kind);
            let relative = path_of(key);
            match self.scanner.kind_at(relative) {
                Ok(FileKind::Directory) => {
                    if rewalk || old != Some(FileKind::Directory) {
                        self.forget(key);
                        self.tree.insert(key.to_vec(), directory());
                        self.walk_into(key, options, &never)?;
                        decide.push(key.to_vec());
                    }
                }
                Ok(kind @ (FileKind::File | FileKind::Symlink)) => {
                    if old == Some(FileKind::Directory) {
                        self.forget(key);
                    }
                    let content = if kind == FileKind::File {
                        self.scanner.summarize(relative, &mut self.summarizer)
                    } else {
                        Content::Unknown
                    };
                    self.tree.insert(
                        key.to_vec(),
                        Entry {
                            kind,
                            ignored: false,
                            listable: true,
                            content,
                        },
                    );
                    decide.push(key.to_vec());
                }
                Ok(FileKind::Other) | Err(_) => self.forget(key),
            }
        }
        for &dir in &ignore_dirs {
            if !self.tree.is_listable_dir(dir) {
                continue;
            }
            let relative = path_of(dir);
            let Ok(listing) = self.scanner.list_dir(relative) else {
                continue;
            };
            let names: Vec<&std::ffi::OsStr> =
                listing.iter().map(|(name, _)| name.as_os_str()).collect();
            if names.contains(&std::ffi::OsStr::new(".git")) {
                self.watcher.watch_git(&self.tree.root.join(relative), dir);
            }
            let rules = self.scanner.ignore_dir(relative, &names);
            self.tree.set_ignore_dir(dir, rules);
            decide.push(dir.to_vec());
        }
        decide.sort();
        let mut last: Option<&[u8]> = None;
        for key in &decide {
            if last.is_some_and(|last| key.as_slice() == last || is_below(key, last)) {
                continue;
            }
            self.tree.decide(key);
            last = Some(key);
        }
        Ok(())
    }

    /// Removes the entry at `key` and its subtree, and their watches.
    fn forget(&mut self, key: &[u8]) {
        self.tree.remove_subtree(key);
        self.watcher.unwatch_subtree(key);
    }
}

fn directory() -> Entry {
    Entry {
        kind: FileKind::Directory,
        ignored: false,
        listable: true,
        content: Content::Unknown,
    }
}

/// Searches `candidates` (keys; the path relative to the searched directory is the key past its
/// first `strip` bytes) in order with the cold path's searcher, in parallel batches that grow
/// while no limit stops the search, feeding the cold path's assembler in order. Returns whether
/// the assembler wants more files.
#[expect(
    clippy::too_many_arguments,
    reason = "one chunk of one search: its parts, all borrowed"
)]
fn search_candidates(
    scanner: &Scanner,
    compiled: &CompiledSearch,
    searcher: &mut jig_search::FileSearcher,
    assembler: &mut jig_search::SearchAssembler,
    candidates: &[Arc<[u8]>],
    strip: usize,
    request: &SearchRequest,
    threads: usize,
) -> EnvResult<bool> {
    let mut batch = 32 * threads;
    let mut rest = candidates;
    let search_one = |searcher: &mut jig_search::FileSearcher, relative: &Path| {
        // A file that vanished or cannot be opened beneath the root is skipped, as the cold
        // search does.
        match scanner.open_file(relative) {
            Some(file) => searcher
                .search_reader(file)
                .unwrap_or(FileOutcome::Text(Vec::new())),
            None => FileOutcome::Text(Vec::new()),
        }
    };
    while !rest.is_empty() {
        if request.cancel.is_cancelled() {
            return Err(EnvError::aborted("search"));
        }
        let (now, later) = rest.split_at(batch.min(rest.len()));
        rest = later;
        batch = (batch * 2).min(8192);
        let outcomes: Vec<FileOutcome> = if now.len() < 2 * threads || threads == 1 {
            now.iter()
                .map(|key| search_one(searcher, path_of(key)))
                .collect()
        } else {
            let chunk = now.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let workers: Vec<_> = now
                    .chunks(chunk)
                    .map(|part| {
                        scope.spawn(move || {
                            let mut searcher = compiled.file_searcher();
                            part.iter()
                                .map(|key| search_one(&mut searcher, path_of(key)))
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .flat_map(|worker| worker.join().unwrap_or_default())
                    .collect()
            })
        };
        if outcomes.len() != now.len() {
            return Err(EnvError::new(
                jig_env::ErrorKind::Other,
                "search",
                "a search thread failed",
            ));
        }
        for (key, outcome) in now.iter().zip(outcomes) {
            if !assembler.push(path_of(&key[strip..]).to_path_buf(), outcome) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}
