//! Dialogs over the wire: the extension UI sub-protocol. An extension's `select`, `confirm`
//! and `input` become an `extension_ui_request` the app answers with an
//! `extension_ui_response` of the same `id`; `notify` is sent and not answered. jig's own
//! permission questions (`--permission-mode ask`) use the same `select` dialog: the app sees
//! the question and the answers the terminal offers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use jig_extensions::UiRequest;
use jig_session::approval::{Answer, ApprovalRequest, Approver};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::wire::Out;

/// The dialogs waiting for the app's answer.
pub(crate) struct Dialogs {
    out: Arc<Out>,
    pending: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    next: AtomicU64,
}

/// Forgets a dialog whose asker went away (an aborted turn).
struct Waiting<'a> {
    dialogs: &'a Dialogs,
    id: String,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.dialogs.pending().remove(&self.id);
    }
}

impl Dialogs {
    pub(crate) fn new(out: Arc<Out>) -> Arc<Self> {
        Arc::new(Self {
            out,
            pending: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        })
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<String, oneshot::Sender<Value>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `request` (an `extension_ui_request` without its `id`) and waits for the answer;
    /// `None` when the session is closing.
    async fn ask(&self, mut request: Value) -> Option<Value> {
        let id = format!("ui-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (reply, answer) = oneshot::channel();
        self.pending().insert(id.clone(), reply);
        let _waiting = Waiting {
            dialogs: self,
            id: id.clone(),
        };
        request["type"] = json!("extension_ui_request");
        request["id"] = json!(id);
        self.out.send(&request);
        answer.await.ok()
    }

    /// Routes an `extension_ui_response` to the dialog it answers; false when no dialog has
    /// its id (answered already, or never asked).
    pub(crate) fn answer(&self, response: &Value) -> bool {
        let Some(id) = response.get("id").and_then(Value::as_str) else {
            return false;
        };
        match self.pending().remove(id) {
            Some(reply) => reply.send(response.clone()).is_ok(),
            None => false,
        }
    }

    /// Ends every open dialog as cancelled (the app closed stdin).
    pub(crate) fn cancel_all(&self) {
        for (_, reply) in self.pending().drain() {
            let _ = reply.send(json!({"cancelled": true}));
        }
    }
}

fn cancelled(response: &Value) -> bool {
    response.get("cancelled").and_then(Value::as_bool) == Some(true)
}

#[async_trait]
impl jig_session::extensions::ExtensionUi for Dialogs {
    async fn ask(&self, _extension: &str, request: UiRequest) -> Value {
        let fallback = request.no_ui_answer();
        let asked = match &request {
            UiRequest::Notify { message } => {
                self.out.send(&json!({
                    "type": "extension_ui_request",
                    "id": format!("ui-{}", self.next.fetch_add(1, Ordering::Relaxed)),
                    "method": "notify",
                    "message": message,
                    "notifyType": "info",
                }));
                return Value::Null;
            }
            UiRequest::Select { title, options } => {
                json!({"method": "select", "title": title, "options": options})
            }
            UiRequest::Confirm { title, message } => {
                json!({"method": "confirm", "title": title, "message": message.clone().unwrap_or_default()})
            }
            UiRequest::Input { title, placeholder } => {
                json!({"method": "input", "title": title, "placeholder": placeholder})
            }
        };
        let Some(response) = Dialogs::ask(self, asked).await else {
            return fallback;
        };
        if cancelled(&response) {
            return fallback;
        }
        match request {
            UiRequest::Confirm { .. } => response
                .get("confirmed")
                .and_then(Value::as_bool)
                .map_or(fallback, Value::Bool),
            _ => response
                .get("value")
                .and_then(Value::as_str)
                .map_or(fallback, |value| Value::String(value.to_owned())),
        }
    }
}

#[async_trait]
impl Approver for Dialogs {
    async fn ask(&self, request: ApprovalRequest) -> Answer {
        let choices = request.choices();
        let asked = json!({
            "method": "select",
            "title": request.title(),
            "options": choices.iter().map(|choice| choice.label.as_str()).collect::<Vec<_>>(),
        });
        let Some(response) = Dialogs::ask(self, asked).await else {
            return Answer::Deny(Some("the session is closing".to_owned()));
        };
        let chosen = response.get("value").and_then(Value::as_str);
        choices
            .into_iter()
            .find(|choice| Some(choice.label.as_str()) == chosen)
            .map_or(Answer::Deny(None), |choice| choice.answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jig_session::extensions::ExtensionUi;

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn last_request(sink: &Sink) -> Value {
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        serde_json::from_str(text.lines().last().unwrap()).unwrap()
    }

    async fn answered(dialogs: &Arc<Dialogs>, sink: &Sink, answer: Value) {
        loop {
            tokio::task::yield_now().await;
            if sink.0.lock().unwrap().is_empty() {
                continue;
            }
            let mut response = answer.clone();
            response["id"] = last_request(sink)["id"].clone();
            assert!(dialogs.answer(&response));
            return;
        }
    }

    #[tokio::test]
    async fn a_confirm_is_asked_and_answered_by_id() {
        let sink = Sink::default();
        let dialogs = Dialogs::new(Arc::new(Out::new(Box::new(sink.clone()))));
        let asking = {
            let dialogs = Arc::clone(&dialogs);
            tokio::spawn(async move {
                ExtensionUi::ask(
                    dialogs.as_ref(),
                    "ext",
                    UiRequest::Confirm {
                        title: "Clear?".into(),
                        message: Some("All lost".into()),
                    },
                )
                .await
            })
        };
        answered(
            &dialogs,
            &sink,
            json!({"type": "extension_ui_response", "confirmed": true}),
        )
        .await;
        assert_eq!(asking.await.unwrap(), Value::Bool(true));
        let request = last_request(&sink);
        assert_eq!(request["method"], "confirm");
        assert_eq!(request["message"], "All lost");
        // Answered once: the same id again reaches no dialog.
        assert!(!dialogs.answer(&json!({"id": request["id"], "confirmed": false})));
    }

    #[tokio::test]
    async fn a_permission_question_maps_the_chosen_label_back_to_its_answer() {
        let sink = Sink::default();
        let dialogs = Dialogs::new(Arc::new(Out::new(Box::new(sink.clone()))));
        let asking = {
            let dialogs = Arc::clone(&dialogs);
            tokio::spawn(async move {
                Approver::ask(
                    dialogs.as_ref(),
                    ApprovalRequest::new("bash", &json!({"command": "cargo test"}), None),
                )
                .await
            })
        };
        answered(
            &dialogs,
            &sink,
            json!({"value": "Always allow `cargo test …` in this session"}),
        )
        .await;
        assert_eq!(
            asking.await.unwrap(),
            Answer::AllowPrefix("cargo test".into(), jig_session::approval::Scope::Session)
        );
        let cancelled = {
            let dialogs = Arc::clone(&dialogs);
            tokio::spawn(async move {
                Approver::ask(
                    dialogs.as_ref(),
                    ApprovalRequest::new("write", &json!({"path": "a"}), None),
                )
                .await
            })
        };
        answered(&dialogs, &sink, json!({"cancelled": true})).await;
        assert_eq!(cancelled.await.unwrap(), Answer::Deny(None));
    }
}
