//! JSON-RPC 2.0 over strict JSONL on stdio, both ways: the client's requests and
//! notifications come in; jig's requests to the client (permission, files, terminals) go out
//! and their responses are matched by id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use jig_session::jsonl::Writer;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    pub(crate) code: i64,
    pub(crate) message: String,
}

impl RpcError {
    /// The request's params are not what the method takes.
    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        Self {
            code: -32602,
            message: message.into(),
        }
    }

    /// The method is not one jig answers.
    pub(crate) fn method_not_found(method: &str) -> Self {
        Self {
            code: -32601,
            message: format!("Method not found: {method}"),
        }
    }

    /// Anything else that went wrong, said in words.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self {
            code: -32603,
            message: message.into(),
        }
    }

    fn to_json(&self) -> Value {
        json!({"code": self.code, "message": self.message})
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (JSON-RPC error {})", self.message, self.code)
    }
}

/// One message from the client.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A request: answer it with [`Peer::respond`].
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification.
    Notification { method: String, params: Value },
    /// A line that is no JSON-RPC message: answered with this error (id `null`).
    Invalid(RpcError),
}

/// The JSON-RPC peer: jig's side of the connection.
pub(crate) struct Peer {
    out: Writer,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
    next: AtomicU64,
}

impl Peer {
    pub(crate) fn new(out: Writer) -> Arc<Self> {
        Arc::new(Self {
            out,
            pending: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        })
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Value) {
        let mut record = json!({"jsonrpc": "2.0", "method": method});
        record["params"] = params;
        self.out.send(&record);
    }

    /// Answers the request `id`.
    pub(crate) fn respond(&self, id: &Value, result: Result<Value, RpcError>) {
        let record = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()}),
        };
        self.out.send(&record);
    }

    /// Sends a request to the client and waits for its response.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending().insert(id, tx);
        self.out
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.await.unwrap_or_else(|_| {
            Err(RpcError::internal(format!(
                "the client closed the connection before answering {method}"
            )))
        })
    }

    /// Delivers `record` when it is the response to one of jig's requests; false otherwise.
    pub(crate) fn deliver(&self, record: &Value) -> bool {
        if record.get("method").is_some() {
            return false;
        }
        let Some(id) = record.get("id").and_then(Value::as_u64) else {
            return false;
        };
        let Some(reply) = self.pending().remove(&id) else {
            return false;
        };
        let result = match record.get("error") {
            Some(error) => Err(RpcError {
                code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the client answered with an error")
                    .to_owned(),
            }),
            None => Ok(record.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = reply.send(result);
        true
    }

    /// Ends every request waiting for the client (it went away).
    pub(crate) fn close(&self) {
        self.pending().clear();
    }
}

/// Parses one line from the client.
pub(crate) fn parse(line: &[u8]) -> Incoming {
    let record: Value = match serde_json::from_slice(line) {
        Ok(record) => record,
        Err(error) => {
            return Incoming::Invalid(RpcError {
                code: -32700,
                message: format!("Parse error: {error}"),
            });
        }
    };
    let Some(method) = record.get("method").and_then(Value::as_str) else {
        return Incoming::Invalid(RpcError {
            code: -32600,
            message: "Invalid Request: a JSON-RPC message with a \"method\"".to_owned(),
        });
    };
    let params = record.get("params").cloned().unwrap_or(Value::Null);
    match record.get("id") {
        Some(id) if !id.is_null() => Incoming::Request {
            id: id.clone(),
            method: method.to_owned(),
            params,
        },
        _ => Incoming::Notification {
            method: method.to_owned(),
            params,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_and_garbage_are_told_apart() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            Incoming::Request { method, .. } if method == "initialize"
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#),
            Incoming::Notification { method, .. } if method == "session/cancel"
        ));
        assert!(matches!(
            parse(b"{oops"),
            Incoming::Invalid(RpcError { code: -32700, .. })
        ));
        assert!(matches!(
            parse(b"{\"id\":3}"),
            Incoming::Invalid(RpcError { code: -32600, .. })
        ));
    }
}
