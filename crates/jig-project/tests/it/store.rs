//! The trust store under concurrent writers and readers.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use jig_project::TrustStore;
use pretty_assertions::assert_eq;

#[test]
fn concurrent_writers_under_the_lock_lose_no_decision_and_readers_never_see_a_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = TrustStore::in_config_dir(&dir.path().join("jig"));
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let store = store.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            let mut reads = 0_u32;
            while !done.load(Ordering::Relaxed) {
                // Every read parses: the file is replaced by rename, never written in place.
                store.read().unwrap();
                reads += 1;
            }
            reads
        })
    };
    let writers: Vec<_> = (0..8)
        .map(|writer| {
            let store = store.clone();
            std::thread::spawn(move || {
                for n in 0..25 {
                    let dir = PathBuf::from(format!("/w{writer}/p{n}"));
                    store.set(&dir, Some(n % 2 == 0)).unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    let all = store.read().unwrap();
    assert_eq!(all.len(), 8 * 25, "every writer's every decision is there");
    assert_eq!(all["/w3/p4"], Some(true));
    assert_eq!(all["/w7/p5"], Some(false));
    // No temporary files are left beside the store.
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("jig"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["trust.json", "trust.json.lock"]);
}

#[test]
fn a_lookup_does_not_create_the_config_directory() {
    let dir = tempfile::tempdir().unwrap();
    let store = TrustStore::in_config_dir(&dir.path().join("jig"));
    assert_eq!(store.lookup(dir.path()).unwrap(), None);
    assert!(!dir.path().join("jig").exists());
}
