//! Property: for random files (mixed line endings, BOM, tabs, NBSP, smart quotes, `$`
//! sequences, long lines) and random unique edits, every byte outside the replaced spans is
//! identical after the edit, and a batch with one failing edit leaves the file identical.

#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_env_memory::MemoryEnv;
use jig_tool::DynTool;
use jig_tool::{ErasedTool, ToolContext};
use jig_tool_builtins::EditTool;
use proptest::prelude::*;
use serde_json::json;

const PIECES: &[&str] = &[
    "a", "b", "foo", "bar", " ", "  ", "\t", "\u{A0}", "\u{201C}", "\u{201D}", "\u{2019}",
    "\u{2014}", "$&", "$1", "$$", "\\n", "é", "e\u{301}", "😀", "{", "}", ";", "x = 1", "// note",
];
const ENDINGS: &[&str] = &["\n", "\r\n", "\r", "\r\n", "\n"];

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        9 => prop::collection::vec(prop::sample::select(PIECES), 0..8).prop_map(|p| p.concat()),
        1 => (1_usize..3).prop_map(|n| "long line ".repeat(n * 40)),
    ]
}

fn file() -> impl Strategy<Value = (bool, String)> {
    (
        any::<bool>(),
        prop::collection::vec((line(), prop::sample::select(ENDINGS)), 1..30),
        any::<bool>(),
    )
        .prop_map(|(bom, lines, final_break)| {
            let mut text = String::new();
            let count = lines.len();
            for (k, (line, ending)) in lines.into_iter().enumerate() {
                text.push_str(&line);
                if k + 1 < count || final_break {
                    text.push_str(ending);
                }
            }
            (bom, text)
        })
}

fn lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

fn count_overlapping(hay: &str, needle: &str) -> usize {
    (0..hay.len())
        .filter(|&i| hay.is_char_boundary(i) && hay[i..].starts_with(needle))
        .count()
}

fn dominant(text: &str) -> &'static str {
    let bytes = text.as_bytes();
    let (mut lf, mut crlf, mut cr) = (0, 0, 0);
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            if i > 0 && bytes[i - 1] == b'\r' {
                crlf += 1;
            } else {
                lf += 1;
            }
        } else if b == b'\r' && bytes.get(i + 1) != Some(&b'\n') {
            cr += 1;
        }
    }
    if lf >= crlf && lf >= cr {
        "\n"
    } else if crlf >= cr {
        "\r\n"
    } else {
        "\r"
    }
}

fn first_break(span: &str) -> Option<&'static str> {
    let i = span.find(['\r', '\n'])?;
    Some(match &span[i..] {
        s if s.starts_with("\r\n") => "\r\n",
        s if s.starts_with('\r') => "\r",
        _ => "\n",
    })
}

/// A span boundary that does not split a character or a CRLF.
fn is_boundary(text: &str, at: usize) -> bool {
    text.is_char_boundary(at)
        && !(at > 0 && text.as_bytes()[at - 1] == b'\r' && text.as_bytes().get(at) == Some(&b'\n'))
}

struct Case {
    spans: Vec<(usize, usize, String)>,
}

/// Picks disjoint, unique spans of `text` from random seeds; each gets a new text.
fn pick(text: &str, seeds: &[(usize, usize, String)]) -> Case {
    let mut spans: Vec<(usize, usize, String)> = Vec::new();
    for (start_seed, len_seed, new) in seeds {
        if text.is_empty() {
            break;
        }
        let mut start = start_seed % text.len();
        while !is_boundary(text, start) {
            start -= 1;
        }
        let mut end = (start + 1 + len_seed % 40).min(text.len());
        while !is_boundary(text, end) {
            end += 1;
        }
        if end <= start || spans.iter().any(|(s, e, _)| start < *e && *s < end) {
            continue;
        }
        let old = lf(&text[start..end]);
        let hay = if old.contains('\n') {
            lf(text)
        } else {
            text.to_owned()
        };
        if count_overlapping(&hay, &old) != 1 {
            continue;
        }
        spans.push((start, end, new.clone()));
    }
    spans.sort_by_key(|s| s.0);
    Case { spans }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn setup(bytes: &[u8]) -> (Arc<MemoryEnv>, ToolContext, Arc<dyn DynTool>) {
    let env = Arc::new(MemoryEnv::new());
    env.add_file("/ws/f.txt", bytes.to_vec()).unwrap();
    let ctx = ToolContext::new(env.clone(), PathBuf::from("/ws"));
    (env, ctx, ErasedTool::shared(EditTool::new()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn bytes_outside_replaced_spans_are_identical(
        (bom, text) in file(),
        seeds in prop::collection::vec((any::<usize>(), any::<usize>(), prop::collection::vec(prop::sample::select(PIECES.iter().copied().chain(["\n", "\r\n"]).collect::<Vec<_>>()), 0..6).prop_map(|p| p.concat())), 1..5),
    ) {
        let case = pick(&text, &seeds);
        prop_assume!(!case.spans.is_empty());
        let prefix: &[u8] = if bom { b"\xEF\xBB\xBF" } else { b"" };
        let original = [prefix, text.as_bytes()].concat();
        let (env, ctx, tool) = setup(&original);
        let edits: Vec<_> = case.spans.iter().map(|(s, e, new)| json!({"oldText": &text[*s..*e], "newText": new})).collect();
        let result = runtime().block_on(tool.run(&ctx, json!({"path": "f.txt", "edits": edits})));
        let after = env.files()[Path::new("/ws/f.txt")].clone();

        // What each span becomes: newText with the span's first line ending, else the file's.
        let inserted: Vec<String> = case.spans.iter().map(|(s, e, new)| {
            let ending = first_break(&text[*s..*e]).unwrap_or_else(|| dominant(&text));
            lf(new).replace('\n', ending)
        }).collect();
        let unchanged = case.spans.iter().zip(&inserted).all(|((s, e, _), new)| text[*s..*e] == **new);
        if unchanged {
            prop_assert!(result.is_error, "an edit producing identical content must fail");
            prop_assert_eq!(after, original);
            return Ok(());
        }
        prop_assert!(!result.is_error, "unexpected failure: {}", result.text_content());
        let mut expected = prefix.to_vec();
        let mut copied = 0;
        for ((s, e, _), new) in case.spans.iter().zip(&inserted) {
            expected.extend_from_slice(&text.as_bytes()[copied..*s]);
            expected.extend_from_slice(new.as_bytes());
            copied = *e;
        }
        expected.extend_from_slice(&text.as_bytes()[copied..]);
        prop_assert_eq!(after, expected);
    }

    #[test]
    fn a_failed_batch_leaves_the_file_identical(
        (bom, text) in file(),
        seeds in prop::collection::vec((any::<usize>(), any::<usize>(), "[a-z$&\n]{0,8}"), 1..4),
        bad_at in any::<usize>(),
        bad_kind in 0_usize..3,
    ) {
        let case = pick(&text, &seeds);
        let prefix: &[u8] = if bom { b"\xEF\xBB\xBF" } else { b"" };
        let original = [prefix, text.as_bytes()].concat();
        let (env, ctx, tool) = setup(&original);
        let mut edits: Vec<_> = case.spans.iter().map(|(s, e, new)| json!({"oldText": &text[*s..*e], "newText": new})).collect();
        let bad = match bad_kind {
            0 => json!({"oldText": "\u{E000} not in the file", "newText": "x"}),
            1 => json!({"oldText": "", "newText": "x"}),
            _ => json!({"oldText": text.clone() + "\u{E000}", "newText": "x"}),
        };
        let at = bad_at % (edits.len() + 1);
        edits.insert(at, bad);
        let result = runtime().block_on(tool.run(&ctx, json!({"path": "f.txt", "edits": edits})));
        prop_assert!(result.is_error);
        prop_assert_eq!(env.files()[Path::new("/ws/f.txt")].clone(), original);
    }
}
