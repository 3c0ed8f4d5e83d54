//! The generic `walk` and `search`, built on an env's own file operations (`stat`, `read_dir`,
//! `read`): the reference every faster backend must agree with, and the implementation of envs
//! that have nothing faster.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use jig_env::{
    CancellationToken, EntryKinds, EnvError, EnvResult, ExecutionEnv, FileKind, IgnoreRules,
    SearchRequest, SearchResult, WalkEntry, WalkRequest, WalkResult,
};

use crate::file_search::CompiledSearch;
use crate::glob::PathGlob;
use crate::ignore_rules::{IgnoreDir, IgnoreStack, is_skipped_name};
use crate::order::{finish_walk, path_sort_key};

/// The generic `walk`: `read_dir` from the root down, ignore files read through the env.
pub async fn walk_with_env<E: ExecutionEnv + ?Sized>(
    env: &E,
    request: WalkRequest,
) -> EnvResult<WalkResult> {
    let glob = request.glob.as_deref().map(PathGlob::new).transpose()?;
    let found = collect_tree(
        env,
        &request.root,
        request.ignore,
        request.kinds,
        &request.cancel,
    )
    .await?;
    let mut entries: Vec<WalkEntry> = found
        .into_iter()
        .filter(|entry| {
            glob.as_ref()
                .is_none_or(|glob| glob.is_match(&entry.path, entry.kind))
        })
        .map(|entry| WalkEntry {
            path: entry.path,
            kind: entry.kind,
        })
        .collect();
    Ok(finish_walk(&mut entries, request.limit))
}

/// The generic `search`: the generic walk, then each file read with `read` and searched in
/// path order, stopping as soon as the limit is known to be exceeded.
pub async fn search_with_env<E: ExecutionEnv + ?Sized>(
    env: &E,
    request: SearchRequest,
) -> EnvResult<SearchResult> {
    let compiled = CompiledSearch::new(&request)?;
    let mut files = collect_tree(
        env,
        &request.root,
        request.ignore,
        EntryKinds::Files,
        &request.cancel,
    )
    .await?;
    files.retain(|entry| {
        entry.kind == FileKind::File
            && compiled
                .glob()
                .is_none_or(|glob| glob.is_match(&entry.path, entry.kind))
    });
    files.sort_by_cached_key(|entry| path_sort_key(&entry.path));
    let mut searcher = compiled.file_searcher();
    let mut assembler = compiled.assembler();
    for file in files {
        if request.cancel.is_cancelled() {
            return Err(EnvError::aborted("search"));
        }
        // A file that vanished or cannot be read is skipped, as ripgrep does.
        let Ok(bytes) = env.read(&file.absolute).await else {
            continue;
        };
        let Ok(outcome) = searcher.search_reader(bytes.as_slice()) else {
            continue;
        };
        if !assembler.push(file.path, outcome) {
            break;
        }
    }
    Ok(assembler.finish())
}

struct FoundEntry {
    path: PathBuf,
    absolute: PathBuf,
    kind: FileKind,
}

/// Every entry under `root` that the ignore rules keep, unsorted. A root that is a file yields
/// itself (ignore rules do not apply to what was named explicitly).
async fn collect_tree<E: ExecutionEnv + ?Sized>(
    env: &E,
    root: &Path,
    rules: IgnoreRules,
    kinds: EntryKinds,
    cancel: &CancellationToken,
) -> EnvResult<Vec<FoundEntry>> {
    let root_info = env.stat(root).await?;
    let mut found = Vec::new();
    if root_info.kind != FileKind::Directory {
        let name = root
            .file_name()
            .map_or_else(|| root.to_path_buf(), PathBuf::from);
        found.push(FoundEntry {
            path: name,
            absolute: root.to_path_buf(),
            kind: FileKind::File,
        });
        return Ok(found);
    }
    let mut stack = IgnoreStack::default();
    if rules == IgnoreRules::Respect {
        let canonical = env.canonical_path(root).await?;
        let mut ancestors: Vec<&Path> = canonical.ancestors().skip(1).collect();
        ancestors.reverse();
        for ancestor in ancestors {
            let dir = load_ignore_dir(env, ancestor, None).await;
            stack = stack.child(dir);
        }
    }
    // Depth-first; each pending directory carries the ignore stack of its parent.
    let mut pending: Vec<(PathBuf, PathBuf, IgnoreStack)> =
        vec![(root.to_path_buf(), PathBuf::new(), stack)];
    let mut first = true;
    while let Some((dir, relative, parent_stack)) = pending.pop() {
        if cancel.is_cancelled() {
            return Err(EnvError::aborted("walk"));
        }
        let entries = match env.read_dir(&dir).await {
            Ok(entries) => entries,
            Err(error) if first => return Err(error),
            // A directory that vanished or cannot be listed is skipped, as ripgrep does.
            Err(_) => continue,
        };
        first = false;
        let stack = if rules == IgnoreRules::Respect {
            let names: Vec<&OsStr> = entries.iter().map(|entry| entry.name.as_os_str()).collect();
            parent_stack.child(load_ignore_dir(env, &dir, Some(&names)).await)
        } else {
            parent_stack
        };
        for entry in entries {
            if is_skipped_name(&entry.name) {
                continue;
            }
            let absolute = dir.join(&entry.name);
            let is_dir = entry.kind == FileKind::Directory;
            if rules == IgnoreRules::Respect && stack.is_ignored(&absolute, is_dir) {
                continue;
            }
            let path = relative.join(&entry.name);
            if is_dir {
                pending.push((absolute.clone(), path.clone(), stack.clone()));
            }
            let listed = match entry.kind {
                FileKind::File | FileKind::Symlink => true,
                FileKind::Directory => kinds == EntryKinds::FilesAndDirectories,
                FileKind::Other => false,
            };
            if listed {
                found.push(FoundEntry {
                    path,
                    absolute,
                    kind: entry.kind,
                });
            }
        }
    }
    Ok(found)
}

/// Reads the ignore files of `dir`. `names`, when known, is the directory's listing: files it
/// does not contain are not probed (as ripgrep's walker).
async fn load_ignore_dir<E: ExecutionEnv + ?Sized>(
    env: &E,
    dir: &Path,
    names: Option<&[&OsStr]>,
) -> IgnoreDir {
    let has = |name: &str| names.is_none_or(|names| names.contains(&OsStr::new(name)));
    let ignore = if has(".ignore") {
        read_optional(env, &dir.join(".ignore")).await
    } else {
        None
    };
    let git_ignore = if has(".gitignore") {
        read_optional(env, &dir.join(".gitignore")).await
    } else {
        None
    };
    let git_exclude = if has(".git") {
        read_optional(env, &dir.join(".git/info/exclude")).await
    } else {
        None
    };
    IgnoreDir::from_contents(
        dir,
        ignore.as_deref(),
        git_ignore.as_deref(),
        git_exclude.as_deref(),
    )
}

async fn read_optional<E: ExecutionEnv + ?Sized>(env: &E, path: &Path) -> Option<Vec<u8>> {
    env.read(path).await.ok()
}
