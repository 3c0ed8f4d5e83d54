//! Agent-loop tests with a scripted provider: tool pairing, hooks, concurrency, limits, aborts,
//! and seed 002's read → edit → bash → final run on a real workspace.
#![allow(
    unreachable_pub,
    missing_docs,
    missing_debug_implementations,
    reason = "test helpers"
)]

mod compaction;
mod loop_behaviour;
mod seed_002;
mod turn_hooks;

mod tools;

use std::sync::{Arc, Mutex};

use jig_agent::{AgentEvent, AgentObserver};

/// Collects events.
#[derive(Default)]
pub struct Recorder {
    pub events: Mutex<Vec<AgentEvent>>,
}

impl Recorder {
    pub fn shared() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn events(&self) -> Vec<AgentEvent> {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The `type` of each event, from its JSON form.
    pub fn kinds(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(|event| {
                let value = serde_json::to_value(event).unwrap_or_default();
                value["type"].as_str().unwrap_or_default().to_owned()
            })
            .collect()
    }
}

impl AgentObserver for Recorder {
    fn on_event(&self, event: &AgentEvent) {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(event.clone());
    }
}
