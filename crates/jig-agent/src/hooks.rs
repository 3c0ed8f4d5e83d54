//! [`TurnHooks`]: how hosts and extensions plug into every model request and finished message
//! (the hooks around every tool call are `jig_tool::ToolHooks`).

use async_trait::async_trait;
use jig_protocol::Message;
use jig_tool::NoHooks;

use crate::compaction::CompactionReason;

/// Host-supplied hooks around each model request and each finished message: how extensions
/// steer a run (messages queued while it runs), rewrite what the model is sent, narrow the
/// tools it is offered, replace finished messages and cancel a compaction.
///
/// # Implementing
/// Every method has a pass-through default. The sync methods are called once per turn and must
/// be cheap; the async ones are awaited on the run's path.
#[async_trait]
pub trait TurnHooks: Send + Sync {
    /// Messages to add to the conversation before the next model request (steering): called
    /// before every request, and when the model stops calling tools (any message then makes
    /// the run go on).
    fn take_steering(&self) -> Vec<Message> {
        Vec::new()
    }

    /// Messages to add when the run would otherwise end (follow-ups): the run goes on with
    /// them.
    fn take_follow_ups(&self) -> Vec<Message> {
        Vec::new()
    }

    /// Tools added to the session since the last call (an extension registered them after
    /// loading): from the next request on they can be offered and called.
    fn take_new_tools(&self) -> Vec<std::sync::Arc<dyn jig_tool::DynTool>> {
        Vec::new()
    }

    /// The names of the tools offered from the next request on; `None` offers all of them. A
    /// tool left out cannot be called either (`Tool <name> not found`).
    fn active_tools(&self) -> Option<Vec<String>> {
        None
    }

    /// The messages the next request sends (a copy: the conversation is not changed).
    async fn context(&self, messages: Vec<Message>) -> Vec<Message> {
        messages
    }

    /// A finished message (the prompt, a reply, a tool result, a steering message), before it
    /// joins the conversation; the returned one is what is kept and recorded.
    async fn message_end(&self, message: Message) -> Message {
        message
    }

    /// Whether to cancel a compaction that is about to happen.
    async fn cancel_compaction(&self, reason: CompactionReason) -> bool {
        let _ = reason;
        false
    }
}

impl TurnHooks for NoHooks {}
