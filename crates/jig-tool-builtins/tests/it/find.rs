//! The `find` tool through the registry on `MemoryEnv`: glob semantics, directories, order,
//! ignore rules, limits and errors.

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::grep::Fixture;

fn tree() -> Fixture {
    Fixture::new(&[
        (".gitignore", b"build/\n"),
        (".github/workflows/ci.yml", b""),
        ("Cargo.toml", b""),
        ("src/main.rs", b""),
        ("src/lib.rs", b""),
        ("src/util/mod.rs", b""),
        ("src/util/strings.rs", b""),
        ("tests/it.rs", b""),
        ("build/out.rs", b""),
        ("docs/guide.md", b""),
        (".git/HEAD", b""),
    ])
}

async fn find(fixture: &Fixture, args: serde_json::Value) -> (String, serde_json::Value, bool) {
    let result = fixture.run("find", args).await;
    (result.text_content(), result.details, result.is_error)
}

#[tokio::test]
async fn pattern_without_slash_matches_names_at_any_depth() {
    let fixture = tree();
    let (text, details, _) = find(&fixture, json!({"pattern": "*.rs"})).await;
    assert_eq!(
        text,
        "src/lib.rs\nsrc/main.rs\nsrc/util/mod.rs\nsrc/util/strings.rs\ntests/it.rs"
    );
    assert_eq!(details, json!({"results": 5}));
}

#[tokio::test]
async fn pattern_with_slash_matches_the_relative_path() {
    let fixture = tree();
    let (text, _, _) = find(&fixture, json!({"pattern": "src/*.rs"})).await;
    assert_eq!(text, "src/lib.rs\nsrc/main.rs");
    let (text, _, _) = find(&fixture, json!({"pattern": "src/**/*.rs"})).await;
    assert_eq!(
        text,
        "src/lib.rs\nsrc/main.rs\nsrc/util/mod.rs\nsrc/util/strings.rs"
    );
    let (text, _, _) = find(&fixture, json!({"pattern": "**/*.yml"})).await;
    assert_eq!(text, ".github/workflows/ci.yml");
}

#[tokio::test]
async fn directories_have_a_trailing_slash_and_sort_before_their_contents() {
    let fixture = tree();
    let (text, _, _) = find(&fixture, json!({"pattern": "*"})).await;
    insta::assert_snapshot!("find_everything", text);
    let (text, _, _) = find(&fixture, json!({"pattern": "util"})).await;
    assert_eq!(text, "src/util/");
}

#[tokio::test]
async fn ignored_paths_are_listed_only_on_request() {
    let fixture = tree();
    let (text, _, _) = find(&fixture, json!({"pattern": "out.rs"})).await;
    assert_eq!(text, "No files found matching pattern");
    let (text, _, _) = find(
        &fixture,
        json!({"pattern": "out.rs", "includeIgnored": true}),
    )
    .await;
    assert_eq!(text, "build/out.rs");
    let (text, _, _) = find(&fixture, json!({"pattern": "HEAD", "includeIgnored": true})).await;
    assert_eq!(text, "No files found matching pattern");
}

#[tokio::test]
async fn limit_is_exact_and_the_notice_suggests_more() {
    let fixture = tree();
    let (text, details, _) = find(&fixture, json!({"pattern": "*.rs", "limit": 5})).await;
    assert!(!text.contains("limit reached"));
    assert_eq!(details, json!({"results": 5}));
    let (text, details, _) = find(&fixture, json!({"pattern": "*.rs", "limit": 2})).await;
    insta::assert_snapshot!("find_limit_reached", text);
    assert_eq!(details, json!({"results": 2, "resultLimitReached": 2}));
}

#[tokio::test]
async fn search_below_a_subdirectory_is_relative_to_it() {
    let fixture = tree();
    let (text, _, _) = find(&fixture, json!({"pattern": "*.rs", "path": "src/util"})).await;
    assert_eq!(text, "mod.rs\nstrings.rs");
}

#[tokio::test]
async fn errors_are_clear() {
    let fixture = tree();
    let (text, _, is_error) = find(&fixture, json!({"pattern": "src/{a,b"})).await;
    assert!(is_error);
    insta::assert_snapshot!("find_invalid_glob", text);
    let (text, _, is_error) =
        find(&fixture, json!({"pattern": "*.rs", "path": "Cargo.toml"})).await;
    assert!(is_error);
    assert_eq!(
        text,
        "Not a directory: /ws/Cargo.toml. find searches a directory; use read for a single file."
    );
    let (text, _, is_error) = find(&fixture, json!({"pattern": "*.rs", "path": "nope"})).await;
    assert!(is_error);
    assert_eq!(text, "Path not found: /ws/nope");
    let (_, _, is_error) = find(&fixture, json!({"pattern": "  "})).await;
    assert!(is_error);
}

#[tokio::test]
async fn output_is_capped_at_50_kib() {
    let names: Vec<String> = (0..2000)
        .map(|n| format!("dir/{}-{n:05}.txt", "x".repeat(40)))
        .collect();
    let files: Vec<(&str, &[u8])> = names.iter().map(|name| (name.as_str(), &b""[..])).collect();
    let fixture = Fixture::new(&files);
    let (text, details, _) = find(&fixture, json!({"pattern": "*.txt", "limit": 5000})).await;
    let (body, notice) = text.rsplit_once("\n\n").unwrap();
    assert!(body.len() <= 50 * 1024);
    assert_eq!(notice, "[50.0KB limit reached]");
    assert_eq!(details["results"], json!(2000));
    assert_eq!(details["truncation"]["truncatedBy"], json!("bytes"));
}

#[tokio::test]
async fn description_and_schema() {
    let fixture = tree();
    let registry =
        jig_tool_builtins::builtin_registry(&jig_tool_builtins::BuiltinsConfig::default());
    let tool = registry.get("find").unwrap();
    insta::assert_snapshot!("find_description", tool.description());
    insta::assert_json_snapshot!("find_schema", tool.input_schema());
    drop(fixture);
}
