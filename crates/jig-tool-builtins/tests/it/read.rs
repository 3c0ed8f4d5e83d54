//! `read` on `MemoryEnv`: the seed walk-through, paging and its notices, encodings, binaries,
//! path spellings, and every error text (snapshots).

use std::fmt::Write as _;

use insta::{assert_json_snapshot, assert_snapshot};
use jig_tool_builtins::{BuiltinsConfig, ReadConfig};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::Workspace;

#[tokio::test]
async fn seed_task_file_reads_with_a_line_number() {
    let ws = Workspace::new();
    ws.file("task.txt", "status: draft\n");
    let result = ws.call("read", json!({"path": "task.txt"})).await;
    assert_eq!(result.text_content(), "   1│ status: draft");
    assert_json_snapshot!("read_seed_result", result);
}

#[tokio::test]
async fn seed_two_line_file_pages_with_offset_2() {
    let ws = Workspace::new();
    ws.file("two.txt", "first\nsecond\n");
    let page1 = ws
        .call("read", json!({"path": "two.txt", "limit": 1}))
        .await;
    assert_eq!(
        page1.text_content(),
        "   1│ first\n\n[1 more lines in file. Use offset=2 to continue.]"
    );
    assert_eq!(page1.details["nextOffset"], 2);
    assert_eq!(page1.details["truncated"], false);
    assert_json_snapshot!("read_limit_details", page1.details);
    let page2 = ws
        .call("read", json!({"path": "two.txt", "offset": 2, "limit": 1}))
        .await;
    assert_eq!(page2.text_content(), "   2│ second");
    assert!(page2.details.get("nextOffset").is_none());
}

#[tokio::test]
async fn offset_past_the_end_names_the_total() {
    let ws = Workspace::new();
    ws.file("two.txt", "a\nb\n");
    let text = ws
        .err("read", json!({"path": "two.txt", "offset": 9}))
        .await;
    assert_eq!(text, "Offset 9 is beyond end of file (2 lines total)");
}

#[tokio::test]
async fn offset_and_limit_must_be_integers_of_at_least_one() {
    let ws = Workspace::new();
    ws.file("a.txt", "a\n");
    assert_snapshot!(
        "read_offset_zero",
        ws.err("read", json!({"path": "a.txt", "offset": 0})).await
    );
    assert_snapshot!(
        "read_limit_fraction",
        ws.err("read", json!({"path": "a.txt", "limit": 1.5})).await
    );
    // Numeric strings are accepted.
    assert_eq!(
        ws.ok("read", json!({"path": "a.txt", "offset": "1"})).await,
        "   1│ a"
    );
}

#[tokio::test]
async fn a_final_line_without_newline_counts_and_a_trailing_newline_does_not() {
    let ws = Workspace::new();
    ws.file("a.txt", "a\nb");
    ws.file("b.txt", "a\nb\n");
    for name in ["a.txt", "b.txt"] {
        let result = ws.call("read", json!({"path": name})).await;
        assert_eq!(result.text_content(), "   1│ a\n   2│ b");
        assert_eq!(result.details["lines"], 2);
    }
}

#[tokio::test]
async fn an_empty_file_reads_as_nothing_and_says_so_in_details() {
    let ws = Workspace::new();
    ws.file("empty.txt", "");
    assert_eq!(ws.ok("read", json!({"path": "empty.txt"})).await, "");
    let result = ws.call("read", json!({"path": "empty.txt"})).await;
    assert_eq!(result.details["empty"], true);
    assert_eq!(result.details["lines"], 0);
    let text = ws
        .err("read", json!({"path": "empty.txt", "offset": 2}))
        .await;
    assert_eq!(text, "Offset 2 is beyond end of file (0 lines total)");
}

#[tokio::test]
async fn the_line_budget_cuts_a_page_with_a_notice() {
    let config = BuiltinsConfig {
        read: ReadConfig::default().with_limits(3, 51200),
        ..Default::default()
    };
    let ws = Workspace::with_config(&config);
    let content: String = (1..=10).fold(String::new(), |acc, n| acc + &format!("line {n}\n"));
    ws.file("ten.txt", content);
    let result = ws.call("read", json!({"path": "ten.txt"})).await;
    assert_snapshot!("read_lines_notice", result.text_content());
    assert_json_snapshot!("read_lines_details", result.details);
    // A caller limit above the page bound is still cut by the bound (truncation).
    let result = ws
        .call("read", json!({"path": "ten.txt", "limit": 5}))
        .await;
    assert_eq!(result.details["truncatedBy"], "lines");
    assert_eq!(result.details["endLine"], 3);
}

#[tokio::test]
async fn the_byte_budget_counts_prefixes_and_the_notice() {
    let ws = Workspace::new();
    let line = "x".repeat(99);
    let content = format!("{line}\n").repeat(3000);
    ws.file("big.txt", content);
    let result = ws.call("read", json!({"path": "big.txt"})).await;
    let text = result.text_content();
    assert!(text.len() <= 51200, "{}", text.len());
    let end = result.details["endLine"].as_u64().unwrap();
    assert_eq!(
        text.rsplit("\n\n").next().unwrap(),
        format!(
            "[Showing lines 1-{end} of 3000 (50.0KB limit). Use offset={} to continue.]",
            end + 1
        )
    );
    assert_eq!(result.details["truncatedBy"], "bytes");
    assert_eq!(result.details["nextOffset"], end + 1);
    // Only whole lines, and as many as fit: one more would not.
    assert_eq!(text.lines().filter(|l| l.contains('│')).count() as u64, end);
    // (The reserve for the notice assumes the widest numbers, a few bytes of slack.)
    assert!(text.len() + 1 + "   1│ ".len() + line.len() > 51200 - 8);
}

#[tokio::test]
async fn a_line_longer_than_the_byte_limit_shows_its_beginning() {
    let ws = Workspace::new();
    let long = "é".repeat(60_000);
    ws.file("long.txt", format!("short\n{long}\nafter\n"));
    let result = ws
        .call("read", json!({"path": "long.txt", "offset": 2}))
        .await;
    let text = result.text_content();
    assert!(text.len() <= 51200);
    assert!(text.starts_with("   2│ éé"));
    let notice = text.rsplit("\n\n").next().unwrap();
    assert_snapshot!("read_long_line_notice", notice);
    assert_eq!(result.details["nextOffset"], 3);
    assert_eq!(result.details["truncated"], true);
    // The first page stops before the long line with the byte notice.
    let first = ws.call("read", json!({"path": "long.txt"})).await;
    assert_eq!(
        first.text_content(),
        "   1│ short\n\n[Showing lines 1-1 of 3 (50.0KB limit). Use offset=2 to continue.]"
    );
    // A long last line: nothing more to read.
    ws.file("last.txt", long.clone());
    let last = ws.call("read", json!({"path": "last.txt"})).await;
    assert_snapshot!(
        "read_long_last_line_notice",
        last.text_content().rsplit("\n\n").next().unwrap()
    );
    assert!(last.details.get("nextOffset").is_none());
}

#[tokio::test]
async fn the_number_column_widens_with_the_largest_number_on_the_page() {
    let ws = Workspace::new();
    let content = (1..=10_001).fold(String::new(), |acc, n| acc + &n.to_string() + "\n");
    ws.file("many.txt", content);
    let text = ws
        .ok(
            "read",
            json!({"path": "many.txt", "offset": 9999, "limit": 3}),
        )
        .await;
    assert_eq!(text, " 9999│ 9999\n10000│ 10000\n10001│ 10001");
}

#[tokio::test]
async fn crlf_bom_and_utf16_are_shown_as_text() {
    let ws = Workspace::new();
    ws.file("crlf.txt", "a\r\nb\r\n");
    ws.file("bom.txt", "\u{FEFF}first\nsecond\n");
    let mut le = vec![0xFF, 0xFE];
    let mut be = vec![0xFE, 0xFF];
    for unit in "héllo\r\nwörld\n".encode_utf16() {
        le.extend_from_slice(&unit.to_le_bytes());
        be.extend_from_slice(&unit.to_be_bytes());
    }
    ws.file("le.txt", le);
    ws.file("be.txt", be);
    assert_eq!(
        ws.ok("read", json!({"path": "crlf.txt"})).await,
        "   1│ a\n   2│ b"
    );
    assert_eq!(
        ws.ok("read", json!({"path": "bom.txt"})).await,
        "   1│ first\n   2│ second"
    );
    for name in ["le.txt", "be.txt"] {
        assert_eq!(
            ws.ok("read", json!({"path": name})).await,
            "   1│ héllo\n   2│ wörld"
        );
        let paged = ws.ok("read", json!({"path": name, "offset": 2})).await;
        assert_eq!(paged, "   2│ wörld");
    }
}

#[tokio::test]
async fn binary_files_are_described_not_dumped() {
    let ws = Workspace::new();
    ws.file("blob.bin", b"abc\0def\x01\x02".to_vec());
    ws.file("latin1.txt", b"caf\xe9 au lait\n".to_vec());
    let mut elf = b"\x7FELF\x02\x01\x01".to_vec();
    elf.extend_from_slice(&[0; 64]);
    ws.file("tool", elf);
    let blob = ws.call("read", json!({"path": "blob.bin"})).await;
    assert!(!blob.is_error);
    assert_snapshot!("read_binary_unknown", blob.text_content());
    assert_json_snapshot!("read_binary_details", blob.details);
    assert_snapshot!(
        "read_binary_not_utf8",
        ws.ok("read", json!({"path": "latin1.txt"})).await
    );
    assert_snapshot!(
        "read_binary_elf",
        ws.ok("read", json!({"path": "tool"})).await
    );
}

#[tokio::test]
async fn missing_files_and_directories_are_clear_errors() {
    let ws = Workspace::new();
    ws.dir("src");
    assert_snapshot!(
        "read_not_found",
        ws.err("read", json!({"path": "nope.txt"})).await
    );
    assert_snapshot!(
        "read_directory",
        ws.err("read", json!({"path": "src"})).await
    );
    assert_snapshot!("read_empty_path", ws.err("read", json!({"path": ""})).await);
    assert_snapshot!("read_missing_path", ws.err("read", json!({})).await);
}

#[tokio::test]
async fn path_spellings_models_use_resolve() {
    let ws = Workspace::new();
    ws.file("my notes.txt", "spaced\n");
    ws.file("home/todo.txt", "home\n");
    ws.file("sub/a.txt", "sub\n");
    for path in [
        "@my notes.txt",
        "my\u{00A0}notes.txt",
        "my\u{2003}notes.txt",
        "my\u{3000}notes.txt",
        "/ws/my notes.txt",
        "file:///ws/my%20notes.txt",
        "./sub/../my notes.txt",
    ] {
        assert_eq!(
            ws.ok("read", json!({"path": path})).await,
            "   1│ spaced",
            "{path:?}"
        );
    }
    assert_eq!(
        ws.ok("read", json!({"path": "~/todo.txt"})).await,
        "   1│ home"
    );
}

#[tokio::test]
async fn macos_screenshot_names_are_found_when_the_exact_name_is_missing() {
    let ws = Workspace::new();
    ws.file(
        "Screenshot 2024-01-01 at 10.15.32\u{202F}AM.txt",
        "meridiem\n",
    );
    ws.file("cafe\u{301}.txt", "nfd\n");
    ws.file("Capture d\u{2019}e\u{301}cran\u{202F}PM.txt", "all\n");
    ws.file("d\u{2019}accord.txt", "curly\n");
    let cases = [
        ("Screenshot 2024-01-01 at 10.15.32 AM.txt", "meridiem"),
        ("Screenshot 2024-01-01 at 10.15.32 am.txt", ""),
        ("café.txt", "nfd"),
        ("d'accord.txt", "curly"),
        ("Capture d'écran PM.txt", "all"),
    ];
    for (path, expected) in cases {
        let result = ws.call("read", json!({"path": path})).await;
        if expected.is_empty() {
            assert!(result.is_error, "{path:?}");
        } else {
            assert_eq!(
                result.text_content(),
                format!("   1│ {expected}"),
                "{path:?}"
            );
        }
    }
    // The exact name wins when it exists.
    ws.file("d'accord.txt", "straight\n");
    assert_eq!(
        ws.ok("read", json!({"path": "d'accord.txt"})).await,
        "   1│ straight"
    );
}

#[tokio::test]
async fn paging_a_multi_megabyte_file_returns_exact_windows_and_totals() {
    let ws = Workspace::new();
    let mut content = String::new();
    let mut line_count = 0_u64;
    while content.len() < 4 * 1024 * 1024 {
        line_count += 1;
        writeln!(content, "line {line_count:07} {}", "abcdefghij".repeat(4)).unwrap();
    }
    let total_bytes = content.len();
    ws.file("big.log", content);
    let page = ws
        .call(
            "read",
            json!({"path": "big.log", "offset": 50_000, "limit": 3}),
        )
        .await;
    let expected: Vec<String> = (50_000..50_003)
        .map(|n| format!("{n:>5}│ line {n:07} {}", "abcdefghij".repeat(4)))
        .collect();
    assert_eq!(
        page.text_content(),
        format!(
            "{}\n\n[{} more lines in file. Use offset=50003 to continue.]",
            expected.join("\n"),
            line_count - 50_002
        )
    );
    assert_eq!(page.details["lines"], line_count);
    assert_eq!(page.details["bytes"], total_bytes);
    let first = ws.call("read", json!({"path": "big.log"})).await;
    assert_eq!(first.details["truncatedBy"], "bytes");
    assert_eq!(first.details["startLine"], 1);
    let last = ws
        .call("read", json!({"path": "big.log", "offset": line_count}))
        .await;
    assert!(
        last.text_content()
            .ends_with(&format!("line {line_count:07} {}", "abcdefghij".repeat(4)))
    );
    assert!(last.details.get("nextOffset").is_none());
}
