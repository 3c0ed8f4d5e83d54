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

/// Run by [`concurrent_processes_lose_no_decision`] in child processes: writes 25 decisions
/// under `JIG_TRUST_CHILD_PREFIX` into the store in `JIG_TRUST_CHILD_DIR`.
#[test]
#[ignore = "a child process of concurrent_processes_lose_no_decision"]
fn child_writer() {
    let (Some(dir), Some(prefix)) = (
        std::env::var_os("JIG_TRUST_CHILD_DIR"),
        std::env::var("JIG_TRUST_CHILD_PREFIX").ok(),
    ) else {
        return;
    };
    let store = TrustStore::in_config_dir(std::path::Path::new(&dir));
    for n in 0..25 {
        store
            .set(&PathBuf::from(format!("/{prefix}/p{n}")), Some(true))
            .unwrap();
    }
}

#[test]
fn concurrent_processes_lose_no_decision() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("jig");
    let children: Vec<_> = (0..4)
        .map(|child| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "store::child_writer", "--ignored", "--quiet"])
                .env("JIG_TRUST_CHILD_DIR", &config)
                .env("JIG_TRUST_CHILD_PREFIX", format!("proc{child}"))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let all = TrustStore::in_config_dir(&config).read().unwrap();
    assert_eq!(all.len(), 4 * 25, "every process's every decision is there");
}
