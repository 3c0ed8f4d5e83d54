//! A real workspace in a temp directory and a way to run `jig` against it.
//!
//! Layout: `<base>/ws` is the workspace (and `--cwd`); `<base>/outside`, `<base>/ws_evil`,
//! `<base>/ws-x` and `<base>/ws.bak` hold files containment must keep out.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test set-up helpers fail loudly"
)]

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

pub(crate) struct Sandbox {
    _base: TempDir,
    pub(crate) base: PathBuf,
    pub(crate) ws: PathBuf,
}

impl Sandbox {
    pub(crate) fn new() -> Self {
        let base = tempfile::tempdir().unwrap();
        // Canonical, so messages and snapshots see one spelling.
        let root = fs::canonicalize(base.path()).unwrap();
        let ws = root.join("ws");
        fs::create_dir(&ws).unwrap();
        for dir in ["outside", "ws_evil", "ws-x", "ws.bak"] {
            fs::create_dir(root.join(dir)).unwrap();
            fs::write(root.join(dir).join("secret.txt"), "secret\n").unwrap();
        }
        Self {
            _base: base,
            base: root,
            ws,
        }
    }

    pub(crate) fn file(&self, relative: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.ws.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&path, content).unwrap();
        path
    }

    pub(crate) fn symlink(&self, target: impl AsRef<Path>, link: &str) {
        std::os::unix::fs::symlink(target, self.ws.join(link)).unwrap();
    }

    /// `jig` with `--cwd` set to the workspace.
    pub(crate) fn jig(&self, tool: &str, args: &Value) -> Command {
        let mut command = jig();
        command
            .arg("tool")
            .arg(tool)
            .arg("--cwd")
            .arg(&self.ws)
            .arg("--args")
            .arg(args.to_string());
        command
    }

    /// Every file below the base directory with its content (symlinks listed as `-> target`).
    pub(crate) fn snapshot_tree(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        collect(&self.base, &self.base, &mut out);
        out.sort();
        out
    }

    /// Replaces the temp base path in `text` with `[BASE]`.
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(&self.base.display().to_string(), "[BASE]")
    }
}

fn collect(base: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let relative = path.strip_prefix(base).unwrap().to_path_buf();
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            out.push((
                relative,
                format!("-> {}", fs::read_link(&path).unwrap().display()),
            ));
        } else if kind.is_dir() {
            out.push((relative.clone(), "<dir>".to_owned()));
            collect(base, &path, out);
        } else {
            out.push((
                relative,
                String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned(),
            ));
        }
    }
}

pub(crate) fn jig() -> Command {
    let mut command = Command::cargo_bin("jig").unwrap();
    command.env_remove("JIG_TIMING");
    command
}

pub(crate) fn stdout_of(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

pub(crate) fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// An MCP client session with `jig mcp EXTRA…` started in `cwd` (stderr discarded).
pub(crate) async fn mcp_client(
    cwd: &Path,
    extra: &[&str],
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    use rmcp::ServiceExt as _;
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_jig"));
    command
        .arg("mcp")
        .args(extra)
        .current_dir(cwd)
        .env_remove("JIG_TIMING")
        .stderr(std::process::Stdio::null());
    let transport = rmcp::transport::TokioChildProcess::new(command).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(30), ().serve(transport))
        .await
        .expect("initialize timed out")
        .expect("initialize failed")
}

/// Calls `tool` with `args` (a JSON object) through `client`.
pub(crate) async fn mcp_call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &str,
    args: Value,
) -> rmcp::model::CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be a JSON object, got {args}");
    };
    client
        .call_tool(rmcp::model::CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .unwrap()
}

/// The text blocks of a result, joined by newlines.
pub(crate) fn mcp_text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            rmcp::model::ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
