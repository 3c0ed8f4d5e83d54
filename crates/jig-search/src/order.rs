//! The one order of every walk and search result, and the limit applied to a walk.

use std::cmp::Ordering;
use std::path::Path;

use jig_env::{WalkEntry, WalkResult};

/// Orders relative paths component by component, comparing names bytewise: `a/b` sorts before
/// `a.txt` (the directory `a` sorts before the name `a.txt`) and every directory's contents stay
/// together. This is the order of every walk and search result.
pub fn compare_paths(a: &Path, b: &Path) -> Ordering {
    // For normalised relative paths (no `.`, `..`, empty or trailing components) comparing the
    // bytes with the separator mapped below every other byte is the component-wise order, and
    // much cheaper than splitting into components (sorting 60k paths is on the hot path).
    fn key(byte: u8) -> u8 {
        if byte == b'/' || (cfg!(windows) && byte == b'\\') {
            0
        } else {
            byte
        }
    }
    let (a, b) = (
        a.as_os_str().as_encoded_bytes(),
        b.as_os_str().as_encoded_bytes(),
    );
    a.iter()
        .map(|&byte| key(byte))
        .cmp(b.iter().map(|&byte| key(byte)))
}

/// A key whose bytewise order is [`compare_paths`]'s order (the separator mapped to 0), for
/// sorting many paths with `sort_by_cached_key`.
pub fn path_sort_key(path: &Path) -> Vec<u8> {
    path.as_os_str()
        .as_encoded_bytes()
        .iter()
        .map(|&byte| {
            if byte == b'/' || (cfg!(windows) && byte == b'\\') {
                0
            } else {
                byte
            }
        })
        .collect()
}
/// Sorts `entries` and applies the limit (shared by every implementation).
pub fn finish_walk(entries: &mut Vec<WalkEntry>, limit: Option<usize>) -> WalkResult {
    entries.sort_by_cached_key(|entry| path_sort_key(&entry.path));
    let mut limit_reached = false;
    if let Some(limit) = limit
        && entries.len() > limit
    {
        entries.truncate(limit);
        limit_reached = true;
    }
    WalkResult {
        entries: std::mem::take(entries),
        limit_reached,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_paths_keeps_directory_contents_together() {
        let mut paths = vec!["a.txt", "a/b", "B", "a/a/z", "a-b"];
        paths.sort_by(|a, b| compare_paths(Path::new(a), Path::new(b)));
        assert_eq!(paths, ["B", "a/a/z", "a/b", "a-b", "a.txt"]);
    }

    #[test]
    fn sort_key_orders_like_compare_paths() {
        let paths = [
            "a.txt", "a/b", "B", "a/a/z", "a-b", "a", "a/b/c", "ab", "a b/c",
        ];
        for a in paths {
            for b in paths {
                let (a, b) = (Path::new(a), Path::new(b));
                assert_eq!(
                    path_sort_key(a).cmp(&path_sort_key(b)),
                    compare_paths(a, b),
                    "{a:?} {b:?}"
                );
            }
        }
    }
}
