use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use jig_extensions::{
    ExtensionHandle, ExtensionRunner, LoadOptions, RecordingHost, SessionInfo, Timeouts,
};

/// The repository root.
pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `examples/extensions/<name>`.
pub(crate) fn example(name: &str) -> PathBuf {
    repo_root().join("examples/extensions").join(name)
}

/// `tests/it/fixtures/<name>`.
pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures")
        .join(name)
}

pub(crate) fn options(cwd: &Path) -> LoadOptions {
    LoadOptions::new(cwd)
}

/// Short timeouts so fault tests finish quickly.
pub(crate) fn quick() -> Timeouts {
    Timeouts {
        decision: Duration::from_millis(1500),
        notification: Duration::from_millis(500),
        tool: Duration::from_secs(5),
    }
}

pub(crate) fn runner(extensions: Vec<Arc<dyn ExtensionHandle>>) -> ExtensionRunner {
    let mut runner = ExtensionRunner::new(quick());
    for extension in extensions {
        runner.add(extension).unwrap();
    }
    runner
}

pub(crate) fn host() -> Arc<RecordingHost> {
    RecordingHost::new(SessionInfo {
        session_id: Some("s-1".to_owned()),
        cwd: "/work".to_owned(),
        mode: "print".to_owned(),
        ..SessionInfo::default()
    })
}

/// A ready-to-run Python fixture extension: `python3 ext.py MODE`.
pub(crate) fn python_fixture(mode: &str) -> Vec<std::ffi::OsString> {
    vec![
        "python3".into(),
        fixture("ext.py").into_os_string(),
        mode.into(),
    ]
}
