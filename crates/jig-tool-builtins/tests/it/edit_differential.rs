//! Differential test of the tolerant tiers: a tolerant success must write exactly what the exact
//! edit writes.
//!
//! A corpus of files (generated ones with tabs, spaces, alignment, trailing whitespace, CRLF and
//! mixed endings, BOM and non-ASCII text; and this repository's own sources and docs, also
//! re-indented with tabs and with CRLF endings) gets random exact edits: `oldText` a unique run of
//! whole lines, `newText` a modification of it. Each edit is then sent again the way models get
//! `oldText` wrong: trailing whitespace stripped, tabs and spaces swapped in `oldText` alone or in
//! both texts, `read`-style line numbers in `oldText` alone or in both (newText numbered like oldText or from
//! another line), typographic quotes and
//! dashes typed as ASCII, the common indentation removed from both. Every sloppy call, through the real tool, must either fail with the
//! file unchanged or produce exactly the exact call's bytes. Edits that succeeded alone are also
//! sent in batches of two or three with line numbers in both texts, newText numbered like
//! oldText, by the lines it lands on in the new file, or from any line.
//!
//! The generator is deterministic (fixed seed), so a failure reproduces; set
//! `JIG_EDIT_DIFF_SEED` to explore other seeds.

#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_env_memory::MemoryEnv;
use jig_tool::{DynTool, ErasedTool, ToolContext};
use jig_tool_builtins::EditTool;
use serde_json::json;

/// SplitMix64: small, fast, and the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Tabs,
    Spaces(usize),
}

impl Style {
    fn unit(self) -> String {
        match self {
            Self::Tabs => "\t".to_owned(),
            Self::Spaces(n) => " ".repeat(n),
        }
    }
}

/// One corpus file: its lines (without breaks) and how they are written out.
struct Doc {
    name: String,
    lines: Vec<String>,
    style: Style,
    /// `\n`, `\r\n`, or `mixed` (CRLF with some LF).
    endings: &'static str,
    bom: bool,
    final_break: bool,
}

impl Doc {
    /// The text as the tool sees it once line breaks are normalised.
    fn lf(&self) -> String {
        let mut text = self.lines.join("\n");
        if self.final_break {
            text.push('\n');
        }
        text
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = if self.bom {
            b"\xEF\xBB\xBF".to_vec()
        } else {
            Vec::new()
        };
        for (k, line) in self.lines.iter().enumerate() {
            out.extend_from_slice(line.as_bytes());
            if k + 1 < self.lines.len() || self.final_break {
                let ending: &[u8] = match self.endings {
                    "mixed" if k % 5 == 3 => b"\n",
                    "mixed" | "\r\n" => b"\r\n",
                    _ => b"\n",
                };
                out.extend_from_slice(ending);
            }
        }
        out
    }
}

const WORDS: &[&str] = &[
    "value", "count", "name", "x", "y", "items", "result", "self", "config", "path", "len",
];
const NON_ASCII: &[&str] = &[
    "\u{201C}quoted\u{201D}",
    "it\u{2019}s",
    "a \u{2014} b",
    "1\u{2013}2",
    "wait\u{2026}",
    "caf\u{E9}",
    "\u{65E5}\u{672C}",
    "\u{1F600}",
    "na\u{EF}ve",
];
const TRAILING: &[&str] = &[" ", "  ", "\t", " \t"];
const ENDINGS: &[&str] = &["\n", "\n", "\r\n", "mixed"];
const LOOKS_NUMBERED: &[&str] = &[
    "404: 'Missing',",
    "12:07 stop",
    "57:lexopt = \"0.3.0\"",
    "3| table row",
    "7\u{2192} arrow",
];

fn statement(rng: &mut Rng) -> String {
    let mut line = match rng.below(6) {
        0 => format!("let {} = {}();", rng.pick(WORDS), rng.pick(WORDS)),
        1 => format!(
            "{}.{}({});",
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.pick(WORDS)
        ),
        2 => format!("// {} {}", rng.pick(WORDS), rng.pick(NON_ASCII)),
        3 => (*rng.pick(LOOKS_NUMBERED)).to_owned(),
        4 => format!("say(\"{}\", {});", rng.pick(NON_ASCII), rng.pick(WORDS)),
        _ => format!("{} += 1;", rng.pick(WORDS)),
    };
    if rng.chance(15) {
        line.push_str(TRAILING[rng.below(TRAILING.len())]);
    }
    line
}

fn generated(rng: &mut Rng, index: usize) -> Doc {
    let style = *rng.pick(&[Style::Tabs, Style::Tabs, Style::Spaces(4), Style::Spaces(2)]);
    let unit = style.unit();
    let mut lines = Vec::new();
    let mut depth = 0_usize;
    let target = 15 + rng.below(50);
    while lines.len() < target {
        let indent = unit.repeat(depth);
        match rng.below(12) {
            0 | 1 if depth < 5 => {
                lines.push(format!("{indent}if {} {{", rng.pick(WORDS)));
                depth += 1;
            }
            2 if depth > 0 => {
                depth -= 1;
                lines.push(format!("{}}}", unit.repeat(depth)));
            }
            3 => lines.push(String::new()),
            4 => lines.push(if rng.chance(50) {
                indent.clone()
            } else {
                format!("{indent}{unit}")
            }),
            5 => lines.push(format!("#ifdef {}", rng.pick(WORDS).to_uppercase())),
            // Alignment after the indentation: C comment bodies, continuation lines.
            6 => lines.push(format!("{indent} * {}", rng.pick(WORDS))),
            7 if !lines.is_empty() => {
                let copy = rng.pick(&lines).clone();
                lines.push(copy);
            }
            _ => lines.push(format!("{indent}{}", statement(rng))),
        }
    }
    while depth > 0 {
        depth -= 1;
        lines.push(format!("{}}}", unit.repeat(depth)));
    }
    Doc {
        name: format!("generated-{index}"),
        lines,
        style,
        endings: ENDINGS[rng.below(ENDINGS.len())],
        bom: rng.chance(30),
        final_break: rng.chance(85),
    }
}

/// This repository's own text, as written and in variants (tab-indented, CRLF with BOM).
fn real_docs() -> Vec<Doc> {
    let sources: [(&str, &str); 8] = [
        ("edit.rs", include_str!("../../src/edit.rs")),
        ("tolerant.rs", include_str!("../../src/edit/tolerant.rs")),
        ("matching.rs", include_str!("../../src/edit/matching.rs")),
        ("read.rs", include_str!("../../src/read.rs")),
        ("edit_props.rs", include_str!("edit_props.rs")),
        (
            "ARCHITECTURE.md",
            include_str!("../../../../ARCHITECTURE.md"),
        ),
        ("agent.md", include_str!("../../../../docs/agent.md")),
        ("STYLE-like Cargo.toml", include_str!("../../Cargo.toml")),
    ];
    let mut docs = Vec::new();
    for (name, text) in sources {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let tabbed: Vec<String> = lines
            .iter()
            .map(|line| {
                let rest = line.trim_start_matches(' ');
                let spaces = line.len() - rest.len();
                format!(
                    "{}{}{rest}",
                    "\t".repeat(spaces / 4),
                    " ".repeat(spaces % 4)
                )
            })
            .collect();
        docs.push(Doc {
            name: name.to_owned(),
            lines: lines.clone(),
            style: Style::Spaces(4),
            endings: "\n",
            bom: false,
            final_break: true,
        });
        docs.push(Doc {
            name: format!("{name} (tabs)"),
            lines: tabbed,
            style: Style::Tabs,
            endings: "\n",
            bom: false,
            final_break: true,
        });
        docs.push(Doc {
            name: format!("{name} (CRLF, BOM)"),
            lines,
            style: Style::Spaces(4),
            endings: "\r\n",
            bom: true,
            final_break: false,
        });
    }
    docs
}

fn count_overlapping(hay: &str, needle: &str) -> usize {
    let mut count = 0;
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        count += 1;
        from += i + hay[from + i..].chars().next().map_or(1, char::len_utf8);
        if count > 1 {
            break;
        }
    }
    count
}

fn leading(line: &str) -> (&str, &str) {
    let rest = line.trim_start_matches([' ', '\t']);
    (&line[..line.len() - rest.len()], rest)
}

/// newText: the old lines with one or two modifications, each in the file's style.
fn modify(rng: &mut Rng, old: &[String], style: Style) -> Vec<String> {
    let unit = style.unit();
    if rng.chance(10) {
        // Text that looks like line-number prefixes (grep output, a YAML map, a time).
        let indent = leading(&old[0]).0.to_owned();
        return (0..=rng.below(2))
            .map(|_| format!("{indent}{}", rng.pick(LOOKS_NUMBERED)))
            .collect();
    }
    let mut lines = old.to_vec();
    for _ in 0..=rng.below(2) {
        let at = rng.below(lines.len());
        let indent = leading(&lines[at]).0.to_owned();
        match rng.below(10) {
            0 => {
                let (indent, rest) = leading(&lines[at]);
                lines[at] = format!("{indent}changed {rest}");
            }
            1 => lines.insert(at + 1, format!("{indent}{unit}inserted();")),
            2 => lines.insert(at + 1, format!("{indent}same();")),
            3 => lines.insert(at, "#ifdef NEW".to_owned()),
            4 => lines.insert(at + 1, String::new()),
            5 => lines.insert(at + 1, format!("{indent}{unit}")),
            6 if lines.len() > 1 => {
                lines.remove(at);
            }
            7 => lines.insert(
                at + 1,
                format!("{indent}note(\"{}\");", rng.pick(NON_ASCII)),
            ),
            8 => lines.insert(at + 1, format!("{indent}{}", rng.pick(LOOKS_NUMBERED))),
            _ => lines.insert(at + 1, format!("{indent}x = 1  ")),
        }
    }
    lines
}

fn join(lines: &[String], final_break: bool) -> String {
    let mut text = lines.join("\n");
    if final_break {
        text.push('\n');
    }
    text
}

/// `text` with every line's leading whitespace retyped in the other style: tabs of a
/// tab-indented file as `width` spaces each, leading spaces of a space-indented file as tabs
/// (`width` spaces per tab, the remainder kept).
fn swap_indentation(text: &str, style: Style, width: usize) -> String {
    text.split('\n')
        .map(|line| {
            let (indent, rest) = leading(line);
            let swapped = match style {
                Style::Tabs => indent.replace('\t', &" ".repeat(width)),
                Style::Spaces(_) if !indent.contains('\t') => format!(
                    "{}{}",
                    "\t".repeat(indent.len() / width),
                    " ".repeat(indent.len() % width)
                ),
                Style::Spaces(_) => indent.to_owned(),
            };
            format!("{swapped}{rest}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` as `read` shows it: `{number:>width}│ {line}`, numbers from `first`.
fn numbered(text: &str, first: usize) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let shown = if text.ends_with('\n') {
        lines.len() - 1
    } else {
        lines.len()
    };
    let width = (first + shown).to_string().len().max(4);
    lines
        .iter()
        .enumerate()
        .map(|(k, line)| {
            if k < shown {
                format!("{:>width$}\u{2502} {line}", first + k)
            } else {
                (*line).to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn strip_trailing(text: &str) -> String {
    text.split('\n')
        .map(|line| line.trim_end_matches([' ', '\t']))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ascii_punctuation(text: &str) -> String {
    text.replace(['\u{201C}', '\u{201D}'], "\"")
        .replace(['\u{2018}', '\u{2019}'], "'")
        .replace(['\u{2013}', '\u{2014}'], "-")
        .replace('\u{2026}', "...")
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

    /// Runs one edit on a fresh copy of `bytes`: whether it succeeded, and the file after it.
    fn run(&self, bytes: &[u8], old: &str, new: &str) -> (bool, Vec<u8>) {
        self.run_batch(bytes, &[(old.to_owned(), new.to_owned())])
    }

    /// Runs a batch of edits (oldText, newText) on a fresh copy of `bytes`.
    fn run_batch(&self, bytes: &[u8], edits: &[(String, String)]) -> (bool, Vec<u8>) {
        let env = Arc::new(MemoryEnv::new());
        env.add_file("/ws/f.txt", bytes.to_vec()).unwrap();
        let ctx = ToolContext::new(env.clone(), PathBuf::from("/ws"));
        let edits: Vec<_> = edits
            .iter()
            .map(|(old, new)| json!({"oldText": old, "newText": new}))
            .collect();
        let args = json!({"path": "f.txt", "edits": edits});
        let result = self.runtime.block_on(self.tool.run(&ctx, args));
        let after = env.files()[Path::new("/ws/f.txt")].clone();
        (!result.is_error, after)
    }
}

#[derive(Debug, Default)]
struct Tally {
    agreed: usize,
    refused: usize,
    skipped_exact: usize,
    wrong: usize,
}

struct Counterexample {
    doc: String,
    variant: &'static str,
    old: String,
    sloppy_old: String,
    new: String,
    sloppy_new: String,
    expected: String,
    got: String,
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one corpus walk: single edits, then batches of them"
)]
fn sloppy_old_text_fails_or_writes_the_exact_edits_bytes() {
    let seed = std::env::var("JIG_EDIT_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(18_u64);
    let mut rng = Rng(seed);
    let harness = Harness::new();
    let mut docs = real_docs();
    let edits_per_real_doc = 40;
    for index in 0..150 {
        docs.push(generated(&mut rng, index));
    }

    let mut tallies: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut exact_edits = 0;
    let mut batches = 0;
    let mut counterexamples = Vec::new();
    for doc in &docs {
        let lf = doc.lf();
        let bytes = doc.bytes();
        let attempts = if doc.name.starts_with("generated") {
            12
        } else {
            edits_per_real_doc
        };
        let mut done = Vec::new();
        for _ in 0..attempts {
            let first = rng.below(doc.lines.len());
            let count = (1 + rng.below(6)).min(doc.lines.len() - first);
            let old_lines = &doc.lines[first..first + count];
            let has_break_after = first + count < doc.lines.len() || doc.final_break;
            let old_break = has_break_after && rng.chance(50);
            let old = join(old_lines, old_break);
            if old.trim().is_empty() || count_overlapping(&lf, &old) != 1 {
                continue;
            }
            let new = join(&modify(&mut rng, old_lines, doc.style), old_break);
            let (ok, expected) = harness.run(&bytes, &old, &new);
            if !ok {
                continue;
            }
            exact_edits += 1;
            done.push(ExactEdit {
                first,
                count,
                old: old.clone(),
                new: new.clone(),
            });

            let width = match doc.style {
                Style::Tabs => *rng.pick(&[4, 4, 2, 8]),
                Style::Spaces(n) => n,
            };
            let variants = sloppy_variants(&old, &new, doc.style, width, first + 1);
            for (variant, sloppy_old, sloppy_new) in variants {
                if sloppy_old == old {
                    continue;
                }
                let tally = tallies.entry(variant).or_default();
                if count_overlapping(&lf, &sloppy_old) == 1 {
                    // An exact match elsewhere: an ordinary exact edit, not a tolerant one.
                    tally.skipped_exact += 1;
                    continue;
                }
                // Stripping trailing whitespace from newText as well asks for other bytes.
                let want = if variant == "trailing whitespace stripped in both" {
                    harness.run(&bytes, &old, &sloppy_new).1
                } else {
                    expected.clone()
                };
                let (ok, after) = harness.run(&bytes, &sloppy_old, &sloppy_new);
                if ok && after == want {
                    tally.agreed += 1;
                } else if !ok && after == bytes {
                    tally.refused += 1;
                } else {
                    tally.wrong += 1;
                    counterexamples.push(Counterexample {
                        doc: doc.name.clone(),
                        variant,
                        old: old.clone(),
                        sloppy_old,
                        new: new.clone(),
                        sloppy_new,
                        expected: String::from_utf8_lossy(&want).into_owned(),
                        got: String::from_utf8_lossy(&after).into_owned(),
                    });
                }
            }
        }
        for _ in 0..attempts / 2 {
            let edits = batch_of(&mut rng, &done);
            if edits.len() < 2 {
                continue;
            }
            let plain: Vec<(String, String)> = edits
                .iter()
                .map(|e| (e.old.clone(), e.new.clone()))
                .collect();
            let (ok, expected) = harness.run_batch(&bytes, &plain);
            if !ok {
                continue;
            }
            batches += 1;
            let arbitrary = 1 + rng.below(5000);
            for (variant, sloppy) in numbered_batches(&edits, arbitrary) {
                let tally = tallies.entry(variant).or_default();
                let (ok, after) = harness.run_batch(&bytes, &sloppy);
                if ok && after == expected {
                    tally.agreed += 1;
                } else if !ok && after == bytes {
                    tally.refused += 1;
                } else {
                    tally.wrong += 1;
                    let join = |pick: fn(&(String, String)) -> &String,
                                edits: &[(String, String)]| {
                        edits
                            .iter()
                            .map(pick)
                            .cloned()
                            .collect::<Vec<_>>()
                            .join("\n~~~\n")
                    };
                    counterexamples.push(Counterexample {
                        doc: doc.name.clone(),
                        variant,
                        old: join(|e| &e.0, &plain),
                        sloppy_old: join(|e| &e.0, &sloppy),
                        new: join(|e| &e.1, &plain),
                        sloppy_new: join(|e| &e.1, &sloppy),
                        expected: String::from_utf8_lossy(&expected).into_owned(),
                        got: String::from_utf8_lossy(&after).into_owned(),
                    });
                }
            }
        }
    }

    let sloppy_calls = report(seed, docs.len(), exact_edits, &tallies, &counterexamples);
    assert!(
        counterexamples.is_empty(),
        "{} sloppy calls wrote other bytes than the exact edit",
        counterexamples.len()
    );
    assert!(sloppy_calls >= 3000, "too few sloppy calls: {sloppy_calls}");
    assert!(batches >= 100, "too few batches: {batches}");
    for (variant, tally) in &tallies {
        assert!(tally.agreed > 0, "no sloppy call of {variant} succeeded");
    }
}

/// An exact edit that succeeded alone: its lines (0-based first line, count) and texts.
#[derive(Debug, Clone)]
struct ExactEdit {
    first: usize,
    count: usize,
    old: String,
    new: String,
}

impl ExactEdit {
    /// Lines `read` shows for `text` (a final line break starts no line).
    fn shown(text: &str) -> usize {
        text.split('\n').count() - usize::from(text.ends_with('\n'))
    }
}

/// Up to three of `done` whose lines are apart (a line between any two), in file order.
fn batch_of(rng: &mut Rng, done: &[ExactEdit]) -> Vec<ExactEdit> {
    let mut picked: Vec<ExactEdit> = Vec::new();
    for _ in 0..8 {
        if done.is_empty() || picked.len() == 3 {
            break;
        }
        let edit = rng.pick(done);
        let apart = picked
            .iter()
            .all(|p| edit.first + edit.count < p.first || p.first + p.count < edit.first);
        if apart {
            picked.push(edit.clone());
        }
    }
    picked.sort_by_key(|e| e.first);
    picked
}

/// A batch sent with read's line numbers in both texts: oldText by its lines in the original
/// file, newText (a) like oldText, (b) by the lines it lands on once the edits before it added
/// or removed lines, (c) from an arbitrary line. The batch goes in reverse order, as models
/// also send them.
fn numbered_batches(
    edits: &[ExactEdit],
    arbitrary: usize,
) -> Vec<(&'static str, Vec<(String, String)>)> {
    let mut like_old = Vec::new();
    let mut landing = Vec::new();
    let mut from = Vec::new();
    let mut shift: isize = 0;
    for edit in edits {
        let old = numbered(&edit.old, edit.first + 1);
        let lands = usize::try_from(edit.first.cast_signed() + 1 + shift).unwrap();
        like_old.push((old.clone(), numbered(&edit.new, edit.first + 1)));
        landing.push((old.clone(), numbered(&edit.new, lands)));
        from.push((old, numbered(&edit.new, arbitrary)));
        shift +=
            ExactEdit::shown(&edit.new).cast_signed() - ExactEdit::shown(&edit.old).cast_signed();
    }
    let mut batches = vec![
        (
            "batch: line numbers in both, newText like oldText",
            like_old,
        ),
        (
            "batch: line numbers in both, newText where it lands",
            landing,
        ),
        ("batch: line numbers in both, newText from any line", from),
    ];
    for (_, batch) in &mut batches {
        batch.reverse();
    }
    batches
}

/// The ways models get an edit wrong: (name, oldText, newText).
fn sloppy_variants(
    old: &str,
    new: &str,
    style: Style,
    width: usize,
    first_line: usize,
) -> Vec<(&'static str, String, String)> {
    let mut variants = vec![
        (
            "trailing whitespace stripped in oldText",
            strip_trailing(old),
            new.to_owned(),
        ),
        (
            "indentation swapped in oldText",
            swap_indentation(old, style, width),
            new.to_owned(),
        ),
        (
            "indentation swapped in both",
            swap_indentation(old, style, width),
            swap_indentation(new, style, width),
        ),
        (
            "line numbers in oldText",
            numbered(old, first_line),
            new.to_owned(),
        ),
        (
            "line numbers in both",
            numbered(old, first_line),
            numbered(new, first_line),
        ),
        (
            "line numbers in both, newText from another line",
            numbered(old, first_line),
            numbered(new, first_line + 1 + first_line % 7),
        ),
        (
            "typographic punctuation as ASCII",
            ascii_punctuation(old),
            new.to_owned(),
        ),
        (
            "trailing whitespace stripped in both",
            strip_trailing(old),
            strip_trailing(new),
        ),
    ];
    if let Some((old, new)) = dedented(old, new) {
        variants.push(("common indentation removed in both", old, new));
    }
    variants
}

/// Both texts without oldText's common indentation, when every non-empty line of both has it
/// and no whitespace-only line would become empty (which no rule can undo).
fn dedented(old: &str, new: &str) -> Option<(String, String)> {
    let common = old
        .split('\n')
        .filter(|line| !line.trim().is_empty())
        .map(|line| leading(line).0)
        .reduce(|a, b| {
            let len = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            &a[..len]
        })?;
    if common.is_empty() {
        return None;
    }
    let strip = |text: &str| -> Option<String> {
        text.split('\n')
            .map(|line| {
                if line.is_empty() {
                    Some(line)
                } else {
                    line.strip_prefix(common).filter(|rest| !rest.is_empty())
                }
            })
            .collect::<Option<Vec<_>>>()
            .map(|lines| lines.join("\n"))
    };
    Some((strip(old)?, strip(new)?))
}

/// Prints the tallies and the first counterexamples (`JIG_EDIT_DIFF_SHOW` filters them by
/// variant); returns the number of sloppy calls made.
#[expect(clippy::print_stderr, reason = "the case counts are the test's report")]
fn report(
    seed: u64,
    docs: usize,
    exact_edits: usize,
    tallies: &BTreeMap<&'static str, Tally>,
    counterexamples: &[Counterexample],
) -> usize {
    let sloppy_calls: usize = tallies
        .values()
        .map(|t| t.agreed + t.refused + t.wrong)
        .sum();
    eprintln!(
        "seed {seed}: {} documents, {exact_edits} exact edits, {sloppy_calls} sloppy calls, \
         {} counterexamples",
        docs,
        counterexamples.len()
    );
    for (variant, tally) in tallies {
        eprintln!(
            "  {variant:<56} agreed {:>5}  refused {:>5}  exact elsewhere {:>4}  wrong {:>4}",
            tally.agreed, tally.refused, tally.skipped_exact, tally.wrong
        );
    }
    let shown = std::env::var("JIG_EDIT_DIFF_SHOW").unwrap_or_default();
    for case in counterexamples
        .iter()
        .filter(|case| case.variant.contains(shown.as_str()))
        .take(5)
    {
        let (e, g) = first_difference(&case.expected, &case.got);
        eprintln!(
            "--- {} / {}\nold: {:?}\nsloppy old: {:?}\nnew: {:?}\nsloppy new: {:?}\nexpected …{e:?}…\ngot      …{g:?}…",
            case.doc, case.variant, case.old, case.sloppy_old, case.new, case.sloppy_new
        );
    }
    sloppy_calls
}

/// The stretch around the first difference of two texts.
fn first_difference<'a>(a: &'a str, b: &'a str) -> (&'a str, &'a str) {
    let at = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i);
    let from = a[..at].char_indices().rev().nth(30).map_or(0, |(i, _)| i);
    let around = |s: &'a str| {
        let end = s[at.min(s.len())..]
            .char_indices()
            .nth(60)
            .map_or(s.len(), |(i, _)| at + i);
        &s[from.min(s.len())..end]
    };
    (around(a), around(b))
}
