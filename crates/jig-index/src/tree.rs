//! The walked tree of one root: every entry (ignored or not) with its kind, its own ignore
//! decision and its content summary, kept in the one result order so that any walk or search
//! rooted at or below the root is a range scan.
//!
//! Keys are relative paths with `/` mapped to byte 0 ([`jig_search::path_sort_key`]'s order):
//! a directory's subtree is one contiguous range right after it, and iterating a range yields
//! paths in result order. Names never contain a NUL byte, so the key is the path.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use jig_env::{
    CancellationToken, EntryKinds, EnvError, EnvResult, FileKind, IgnoreRules, WalkEntry,
    WalkRequest, WalkResult,
};
use jig_search::{IgnoreDir, IgnoreStack, PathGlob};

use crate::trigram::{Content, Requirement};

/// One entry of the tree.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// File, directory or symlink (other kinds are never listed, so never kept).
    pub(crate) kind: FileKind,
    /// The entry's own ignore decision (its ancestors' are theirs).
    pub(crate) ignored: bool,
    /// For a directory: whether it could be listed.
    pub(crate) listable: bool,
    /// For a regular file: what its content may contain.
    pub(crate) content: Content,
}

/// A key of the tree: a relative path's bytes, ordered as results are (the separator below
/// every other byte, as [`jig_search::path_sort_key`]), so a directory's subtree is one range
/// right after it and a range yields paths in result order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key(Arc<[u8]>);

impl Key {
    fn of(bytes: &[u8]) -> Self {
        Self(bytes.into())
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        fn mapped(byte: u8) -> u8 {
            if byte == b'/' { 0 } else { byte }
        }
        self.0
            .iter()
            .map(|&byte| mapped(byte))
            .cmp(other.0.iter().map(|&byte| mapped(byte)))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The key of a relative path (its bytes).
pub(crate) fn key_of(relative: &Path) -> Vec<u8> {
    relative.as_os_str().as_encoded_bytes().to_vec()
}

/// The relative path of a key.
pub(crate) fn path_of(key: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt as _;
    Path::new(std::ffi::OsStr::from_bytes(key))
}

/// The key of `name` inside the directory `parent`.
pub(crate) fn child_key(parent: &[u8], name: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(parent.len() + 1 + name.len());
    key.extend_from_slice(parent);
    if !parent.is_empty() {
        key.push(b'/');
    }
    key.extend_from_slice(name);
    key
}

/// The key of the directory holding `key` (the root's key is empty).
pub(crate) fn parent_key(key: &[u8]) -> &[u8] {
    key.iter()
        .rposition(|&byte| byte == b'/')
        .map_or(&[][..], |at| &key[..at])
}

/// Whether `key` is strictly below the directory `dir`.
pub(crate) fn is_below(key: &[u8], dir: &[u8]) -> bool {
    dir.is_empty() || (key.len() > dir.len() && key.starts_with(dir) && key[dir.len()] == b'/')
}

/// The range of the entries strictly below `dir` (names never hold a NUL byte, so `dir` and
/// byte 1 bounds every `dir/…`).
fn below_range(dir: &[u8]) -> (Bound<Key>, Bound<Key>) {
    if dir.is_empty() {
        return (Bound::Unbounded, Bound::Unbounded);
    }
    let mut low = dir.to_vec();
    low.push(b'/');
    let mut high = dir.to_vec();
    high.push(1);
    (
        Bound::Included(Key(low.into())),
        Bound::Excluded(Key(high.into())),
    )
}

/// One chunk of a search's candidate files: their keys, how many files were considered, and
/// whether the listing reached the end.
pub(crate) type Candidates = (Vec<Arc<[u8]>>, usize, bool);

/// The tree of one root.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    /// The canonical root.
    pub(crate) root: PathBuf,
    entries: BTreeMap<Key, Entry>,
    /// The ignore files of directories that have any (the root's key is empty).
    ignore_dirs: HashMap<Box<[u8]>, IgnoreDir>,
    /// The ignore files of the root's ancestors.
    base: IgnoreStack,
    /// Bytes held by paths and summaries (an estimate of the heap).
    heap_bytes: usize,
}

/// Bytes a map entry costs beyond its key and summary (node share, `Entry`).
const ENTRY_OVERHEAD: usize = 64;

impl Tree {
    /// An empty tree of `root` whose ancestors' ignore files are `base`.
    pub(crate) fn new(root: PathBuf, base: IgnoreStack) -> Self {
        Self {
            root,
            base,
            ..Self::default()
        }
    }

    /// How many entries the tree holds.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many regular files the tree holds.
    pub(crate) fn file_count(&self) -> usize {
        self.entries
            .values()
            .filter(|entry| entry.kind == FileKind::File)
            .count()
    }

    /// An estimate of the memory the tree holds.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.heap_bytes
    }

    /// The entry at `key`.
    pub(crate) fn get(&self, key: &[u8]) -> Option<&Entry> {
        self.entries.get(&Key::of(key))
    }

    /// Whether `key` names the root or a directory of the tree that could be listed.
    pub(crate) fn is_listable_dir(&self, key: &[u8]) -> bool {
        key.is_empty()
            || self
                .entries
                .get(&Key::of(key))
                .is_some_and(|entry| entry.kind == FileKind::Directory && entry.listable)
    }

    /// Adds or replaces the entry at `key` (its ignore decision is made by [`Self::decide`]).
    pub(crate) fn insert(&mut self, key: Vec<u8>, entry: Entry) {
        let cost = key.len() + ENTRY_OVERHEAD;
        self.heap_bytes += cost + entry.content.heap_bytes();
        if let Some(old) = self.entries.insert(Key(key.into()), entry) {
            self.heap_bytes = self
                .heap_bytes
                .saturating_sub(cost + old.content.heap_bytes());
        }
    }

    /// Replaces the content summary of the file at `key`, when it is one.
    pub(crate) fn set_content(&mut self, key: &[u8], content: Content) {
        if let Some(entry) = self.entries.get_mut(&Key::of(key)) {
            self.heap_bytes =
                (self.heap_bytes + content.heap_bytes()).saturating_sub(entry.content.heap_bytes());
            entry.content = content;
        }
    }

    /// Removes the entry at `key` and everything below it.
    pub(crate) fn remove_subtree(&mut self, key: &[u8]) {
        if let Some(old) = self.entries.remove(&Key::of(key)) {
            self.heap_bytes = self
                .heap_bytes
                .saturating_sub(key.len() + ENTRY_OVERHEAD + old.content.heap_bytes());
        }
        let below: Vec<Key> = self
            .entries
            .range(below_range(key))
            .map(|(key, _)| key.clone())
            .collect();
        for key in below {
            if let Some(old) = self.entries.remove(&key) {
                self.heap_bytes = self
                    .heap_bytes
                    .saturating_sub(key.0.len() + ENTRY_OVERHEAD + old.content.heap_bytes());
            }
        }
        self.ignore_dirs
            .retain(|dir, _| !(dir.as_ref() == key || is_below(dir, key)));
    }

    /// Sets (or clears, when it has no rules) the ignore files of the directory `dir`.
    pub(crate) fn set_ignore_dir(&mut self, dir: &[u8], rules: IgnoreDir) {
        if rules.is_empty() {
            self.ignore_dirs.remove(dir);
        } else {
            self.ignore_dirs.insert(dir.into(), rules);
        }
    }

    /// The ignore stack in force inside the directory `dir` (its own files included).
    fn stack_inside(&self, dir: &[u8]) -> IgnoreStack {
        let mut stack = self.base.clone();
        if let Some(rules) = self.ignore_dirs.get(&[][..]) {
            stack = stack.child(rules.clone());
        }
        if dir.is_empty() {
            return stack;
        }
        let mut end = 0;
        loop {
            let next = dir[end..]
                .iter()
                .position(|&byte| byte == b'/')
                .map_or(dir.len(), |at| end + at);
            if let Some(rules) = self.ignore_dirs.get(&dir[..next]) {
                stack = stack.child(rules.clone());
            }
            if next == dir.len() {
                return stack;
            }
            end = next + 1;
        }
    }

    /// Makes the ignore decision of the entry at `key` and of everything below it.
    pub(crate) fn decide(&mut self, key: &[u8]) {
        let root = self.root.clone();
        let parent = parent_key(key).to_vec();
        let mut stacks: Vec<(Vec<u8>, IgnoreStack)> =
            vec![(parent, self.stack_inside(parent_key(key)))];
        let lower = if key.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Included(Key::of(key))
        };
        let (_, upper) = below_range(key);
        let ignore_dirs = &self.ignore_dirs;
        for (entry_key, entry) in self.entries.range_mut((lower, upper)) {
            let entry_key: &[u8] = &entry_key.0;
            while stacks.len() > 1 && !is_below(entry_key, &stacks[stacks.len() - 1].0) {
                stacks.pop();
            }
            let stack = &stacks[stacks.len() - 1].1;
            let is_dir = entry.kind == FileKind::Directory;
            entry.ignored = stack.is_ignored(&root.join(path_of(entry_key)), is_dir);
            if is_dir {
                let inside = match ignore_dirs.get(entry_key) {
                    Some(rules) => stack.child(rules.clone()),
                    None => stack.clone(),
                };
                stacks.push((entry_key.to_vec(), inside));
            }
        }
    }

    /// Visits, in result order, the entries strictly below the directory `dir` that a walk
    /// with `rules` reaches (an ignored directory's subtree is not reached); `visit` gets the
    /// key and entry and returns `false` to stop.
    pub(crate) fn visit_below<'tree>(
        &'tree self,
        dir: &[u8],
        after: Option<&[u8]>,
        rules: IgnoreRules,
        cancel: &CancellationToken,
        operation: &'static str,
        mut visit: impl FnMut(&'tree Key, &'tree Entry) -> bool,
    ) -> EnvResult<()> {
        let mut skipping: Option<&[u8]> = None;
        let mut range = below_range(dir);
        if let Some(after) = after {
            range.0 = Bound::Excluded(Key::of(after));
        }
        for (count, (full_key, entry)) in self.entries.range(range).enumerate() {
            let key: &[u8] = &full_key.0;
            if count % 4096 == 0 && cancel.is_cancelled() {
                return Err(EnvError::aborted(operation));
            }
            if let Some(skipped) = skipping {
                if is_below(key, skipped) {
                    continue;
                }
                skipping = None;
            }
            if rules == IgnoreRules::Respect && entry.ignored {
                if entry.kind == FileKind::Directory {
                    skipping = Some(key);
                }
                continue;
            }
            if !visit(full_key, entry) {
                break;
            }
        }
        Ok(())
    }

    /// The answer of a walk of the directory `dir` (its relative paths taken from `dir`).
    pub(crate) fn walk(
        &self,
        dir: &[u8],
        request: &WalkRequest,
        glob: Option<&PathGlob>,
    ) -> EnvResult<WalkResult> {
        let strip = if dir.is_empty() { 0 } else { dir.len() + 1 };
        let mut entries = Vec::new();
        let mut limit_reached = false;
        self.visit_below(
            dir,
            None,
            request.ignore,
            &request.cancel,
            "walk",
            |key, entry| {
                let listed = match entry.kind {
                    FileKind::File | FileKind::Symlink => true,
                    FileKind::Directory => request.kinds == EntryKinds::FilesAndDirectories,
                    FileKind::Other => false,
                };
                if !listed {
                    return true;
                }
                let path = path_of(&key.0[strip..]);
                if glob.is_some_and(|glob| !glob.is_match(path, entry.kind)) {
                    return true;
                }
                if request.limit.is_some_and(|limit| entries.len() == limit) {
                    limit_reached = true;
                    return false;
                }
                entries.push(WalkEntry {
                    path: path.to_path_buf(),
                    kind: entry.kind,
                });
                true
            },
        )?;
        Ok(WalkResult {
            entries,
            limit_reached,
        })
    }

    /// The files a search of the directory `dir` must read, in result order, by key (the
    /// path relative to `dir` is the key past `dir`'s): at most `most` of them, starting after
    /// the key `after` (when given). Also returns how many files were considered and whether
    /// the listing reached the end. `Err` (a reason to answer cold) when the thread checking
    /// the filters failed.
    ///
    /// Listing the tree and checking the files' filters take about as long as each other on a
    /// large tree, so with `threads` above one, once a first batch is full, a second thread
    /// checks each batch while this one lists the next (in order: the answer is the same).
    #[expect(
        clippy::too_many_arguments,
        reason = "a walk's request, taken apart where the caller keeps it"
    )]
    pub(crate) fn candidates(
        &self,
        dir: &[u8],
        after: Option<&[u8]>,
        most: usize,
        rules: IgnoreRules,
        glob: Option<&PathGlob>,
        requirement: &Requirement,
        cancel: &CancellationToken,
        threads: usize,
    ) -> Result<EnvResult<Candidates>, String> {
        let strip = if dir.is_empty() { 0 } else { dir.len() + 1 };
        let required = requirement.must_contain();
        let stopped = AtomicBool::new(false);
        let mut checker = Some(Checker {
            must: &required,
            requirement,
            most,
            found: Vec::new(),
            full: false,
        });
        let mut files = 0;
        let mut batch: Vec<(&Key, &Content)> = Vec::with_capacity(FILTER_BATCH);
        let walked = std::thread::scope(|scope| {
            let mut pipe = None;
            let walked = self.visit_below(dir, after, rules, cancel, "search", |key, entry| {
                if entry.kind != FileKind::File {
                    return true;
                }
                if glob.is_some_and(|glob| !glob.is_match(path_of(&key.0[strip..]), entry.kind)) {
                    return true;
                }
                files += 1;
                batch.push((key, &entry.content));
                if batch.len() < FILTER_BATCH {
                    return true;
                }
                if threads < 2 {
                    return checker
                        .as_mut()
                        .is_some_and(|checker| checker.take(&mut batch));
                }
                if pipe.is_none()
                    && let Some(mut moved) = checker.take()
                {
                    // The first full batch: from here on a second thread checks them.
                    let (sender, receiver) = std::sync::mpsc::sync_channel(4);
                    let stopped = &stopped;
                    let worker = scope.spawn(move || {
                        for mut batch in receiver {
                            if !moved.take(&mut batch) {
                                stopped.store(true, Ordering::Relaxed);
                                break;
                            }
                        }
                        moved
                    });
                    pipe = Some((sender, worker));
                }
                if stopped.load(Ordering::Relaxed) {
                    return false;
                }
                let full = std::mem::replace(&mut batch, Vec::with_capacity(FILTER_BATCH));
                pipe.as_ref()
                    .is_some_and(|(sender, _)| sender.send(full).is_ok())
            });
            if let Some((sender, worker)) = pipe {
                drop(sender);
                checker = worker.join().ok();
            }
            walked
        });
        let Some(mut checker) = checker else {
            return Err("the thread checking the index's filters failed".to_owned());
        };
        if let Err(error) = walked {
            return Ok(Err(error));
        }
        if !checker.full {
            checker.take(&mut batch);
        }
        Ok(Ok((checker.found, files, !checker.full)))
    }
}

/// Checks batches of files against a search's requirement, keeping those that may match.
#[derive(Debug)]
struct Checker<'query> {
    /// Trigrams every match contains, checked one at a time over a whole batch before
    /// [`Content::may_match`]: each file's filter is elsewhere in memory, and checks that do
    /// not depend on each other let the processor fetch many filters at once.
    must: &'query [u32],
    requirement: &'query Requirement,
    most: usize,
    found: Vec<Arc<[u8]>>,
    /// `most` files were found and another may match.
    full: bool,
}

impl Checker<'_> {
    /// Moves the batch's files that may match into `found`; `false` once `most` are found and
    /// another one may match.
    fn take(&mut self, batch: &mut Vec<(&Key, &Content)>) -> bool {
        for &trigram in self.must {
            batch.retain(|(_, content)| content.may_contain(trigram));
        }
        for (key, content) in batch.drain(..) {
            if content.may_match(self.requirement) {
                if self.found.len() == self.most {
                    self.full = true;
                    return false;
                }
                // A reference count, not a copy.
                self.found.push(Arc::clone(&key.0));
            }
        }
        true
    }
}

/// Files whose filters are checked together (see [`Tree::candidates`]).
const FILTER_BATCH: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> Entry {
        Entry {
            kind: FileKind::File,
            ignored: false,
            listable: false,
            content: Content::Unknown,
        }
    }

    fn dir() -> Entry {
        Entry {
            kind: FileKind::Directory,
            ignored: false,
            listable: true,
            content: Content::Unknown,
        }
    }

    #[test]
    fn keys_order_subtrees_together_and_ignored_directories_are_skipped() {
        let mut tree = Tree::new(PathBuf::from("/ws"), IgnoreStack::default());
        for (path, entry) in [
            ("a.txt", file()),
            ("a", dir()),
            ("a/b", file()),
            ("a-b", file()),
            ("build", dir()),
            ("build/x.o", file()),
        ] {
            tree.insert(key_of(Path::new(path)), entry);
        }
        tree.set_ignore_dir(
            &[],
            IgnoreDir::from_contents(Path::new("/ws"), None, Some(b"build/\n"), None),
        );
        tree.decide(&[]);
        let mut request = WalkRequest::new("/ws");
        request.kinds = EntryKinds::FilesAndDirectories;
        let paths = |result: WalkResult| -> Vec<PathBuf> {
            result.entries.into_iter().map(|entry| entry.path).collect()
        };
        assert_eq!(
            paths(tree.walk(&[], &request, None).unwrap()),
            ["a", "a/b", "a-b", "a.txt"].map(PathBuf::from)
        );
        request.ignore = IgnoreRules::IncludeIgnored;
        assert_eq!(tree.walk(&[], &request, None).unwrap().entries.len(), 6);
        // Walking inside the ignored directory lists its contents.
        request.ignore = IgnoreRules::Respect;
        assert_eq!(
            paths(tree.walk(b"build", &request, None).unwrap()),
            ["x.o"].map(PathBuf::from)
        );
        tree.remove_subtree(b"a");
        assert_eq!(tree.len(), 4);
        assert!(tree.memory_bytes() > 0);
    }

    #[test]
    fn candidates_are_the_same_checked_in_one_thread_or_two() {
        use crate::trigram::{Summarizer, requirement};
        let mut tree = Tree::new(PathBuf::from("/ws"), IgnoreStack::default());
        let mut summarizer = Summarizer::default();
        let mut expected = Vec::new();
        for index in 0..(5 * FILTER_BATCH + 17) {
            let key = format!("d{}/f{index:05}", index % 7);
            let text = if index % 13 == 0 {
                format!("line {index}\nthe needle_word is here\n")
            } else {
                format!("line {index}\nnothing to see\n")
            };
            let content = summarizer.summarize(text.as_bytes());
            if index % 13 == 0 {
                expected.push(key.clone());
            }
            tree.insert(key_of(Path::new(&key)), Entry { content, ..file() });
        }
        for number in 0..7 {
            tree.insert(key_of(Path::new(&format!("d{number}"))), dir());
        }
        tree.decide(&[]);
        expected.sort_by_key(|key| Key::of(key.as_bytes()));
        let request = jig_env::SearchRequest::new("/ws", "needle_word");
        let requirement = requirement(&request);
        let cancel = CancellationToken::new();
        let list = |after: Option<&[u8]>, most: usize, threads: usize| {
            let (found, _, complete) = tree
                .candidates(
                    &[],
                    after,
                    most,
                    IgnoreRules::Respect,
                    None,
                    &requirement,
                    &cancel,
                    threads,
                )
                .unwrap()
                .unwrap();
            let found: Vec<String> = found
                .iter()
                .map(|key| String::from_utf8(key.to_vec()).unwrap())
                .collect();
            (found, complete)
        };
        for threads in [1, 2, 4] {
            assert_eq!(list(None, usize::MAX, threads), (expected.clone(), true));
            for most in [1, 50, expected.len() - 1] {
                let (found, complete) = list(None, most, threads);
                assert_eq!(found, expected[..most], "{threads} threads, at most {most}");
                assert!(!complete);
                let (rest, complete) = list(Some(found[most - 1].as_bytes()), usize::MAX, threads);
                assert_eq!(rest, expected[most..]);
                assert!(complete);
            }
            assert_eq!(
                list(None, expected.len(), threads),
                (expected.clone(), true)
            );
        }
    }
}
