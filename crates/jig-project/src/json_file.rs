//! Reading a small JSON settings file (the user's or a project's) safely: only a regular file,
//! at most [`MAX_SETTINGS_BYTES`], one JSON object.

use std::io::Read as _;
use std::path::Path;

use jig_env::{ErrorKind, ExecutionEnv, FileKind};
use serde_json::{Map, Value};

/// Settings files larger than this are not read (a settings file is a few hundred bytes).
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// What reading a JSON settings file gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// There is no such file.
    Missing,
    /// The file exists but is not a readable JSON object: the reason.
    Invalid(String),
    /// The file's object.
    Object(Map<String, Value>),
}

/// Reads `path` as one JSON object. Only a regular file is read (a FIFO or device would block
/// or never end), and at most [`MAX_SETTINGS_BYTES`].
pub(crate) fn read_json_object(path: &Path) -> ReadOutcome {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return ReadOutcome::Missing,
        Err(error) => return ReadOutcome::Invalid(error.to_string()),
    };
    if !metadata.is_file() {
        return ReadOutcome::Invalid("not a regular file".to_owned());
    }
    let mut text = String::new();
    let read = std::fs::File::open(path).and_then(|file| {
        file.take(MAX_SETTINGS_BYTES + 1)
            .read_to_string(&mut text)
            .map(|_| ())
    });
    if let Err(error) = read {
        return ReadOutcome::Invalid(error.to_string());
    }
    if text.len() as u64 > MAX_SETTINGS_BYTES {
        return ReadOutcome::Invalid(format!("larger than {MAX_SETTINGS_BYTES} bytes"));
    }
    parse_json_object(&text)
}

/// [`read_json_object`] through an execution environment (a project on another machine).
pub(crate) async fn read_json_object_in(env: &dyn ExecutionEnv, path: &Path) -> ReadOutcome {
    let limit = usize::try_from(MAX_SETTINGS_BYTES).unwrap_or(usize::MAX);
    let head = match env.read_head(path, limit).await {
        Ok(head) => head,
        Err(error) if error.kind() == ErrorKind::NotFound => return ReadOutcome::Missing,
        Err(error) => return ReadOutcome::Invalid(error.to_string()),
    };
    if head.info.kind != FileKind::File {
        return ReadOutcome::Invalid("not a regular file".to_owned());
    }
    if !head.complete {
        return ReadOutcome::Invalid(format!("larger than {MAX_SETTINGS_BYTES} bytes"));
    }
    match String::from_utf8(head.bytes) {
        Ok(text) => parse_json_object(&text),
        Err(error) => ReadOutcome::Invalid(error.to_string()),
    }
}

fn parse_json_object(text: &str) -> ReadOutcome {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => ReadOutcome::Object(object),
        Ok(_) => ReadOutcome::Invalid("expected a JSON object".to_owned()),
        Err(error) => ReadOutcome::Invalid(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_path_that_is_not_a_regular_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("settings.json")).unwrap();
        assert!(matches!(
            read_json_object(&dir.path().join("settings.json")),
            ReadOutcome::Invalid(reason) if reason == "not a regular file"
        ));
    }
}
