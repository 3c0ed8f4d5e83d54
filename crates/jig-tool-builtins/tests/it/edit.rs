//! The `edit` tool through the registry on `MemoryEnv`: seed 002's cases, every message a model
//! reads (snapshots), encodings and line endings kept byte for byte, and `details`.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers fail loudly"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_env::ExecutionEnv;
use jig_env_memory::MemoryEnv;
use jig_tool::{DynTool, ToolContext, ToolResult};
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const WS: &str = "/ws";

struct Fixture {
    env: Arc<MemoryEnv>,
    ctx: ToolContext,
    tool: Arc<dyn DynTool>,
}

impl Fixture {
    fn new() -> Self {
        let env = Arc::new(MemoryEnv::new());
        env.add_dir(WS).unwrap();
        let ctx = ToolContext::new(env.clone(), PathBuf::from(WS));
        let registry = builtin_registry(&BuiltinsConfig::default());
        let tool = registry.get("edit").expect("edit is registered").clone();
        Self { env, ctx, tool }
    }

    fn with_file(name: &str, content: impl Into<Vec<u8>>) -> Self {
        let fixture = Self::new();
        fixture
            .env
            .add_file(Path::new(WS).join(name), content)
            .unwrap();
        fixture
    }

    async fn run(&self, args: Value) -> ToolResult {
        let result = self.tool.run(&self.ctx, args).await;
        crate::support::assert_details_conform(self.tool.as_ref(), &result);
        result
    }

    fn content(&self, name: &str) -> Vec<u8> {
        self.env.files()[&Path::new(WS).join(name)].clone()
    }
}

fn text(result: &ToolResult) -> String {
    result.text_content()
}

/// Runs a call expected to fail and checks the file did not change; returns the message.
async fn failing(fixture: &Fixture, name: &str, args: Value) -> String {
    let before = fixture.env.files();
    let result = fixture.run(args).await;
    assert!(result.is_error, "expected an error, got {result:?}");
    assert_eq!(
        fixture.env.files(),
        before,
        "a failed edit must leave every file unchanged"
    );
    let _ = name;
    text(&result)
}

#[tokio::test]
async fn seed_002_status_draft_becomes_done_with_legacy_arguments() {
    let fixture = Fixture::with_file("task.txt", "status: draft\ncheck: pending");
    let result = fixture
        .run(json!({"path": "task.txt", "oldText": "status: draft", "newText": "status: done"}))
        .await;
    assert!(!result.is_error, "{result:?}");
    insta::assert_snapshot!(text(&result), @"Successfully replaced 1 block(s) in task.txt.");
    assert_eq!(fixture.content("task.txt"), b"status: done\ncheck: pending");
    assert_eq!(result.details["oldBytes"], 28);
    assert_eq!(result.details["newBytes"], 27);
    assert_eq!(result.details["firstChangedLine"], 1);
    assert!(result.details.get("fuzzy").is_none());
    insta::assert_snapshot!(result.details["diff"].as_str().unwrap(), @r"
    -1 status: draft
    +1 status: done
     2 check: pending
    ");
    insta::assert_snapshot!(result.details["patch"].as_str().unwrap(), @r"
    --- task.txt
    +++ task.txt
    @@ -1,2 +1,2 @@
    -status: draft
    +status: done
     check: pending
    \ No newline at end of file
    ");
}

#[tokio::test]
async fn seed_002_empty_old_text_fails() {
    let fixture = Fixture::with_file("task.txt", "status: draft\n");
    let message = failing(
        &fixture,
        "task.txt",
        json!({"path": "task.txt", "edits": [{"oldText": "", "newText": "x"}]}),
    )
    .await;
    insta::assert_snapshot!(message, @"oldText must not be empty in task.txt. Give the exact text to replace; to insert, include a neighbouring line in oldText and repeat it in newText.");
}

#[tokio::test]
async fn seed_002_zero_matches_shows_the_closest_region() {
    let fixture = Fixture::with_file(
        "task.txt",
        "# Tasks\n\nstatus: draft\ncheck: pending\nowner: ana\n",
    );
    let message = failing(
        &fixture,
        "task.txt",
        json!({"path": "task.txt", "edits": [{"oldText": "status: drafts\ncheck: pending", "newText": "x"}]}),
    )
    .await;
    insta::assert_snapshot!(message);
}

#[tokio::test]
async fn seed_002_same_same_is_ambiguous_and_unchanged() {
    let fixture = Fixture::with_file("task.txt", "same same");
    let message = failing(
        &fixture,
        "task.txt",
        json!({"path": "task.txt", "edits": [{"oldText": "same", "newText": "X"}]}),
    )
    .await;
    insta::assert_snapshot!(message, @"Found 2 occurrences of the text in task.txt (line 1 ×2). The text must be unique. Please provide more context to make it unique.");
    assert_eq!(fixture.content("task.txt"), b"same same");
}

#[tokio::test]
async fn seed_002_failure_in_the_middle_of_a_batch_changes_nothing() {
    let fixture = Fixture::with_file("task.txt", "one\ntwo\nthree\n");
    let message = failing(
        &fixture,
        "task.txt",
        json!({"path": "task.txt", "edits": [
            {"oldText": "one", "newText": "1"},
            {"oldText": "zwei", "newText": "2"},
            {"oldText": "three", "newText": "3"}
        ]}),
    )
    .await;
    insta::assert_snapshot!(message);
    assert_eq!(fixture.content("task.txt"), b"one\ntwo\nthree\n");
}

#[tokio::test]
async fn overlapping_occurrences_count_as_ambiguous() {
    let fixture = Fixture::with_file("a.txt", "aaa\n");
    let message = failing(
        &fixture,
        "a.txt",
        json!({"path": "a.txt", "edits": [{"oldText": "aa", "newText": "b"}]}),
    )
    .await;
    insta::assert_snapshot!(message, @"Found 2 occurrences of the text in a.txt (line 1 ×2). The text must be unique. Please provide more context to make it unique.");
}

#[tokio::test]
async fn many_occurrences_list_lines_in_a_batch() {
    let content: String = (0..30)
        .map(|i| format!("x = {i}; // todo"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let fixture = Fixture::with_file("a.rs", content);
    let message = failing(
        &fixture,
        "a.rs",
        json!({"path": "a.rs", "edits": [{"oldText": "x = 1;", "newText": "y"}, {"oldText": "// todo", "newText": ""}]}),
    )
    .await;
    insta::assert_snapshot!(message);
}

#[tokio::test]
async fn empty_edits_is_an_error_that_says_so() {
    let fixture = Fixture::with_file("a.txt", "a");
    let message = failing(&fixture, "a.txt", json!({"path": "a.txt", "edits": []})).await;
    insta::assert_snapshot!(message, @"Edit tool input is invalid. edits must contain at least one replacement.");
}

#[tokio::test]
async fn overlap_names_both_indexes() {
    let fixture = Fixture::with_file("a.txt", "alpha\nbeta\ngamma\n");
    let message = failing(
        &fixture,
        "a.txt",
        json!({"path": "a.txt", "edits": [{"oldText": "beta\ngamma", "newText": "x"}, {"oldText": "alpha\nbeta", "newText": "y"}]}),
    )
    .await;
    insta::assert_snapshot!(message);
}

#[tokio::test]
async fn no_change_is_an_error() {
    let fixture = Fixture::with_file("a.txt", "alpha\n");
    let message = failing(
        &fixture,
        "a.txt",
        json!({"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "alpha"}]}),
    )
    .await;
    insta::assert_snapshot!(message, @"No changes made to a.txt. The replacement produced identical content.");
    let message = failing(
        &fixture,
        "a.txt",
        json!({"path": "a.txt", "edits": [{"oldText": "al", "newText": "al"}, {"oldText": "pha", "newText": "pha"}]}),
    )
    .await;
    insta::assert_snapshot!(message, @"No changes made to a.txt. The replacements produced identical content.");
}

#[tokio::test]
async fn file_problems_are_one_clear_sentence() {
    let fixture = Fixture::with_file("ro.txt", "x\n");
    fixture.env.add_dir("/ws/dir").unwrap();
    fixture.env.add_file("/outside/secret.txt", "x\n").unwrap();
    fixture.env.set_mode("/ws/ro.txt", 0o444).unwrap();
    let edit = |path: &str| json!({"path": path, "edits": [{"oldText": "x", "newText": "y"}]});
    let mut messages = Vec::new();
    for path in [
        "missing.txt",
        "dir",
        "ro.txt",
        "../outside/secret.txt",
        "/outside/secret.txt",
    ] {
        messages.push(format!(
            "{path}: {}",
            failing(&fixture, path, edit(path)).await
        ));
    }
    insta::assert_snapshot!(messages.join("\n"));
    assert_eq!(fixture.content("ro.txt"), b"x\n");
}

#[tokio::test]
async fn binary_and_undecodable_files_are_refused_untouched() {
    let fixture = Fixture::new();
    fixture
        .env
        .add_file("/ws/nul.bin", b"x\0y".to_vec())
        .unwrap();
    fixture
        .env
        .add_file("/ws/latin1.txt", b"caf\xE9 x\n".to_vec())
        .unwrap();
    fixture
        .env
        .add_file("/ws/bad16.txt", b"\xFF\xFEx".to_vec())
        .unwrap();
    let edit = |path: &str| json!({"path": path, "edits": [{"oldText": "x", "newText": "y"}]});
    let mut messages = Vec::new();
    for path in ["nul.bin", "latin1.txt", "bad16.txt"] {
        messages.push(format!(
            "{path}: {}",
            failing(&fixture, path, edit(path)).await
        ));
    }
    insta::assert_snapshot!(messages.join("\n"));
}

#[tokio::test]
async fn bom_and_crlf_are_kept_and_lf_old_text_spans_lines() {
    let fixture = Fixture::with_file(
        "w.txt",
        b"\xEF\xBB\xBFfirst\r\nsecond\r\nthird\r\n".to_vec(),
    );
    let result = fixture
        .run(json!({"path": "w.txt", "edits": [{"oldText": "first\nsecond", "newText": "1st\n2nd\n2.5"}]}))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        fixture.content("w.txt"),
        b"\xEF\xBB\xBF1st\r\n2nd\r\n2.5\r\nthird\r\n"
    );
}

#[tokio::test]
async fn mixed_endings_outside_the_span_survive() {
    let original = b"a\r\nb\nc\rd\r\ne  \n\tf\xC2\xA0\n".to_vec();
    let fixture = Fixture::with_file("m.txt", original);
    let result = fixture
        .run(json!({"path": "m.txt", "edits": [{"oldText": "c", "newText": "C"}]}))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        fixture.content("m.txt"),
        b"a\r\nb\nC\rd\r\ne  \n\tf\xC2\xA0\n"
    );
}

#[tokio::test]
async fn utf16_files_round_trip_in_their_encoding() {
    for big_endian in [false, true] {
        let encode = |s: &str| -> Vec<u8> {
            let mut out = if big_endian {
                vec![0xFE, 0xFF]
            } else {
                vec![0xFF, 0xFE]
            };
            for unit in s.encode_utf16() {
                out.extend(if big_endian {
                    unit.to_be_bytes()
                } else {
                    unit.to_le_bytes()
                });
            }
            out
        };
        let fixture = Fixture::with_file("u.txt", encode("héllo\r\nwörld\r\n"));
        let result = fixture
            .run(json!({"path": "u.txt", "edits": [{"oldText": "wörld", "newText": "wélt"}]}))
            .await;
        assert!(!result.is_error, "{result:?}");
        assert_eq!(fixture.content("u.txt"), encode("héllo\r\nwélt\r\n"));
    }
}

#[tokio::test]
async fn new_text_is_inserted_literally() {
    let fixture = Fixture::with_file("a.js", "let s = x;\n");
    let result = fixture
        .run(json!({"path": "a.js", "edits": [{"oldText": "x", "newText": "'$&' + \"$1\" + '$$' + '\\n'"}]}))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        fixture.content("a.js"),
        b"let s = '$&' + \"$1\" + '$$' + '\\n';\n"
    );
}

#[tokio::test]
async fn tolerant_matches_name_their_tier_and_keep_other_bytes() {
    let cases = [
        (
            "trailing",
            "keep \t\nvalue = 1   \nnext\n",
            "value = 1\nnext",
            "value = 2\nnext",
            "keep \t\nvalue = 2\nnext\n",
        ),
        (
            "unicode",
            "say \u{201C}hi\u{201D}\u{00A0}\u{2014} ok\nkeep\u{2019}\n",
            "say \"hi\" - ok",
            "said",
            "said\nkeep\u{2019}\n",
        ),
        (
            "indentation",
            "fn f() {\n\tif a {\n\t\tb();\n\t}\n}\n",
            "if a {\n    b();\n}",
            "if a {\n    c();\n}",
            "fn f() {\n\tif a {\n\t\tc();\n\t}\n}\n",
        ),
        (
            "line-numbers",
            "a\nstatus: draft\nb\n",
            "     2│ status: draft",
            "     2│ status: done",
            "a\nstatus: done\nb\n",
        ),
    ];
    let mut report = Vec::new();
    for (name, content, old, new, expected) in cases {
        let fixture = Fixture::with_file("f.txt", content);
        let result = fixture
            .run(json!({"path": "f.txt", "edits": [{"oldText": old, "newText": new}]}))
            .await;
        assert!(!result.is_error, "{name}: {result:?}");
        assert_eq!(
            String::from_utf8(fixture.content("f.txt")).unwrap(),
            expected,
            "{name}"
        );
        report.push(format!(
            "{name} [{}]: {}",
            result.details["fuzzy"].as_str().unwrap(),
            text(&result)
        ));
    }
    insta::assert_snapshot!(report.join("\n"));
}

fn twenty_lines() -> String {
    (1..=20)
        .map(|n| format!("line {n}"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

// A model copying from read numbers newText by the lines it will occupy: the gutter is read's,
// never the file's text.
#[tokio::test]
async fn read_gutter_in_new_text_numbered_from_elsewhere_is_stripped() {
    let fixture = Fixture::with_file("f.txt", twenty_lines());
    let result = fixture
        .run(json!({"path": "f.txt", "edits": [
            {"oldText": "   3│ line 3", "newText": "   3│ line 3\n   4│ new a\n   5│ new b"},
            {"oldText": "  10│ line 10", "newText": "  12│ LINE TEN"},
        ]}))
        .await;
    assert!(!result.is_error, "{}", text(&result));
    let expected = twenty_lines()
        .replace("line 3\n", "line 3\nnew a\nnew b\n")
        .replace("line 10\n", "LINE TEN\n");
    assert_eq!(
        String::from_utf8(fixture.content("f.txt")).unwrap(),
        expected
    );

    let fixture = Fixture::with_file("f.txt", twenty_lines());
    let result = fixture
        .run(json!({"path": "f.txt", "edits": [{"oldText": "  10│ line 10", "newText": "  12│ LINE TEN"}]}))
        .await;
    assert!(!result.is_error, "{}", text(&result));
    assert_eq!(
        String::from_utf8(fixture.content("f.txt")).unwrap(),
        twenty_lines().replace("line 10\n", "LINE TEN\n")
    );
}

#[tokio::test]
async fn a_partial_read_gutter_in_new_text_is_refused() {
    let fixture = Fixture::with_file("f.txt", twenty_lines());
    let gap = failing(
        &fixture,
        "f.txt",
        json!({"path": "f.txt", "edits": [{"oldText": "  10│ line 10", "newText": "  12│ LINE TEN\n  14│ eleven"}]}),
    )
    .await;
    let missing = failing(
        &fixture,
        "f.txt",
        json!({"path": "f.txt", "edits": [
            {"oldText": "   3│ line 3", "newText": "   3│ line 3\n   4│ new a"},
            {"oldText": "  10│ line 10", "newText": "  11│ LINE TEN\neleven"},
        ]}),
    )
    .await;
    insta::assert_snapshot!([gap, missing].join("\n---\n"));
}

#[tokio::test]
async fn tolerant_ambiguity_and_reindent_failures_are_explained() {
    let fixture = Fixture::with_file("f.txt", "x = 1  \ny\nx = 1\t\ny\n\tif a {\n\t\tb();\n\t}\n");
    let ambiguous = failing(
        &fixture,
        "f.txt",
        json!({"path": "f.txt", "edits": [{"oldText": "x = 1 \ny", "newText": "z"}]}),
    )
    .await;
    let reindent = failing(
        &fixture,
        "f.txt",
        json!({"path": "f.txt", "edits": [{"oldText": "    if a {\n        b();\n    }", "newText": "  if a {\n   b();\n  }"}]}),
    )
    .await;
    let numbers = failing(
        &fixture,
        "f.txt",
        json!({"path": "f.txt", "edits": [{"oldText": "   2│ y\n   3│ x = 1", "newText": "   2│ y\nz = 2"}]}),
    )
    .await;
    let stale = failing(
        &fixture,
        "f.txt",
        json!({"path": "f.txt", "edits": [{"oldText": "   9│ y\n  10│ x = 1", "newText": "z"}]}),
    )
    .await;
    let edge_fixture = Fixture::with_file("f.txt", "a  \nb\n\t\t\nc\n");
    let edge = failing(
        &edge_fixture,
        "f.txt",
        json!({"path": "f.txt", "edits": [{"oldText": "a\nb\n", "newText": "x\n"}]}),
    )
    .await;
    insta::assert_snapshot!([ambiguous, reindent, numbers, stale, edge].join("\n---\n"));
}

#[tokio::test]
async fn exact_unique_match_is_not_rejected_by_whitespace_lookalikes() {
    let fixture = Fixture::with_file("f.txt", "foo\nfoo  \n");
    let result = fixture
        .run(json!({"path": "f.txt", "edits": [{"oldText": "foo\n", "newText": "bar\n"}]}))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(fixture.content("f.txt"), b"bar\nfoo  \n");
}

#[tokio::test]
async fn multi_edit_details() {
    let content: String = (1..=30)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let fixture = Fixture::with_file("f.txt", content);
    let result = fixture
        .run(json!({"path": "f.txt", "edits": [
            {"oldText": "line 25\n", "newText": ""},
            {"oldText": "line 3\n", "newText": "line 3\nline 3.5\n"},
            {"oldText": "line 7", "newText": "LINE 7"}
        ]}))
        .await;
    assert!(!result.is_error, "{result:?}");
    insta::assert_snapshot!(text(&result), @"Successfully replaced 3 block(s) in f.txt.");
    assert_eq!(result.details["firstChangedLine"], 4);
    insta::assert_snapshot!("multi_edit_diff", result.details["diff"].as_str().unwrap());
    insta::assert_snapshot!(
        "multi_edit_patch",
        result.details["patch"].as_str().unwrap()
    );
}

#[tokio::test]
async fn writes_through_a_final_symlink() {
    let fixture = Fixture::with_file("real.txt", "a\n");
    fixture.env.symlink("real.txt", "/ws/link.txt").unwrap();
    let result = fixture
        .run(json!({"path": "link.txt", "edits": [{"oldText": "a", "newText": "b"}]}))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(fixture.content("real.txt"), b"b\n");
    let info = fixture
        .env
        .file_info(Path::new("/ws/link.txt"))
        .await
        .unwrap();
    assert_eq!(info.kind, jig_env::FileKind::Symlink);
}

#[test]
fn schema_and_description() {
    let registry = builtin_registry(&BuiltinsConfig::default());
    let tool = registry.get("edit").unwrap();
    insta::assert_json_snapshot!("edit_schema", tool.input_schema());
    insta::assert_snapshot!("edit_description", tool.description());
}

#[tokio::test]
async fn batch_messages_name_the_edit_index() {
    let fixture = Fixture::with_file("a.txt", format!("{}\nend\n", "ab".repeat(1500)));
    let empty = failing(
        &fixture,
        "a.txt",
        json!({"path": "a.txt", "edits": [{"oldText": "end", "newText": "x"}, {"oldText": "", "newText": "y"}]}),
    )
    .await;
    let saturated = failing(
        &fixture,
        "a.txt",
        json!({"path": "a.txt", "edits": [{"oldText": "ab", "newText": "x"}]}),
    )
    .await;
    insta::assert_snapshot!(format!("{empty}\n---\n{saturated}"));
}

#[tokio::test]
async fn text_with_nothing_similar_shows_the_first_lines_of_the_file() {
    let mut content = format!("{}\n", "x".repeat(300));
    for n in 1..=30 {
        content += "line number ";
        content += &n.to_string();
        content += "\n";
    }
    let fixture = Fixture::with_file("long.txt", content);
    let message = failing(
        &fixture,
        "long.txt",
        json!({"path": "long.txt", "edits": [{"oldText": "zzz qqq", "newText": "a"}]}),
    )
    .await;
    insta::assert_snapshot!(message);
    let fixture = Fixture::with_file("empty.txt", "");
    let message = failing(
        &fixture,
        "empty.txt",
        json!({"path": "empty.txt", "edits": [{"oldText": "zzz qqq", "newText": "a"}]}),
    )
    .await;
    assert!(
        message.ends_with("before editing. The file is empty."),
        "{message}"
    );
}
