//! Warm against cold `search` and `walk` on generated trees, and what the index costs to build
//! and hold.
//!
//! ```text
//! cargo bench -p jig-index --bench warm_search -- [--files 10000,100000] [--runs 20] [--dir DIR]
//!     [--warm-only] [--only QUERY]
//! ```
//!
//! For each size a tree of source-like files (100 per directory, ~40 lines each, a rare token
//! in one file in a thousand) is generated under `--dir` (default: a temp directory), indexed
//! through `IndexedEnv`, and each query is answered warm and cold (`LocalEnv`) `--runs` times,
//! alternating; every warm answer is checked equal to the cold one. Reported: build time, the
//! index's memory (its estimate and the process's resident growth), and the median latency of
//! each query warm and cold. With `--warm-only` the cold answer is computed once per query (to
//! check the warm one against) and not timed, for profiling the warm path; `--only` runs one
//! query.
#![expect(
    clippy::disallowed_methods,
    reason = "a benchmark generating its tree on the host"
)]
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![expect(clippy::unwrap_used, reason = "a benchmark fails loudly")]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jig_env::{CaseSensitivity, ExecutionEnv, PatternSyntax, SearchRequest, WalkRequest};
use jig_env_local::LocalEnv;
use jig_index::{IndexOptions, IndexedEnv, WarmIndexes};

const VOCABULARY: &[&str] = &[
    "let", "mut", "self", "return", "match", "Some", "None", "Ok", "Err", "value", "index",
    "buffer", "parse", "config", "request", "result", "error", "path", "items", "count", "len",
    "iter", "map", "collect", "into", "from", "clone", "push", "insert", "get", "write", "read",
];

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
}

fn generate(root: &Path, files: usize) {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    for index in 0..files {
        let dir = root.join(format!(
            "d{:03}/s{:02}",
            index / 10_000,
            (index / 100) % 100
        ));
        if index % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let mut text = String::new();
        for line in 0..40 {
            if line % 10 == 0 {
                let _ = writeln!(
                    text,
                    "fn parse_{}(input: &str) -> Result<(), Error> {{",
                    rng.below(500)
                );
            }
            for _ in 0..(3 + rng.below(8)) {
                text.push_str(VOCABULARY[rng.below(VOCABULARY.len())]);
                text.push(' ');
            }
            text.push('\n');
        }
        if index % 1000 == 7 {
            text.push_str("    // the Rare_Needle_Token lives here\n");
        }
        let extension = if index % 3 == 0 { "md" } else { "rs" };
        std::fs::write(dir.join(format!("f{index}.{extension}")), text).unwrap();
    }
}

fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|pages| pages.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[expect(
    clippy::cast_precision_loss,
    reason = "a size shown to a tenth of a MiB"
)]
fn mebibytes(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

enum Query {
    Search(SearchRequest),
    Walk(WalkRequest),
}

fn queries(root: &Path) -> Vec<(&'static str, Query)> {
    let mut literal = SearchRequest::new(root, "rare_needle_token");
    literal.syntax = PatternSyntax::Literal;
    literal.case = CaseSensitivity::Insensitive;
    let regex = SearchRequest::new(root, r"fn\s+parse_49[0-9]\(");
    let mut common = SearchRequest::new(root, "return");
    common.limit = Some(100);
    let mut find = WalkRequest::new(root);
    find.glob = Some("**/*.rs".to_owned());
    // What the `grep` and `find` tools ask when the model gives no limit (100 and 1000).
    let mut regex_tool = regex.clone();
    regex_tool.limit = Some(100);
    let mut find_tool = find.clone();
    find_tool.limit = Some(1000);
    vec![
        ("grep-literal-i", Query::Search(literal)),
        ("grep-regex", Query::Search(regex)),
        ("grep-regex-limit-100", Query::Search(regex_tool)),
        ("grep-common-limit-100", Query::Search(common)),
        ("find-rs", Query::Walk(find)),
        ("find-rs-limit-1000", Query::Walk(find_tool)),
    ]
}

async fn answer(env: &dyn ExecutionEnv, query: &Query) -> (Duration, String) {
    let started = Instant::now();
    let shown = match query {
        Query::Search(request) => format!("{:?}", env.search(request.clone()).await.unwrap()),
        Query::Walk(request) => format!("{:?}", env.walk(request.clone()).await.unwrap()),
    };
    (started.elapsed(), shown)
}

async fn bench(base: &Path, files: usize, runs: usize, warm_only: bool, only: Option<&str>) {
    let root = base.join(format!("tree-{files}"));
    if !root.exists() {
        let started = Instant::now();
        generate(&root, files);
        println!("generated {files} files in {:.1?}", started.elapsed());
    }
    let root = std::fs::canonicalize(&root).unwrap();
    let local: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new());
    let indexes = WarmIndexes::new(IndexOptions::default());
    let warm = IndexedEnv::new(Arc::clone(&local), Arc::clone(&indexes));
    let before = resident_bytes();
    indexes.start(std::slice::from_ref(&root));
    let index = indexes.indexes()[0].clone();
    assert!(index.wait_ready(Duration::from_mins(10)));
    let status = index.status();
    let grown = resident_bytes().saturating_sub(before);
    println!(
        "\n{files} files: index built in {:.0?}; {} entries, {} watches; memory {:.1} MiB (estimate), resident +{:.1} MiB; disk 0",
        status.build_time.unwrap_or_default(),
        status.entries,
        status.watches,
        mebibytes(status.memory_bytes),
        mebibytes(grown),
    );
    println!(
        "{:<24} {:>12} {:>12} {:>8}",
        "query", "cold median", "warm median", "speedup"
    );
    for (name, query) in queries(&root) {
        if only.is_some_and(|only| only != name) {
            continue;
        }
        let (mut cold, mut hot) = (Vec::new(), Vec::new());
        let mut checked = None;
        for run in 0..=runs {
            let (cold_time, cold_answer) = match &checked {
                Some(answer) if warm_only => (Duration::ZERO, String::clone(answer)),
                _ => answer(local.as_ref(), &query).await,
            };
            let (warm_time, warm_answer) = answer(&warm, &query).await;
            assert_eq!(warm_answer, cold_answer, "{name}: warm and cold differ");
            checked = Some(cold_answer);
            // The first run of each warms the page cache and is not counted.
            if run > 0 {
                cold.push(cold_time);
                hot.push(warm_time);
            }
        }
        let (cold, hot) = (median(cold), median(hot));
        println!(
            "{name:<24} {:>12.2?} {:>12.2?} {:>7.1}x",
            cold,
            hot,
            cold.as_secs_f64() / hot.as_secs_f64()
        );
    }
    let status = index.status();
    println!(
        "warm answers {}, cold {}; files read {} of {} considered",
        status.warm_answers, status.cold_answers, status.files_read, status.files_considered
    );
}

fn main() {
    let mut sizes = vec![10_000_usize];
    let mut runs = 20;
    let mut dir: Option<PathBuf> = None;
    let mut warm_only = false;
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--files" => {
                sizes = args
                    .next()
                    .unwrap()
                    .split(',')
                    .map(|size| size.parse().unwrap())
                    .collect();
            }
            "--runs" => runs = args.next().unwrap().parse().unwrap(),
            "--dir" => dir = Some(PathBuf::from(args.next().unwrap())),
            "--warm-only" => warm_only = true,
            "--only" => only = args.next(),
            _ => {}
        }
    }
    let temp = tempfile::tempdir().unwrap();
    let base = dir.unwrap_or_else(|| temp.path().to_path_buf());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    for files in sizes {
        runtime.block_on(bench(&base, files, runs, warm_only, only.as_deref()));
    }
}
