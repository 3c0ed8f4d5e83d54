//! Property: `read`'s line-number gutter never ends up in a file.
//!
//! Random files get random batches of whole-line edits, sent the way a model that copies from
//! `read` sends them: every oldText with the gutter numbered by its lines in the original file,
//! every newText with the gutter numbered (a) like its oldText, (b) by the lines it will occupy
//! in the new file, or (c) from an arbitrary start. Each call must write exactly the bytes of
//! the same call without any gutter, or be refused with the file unchanged. A batch whose
//! newTexts have a broken gutter (a gap, a line without it) must be refused, file unchanged.

#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_env_memory::MemoryEnv;
use jig_tool::{DynTool, ErasedTool, ToolContext};
use jig_tool_builtins::EditTool;
use proptest::prelude::*;
use serde_json::{Value, json};

/// Line texts, including ones that look numbered in other ways (grep output, a map, a time).
const LINES: &[&str] = &[
    "fn main() {",
    "    let x = 1;",
    "\tif a {",
    "}",
    "",
    "  ",
    "12: not a prefix",
    "404: 'Missing',",
    "12:30 lunch",
    "# heading",
    "value = \"quoted\"",
    "caf\u{e9} \u{2014} na\u{ef}ve",
    "return x;",
    "// note",
    "x  ",
];

#[derive(Debug, Clone, Copy)]
enum Numbering {
    /// Numbered like oldText.
    LikeOld,
    /// Numbered by the lines newText will occupy in the new file.
    Landing,
    /// Numbered from this line.
    From(usize),
}

/// `lines` as `read` shows them, numbered from `first`.
fn gutter(lines: &[String], first: usize) -> String {
    let width = (first + lines.len()).to_string().len().max(4);
    lines
        .iter()
        .enumerate()
        .map(|(k, line)| format!("{:>width$}\u{2502} {line}", first + k))
        .collect::<Vec<_>>()
        .join("\n")
}

fn count_overlapping(hay: &str, needle: &str) -> usize {
    (0..hay.len())
        .filter(|&i| hay.is_char_boundary(i) && hay[i..].starts_with(needle))
        .count()
}

/// One edit: the original lines `start..end` (0-based) become `new`.
#[derive(Debug, Clone)]
struct LineEdit {
    start: usize,
    end: usize,
    new: Vec<String>,
}

/// Disjoint, non-adjacent line ranges whose text is unique in the file and not blank.
fn pick(
    lines: &[String],
    final_break: bool,
    seeds: &[(usize, usize, Vec<String>)],
) -> Vec<LineEdit> {
    let mut lf = lines.join("\n");
    if final_break {
        lf.push('\n');
    }
    let mut edits: Vec<LineEdit> = Vec::new();
    for (start_seed, len_seed, new) in seeds {
        let start = start_seed % lines.len();
        let end = (start + 1 + len_seed % 4).min(lines.len());
        if edits.iter().any(|e| start <= e.end && e.start <= end) {
            continue;
        }
        let old = lines[start..end].join("\n");
        if old.trim().is_empty() || count_overlapping(&lf, &old) != 1 {
            continue;
        }
        edits.push(LineEdit {
            start,
            end,
            new: new.clone(),
        });
    }
    edits.sort_by_key(|e| e.start);
    edits
}

/// The batch as JSON, in `order`, with or without the gutter.
fn batch(
    edits: &[LineEdit],
    lines: &[String],
    numbering: Option<Numbering>,
    order: &[usize],
) -> Value {
    let mut shift: isize = 0;
    let mut texts = Vec::new();
    for edit in edits {
        let old = &lines[edit.start..edit.end];
        let texts_of_edit = match numbering {
            None => (old.join("\n"), edit.new.join("\n")),
            Some(numbering) => {
                let first_new = match numbering {
                    Numbering::LikeOld => edit.start + 1,
                    Numbering::Landing => (edit.start.cast_signed() + 1 + shift).cast_unsigned(),
                    Numbering::From(n) => n,
                };
                (gutter(old, edit.start + 1), gutter(&edit.new, first_new))
            }
        };
        shift += edit.new.len().max(1).cast_signed() - (edit.end - edit.start).cast_signed();
        texts.push(texts_of_edit);
    }
    let edits: Vec<Value> = order
        .iter()
        .map(|&k| json!({"oldText": texts[k % texts.len()].0, "newText": texts[k % texts.len()].1}))
        .collect();
    json!({"path": "f.txt", "edits": edits})
}

struct Harness {
    runtime: tokio::runtime::Runtime,
    tool: Arc<dyn DynTool>,
}

impl Harness {
    fn new() -> Self {
        Self {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            tool: ErasedTool::shared(EditTool::new()),
        }
    }

    /// Runs one call on a fresh copy of `bytes`: whether it succeeded, the file after it, and
    /// the text the model reads.
    fn run(&self, bytes: &[u8], args: Value) -> (bool, Vec<u8>, String) {
        let env = Arc::new(MemoryEnv::new());
        env.add_file("/ws/f.txt", bytes.to_vec()).unwrap();
        let ctx = ToolContext::new(env.clone(), PathBuf::from("/ws"));
        let result = self.runtime.block_on(self.tool.run(&ctx, args));
        let after = env.files()[Path::new("/ws/f.txt")].clone();
        (!result.is_error, after, result.text_content())
    }
}

fn order(count: usize, seed: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..count).collect();
    if count > 1 {
        order.rotate_left(seed % count);
        if seed % 2 == 1 {
            order.reverse();
        }
    }
    order
}

fn file_lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::sample::select(LINES).prop_map(str::to_owned), 3..40)
}

fn new_lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::sample::select(LINES).prop_map(str::to_owned), 0..5)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn numbered_batches_write_the_bytes_of_the_plain_batch(
        lines in file_lines(),
        crlf in any::<bool>(),
        final_break in any::<bool>(),
        seeds in prop::collection::vec((any::<usize>(), any::<usize>(), new_lines()), 1..5),
        arbitrary_start in 1_usize..200,
        order_seed in any::<usize>(),
    ) {
        let edits = pick(&lines, final_break, &seeds);
        prop_assume!(!edits.is_empty());
        let ending = if crlf { "\r\n" } else { "\n" };
        let mut text = lines.join(ending);
        if final_break {
            text.push_str(ending);
        }
        let bytes = text.into_bytes();
        let order = order(edits.len(), order_seed);
        let harness = Harness::new();
        let (plain_ok, plain_after, plain_text) = harness.run(&bytes, batch(&edits, &lines, None, &order));
        for numbering in [Numbering::LikeOld, Numbering::Landing, Numbering::From(arbitrary_start)] {
            let (ok, after, message) = harness.run(&bytes, batch(&edits, &lines, Some(numbering), &order));
            if ok {
                prop_assert!(plain_ok, "{numbering:?}: succeeded where the plain batch failed ({plain_text})");
                prop_assert_eq!(
                    String::from_utf8_lossy(&after),
                    String::from_utf8_lossy(&plain_after),
                    "{:?}: other bytes than the plain batch",
                    numbering
                );
            } else {
                prop_assert_eq!(&after, &bytes, "{:?}: a refused batch changed the file", numbering);
                // Every oldText is unique and the gutter consistent: only a batch the plain
                // call refuses too may be refused.
                prop_assert!(!plain_ok, "{numbering:?}: refused ({message}) where the plain batch succeeded");
            }
        }
    }

    #[test]
    fn a_broken_new_text_gutter_is_refused_with_the_file_unchanged(
        lines in file_lines(),
        seeds in prop::collection::vec((any::<usize>(), any::<usize>(), prop::collection::vec(prop::sample::select(LINES).prop_map(str::to_owned), 2..5)), 1..4),
        broken in any::<usize>(),
        gap in any::<bool>(),
    ) {
        let edits = pick(&lines, true, &seeds);
        prop_assume!(!edits.is_empty());
        let bytes = format!("{}\n", lines.join("\n")).into_bytes();
        let harness = Harness::new();
        let order: Vec<usize> = (0..edits.len()).collect();
        let mut args = batch(&edits, &lines, Some(Numbering::Landing), &order);
        let target = broken % edits.len();
        let new = args["edits"][target]["newText"].as_str().unwrap().to_owned();
        let mut new_lines: Vec<String> = new.split('\n').map(str::to_owned).collect();
        let at = 1 + broken % (new_lines.len() - 1);
        let (_, rest) = new_lines[at].split_once("\u{2502} ").unwrap();
        new_lines[at] = if gap {
            // A number skipped.
            format!("{:>4}\u{2502} {rest}", 500 + at)
        } else {
            // A line without the gutter; "x" so that it is not an empty line.
            format!("x{rest}")
        };
        args["edits"][target]["newText"] = Value::String(new_lines.join("\n"));
        let (ok, after, message) = harness.run(&bytes, args);
        prop_assert!(!ok, "a broken gutter was accepted");
        prop_assert_eq!(after, bytes);
        prop_assert!(message.contains("without the prefixes"), "{}", message);
    }
}
