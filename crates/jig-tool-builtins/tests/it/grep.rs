//! The `grep` tool through the registry on `MemoryEnv`: ignore rules inside and outside git,
//! `.git` never searched, hidden and binary files, globs, context merging, long lines, exact
//! limits, order, errors, single files and cancellation. Every text a model reads is a snapshot.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers fail loudly on broken fixtures"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_env::SearchRequest;
use jig_env_memory::MemoryEnv;
use jig_tool::{DynTool, ToolContext, ToolResult};
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const WS: &str = "/ws";

pub(crate) struct Fixture {
    pub(crate) env: Arc<MemoryEnv>,
    pub(crate) ctx: ToolContext,
    registry: jig_tool::ToolRegistry,
}

impl Fixture {
    pub(crate) fn new(files: &[(&str, &[u8])]) -> Self {
        let env = Arc::new(MemoryEnv::new());
        env.add_dir(WS).unwrap();
        for (name, content) in files {
            env.add_file(Path::new(WS).join(name), *content).unwrap();
        }
        let ctx = ToolContext::new(env.clone(), PathBuf::from(WS));
        let registry = builtin_registry(&BuiltinsConfig::default());
        Self { env, ctx, registry }
    }

    fn tool(&self, name: &str) -> Arc<dyn DynTool> {
        self.registry.get(name).expect("registered").clone()
    }

    pub(crate) async fn run(&self, tool: &str, args: Value) -> ToolResult {
        let tool = self.tool(tool);
        let result = tool.run(&self.ctx, args).await;
        crate::support::assert_details_conform(tool.as_ref(), &result);
        result
    }

    async fn grep(&self, args: Value) -> ToolResult {
        self.run("grep", args).await
    }
}

fn text(result: &ToolResult) -> String {
    result.text_content()
}

/// A tree with ignore rules at several levels, hidden files, a binary file and a `.git`.
fn project(with_git: bool) -> Fixture {
    let mut files: Vec<(&str, &[u8])> = vec![
        (".gitignore", b"target/\n*.log\n"),
        (".ignore", b"vendor/\n"),
        (".hidden/secret.txt", b"needle in hidden\n"),
        ("src/main.rs", b"fn main() {\n    needle();\n}\n"),
        ("src/lib.rs", b"// needle\n"),
        ("src/gen/.gitignore", b"*.gen.rs\n!keep.gen.rs\n"),
        ("src/gen/a.gen.rs", b"needle generated\n"),
        ("src/gen/keep.gen.rs", b"needle kept\n"),
        ("target/debug/out.txt", b"needle in target\n"),
        ("vendor/dep.rs", b"needle in vendor\n"),
        ("run.log", b"needle in log\n"),
        ("image.bin", b"needle\0\x01\x02binary\n"),
    ];
    if with_git {
        files.push((".git/config", b"needle in git config\n"));
        files.push((".git/info/exclude", b"excluded.txt\n"));
        files.push(("excluded.txt", b"needle excluded\n"));
    }
    Fixture::new(&files)
}

#[tokio::test]
async fn ignore_rules_apply_the_same_inside_and_outside_git() {
    let outside = project(false);
    let inside = project(true);
    let expected = "\
.hidden/secret.txt:1: needle in hidden
src/gen/keep.gen.rs:1: needle kept
src/lib.rs:1: // needle
src/main.rs:2:     needle();";
    for fixture in [&outside, &inside] {
        let result = fixture.grep(json!({"pattern": "needle"})).await;
        assert!(!result.is_error, "{result:?}");
        assert_eq!(text(&result), expected);
        assert_eq!(result.details, json!({"matches": 4, "files": 4}));
    }
}

#[tokio::test]
async fn include_ignored_searches_ignored_files_but_never_git_or_binaries() {
    let fixture = project(true);
    let result = fixture
        .grep(json!({"pattern": "needle", "includeIgnored": true}))
        .await;
    insta::assert_snapshot!("grep_include_ignored", text(&result));
    assert!(!text(&result).contains(".git/"));
    assert!(!text(&result).contains("image.bin"));
}

#[tokio::test]
async fn glob_filters_files_by_name_or_relative_path() {
    let fixture = project(false);
    let by_name = fixture
        .grep(json!({"pattern": "needle", "glob": "*.rs"}))
        .await;
    assert_eq!(
        text(&by_name),
        "src/gen/keep.gen.rs:1: needle kept\nsrc/lib.rs:1: // needle\nsrc/main.rs:2:     needle();"
    );
    let by_path = fixture
        .grep(json!({"pattern": "needle", "glob": "src/*.rs"}))
        .await;
    assert_eq!(
        text(&by_path),
        "src/lib.rs:1: // needle\nsrc/main.rs:2:     needle();"
    );
    let deep = fixture
        .grep(json!({"pattern": "needle", "glob": "**/gen/*.rs"}))
        .await;
    assert_eq!(text(&deep), "src/gen/keep.gen.rs:1: needle kept");
    // A glob never re-includes an ignored file.
    let ignored = fixture
        .grep(json!({"pattern": "needle", "glob": "*.log"}))
        .await;
    assert_eq!(text(&ignored), "No matches found");
}

#[tokio::test]
async fn context_windows_merge_and_blocks_are_separated() {
    let mut body = String::new();
    for n in 1..=20 {
        let hit = if [3, 5, 15].contains(&n) { " hit" } else { "" };
        let _ = writeln!(body, "line {n}{hit}");
    }
    let fixture = Fixture::new(&[("a.txt", body.as_bytes()), ("b.txt", b"x\nhit\ny\n")]);
    let result = fixture.grep(json!({"pattern": "hit", "context": 2})).await;
    insta::assert_snapshot!("grep_context_merged", text(&result));
    assert_eq!(result.details, json!({"matches": 4, "files": 2}));
}

#[tokio::test]
async fn long_lines_are_cut_with_a_marker_and_a_notice() {
    let long = format!("needle {}\n", "é".repeat(700));
    let fixture = Fixture::new(&[("long.txt", long.as_bytes())]);
    let result = fixture.grep(json!({"pattern": "needle"})).await;
    let output = text(&result);
    let first = output.lines().next().unwrap();
    assert_eq!(
        first.chars().count(),
        "long.txt:1: ".len() + 500 + "... [truncated]".len()
    );
    assert!(first.ends_with("... [truncated]"));
    assert!(
        output.ends_with("\n\n[Some lines truncated to 500 chars. Use read to see full lines]")
    );
    assert_eq!(result.details["linesTruncated"], json!(true));
}

#[tokio::test]
async fn limit_detection_is_exact() {
    let files: Vec<(String, Vec<u8>)> = (0..5)
        .map(|n| (format!("f{n}.txt"), b"hit\nhit\n".to_vec()))
        .collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(name, body)| (name.as_str(), body.as_slice()))
        .collect();
    let fixture = Fixture::new(&refs);

    let exactly = fixture.grep(json!({"pattern": "hit", "limit": 10})).await;
    assert!(
        !text(&exactly).contains("limit reached"),
        "{}",
        text(&exactly)
    );
    assert_eq!(exactly.details, json!({"matches": 10, "files": 5}));

    let one_less = fixture.grep(json!({"pattern": "hit", "limit": 9})).await;
    insta::assert_snapshot!("grep_limit_reached", text(&one_less));
    assert_eq!(
        one_less.details,
        json!({"matches": 9, "files": 5, "matchLimitReached": 9})
    );

    let three = fixture.grep(json!({"pattern": "hit", "limit": 3})).await;
    assert_eq!(
        text(&three),
        "f0.txt:1: hit\nf0.txt:2: hit\nf1.txt:1: hit\n\n\
         [3 matches limit reached. Use limit=6 for more, or refine pattern]"
    );
}

#[tokio::test]
async fn output_is_capped_at_50_kib_with_a_notice() {
    let mut body = String::new();
    for n in 0..3000 {
        let _ = writeln!(body, "needle number {n:05} {}", "x".repeat(40));
    }
    let fixture = Fixture::new(&[("big.txt", body.as_bytes())]);
    let result = fixture
        .grep(json!({"pattern": "needle", "limit": 5000}))
        .await;
    let output = text(&result);
    let (body, notice) = output.rsplit_once("\n\n").unwrap();
    assert!(body.len() <= 50 * 1024);
    assert_eq!(notice, "[50.0KB limit reached]");
    assert_eq!(result.details["truncation"]["truncatedBy"], json!("bytes"));
    assert_eq!(result.details["matches"], json!(3000));
}

#[tokio::test]
async fn results_are_sorted_by_path_then_line() {
    let fixture = Fixture::new(&[
        ("b/z.txt", b"hit\n"),
        ("a.txt", b"x\nhit\nhit\n"),
        ("a/b.txt", b"hit\n"),
        ("B.txt", b"hit\n"),
        ("a-b.txt", b"hit\n"),
    ]);
    let result = fixture.grep(json!({"pattern": "hit"})).await;
    assert_eq!(
        text(&result),
        "B.txt:1: hit\na/b.txt:1: hit\na-b.txt:1: hit\na.txt:2: hit\na.txt:3: hit\nb/z.txt:1: hit"
    );
}

#[tokio::test]
async fn invalid_regex_quotes_the_engine_message() {
    let fixture = Fixture::new(&[("a.txt", b"x\n")]);
    let result = fixture.grep(json!({"pattern": "foo(bar"})).await;
    assert!(result.is_error);
    insta::assert_snapshot!("grep_invalid_regex", text(&result));
    let glob = fixture
        .grep(json!({"pattern": "x", "glob": "src/{a,b"}))
        .await;
    assert!(glob.is_error);
    insta::assert_snapshot!("grep_invalid_glob", text(&glob));
}

#[tokio::test]
async fn pattern_starting_with_a_dash_is_a_pattern() {
    let fixture = Fixture::new(&[("a.txt", b"run --verbose now\n-v\n")]);
    let result = fixture.grep(json!({"pattern": "--verbose"})).await;
    assert_eq!(text(&result), "a.txt:1: run --verbose now");
    let short = fixture
        .grep(json!({"pattern": "-v", "literal": true}))
        .await;
    assert_eq!(text(&short), "a.txt:1: run --verbose now\na.txt:2: -v");
}

#[tokio::test]
async fn literal_and_ignore_case_options() {
    let fixture = Fixture::new(&[("a.txt", b"a.b\naxb\nA.B\n")]);
    let regex = fixture.grep(json!({"pattern": "a.b"})).await;
    assert_eq!(text(&regex), "a.txt:1: a.b\na.txt:2: axb");
    let literal = fixture
        .grep(json!({"pattern": "a.b", "literal": true, "ignoreCase": true}))
        .await;
    assert_eq!(text(&literal), "a.txt:1: a.b\na.txt:3: A.B");
    let anchored = fixture.grep(json!({"pattern": "^A"})).await;
    assert_eq!(text(&anchored), "a.txt:3: A.B");
}

#[tokio::test]
async fn single_file_search_names_the_file_and_ignores_ignore_rules() {
    let fixture = project(false);
    let result = fixture
        .grep(json!({"pattern": "needle", "path": "run.log"}))
        .await;
    assert_eq!(text(&result), "run.log:1: needle in log");
    let nested = fixture
        .grep(json!({"pattern": "needle", "path": "src/main.rs"}))
        .await;
    assert_eq!(text(&nested), "main.rs:2:     needle();");
}

#[tokio::test]
async fn subdirectory_search_keeps_ancestor_ignore_rules() {
    let fixture = project(false);
    let result = fixture
        .grep(json!({"pattern": "needle", "path": "src"}))
        .await;
    assert_eq!(
        text(&result),
        "gen/keep.gen.rs:1: needle kept\nlib.rs:1: // needle\nmain.rs:2:     needle();"
    );
}

#[tokio::test]
async fn symlinked_directories_are_not_followed() {
    let fixture = Fixture::new(&[("inside.txt", b"needle\n")]);
    fixture
        .env
        .add_file("/outside/secret.txt", b"needle outside\n".to_vec())
        .unwrap();
    fixture.env.symlink("/outside", "/ws/link").unwrap();
    fixture
        .env
        .symlink("/outside/secret.txt", "/ws/file-link.txt")
        .unwrap();
    let result = fixture.grep(json!({"pattern": "needle"})).await;
    assert_eq!(text(&result), "inside.txt:1: needle");
}

#[tokio::test]
async fn missing_path_and_outside_path_are_errors() {
    let fixture = Fixture::new(&[("a.txt", b"x\n")]);
    let missing = fixture.grep(json!({"pattern": "x", "path": "nope"})).await;
    assert!(missing.is_error);
    assert_eq!(text(&missing), "Path not found: /ws/nope");
    fixture
        .env
        .add_file("/etc/passwd", b"x\n".to_vec())
        .unwrap();
    let outside = fixture.grep(json!({"pattern": "x", "path": "/etc"})).await;
    assert!(outside.is_error, "{outside:?}");
}

#[tokio::test]
async fn no_matches_and_zero_limit() {
    let fixture = Fixture::new(&[("a.txt", b"x\n")]);
    let none = fixture.grep(json!({"pattern": "absent"})).await;
    assert_eq!(text(&none), "No matches found");
    assert_eq!(none.details, json!({"matches": 0, "files": 0}));
    let zero = fixture.grep(json!({"pattern": "x", "limit": 0})).await;
    assert!(zero.is_error, "limit 0 must be refused: {zero:?}");
}

#[tokio::test]
async fn cancelled_call_is_aborted() {
    let fixture = Fixture::new(&[("a.txt", b"x\n")]);
    fixture.ctx.cancel.cancel();
    let result = fixture
        .tool("grep")
        .execute(&fixture.ctx, json!({"pattern": "x"}))
        .await;
    assert!(
        matches!(result, Err(jig_tool::ToolError::Cancelled)),
        "{result:?}"
    );
}

#[tokio::test]
async fn cancelled_env_search_stops_with_aborted() {
    let fixture = Fixture::new(&[("a.txt", b"x\n"), ("b/c.txt", b"x\n")]);
    let request = SearchRequest::new(WS, "x");
    request.cancel.cancel();
    let error = jig_env::ExecutionEnv::search(fixture.env.as_ref(), request)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), jig_env::ErrorKind::Aborted);
}

#[tokio::test]
async fn description_and_schema() {
    let fixture = Fixture::new(&[]);
    let tool = fixture.tool("grep");
    insta::assert_snapshot!("grep_description", tool.description());
    insta::assert_json_snapshot!("grep_schema", tool.input_schema());
}
