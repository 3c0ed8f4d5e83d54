//! What the end-to-end tests with Node clients share: a workspace with a private HOME and XDG
//! directories, the scripted model, and a client script run to the JSON object it prints.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers panic when the setup fails"
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use jig_llm::scripted::ScriptedReply;
use jig_llm::testing::{ReplayResponse, ReplayServer};
use serde_json::{Value, json};

use crate::extensions::reply;

/// A workspace, private HOME and XDG directories, and the scripted model.
pub(crate) struct Rig {
    _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) ws: PathBuf,
    pub(crate) server: ReplayServer,
}

impl Rig {
    pub(crate) async fn new(responses: Vec<ReplayResponse>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("ws");
        fs::create_dir_all(&ws).unwrap();
        Self {
            _dir: dir,
            root,
            ws,
            server: ReplayServer::start(responses).await.unwrap(),
        }
    }

    pub(crate) fn base_url(&self) -> String {
        format!("{}/v1", self.server.url())
    }

    /// `program` in the workspace, with the private directories, no keys or endpoints from the
    /// environment, and `JIG_BIN`, `JIG_BASE_URL`, `JIG_WS` for the client scripts.
    pub(crate) fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(&self.ws)
            .env("JIG_BIN", env!("CARGO_BIN_EXE_jig"))
            .env("JIG_BASE_URL", self.base_url())
            .env("JIG_WS", &self.ws)
            .env("HOME", self.root.join("home"))
            .env("XDG_DATA_HOME", self.root.join("data"))
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_BASE_URL");
        command
    }

    /// Runs `node SCRIPT SCENARIO` (the script under `tests/`) with `vars`; the JSON object it
    /// printed last.
    pub(crate) async fn script(
        &self,
        script: &str,
        scenario: &str,
        vars: &[(&str, &str)],
    ) -> Value {
        let mut command = self.command("node");
        command
            .arg(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests")
                    .join(script),
            )
            .arg(scenario)
            .envs(vars.iter().copied());
        let output = run(command).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{script} {scenario} failed ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_str(stdout.lines().last().unwrap_or_default())
            .unwrap_or_else(|error| panic!("{error}: {stdout}"))
    }
}

/// Runs `command` to its end off the async runtime.
pub(crate) async fn run(mut command: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

/// The scripted model's replies for "read greeting.txt, fix its typo, show it".
pub(crate) fn read_edit_run() -> Vec<ReplayResponse> {
    vec![
        reply(ScriptedReply::tool_call(
            "c1",
            "read",
            json!({"path": "greeting.txt"}),
        )),
        reply(ScriptedReply::tool_call(
            "c2",
            "edit",
            json!({"path": "greeting.txt", "edits": [{"oldText": "helo", "newText": "hello"}]}),
        )),
        reply(ScriptedReply::tool_call(
            "c3",
            "bash",
            json!({"command": "cat greeting.txt"}),
        )),
        reply(ScriptedReply::text("Fixed the greeting.")),
    ]
}
