//! Warm answers against cold ones: a random tree, random changes between queries (by jig's
//! env, by this process, by other processes, bursts that overflow the index's event budget,
//! ignore-file changes), random walks and searches, each answered warm (through
//! `IndexedEnv`) and cold (`LocalEnv`) on the same tree at the same moment and compared whole.
//! No sleep separates a change from the query after it: a warm answer must already see it.
//!
//! `JIG_INDEX_SEED` picks the seed (default: a fixed one), `JIG_INDEX_STEPS` the number of steps
//! (default 1200). A failure names the seed and step.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use jig_env::{
    CaseSensitivity, EntryKinds, ExecutionEnv, IgnoreRules, PatternSyntax, SearchRequest,
    WalkRequest,
};
use jig_env_local::LocalEnv;
use jig_index::{IndexOptions, IndexState, IndexedEnv, WarmIndexes};

/// A small deterministic generator (xorshift), so failures reproduce from the seed.
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
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const DIRS: &[&str] = &[
    "",
    "src",
    "src/a",
    "src/a/deep",
    "lib",
    ".hidden",
    "build",
    "docs",
    "x-y",
    "src/b",
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
    "x",
    "deep",
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
    "Z.TXT",
    "src/b",
    "!src",
];
const WORDS: &[&str] = &[
    "needle",
    "hay",
    "Needle",
    "stack",
    "needles",
    "-flag",
    "fn main()",
    "NEEDLE",
    "\u{212A}elvin",
    "kelvin",
    "caf\u{e9}",
    "foo_bar",
    "x",
];

fn body(rng: &mut Rng) -> Vec<u8> {
    let mut body = Vec::new();
    if rng.chance(25) {
        body.extend(b"\xEF\xBB\xBF");
    }
    for line in 0..rng.below(25) {
        let words: Vec<&str> = (0..rng.below(6)).map(|_| rng.pick(WORDS)).collect();
        body.extend(format!("{line} {}", words.join(" ")).bytes());
        if rng.chance(40) {
            body.extend(std::iter::repeat_n(b'z', 300 + rng.below(5000)));
            body.extend(b" needle");
        }
        body.extend(if rng.chance(5) {
            &b"\r\n"[..]
        } else {
            &b"\n"[..]
        });
    }
    if rng.chance(12) {
        body.extend(b"\0binary needle\n");
    }
    if rng.chance(6) {
        body.extend(b"no newline needle");
    }
    body
}

fn rules(rng: &mut Rng) -> Vec<u8> {
    let lines: Vec<&str> = (0..=rng.below(4)).map(|_| rng.pick(RULES)).collect();
    lines.join("\n").into_bytes()
}

/// Every path (files and directories, not `.git`) under `root`, relative, sorted.
fn existing(root: &Path, dirs_only: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(dir) = pending.pop() {
        let Ok(listing) = fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in listing.flatten() {
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            let path = dir.join(&name);
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                pending.push(path.clone());
                out.push(path);
            } else if !dirs_only {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn put(root: &Path, relative: &str, contents: &[u8]) {
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        let _ = fs::create_dir_all(parent);
    }
    let _ = fs::write(path, contents);
}

fn random_file(rng: &mut Rng) -> String {
    let dir = rng.pick(DIRS);
    let name = rng.pick(NAMES);
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// One random change; returns a short description for failure messages.
#[expect(clippy::too_many_lines, reason = "one arm per kind of change")]
async fn mutate(rng: &mut Rng, root: &Path, env: &IndexedEnv) -> String {
    let files: Vec<PathBuf> = existing(root, false)
        .into_iter()
        .filter(|path| root.join(path).is_file())
        .collect();
    let dirs = existing(root, true);
    let any_file = |rng: &mut Rng| -> Option<PathBuf> {
        (!files.is_empty()).then(|| files[rng.below(files.len())].clone())
    };
    match rng.below(20) {
        0..=3 => {
            let path = random_file(rng);
            put(root, &path, &body(rng));
            format!("write {path}")
        }
        4 => {
            // Through jig's own env (atomic write: temp file and rename).
            let path = random_file(rng);
            let _ = env.write(&root.join(&path), body(rng).into()).await;
            format!("env write {path}")
        }
        5 => {
            let Some(path) = any_file(rng) else {
                return "nothing".into();
            };
            let mut file = fs::OpenOptions::new()
                .append(true)
                .open(root.join(&path))
                .unwrap();
            std::io::Write::write_all(&mut file, &body(rng)).unwrap();
            format!("append {}", path.display())
        }
        6 => {
            let Some(path) = any_file(rng) else {
                return "nothing".into();
            };
            let file = fs::OpenOptions::new()
                .write(true)
                .open(root.join(&path))
                .unwrap();
            file.set_len(rng.below(40) as u64).unwrap();
            format!("truncate {}", path.display())
        }
        7 => {
            let Some(path) = any_file(rng) else {
                return "nothing".into();
            };
            let _ = fs::remove_file(root.join(&path));
            format!("delete {}", path.display())
        }
        8 => {
            let Some(path) = any_file(rng) else {
                return "nothing".into();
            };
            let to = random_file(rng);
            put(root, &to, b"");
            let _ = fs::rename(root.join(&path), root.join(&to));
            format!("rename {} {to}", path.display())
        }
        9 => {
            if dirs.is_empty() {
                return "nothing".into();
            }
            let dir = dirs[rng.below(dirs.len())].clone();
            let to = rng.pick(&["moved", "src/moved", "lib/x", "build", "docs/d"]);
            let _ = fs::rename(root.join(&dir), root.join(to));
            format!("rename dir {} {to}", dir.display())
        }
        10 => {
            if dirs.is_empty() {
                return "nothing".into();
            }
            let dir = dirs[rng.below(dirs.len())].clone();
            let _ = fs::remove_dir_all(root.join(&dir));
            format!("delete dir {}", dir.display())
        }
        11 | 12 => {
            let dir = rng.pick(DIRS);
            let name = if rng.chance(3) {
                ".ignore"
            } else {
                ".gitignore"
            };
            let path = if dir.is_empty() {
                name.to_owned()
            } else {
                format!("{dir}/{name}")
            };
            if rng.chance(4) {
                let _ = fs::remove_file(root.join(&path));
                format!("delete {path}")
            } else {
                put(root, &path, &rules(rng));
                format!("ignore {path}")
            }
        }
        13 => {
            let dir = rng.pick(&["", "src"]);
            let path = root.join(dir).join(".git/info/exclude");
            if rng.chance(3) {
                let _ = fs::remove_dir_all(root.join(dir).join(".git"));
                format!("delete {dir}/.git")
            } else {
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(&path, rules(rng)).unwrap();
                format!("exclude {dir}")
            }
        }
        14 | 15 => {
            // Another process changes the tree.
            let path = random_file(rng);
            let target = root.join(&path);
            let script = match rng.below(4) {
                0 => format!(
                    "mkdir -p \"$(dirname '{0}')\" && printf 'needle from sh\\nhay\\n' > '{0}'",
                    target.display()
                ),
                1 => match any_file(rng) {
                    Some(from) => format!(
                        "mkdir -p \"$(dirname '{1}')\" && cp '{0}' '{1}'",
                        root.join(from).display(),
                        target.display()
                    ),
                    None => "true".to_owned(),
                },
                2 => match any_file(rng) {
                    Some(from) => format!(
                        "mkdir -p \"$(dirname '{1}')\" && mv '{0}' '{1}'",
                        root.join(from).display(),
                        target.display()
                    ),
                    None => "true".to_owned(),
                },
                _ => format!("rm -rf '{}'", target.display()),
            };
            // It may fail (a file where a directory is needed): the tree is what it is.
            let _ = Command::new("sh")
                .arg("-c")
                .arg(&script)
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap();
            format!("sh {script}")
        }
        16 => {
            let path = random_file(rng);
            let target = rng.pick(&["src", "src/a/../main.rs", "missing", "lib/lib.rs", "/etc"]);
            let _ = fs::remove_file(root.join(&path));
            let _ = fs::create_dir_all(root.join(&path).parent().unwrap());
            let _ = symlink(target, root.join(&path));
            format!("symlink {path} -> {target}")
        }
        17 => {
            let dir = format!("{}/new{}", rng.pick(DIRS), rng.below(5));
            let dir = dir.trim_start_matches('/').to_owned();
            for index in 0..rng.below(5) {
                put(root, &format!("{dir}/f{index}.rs"), &body(rng));
            }
            format!("new dir {dir}")
        }
        18 if rng.chance(8) => {
            // A burst past the index's event budget: it must notice and answer cold until it
            // has rebuilt.
            let dir = root.join(format!("burst{}", rng.below(3)));
            fs::create_dir_all(&dir).unwrap();
            for index in 0..1200 {
                fs::write(dir.join(format!("b{index}.txt")), b"burst needle\n").unwrap();
            }
            // Mostly gone again, so the tree stays small and the test fast.
            if !rng.chance(4) {
                fs::remove_dir_all(&dir).unwrap();
            }
            "burst".into()
        }
        _ => {
            let Some(path) = any_file(rng) else {
                return "nothing".into();
            };
            let contents = body(rng);
            fs::write(root.join(&path), contents).unwrap();
            format!("rewrite {}", path.display())
        }
    }
}

fn random_root(rng: &mut Rng, root: &Path) -> PathBuf {
    if rng.chance(3) {
        let dirs = existing(root, true);
        if !dirs.is_empty() {
            return root.join(&dirs[rng.below(dirs.len())]);
        }
    }
    if rng.chance(30) {
        return root.join("src/missing");
    }
    root.to_path_buf()
}

fn random_glob(rng: &mut Rng) -> Option<String> {
    let globs = [
        "*.rs",
        "src/**",
        "*.txt",
        "{a,b}*",
        "**/deep/*",
        "src/*.rs",
        "deep/",
        "*.{md,log}",
        "[ab]*",
        "[",
    ];
    rng.chance(3)
        .then(|| globs[rng.below(globs.len())].to_owned())
}

fn search_request(rng: &mut Rng, root: &Path) -> SearchRequest {
    let patterns: &[(&str, PatternSyntax)] = &[
        ("needle", PatternSyntax::Literal),
        ("Needle", PatternSyntax::Literal),
        ("needle from sh", PatternSyntax::Literal),
        ("fn main()", PatternSyntax::Literal),
        ("-flag", PatternSyntax::Literal),
        ("kelvin", PatternSyntax::Literal),
        ("café", PatternSyntax::Literal),
        ("x", PatternSyntax::Literal),
        ("burst needle", PatternSyntax::Literal),
        ("needle|stack", PatternSyntax::Regex),
        ("ne+dles?", PatternSyntax::Regex),
        (r"^[0-9]+ needle$", PatternSyntax::Regex),
        (r"fn\s+\w+\(", PatternSyntax::Regex),
        ("(?i)STACK", PatternSyntax::Regex),
        (r"foo_\w+", PatternSyntax::Regex),
        ("z{10}", PatternSyntax::Regex),
        ("nee.le", PatternSyntax::Regex),
        (r"\bhay\b", PatternSyntax::Regex),
        ("^$", PatternSyntax::Regex),
        ("(", PatternSyntax::Regex),
        ("binary", PatternSyntax::Regex),
        ("[kK]elvin", PatternSyntax::Regex),
    ];
    let (pattern, syntax) = patterns[rng.below(patterns.len())];
    let mut request = SearchRequest::new(random_root(rng, root), pattern);
    request.syntax = syntax;
    if rng.chance(3) {
        request.case = CaseSensitivity::Insensitive;
    }
    request.glob = random_glob(rng);
    if rng.chance(4) {
        request.ignore = IgnoreRules::IncludeIgnored;
    }
    request.context_lines = [0, 0, 1, 2][rng.below(4)];
    if rng.chance(2) {
        request.limit = Some(1 + rng.below(20));
    }
    if rng.chance(5) {
        request.max_line_bytes = 8 + rng.below(64);
    }
    request
}

fn walk_request(rng: &mut Rng, root: &Path) -> WalkRequest {
    let mut request = WalkRequest::new(random_root(rng, root));
    request.glob = random_glob(rng);
    if rng.chance(3) {
        request.ignore = IgnoreRules::IncludeIgnored;
    }
    if rng.chance(2) {
        request.kinds = EntryKinds::FilesAndDirectories;
    }
    if rng.chance(3) {
        request.limit = Some(rng.below(30));
    }
    request
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_answers_equal_cold_answers_after_every_change() {
    let seed = env_number("JIG_INDEX_SEED").unwrap_or(0x5EED_0001);
    let steps = env_number("JIG_INDEX_STEPS").unwrap_or(1200);
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    fs::create_dir(&root).unwrap();
    let root = fs::canonicalize(&root).unwrap();
    for _ in 0..60 {
        let path = random_file(&mut rng);
        put(&root, &path, &body(&mut rng));
    }
    put(&root, ".gitignore", &rules(&mut rng));

    let indexes = WarmIndexes::new(IndexOptions {
        max_events_per_drain: 1000,
        max_rebuilds_per_minute: 10_000,
        // Every change is then applied by the query after it, which is the path exactness
        // rests on (the follower only keeps the queue short), and bursts overflow.
        follow_between_queries: false,
        ..IndexOptions::default()
    });
    let local: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new());
    let warm = IndexedEnv::new(Arc::clone(&local), Arc::clone(&indexes));
    indexes.start(std::slice::from_ref(&root));
    let index = indexes.indexes()[0].clone();
    assert!(
        index.wait_ready(Duration::from_secs(30)),
        "{:?}",
        index.status()
    );
    // Views share the index and keep their containment.
    let warm_view = Arc::new(warm.clone())
        .beneath(std::slice::from_ref(&root))
        .unwrap();
    let cold_view = Arc::clone(&local)
        .beneath(std::slice::from_ref(&root))
        .unwrap();

    let (mut matches, mut limited, mut walked) = (0_usize, 0_usize, 0_usize);
    for step in 0..steps {
        let change = mutate(&mut rng, &root, &warm).await;
        // After a burst the index rebuilds; wait for it now and then so that most answers are
        // warm (answers while it rebuilds are cold, and still compared).
        if rng.chance(3) && index.status().state == IndexState::Building {
            index.wait_ready(Duration::from_secs(30));
        }
        for _ in 0..3 {
            let viewed = rng.chance(4);
            let (warm_env, cold_env): (&dyn ExecutionEnv, &dyn ExecutionEnv) = if viewed {
                (warm_view.as_ref(), cold_view.as_ref())
            } else {
                (&warm, local.as_ref())
            };
            if rng.chance(3) {
                let request = walk_request(&mut rng, &root);
                let described = format!("{request:?}");
                let warm_answer = warm_env.walk(request.clone()).await;
                let cold_answer = cold_env.walk(request).await;
                let warm_answer = warm_answer.map_err(|error| error.to_string());
                let cold_answer = cold_answer.map_err(|error| error.to_string());
                if let Ok(result) = &cold_answer {
                    walked += result.entries.len();
                }
                assert_eq!(
                    warm_answer, cold_answer,
                    "seed {seed} step {step} after {change}: walk {described}"
                );
            } else {
                let request = search_request(&mut rng, &root);
                let described = format!("{request:?}");
                let warm_answer = warm_env.search(request.clone()).await;
                let cold_answer = cold_env.search(request).await;
                let warm_answer = warm_answer.map_err(|error| error.to_string());
                let cold_answer = cold_answer.map_err(|error| error.to_string());
                if let Ok(result) = &cold_answer {
                    matches += result.matches;
                    limited += usize::from(result.limit_reached);
                }
                assert_eq!(
                    warm_answer, cold_answer,
                    "seed {seed} step {step} after {change}: search {described}"
                );
            }
        }
    }
    let status = index.status();
    eprintln!("{status:#?}");
    // Guards against a vacuous pass: most answers warm, content summaries pruning files,
    // rebuilds exercised, and the queries finding things.
    assert!(status.warm_answers > status.cold_answers * 2, "{status:?}");
    assert!(status.files_read < status.files_considered, "{status:?}");
    assert!(matches as u64 > steps, "only {matches} matches");
    assert!(limited > 10, "only {limited} limited searches");
    assert!(walked as u64 > steps, "only {walked} entries walked");
    if steps >= 1000 {
        assert!(status.rebuilds > 0, "no burst overflowed: {status:?}");
    }
}
