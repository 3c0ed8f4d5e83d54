//! Conformance cases for `walk` and `search` (see [`crate::search`] for the contract).

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::Fixture;
use crate::search::{
    CaseSensitivity, EntryKinds, IgnoreRules, LineKind, PatternSyntax, SearchRequest, SearchResult,
    WalkRequest,
};
use crate::{ErrorKind, FileKind};

async fn put(fixture: &Fixture, relative: &str, content: &[u8]) {
    fixture
        .env
        .write(&fixture.path(relative), content.to_vec().into())
        .await
        .unwrap_or_else(|error| panic!("writing {relative}: {error}"));
}

/// A tree exercising every ignore rule, hidden files, a binary file and `.git`.
async fn ignore_tree(fixture: &Fixture, with_git: bool) {
    put(fixture, ".gitignore", b"target/\n*.log\n/top-only.txt\n").await;
    put(fixture, ".ignore", b"vendor/\n!important.log\n").await;
    put(fixture, ".hidden/secret.txt", b"needle hidden\n").await;
    put(fixture, "src/main.rs", b"fn main() {\n    needle();\n}\n").await;
    put(fixture, "src/top-only.txt", b"needle not anchored here\n").await;
    put(fixture, "top-only.txt", b"needle anchored\n").await;
    put(fixture, "src/gen/.gitignore", b"*.gen.rs\n!keep.gen.rs\n").await;
    put(fixture, "src/gen/a.gen.rs", b"needle generated\n").await;
    put(fixture, "src/gen/keep.gen.rs", b"needle kept\n").await;
    put(fixture, "target/out.txt", b"needle target\n").await;
    put(fixture, "vendor/dep.rs", b"needle vendor\n").await;
    put(fixture, "run.log", b"needle log\n").await;
    put(fixture, "important.log", b"needle important\n").await;
    put(fixture, "data.bin", b"needle\0binary\n").await;
    if with_git {
        put(fixture, ".git/config", b"needle git\n").await;
        put(fixture, ".git/info/exclude", b"excluded.txt\n").await;
        put(fixture, "excluded.txt", b"needle excluded\n").await;
    }
}

fn summary(result: &SearchResult) -> Vec<String> {
    let mut out = Vec::new();
    for file in &result.files {
        for line in &file.lines {
            let mark = if line.kind == LineKind::Match {
                ':'
            } else {
                '-'
            };
            out.push(format!(
                "{}{mark}{}{mark}{}",
                file.path.display(),
                line.number,
                line.text
            ));
        }
    }
    out
}

async fn search(fixture: &Fixture, request: SearchRequest) -> SearchResult {
    fixture
        .env
        .search(request)
        .await
        .unwrap_or_else(|error| panic!("search: {error}"))
}

/// Ignore files apply the same way with and without a `.git` directory (except the exclude file,
/// which lives in `.git`); hidden files are searched, `.git` and binary files never.
pub async fn search_follows_ignore_rules_inside_and_outside_git(fixture: &Fixture) {
    for with_git in [false, true] {
        let root = fixture.path(if with_git { "inside" } else { "outside" });
        let sub = Fixture::new(fixture.env.clone(), root.clone());
        ignore_tree(&sub, with_git).await;
        let result = search(&sub, SearchRequest::new(&root, "needle")).await;
        assert_eq!(
            summary(&result),
            [
                ".hidden/secret.txt:1:needle hidden",
                "important.log:1:needle important",
                "src/gen/keep.gen.rs:1:needle kept",
                "src/main.rs:2:    needle();",
                "src/top-only.txt:1:needle not anchored here",
            ],
            "search with_git={with_git}"
        );
        assert_eq!(result.matches, 5);
        assert!(!result.limit_reached);

        let mut all = SearchRequest::new(&root, "needle");
        all.ignore = IgnoreRules::IncludeIgnored;
        let result = search(&sub, all).await;
        let paths: Vec<String> = result
            .files
            .iter()
            .map(|file| file.path.display().to_string())
            .collect();
        let mut expected = vec![
            ".hidden/secret.txt",
            "important.log",
            "run.log",
            "src/gen/a.gen.rs",
            "src/gen/keep.gen.rs",
            "src/main.rs",
            "src/top-only.txt",
            "target/out.txt",
            "top-only.txt",
            "vendor/dep.rs",
        ];
        if with_git {
            expected.insert(1, "excluded.txt");
        }
        assert_eq!(paths, expected, "includeIgnored with_git={with_git}");
    }
}

/// `walk` lists what `search` would search, directories too on request, sorted, with globs.
pub async fn walk_lists_sorted_entries_with_globs(fixture: &Fixture) {
    ignore_tree(fixture, true).await;
    let mut request = WalkRequest::new(&fixture.root);
    request.kinds = EntryKinds::FilesAndDirectories;
    let result = fixture
        .env
        .walk(request)
        .await
        .unwrap_or_else(|error| panic!("walk: {error}"));
    let listed: Vec<(String, FileKind)> = result
        .entries
        .iter()
        .map(|entry| (entry.path.display().to_string(), entry.kind))
        .collect();
    let dir = FileKind::Directory;
    let file = FileKind::File;
    assert_eq!(
        listed,
        vec![
            (".gitignore".to_owned(), file),
            (".hidden".to_owned(), dir),
            (".hidden/secret.txt".to_owned(), file),
            (".ignore".to_owned(), file),
            ("data.bin".to_owned(), file),
            ("important.log".to_owned(), file),
            ("src".to_owned(), dir),
            ("src/gen".to_owned(), dir),
            ("src/gen/.gitignore".to_owned(), file),
            ("src/gen/keep.gen.rs".to_owned(), file),
            ("src/main.rs".to_owned(), file),
            ("src/top-only.txt".to_owned(), file),
        ]
    );

    let mut by_name = WalkRequest::new(&fixture.root);
    by_name.glob = Some("*.rs".to_owned());
    let result = fixture
        .env
        .walk(by_name)
        .await
        .unwrap_or_else(|error| panic!("walk: {error}"));
    let names: Vec<PathBuf> = result.entries.into_iter().map(|entry| entry.path).collect();
    assert_eq!(
        names,
        [
            PathBuf::from("src/gen/keep.gen.rs"),
            PathBuf::from("src/main.rs")
        ]
    );

    let mut limited = WalkRequest::new(&fixture.root);
    limited.limit = Some(3);
    let result = fixture
        .env
        .walk(limited)
        .await
        .unwrap_or_else(|error| panic!("walk: {error}"));
    assert_eq!(result.entries.len(), 3);
    assert!(result.limit_reached);
}

/// The first `limit` matches in (path, line) order are kept; "more" is known exactly.
pub async fn search_limits_are_exact_and_ordered(fixture: &Fixture) {
    for name in ["b/z.txt", "a.txt", "a/b.txt", "B.txt", "a-b.txt"] {
        put(fixture, name, b"hit\nmiss\nhit\n").await;
    }
    let all = search(fixture, SearchRequest::new(&fixture.root, "hit")).await;
    let order: Vec<String> = all
        .files
        .iter()
        .map(|file| file.path.display().to_string())
        .collect();
    assert_eq!(order, ["B.txt", "a/b.txt", "a-b.txt", "a.txt", "b/z.txt"]);
    assert_eq!(all.matches, 10);

    let mut exactly = SearchRequest::new(&fixture.root, "hit");
    exactly.limit = Some(10);
    let result = search(fixture, exactly).await;
    assert_eq!((result.matches, result.limit_reached), (10, false));

    let mut fewer = SearchRequest::new(&fixture.root, "hit");
    fewer.limit = Some(3);
    let result = search(fixture, fewer).await;
    assert_eq!((result.matches, result.limit_reached), (3, true));
    assert_eq!(
        summary(&result),
        ["B.txt:1:hit", "B.txt:3:hit", "a/b.txt:1:hit"]
    );
}

/// Context windows merge; lines are cut to `max_line_bytes`; CRLF endings are dropped.
pub async fn search_context_and_long_lines(fixture: &Fixture) {
    let mut body = String::new();
    for n in 1..=12 {
        let hit = if [3, 5, 11].contains(&n) { " hit" } else { "" };
        body.push_str("line ");
        body.push_str(&n.to_string());
        body.push_str(hit);
        body.push_str("\r\n");
    }
    put(fixture, "a.txt", body.as_bytes()).await;
    let mut request = SearchRequest::new(&fixture.root, "hit");
    request.context_lines = 1;
    let result = search(fixture, request).await;
    assert_eq!(
        summary(&result),
        [
            "a.txt-2-line 2",
            "a.txt:3:line 3 hit",
            "a.txt-4-line 4",
            "a.txt:5:line 5 hit",
            "a.txt-6-line 6",
            "a.txt-10-line 10",
            "a.txt:11:line 11 hit",
            "a.txt-12-line 12",
        ]
    );

    put(
        fixture,
        "long.txt",
        format!("hit {}\n", "é".repeat(100)).as_bytes(),
    )
    .await;
    let mut request = SearchRequest::new(fixture.path("long.txt"), "hit");
    request.max_line_bytes = 11;
    let result = search(fixture, request).await;
    let line = &result.files[0].lines[0];
    assert_eq!(result.files[0].path, PathBuf::from("long.txt"));
    assert_eq!((line.text.as_str(), line.truncated), ("hit ééé", true));
}

/// Literal, case-insensitive and anchored patterns; a pattern starting with `-`.
pub async fn search_pattern_options(fixture: &Fixture) {
    put(fixture, "a.txt", b"a.b\naxb\nA.B\n--flag\n").await;
    let mut literal = SearchRequest::new(&fixture.root, "a.b");
    literal.syntax = PatternSyntax::Literal;
    literal.case = CaseSensitivity::Insensitive;
    assert_eq!(
        summary(&search(fixture, literal).await),
        ["a.txt:1:a.b", "a.txt:3:A.B"]
    );
    let anchored = SearchRequest::new(&fixture.root, "^A");
    assert_eq!(summary(&search(fixture, anchored).await), ["a.txt:3:A.B"]);
    let dash = SearchRequest::new(&fixture.root, "--flag");
    assert_eq!(summary(&search(fixture, dash).await), ["a.txt:4:--flag"]);
}

/// Symlinks are listed, never followed; nothing is read through them.
pub async fn walk_and_search_do_not_follow_symlinks(fixture: &Fixture) {
    put(fixture, "tree/inside.txt", b"needle\n").await;
    put(fixture, "elsewhere/secret.txt", b"needle secret\n").await;
    fixture.symlink(fixture.path("elsewhere"), fixture.path("tree/dirlink"));
    fixture.symlink(
        fixture.path("elsewhere/secret.txt"),
        fixture.path("tree/filelink"),
    );
    let root = fixture.path("tree");
    let result = search(fixture, SearchRequest::new(&root, "needle")).await;
    assert_eq!(summary(&result), ["inside.txt:1:needle"]);
    let mut request = WalkRequest::new(&root);
    request.kinds = EntryKinds::FilesAndDirectories;
    let result = fixture
        .env
        .walk(request)
        .await
        .unwrap_or_else(|error| panic!("walk: {error}"));
    let listed: Vec<(String, FileKind)> = result
        .entries
        .iter()
        .map(|entry| (entry.path.display().to_string(), entry.kind))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("dirlink".to_owned(), FileKind::Symlink),
            ("filelink".to_owned(), FileKind::Symlink),
            ("inside.txt".to_owned(), FileKind::File),
        ]
    );
}

/// The error of a call that must fail.
fn failure<T: std::fmt::Debug>(result: crate::EnvResult<T>, what: &str) -> crate::EnvError {
    match result {
        Ok(value) => panic!("{what}: expected an error, got {value:?}"),
        Err(error) => error,
    }
}

/// Bad input and missing roots are typed errors; a cancelled request is aborted.
pub async fn search_errors_and_cancellation(fixture: &Fixture) {
    put(fixture, "a.txt", b"x\n").await;
    let bad = fixture
        .env
        .search(SearchRequest::new(&fixture.root, "foo("))
        .await;
    let error = failure(bad, "an invalid regex");
    assert_eq!(error.kind(), ErrorKind::Invalid);
    assert!(error.to_string().contains("unclosed group"), "{error}");
    let mut bad_glob = SearchRequest::new(&fixture.root, "x");
    bad_glob.glob = Some("{a".to_owned());
    let error = failure(fixture.env.search(bad_glob).await, "an invalid glob");
    assert_eq!(error.kind(), ErrorKind::Invalid);
    let missing = fixture
        .env
        .search(SearchRequest::new(fixture.path("missing"), "x"))
        .await;
    assert_eq!(
        failure(missing, "a missing root").kind(),
        ErrorKind::NotFound
    );
    let cancelled = SearchRequest::new(&fixture.root, "x");
    cancelled.cancel.cancel();
    let error = failure(fixture.env.search(cancelled).await, "a cancelled search");
    assert_eq!(error.kind(), ErrorKind::Aborted);
    let walk = WalkRequest::new(&fixture.root);
    walk.cancel.cancel();
    let error = failure(fixture.env.walk(walk).await, "a cancelled walk");
    assert_eq!(error.kind(), ErrorKind::Aborted);
}
