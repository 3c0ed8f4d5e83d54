//! Fixtures for tests that check containment on the host filesystem (feature `test-support`).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What the files outside the workspace contain; a result that shows it leaked.
pub const SECRET: &str = "OUTSIDE-SECRET";
const OUTSIDE_FILE: &str = "OUTSIDE-SECRET count\n";

/// A workspace and a directory beside it for a symlink race: `ws/link` is a directory inside
/// (with `file.txt`) and `ws/f` a file inside; [`flipper`](Self::flipper) keeps swapping each
/// with a symlink to the matching thing in `outside` (one atomic `renameat2(RENAME_EXCHANGE)`
/// per swap). Whatever a tool does through `link` or `f` must never show or change `outside`.
///
/// Set-up failures panic: this is for tests.
#[derive(Debug)]
pub struct SymlinkRace {
    _dir: tempfile::TempDir,
    /// The workspace (canonical).
    pub ws: PathBuf,
    /// The directory the swapped symlinks point into (canonical).
    pub outside: PathBuf,
}

impl SymlinkRace {
    /// Builds the two directories in a new temporary directory.
    #[expect(clippy::unwrap_used, reason = "a test fixture fails loudly")]
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(ws.join("link")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("file.txt"), OUTSIDE_FILE).unwrap();
        std::fs::write(outside.join("only-outside.txt"), format!("{SECRET}\n")).unwrap();
        std::fs::write(ws.join("link/file.txt"), "inside count\n").unwrap();
        std::fs::write(ws.join("f"), "inside count\n").unwrap();
        std::os::unix::fs::symlink(&outside, ws.join(".swap")).unwrap();
        std::os::unix::fs::symlink(outside.join("file.txt"), ws.join(".fswap")).unwrap();
        Self {
            _dir: dir,
            ws,
            outside,
        }
    }

    /// Swaps both pairs until `stop`; the thread returns the number of rounds.
    #[expect(clippy::unwrap_used, reason = "a test fixture fails loudly")]
    pub fn flipper(&self, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
        let ws = self.ws.clone();
        std::thread::spawn(move || {
            let dir = rustix::fs::open(
                &ws,
                rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY,
                rustix::fs::Mode::empty(),
            )
            .unwrap();
            let mut rounds = 0;
            while !stop.load(Ordering::Relaxed) {
                // A burst of swaps (an even number, so it ends where it started), then a short
                // quiet spell with both inside, so calls also get through: every call either
                // races a swap or completes inside.
                for _ in 0..100 {
                    for (a, b) in [("link", ".swap"), ("f", ".fswap")] {
                        rustix::fs::renameat_with(
                            &dir,
                            a,
                            &dir,
                            b,
                            rustix::fs::RenameFlags::EXCHANGE,
                        )
                        .unwrap();
                    }
                    rounds += 1;
                }
                std::thread::sleep(std::time::Duration::from_micros(500));
            }
            rounds
        })
    }

    /// Creates a FIFO named `name` in the workspace (mode `0o644`) and returns its path.
    #[expect(clippy::unwrap_used, reason = "a test fixture fails loudly")]
    pub fn fifo(&self, name: &str) -> PathBuf {
        let fifo = self.ws.join(name);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        fifo
    }

    /// Changed or new files outside (restored or removed): each one is an escape.
    #[expect(clippy::unwrap_used, reason = "a test fixture fails loudly")]
    pub fn outside_changes(&self) -> u64 {
        let mut changes = 0;
        for entry in std::fs::read_dir(&self.outside).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let content = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let expected = match name.as_str() {
                "file.txt" => OUTSIDE_FILE.to_owned(),
                "only-outside.txt" => format!("{SECRET}\n"),
                _ => {
                    changes += 1;
                    std::fs::remove_file(entry.path()).unwrap();
                    continue;
                }
            };
            if content != expected {
                changes += 1;
                std::fs::write(entry.path(), expected).unwrap();
            }
        }
        changes
    }
}

impl Default for SymlinkRace {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether a tool's output shows anything from outside.
pub fn leaked(text: &str) -> bool {
    text.contains(SECRET) || text.contains("only-outside")
}
