//! The trust race: while `jig tool` starts again and again in a project that nobody trusted, a
//! second process keeps swapping the project's `.jig` between a directory that requires no
//! trust (only an inert setting) and one whose extension, project tool and settings hook would
//! each leave a marker file — as a directory and as a symlink to one. Trust is decided on the
//! `.jig` opened once and everything is read through that handle, so no start may run any of
//! them.
//!
//! `JIG_TRUST_RACE_STARTS` sets the number of starts (default 1,000); the run also stops after
//! `JIG_TRUST_RACE_SECONDS` (default 240) so it stays bounded on a slow machine, and then must
//! have made at least 200 starts.
#![expect(clippy::unwrap_used, reason = "test helpers fail loudly on purpose")]

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn executable(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A `.jig` whose every runnable part leaves a marker in `markers`.
fn untrusted_jig(dir: &Path, markers: &Path) {
    let m = markers.display();
    executable(
        &dir.join("extensions/marker.sh"),
        &format!("#!/bin/sh\ntouch {m}/extension\n"),
    );
    executable(
        &dir.join("tools/lint"),
        &format!("#!/bin/sh\ntouch {m}/project-tool\n"),
    );
    fs::write(
        dir.join("settings.json"),
        serde_json::json!({
            "hooks": {"tool_call": [["sh", "-c", format!("touch {m}/settings-hook")]]},
            "thinking": "low",
        })
        .to_string(),
    )
    .unwrap();
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn swapping_jig_while_jig_starts_never_runs_untrusted_code() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let ws = root.join("ws");
    let markers = root.join("markers");
    fs::create_dir_all(&markers).unwrap();
    fs::create_dir_all(&ws).unwrap();
    fs::write(ws.join("a.txt"), "a\n").unwrap();
    // `.jig` starts harmless; `.swap` is the untrusted one; they trade places.
    fs::create_dir_all(ws.join(".jig")).unwrap();
    fs::write(ws.join(".jig/settings.json"), r#"{"thinking": "high"}"#).unwrap();
    untrusted_jig(&ws.join(".swap"), &markers);
    // And a symlink to another untrusted `.jig`, swapped in as the other half of the time.
    untrusted_jig(&root.join("elsewhere"), &markers);
    std::os::unix::fs::symlink(root.join("elsewhere"), ws.join(".link")).unwrap();

    let starts = env_number("JIG_TRUST_RACE_STARTS", 1000);
    let limit = Duration::from_secs(env_number("JIG_TRUST_RACE_SECONDS", 240));
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let ws = ws.clone();
        std::thread::spawn(move || {
            let dir = fs::File::open(&ws).unwrap();
            let mut swaps = 0_u64;
            while !stop.load(Ordering::Relaxed) {
                let other = if swaps % 4 < 2 { ".swap" } else { ".link" };
                rustix::fs::renameat_with(
                    &dir,
                    ".jig",
                    &dir,
                    other,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
                // Mostly fast swaps, sometimes a pause so starts also see a settled `.jig`.
                if swaps.is_multiple_of(64) {
                    std::thread::sleep(Duration::from_micros(300));
                }
            }
            swaps
        })
    };

    let next = Arc::new(AtomicUsize::new(0));
    let (untrusted, quiet) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let started = Instant::now();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (next, untrusted, quiet) = (
                Arc::clone(&next),
                Arc::clone(&untrusted),
                Arc::clone(&quiet),
            );
            let (ws, root) = (ws.clone(), root.clone());
            std::thread::spawn(move || {
                while (next.fetch_add(1, Ordering::Relaxed) as u64) < starts
                    && started.elapsed() < limit
                {
                    let output = Command::new(env!("CARGO_BIN_EXE_jig"))
                        .args(["tool", "ls", "--args", r#"{"path": "."}"#])
                        .current_dir(&ws)
                        .env("XDG_CONFIG_HOME", root.join("config"))
                        .env("XDG_DATA_HOME", root.join("data"))
                        .output()
                        .unwrap();
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    if stderr.contains("untrusted") {
                        untrusted.fetch_add(1, Ordering::Relaxed);
                    } else {
                        quiet.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    let (untrusted, quiet) = (
        untrusted.load(Ordering::Relaxed),
        quiet.load(Ordering::Relaxed),
    );
    let ran: Vec<PathBuf> = fs::read_dir(&markers)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    println!(
        "trust race: {} starts in {:.1} s ({untrusted} saw the untrusted .jig, {quiet} the harmless one), {swaps} swaps, {} runs of untrusted code",
        untrusted + quiet,
        started.elapsed().as_secs_f64(),
        ran.len()
    );
    assert!(ran.is_empty(), "untrusted code ran: {ran:?}");
    assert!(untrusted + quiet >= 200, "too few starts to say anything");
    assert!(
        untrusted > 0 && quiet > 0,
        "the race was not exercised: {untrusted} untrusted, {quiet} harmless starts"
    );
}
