//! The commands that change how the next runs go: the model, the thinking level, the queues'
//! modes, automatic compaction and retry.

use std::sync::atomic::Ordering;

use jig_llm::ThinkingLevel;
use serde_json::{Value, json};

use super::{Fields, Server};
use crate::wire::{Command, Reply};

impl Server {
    /// The reply to a command of this kind, `None` when `command` is not one.
    pub(super) fn configure(&mut self, command: &Command) -> Option<Reply> {
        let fields = || command.fields::<Fields>();
        Some(match command.kind.as_str() {
            "get_available_models" => Ok(Some(json!({"models": self.available_models()}))),
            "set_model" => match fields() {
                Ok(Fields {
                    provider: Some(provider),
                    model_id: Some(model),
                    ..
                }) => self
                    .set_model(&provider, &model)
                    .map(|()| Some(self.model_json())),
                Ok(_) => Err("set_model needs \"provider\" and \"modelId\"".to_owned()),
                Err(error) => Err(error),
            },
            "cycle_model" => self.cycle_model(),
            "set_thinking_level" => match fields() {
                Ok(Fields {
                    level: Some(level), ..
                }) => self.set_thinking(&level).map(|()| None),
                Ok(_) => Err("set_thinking_level needs \"level\"".to_owned()),
                Err(error) => Err(error),
            },
            "cycle_thinking_level" => {
                let next = match self.config.thinking {
                    ThinkingLevel::Off => "low",
                    ThinkingLevel::Low => "medium",
                    ThinkingLevel::Medium => "high",
                    ThinkingLevel::High => "off",
                };
                self.set_thinking(next)
                    .map(|()| Some(json!({"level": next})))
            }
            "set_steering_mode" | "set_follow_up_mode" => match fields() {
                Ok(Fields {
                    mode: Some(mode), ..
                }) if mode == "all" || mode == "one-at-a-time" => {
                    let flag = if command.kind == "set_steering_mode" {
                        &self.queues.steering_all
                    } else {
                        &self.queues.follow_ups_all
                    };
                    flag.store(mode == "all", Ordering::Relaxed);
                    Ok(None)
                }
                Ok(_) => Err(format!(
                    "{} needs \"mode\": \"all\" or \"one-at-a-time\"",
                    command.kind
                )),
                Err(error) => Err(error),
            },
            "set_auto_compaction" => match fields() {
                Ok(Fields {
                    enabled: Some(enabled),
                    ..
                }) => self.set_auto_compaction(enabled).map(|()| None),
                Ok(_) => Err("set_auto_compaction needs \"enabled\": true or false".to_owned()),
                Err(error) => Err(error),
            },
            "set_auto_retry" => match fields() {
                Ok(Fields {
                    enabled: Some(enabled),
                    ..
                }) => self.idle("change automatic retry").map(|()| {
                    self.config.auto_retry = enabled;
                    self.rebuild();
                    None
                }),
                Ok(_) => Err("set_auto_retry needs \"enabled\": true or false".to_owned()),
                Err(error) => Err(error),
            },
            _ => return None,
        })
    }

    /// A model as `get_state` and `get_available_models` show it (Pi's `Model`, with what
    /// jig knows of it).
    fn model_entry(&self, provider: &str, model: &str) -> Value {
        let mut entry = json!({
            "id": model,
            "name": model,
            "provider": provider,
            "contextWindow": self.switch.context_window(provider, model),
        });
        if let Some(cost) = self.config.models.cost(provider, model) {
            entry["cost"] = json!(cost);
        }
        entry
    }

    /// The current model.
    pub(super) fn model_json(&self) -> Value {
        let mut entry = self.model_entry(&self.provider_name, &self.config.model);
        if let Some(url) = &self.custom_base_url {
            entry["baseUrl"] = json!(url);
        }
        entry
    }

    /// The known models of every provider that can be used now, the current one first.
    fn available_models(&self) -> Vec<Value> {
        self.switch
            .choices((&self.provider_name, &self.config.model))
            .iter()
            .map(|(provider, model)| self.model_entry(provider, model))
            .collect()
    }

    /// Makes `provider`/`model` the model of the next runs, recorded in the session.
    fn set_model(&mut self, provider: &str, model: &str) -> Result<(), String> {
        self.idle("change the model")?;
        let (changed, window) = self
            .switch
            .point(&mut self.config, &self.provider_name, provider, model)
            .map_err(|error| format!("Model not found: {provider}/{model}: {error}"))?;
        if let Some(endpoint) = changed {
            self.provider_name = endpoint.name;
            self.custom_base_url = endpoint.custom_base_url;
            self.custom_endpoint = endpoint.custom;
        }
        if let Some(compaction) = &mut self.compaction_off {
            compaction.context_window = window;
        }
        let written = self.writer.session().append_model_change(
            &self.provider_name,
            model,
            self.custom_base_url.as_deref(),
            self.custom_endpoint.clone(),
        );
        if let Err(error) = written {
            jig_session::warn(&format!("the session could not be saved: {error:#}"));
        }
        self.rebuild();
        Ok(())
    }

    /// The provider's next known model (`null` when it knows no other).
    fn cycle_model(&mut self) -> Reply {
        let known = self.switch.known_models(&self.provider_name);
        let next = known
            .iter()
            .position(|model| *model == self.config.model)
            .map_or(0, |at| (at + 1) % known.len().max(1));
        match known.get(next) {
            Some(model) if *model != self.config.model => {
                let (provider, model) = (self.provider_name.clone(), model.clone());
                self.set_model(&provider, &model)?;
                Ok(Some(json!({
                    "model": self.model_json(),
                    "thinkingLevel": self.config.thinking.as_str(),
                    "isScoped": false,
                })))
            }
            _ => Ok(Some(Value::Null)),
        }
    }

    fn set_thinking(&mut self, level: &str) -> Result<(), String> {
        let thinking: ThinkingLevel = level.parse().map_err(|_| {
            format!("unknown thinking level {level:?}: jig's levels are off, low, medium and high")
        })?;
        self.idle("change the thinking level")?;
        self.config.thinking = thinking;
        if let Err(error) = self.writer.session().append_thinking_level(thinking) {
            jig_session::warn(&format!("the session could not be saved: {error:#}"));
        }
        self.rebuild();
        Ok(())
    }

    fn set_auto_compaction(&mut self, enabled: bool) -> Result<(), String> {
        self.idle("change automatic compaction")?;
        if enabled {
            if self.config.compaction.is_none() {
                self.config.compaction = self.compaction_off.take();
            }
        } else if let Some(compaction) = self.config.compaction.take() {
            self.compaction_off = Some(compaction);
        }
        self.rebuild();
        Ok(())
    }
}
