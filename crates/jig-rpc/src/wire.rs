//! The wire: the commands an app sends and the responses jig writes (the framing is
//! [`jig_session::jsonl`]'s).

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The one writer of stdout, with a command's response.
pub(crate) struct Out(jig_session::jsonl::Writer);

impl Out {
    /// A writer of `sink`.
    pub(crate) fn new(sink: Box<dyn std::io::Write + Send>) -> Self {
        Self(jig_session::jsonl::Writer::new(sink))
    }

    /// Writes `record` as one line.
    pub(crate) fn send(&self, record: &Value) {
        self.0.send(record);
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
