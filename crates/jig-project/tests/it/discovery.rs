//! Extension discovery: sources in order, tiers one level deep, dedup by canonical path, the
//! project only once trusted, `-ne` keeping `-e`.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use jig_project::{
    DefaultProjectTrust, Diagnostics, DiscoveredExtension, DiscoveryInputs, Entry, Origin,
    TrustInputs, TrustStore, discover, resolve_project_trust,
};
use pretty_assertions::assert_eq;

fn executable(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn file(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        Self { _dir: dir, root }
    }

    /// `(origin, path relative to root, entry kind)` for a readable comparison.
    fn show(&self, found: &[DiscoveredExtension]) -> Vec<(Origin, String, String)> {
        let rel = |p: &Path| p.strip_prefix(&self.root).unwrap().display().to_string();
        found
            .iter()
            .map(|e| {
                let entry = match &e.entry {
                    Entry::Executable(p) => format!("executable {}", rel(p)),
                    Entry::Manifest(p) => format!("manifest {}", rel(p)),
                    Entry::Index { dir, file, runtime } => {
                        format!("{runtime} {} in {}", rel(file), rel(dir))
                    }
                    Entry::Pi { dir, modules } => {
                        let modules: Vec<String> = modules.iter().map(|m| rel(m)).collect();
                        format!("pi {} in {}", modules.join(" "), rel(dir))
                    }
                };
                (e.origin, rel(&e.path), entry)
            })
            .collect()
    }
}

async fn trusted(project: &Path, config: &Path) -> jig_project::TrustedProject {
    let store = TrustStore::in_config_dir(config);
    resolve_project_trust(
        &TrustInputs {
            project_dir: project,
            trust_override: Some(true),
            hook: None,
            store: Some(&store),
            default_trust: DefaultProjectTrust::Ask,
            prompt: None,
        },
        &mut Diagnostics::default(),
    )
    .await
    .unwrap()
    .trusted_project()
    .unwrap()
}

#[tokio::test]
async fn sources_come_in_order_with_tiers_one_level_deep_and_duplicates_once() {
    let tree = Tree::new();
    let r = &tree.root;
    let project = r.join("app");
    let config = r.join("config/jig");
    // Project: an executable, a manifest dir, an index dir, a non-executable file (ignored), a
    // hidden file (ignored), a nested executable two levels down (not found).
    executable(&project.join(".jig/extensions/guard"), "#!/bin/sh\n");
    executable(&project.join(".jig/tools/lint"), "#!/bin/sh\n");
    file(&project.join(".jig/extensions/redactor/extension.toml"), "");
    file(&project.join(".jig/extensions/tools/index.py"), "");
    file(&project.join(".jig/extensions/tools/index.sh"), "");
    file(&project.join(".jig/extensions/README.md"), "");
    executable(&project.join(".jig/extensions/.hidden"), "");
    executable(&project.join(".jig/extensions/redactor/deep/nested"), "");
    // Global: an index.mjs dir and the same executable the CLI names (deduplicated).
    file(&config.join("extensions/notes/index.mjs"), "");
    executable(&config.join("extensions/shared"), "#!/bin/sh\n");
    // Settings: a script by suffix, and a link to the project's guard (deduplicated).
    file(&r.join("mine/lint.py"), "");
    std::os::unix::fs::symlink(
        project.join(".jig/extensions/guard"),
        r.join("mine/guard-link"),
    )
    .unwrap();

    let inputs = DiscoveryInputs {
        cli_paths: vec!["config/jig/extensions/shared".into()],
        base_dir: r.clone(),
        no_extensions: false,
        config_dir: Some(config.clone()),
        settings_paths: vec![r.join("mine/lint.py"), r.join("mine/guard-link")],
        pi_user_dir: None,
    };
    let mut diagnostics = Diagnostics::default();

    // Before trust: no project extension at all.
    let pre = discover(&inputs, None, &mut diagnostics);
    assert_eq!(
        tree.show(&pre),
        vec![
            (
                Origin::Cli,
                "config/jig/extensions/shared".into(),
                "executable config/jig/extensions/shared".into()
            ),
            (
                Origin::Global,
                "config/jig/extensions/notes".into(),
                "node config/jig/extensions/notes/index.mjs in config/jig/extensions/notes".into()
            ),
            (
                Origin::Settings,
                "mine/lint.py".into(),
                "python3 mine/lint.py in mine".into()
            ),
            (
                Origin::Settings,
                "app/.jig/extensions/guard".into(),
                "executable app/.jig/extensions/guard".into()
            ),
        ]
    );

    let project = trusted(&project, &config).await;
    let all = discover(&inputs, Some(&project), &mut diagnostics);
    assert_eq!(
        tree.show(&all),
        vec![
            (
                Origin::Cli,
                "config/jig/extensions/shared".into(),
                "executable config/jig/extensions/shared".into()
            ),
            (
                Origin::Project,
                "app/.jig/extensions/guard".into(),
                "executable app/.jig/extensions/guard".into()
            ),
            (
                Origin::Project,
                "app/.jig/extensions/redactor".into(),
                "manifest app/.jig/extensions/redactor".into()
            ),
            (
                Origin::Project,
                "app/.jig/extensions/tools".into(),
                "python3 app/.jig/extensions/tools/index.py in app/.jig/extensions/tools".into()
            ),
            (
                Origin::Project,
                "app/.jig/tools/lint".into(),
                "executable app/.jig/tools/lint".into()
            ),
            (
                Origin::Global,
                "config/jig/extensions/notes".into(),
                "node config/jig/extensions/notes/index.mjs in config/jig/extensions/notes".into()
            ),
            (
                Origin::Settings,
                "mine/lint.py".into(),
                "python3 mine/lint.py in mine".into()
            ),
        ]
    );
    assert!(!diagnostics.has_errors(), "{}", diagnostics.render());
    assert_eq!(diagnostics.render(), "");
}

#[test]
fn a_script_in_an_extensions_directory_that_is_not_executable_is_a_warning() {
    let tree = Tree::new();
    let r = &tree.root;
    let config = r.join("config/jig");
    file(&config.join("extensions/off.py"), "");
    file(&config.join("extensions/README.md"), "");
    let inputs = DiscoveryInputs {
        cli_paths: Vec::new(),
        base_dir: r.clone(),
        no_extensions: false,
        config_dir: Some(config.clone()),
        settings_paths: Vec::new(),
        pi_user_dir: None,
    };
    let mut diagnostics = Diagnostics::default();
    assert!(discover(&inputs, None, &mut diagnostics).is_empty());
    // Not run, and the warning says why; README.md is not a script and passes without a word.
    assert_eq!(
        diagnostics
            .render()
            .replace(&format!("{}/", r.display()), ""),
        "jig: warning: ignoring config/jig/extensions/off.py: a file in an extensions directory runs only when executable (chmod +x it, or move it into a directory as index.<suffix>)\n"
    );
}

#[test]
fn no_extensions_keeps_explicit_paths_and_a_missing_path_is_a_load_error() {
    let tree = Tree::new();
    let r = &tree.root;
    executable(&r.join("cli-ext"), "");
    executable(&r.join("config/jig/extensions/global"), "");
    file(&r.join("not-a-script.txt"), "");
    let mut inputs = DiscoveryInputs {
        cli_paths: vec![
            "cli-ext".into(),
            "missing".into(),
            "not-a-script.txt".into(),
        ],
        base_dir: r.clone(),
        no_extensions: true,
        config_dir: Some(r.join("config/jig")),
        settings_paths: vec![r.join("cli-ext")],
        pi_user_dir: None,
    };
    let mut diagnostics = Diagnostics::default();
    let found = discover(&inputs, None, &mut diagnostics);
    assert_eq!(
        tree.show(&found),
        vec![(Origin::Cli, "cli-ext".into(), "executable cli-ext".into())]
    );
    let text = diagnostics
        .render()
        .replace(&r.display().to_string(), "[ROOT]");
    insta::assert_snapshot!(text, @r#"
    jig: error: Failed to load extension "[ROOT]/missing": Extension path does not exist: [ROOT]/missing
    jig: error: Failed to load extension "[ROOT]/not-a-script.txt": not executable, and no known runtime for its name (.py, .js, .mjs, .cjs, .sh, .rb, .pl)
    Hint: Start without extensions using "jig -ne".
    "#);

    inputs.no_extensions = false;
    inputs.cli_paths = vec!["cli-ext".into()];
    let found = discover(&inputs, None, &mut Diagnostics::default());
    assert_eq!(
        found.len(),
        2,
        "global comes back without -ne; settings' duplicate dropped"
    );
}

#[test]
fn pi_extensions_are_found_in_each_of_pis_forms_and_jig_protocol_scripts_stay_what_they_are() {
    let tree = Tree::new();
    let r = &tree.root;
    let dir = r.join("exts");
    // Pi: a TypeScript file, a JavaScript module with a default export, a directory with
    // index.ts, a package whose package.json lists its modules under `pi.extensions`.
    file(&dir.join("gate.ts"), "export default function (pi) {}\n");
    file(&dir.join("hello.js"), "export default function (pi) {}\n");
    file(
        &dir.join("plan/index.ts"),
        "export default function (pi) {}\n",
    );
    file(
        &dir.join("pkg/package.json"),
        r#"{"name": "pkg", "pi": {"extensions": ["./a.ts", "./b"]}}"#,
    );
    file(&dir.join("pkg/a.ts"), "export default function (pi) {}\n");
    file(
        &dir.join("pkg/b/index.ts"),
        "export default function (pi) {}\n",
    );
    // jig's own protocol: an index.js without a default export, and an executable .js.
    file(
        &dir.join("plain/index.js"),
        "process.stdin.on('data', () => {});\n",
    );
    executable(
        &dir.join("tool.js"),
        "#!/usr/bin/env node\nexport default 1;\n",
    );
    let inputs = DiscoveryInputs {
        cli_paths: vec!["exts".into()],
        base_dir: r.clone(),
        ..DiscoveryInputs::default()
    };
    let mut diagnostics = Diagnostics::default();
    let found = discover(&inputs, None, &mut diagnostics);
    let show: Vec<String> = tree
        .show(&found)
        .into_iter()
        .map(|(_, _, entry)| entry)
        .collect();
    assert_eq!(
        show,
        [
            "pi exts/gate.ts in exts",
            "pi exts/hello.js in exts",
            "pi exts/pkg/a.ts exts/pkg/b/index.ts in exts/pkg",
            "node exts/plain/index.js in exts/plain",
            "pi exts/plan/index.ts in exts/plan",
            "executable exts/tool.js",
        ]
    );
    assert_eq!(diagnostics.render(), "");
}
