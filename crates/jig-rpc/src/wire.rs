//! The wire: strict JSONL framing (records end at LF only; a trailing CR is dropped), the
//! commands an app sends, and the one writer of stdout.

use std::io::{self, Write as _};
use std::sync::Mutex;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The one writer of stdout: every record is written whole, then flushed, so responses and
/// events written from different tasks never interleave.
pub(crate) struct Out {
    sink: Mutex<Box<dyn io::Write + Send>>,
}

impl Out {
    /// A writer of `sink`.
    pub(crate) fn new(sink: Box<dyn io::Write + Send>) -> Self {
        Self {
            sink: Mutex::new(sink),
        }
    }

    /// Writes `record` as one line. A closed stdout is not an error here: the app went away,
    /// and the session ends when stdin closes.
    pub(crate) fn send(&self, record: &Value) {
        let mut line = serde_json::to_vec(record).unwrap_or_else(|error| {
            // Values built from `json!` and serialisable types: this cannot happen, but if it
            // did the app still gets a record it can read.
            json!({"type": "error", "error": format!("cannot serialise a record: {error}")})
                .to_string()
                .into_bytes()
        });
        line.push(b'\n');
        let mut sink = self
            .sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = sink.write_all(&line).and_then(|()| sink.flush());
    }

    /// A command's response: `data` on success (omitted when `None`), `error` on failure.
    pub(crate) fn respond(&self, id: Option<&Value>, command: &str, result: Reply) {
        self.send(&response(id, command, result));
    }
}

/// What a command answers.
pub(crate) type Reply = Result<Option<Value>, String>;

/// A `response` record.
pub(crate) fn response(id: Option<&Value>, command: &str, result: Reply) -> Value {
    let mut record = json!({"type": "response", "command": command});
    if let Some(id) = id {
        record["id"] = id.clone();
    }
    match result {
        Ok(data) => {
            record["success"] = Value::Bool(true);
            if let Some(data) = data {
                record["data"] = data;
            }
        }
        Err(error) => {
            record["success"] = Value::Bool(false);
            record["error"] = Value::String(error);
        }
    }
    record
}

/// One record read from stdin: a command (`type`, optional `id`, its fields).
#[derive(Debug, Clone)]
pub(crate) struct Command {
    /// The command's `type`.
    pub(crate) kind: String,
    /// The `id` to echo in the response.
    pub(crate) id: Option<Value>,
    /// The whole record.
    pub(crate) body: Value,
}

impl Command {
    /// Parses one line. A line that is not a JSON object with a string `type` is answered
    /// with the error record returned here (`command: "parse"`, as Pi answers it).
    pub(crate) fn parse(line: &[u8]) -> Result<Self, Value> {
        let body: Value = serde_json::from_slice(line).map_err(|error| {
            response(
                None,
                "parse",
                Err(format!("Failed to parse command: {error}")),
            )
        })?;
        let id = body.get("id").filter(|id| !id.is_null()).cloned();
        let Some(kind) = body.get("type").and_then(Value::as_str) else {
            return Err(response(
                id.as_ref(),
                "parse",
                Err("Failed to parse command: a command is a JSON object with a string \"type\" (e.g. {\"type\":\"prompt\",\"message\":\"…\"})".to_owned()),
            ));
        };
        Ok(Self {
            kind: kind.to_owned(),
            id,
            body,
        })
    }

    /// The command's fields as `T`; the error names the command and what was wrong.
    pub(crate) fn fields<T: DeserializeOwned>(&self) -> Result<T, String> {
        T::deserialize(&self.body)
            .map_err(|error| format!("invalid {} command: {error}", self.kind))
    }
}

/// An image attached to a prompt (`ImageContent`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Image {
    /// Base64 of the image's bytes.
    pub(crate) data: String,
    /// Its MIME type.
    pub(crate) mime_type: String,
}

/// `prompt`, `steer` and `follow_up`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptFields {
    /// The text.
    pub(crate) message: String,
    /// Attached images.
    #[serde(default)]
    pub(crate) images: Vec<Image>,
    /// While the agent streams: `steer` or `followUp`.
    #[serde(default)]
    pub(crate) streaming_behavior: Option<String>,
}

/// Splits `buffer` into complete LF-terminated records (a trailing CR dropped from each),
/// leaving an unterminated tail in `buffer`. Unicode line separators are not record ends: they
/// are valid inside JSON strings.
pub(crate) fn take_records(buffer: &mut Vec<u8>) -> Vec<Vec<u8>> {
    let mut records = Vec::new();
    let mut start = 0;
    while let Some(at) = buffer[start..].iter().position(|&byte| byte == b'\n') {
        let end = start + at;
        let mut record = &buffer[start..end];
        if let [rest @ .., b'\r'] = record {
            record = rest;
        }
        records.push(record.to_vec());
        start = end + 1;
    }
    buffer.drain(..start);
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn records_end_at_lf_only_and_lose_a_trailing_cr() {
        let mut buffer = "{\"a\":\"x\u{2028}y\"}\r\n{\"b\":1}\n{\"c\""
            .as_bytes()
            .to_vec();
        let records = take_records(&mut buffer);
        assert_eq!(
            records,
            vec![
                "{\"a\":\"x\u{2028}y\"}".as_bytes().to_vec(),
                b"{\"b\":1}".to_vec()
            ]
        );
        assert_eq!(buffer, b"{\"c\"".to_vec());
    }

    #[test]
    fn a_bad_line_is_answered_as_a_parse_error() {
        let error = Command::parse(b"{nope").unwrap_err();
        assert_eq!(error["command"], "parse");
        assert_eq!(error["success"], false);
        assert!(
            error["error"]
                .as_str()
                .unwrap()
                .starts_with("Failed to parse command:")
        );
        let untyped = Command::parse(br#"{"id":"r1"}"#).unwrap_err();
        assert_eq!(untyped["id"], "r1");
        assert_eq!(untyped["command"], "parse");
    }

    #[test]
    fn responses_carry_the_id_and_data_or_error() {
        let id = json!("req-1");
        assert_eq!(
            response(Some(&id), "get_state", Ok(Some(json!({"x": 1})))),
            json!({"type": "response", "command": "get_state", "id": "req-1", "success": true, "data": {"x": 1}})
        );
        assert_eq!(
            response(None, "fork", Err("no".to_owned())),
            json!({"type": "response", "command": "fork", "success": false, "error": "no"})
        );
    }
}
