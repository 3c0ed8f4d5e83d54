//! Changing the model: `/model` opens a picker of the known models of the provider and of the
//! other providers that can be used now; `/model [--force] [PROVIDER/]ID` switches by name;
//! Ctrl-P in the prompt goes to the next known model of the provider. Another provider's client
//! is built as `jig run --provider NAME` builds it, and every change is recorded in the session.

use std::fmt::Write as _;
use std::io;

use crate::select::Select;
use crate::view::{Line, Style};

use super::App;

/// A provider's model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Choice {
    pub(super) provider: String,
    pub(super) model: String,
}

/// The picker's list: the choices with their labels, a heading (the provider) before each
/// provider's first model, and which one is selected at first (the current model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Picker {
    pub(super) choices: Vec<Choice>,
    pub(super) labels: Vec<String>,
    pub(super) headings: Vec<(usize, String)>,
    pub(super) selected: usize,
}

/// The picker for a session at `current`, listing `groups` (each provider with its known
/// models) in order. The current model is marked, selected, and listed first in its provider's
/// group when the provider does not know it (an id taken with `--force`, or any id at an
/// endpoint whose models are unknown); a provider with no known model is left out.
pub(super) fn picker(current: &Choice, groups: &[(String, Vec<String>)]) -> Picker {
    let mut picker = Picker {
        choices: Vec::new(),
        labels: Vec::new(),
        headings: Vec::new(),
        selected: 0,
    };
    let mut groups = groups.to_vec();
    if !groups
        .iter()
        .any(|(provider, _)| *provider == current.provider)
    {
        groups.insert(0, (current.provider.clone(), Vec::new()));
    }
    for (provider, models) in &groups {
        let mut models: Vec<&str> = models.iter().map(String::as_str).collect();
        if *provider == current.provider && !models.contains(&current.model.as_str()) {
            models.insert(0, &current.model);
        }
        if models.is_empty() {
            continue;
        }
        picker
            .headings
            .push((picker.choices.len(), provider.clone()));
        for model in models {
            let choice = Choice {
                provider: provider.clone(),
                model: model.to_owned(),
            };
            if choice == *current {
                picker.selected = picker.choices.len();
                picker.labels.push(format!("{model} (current)"));
            } else {
                picker.labels.push(model.to_owned());
            }
            picker.choices.push(choice);
        }
    }
    picker
}

/// The model after `current` in `known`, wrapping around (the first when `current` is not
/// among them); `None` when no model is known.
pub(super) fn next_model<'a>(known: &'a [String], current: &str) -> Option<&'a str> {
    let next = known
        .iter()
        .position(|model| model == current)
        .map_or(0, |at| (at + 1) % known.len());
    known.get(next).map(String::as_str)
}

impl App {
    /// `/model`: the picker; `/model [--force] [PROVIDER/]ID` switches at once.
    pub(super) fn model(&mut self, argument: &str) -> io::Result<()> {
        if argument.is_empty() {
            return self.pick_model();
        }
        let (forced, argument) = match argument.strip_prefix("--force") {
            Some(rest) if rest.is_empty() || rest.starts_with(' ') => (true, rest.trim()),
            _ => (false, argument),
        };
        if argument.is_empty() {
            self.say(&[Line::styled(
                "usage: /model [--force] [PROVIDER/]ID, or /model alone to pick one",
                Style::Error,
            )]);
            return Ok(());
        }
        let target = self.target(argument);
        // An id the provider's table does not know is refused (a typo would fail only at the
        // next request), unless forced; at a local or custom endpoint any id goes.
        if !forced
            && self.switch.served_elsewhere(&target.provider) == Some(false)
            && let Err(known) = self
                .config
                .models
                .check_model(&target.provider, &target.model)
            && !known.is_empty()
        {
            let shown = self.shown(&target);
            self.say(&[Line::styled(
                format!(
                    "unknown model `{}` for {}: known are {}; /model --force {shown} uses it anyway",
                    target.model,
                    target.provider,
                    known.join(", ")
                ),
                Style::Error,
            )]);
            return Ok(());
        }
        let shown = self.shown(&target);
        match self.switch_model(&target) {
            Ok(()) => self.note(&format!("model: {shown}")),
            Err(mut error) => {
                if self.takes_any_id() {
                    let current = &self.provider_name;
                    let _ = write!(
                        error,
                        "\nfor {current}'s model of that id: /model {current}/{argument}"
                    );
                }
                let lines: Vec<Line> = error
                    .lines()
                    .map(|line| Line::styled(line, Style::Error))
                    .collect();
                self.say(&lines);
            }
        }
        Ok(())
    }

    /// What `/model ARG` names: `PROVIDER/ID` is that provider's model, unless the current
    /// provider is known to serve a model of that very id (ids may hold a `/`: OpenRouter's
    /// `anthropic/claude-sonnet-4.5`, a local server's `openai/gpt-oss-20b`; `/model
    /// CURRENT/ID` always names the current provider's).
    fn target(&self, argument: &str) -> Choice {
        let current = &self.provider_name;
        if let Some((prefix, rest)) = argument.split_once('/')
            && !rest.is_empty()
            && self.switch.is_provider(prefix)
            && !self
                .switch
                .known_models(current)
                .iter()
                .any(|model| model == argument)
        {
            return Choice {
                provider: prefix.to_owned(),
                model: rest.to_owned(),
            };
        }
        Choice {
            provider: current.clone(),
            model: argument.to_owned(),
        }
    }

    /// Whether the current provider takes any id (a provider jig has no table for, or another
    /// endpoint than the provider's own).
    fn takes_any_id(&self) -> bool {
        self.switch.served_elsewhere(&self.provider_name) != Some(false)
            || self
                .config
                .models
                .known_models(&self.provider_name)
                .is_empty()
    }

    /// A choice as the notes name it: the id alone for the current provider's.
    fn shown(&self, choice: &Choice) -> String {
        if choice.provider == self.provider_name {
            choice.model.clone()
        } else {
            format!("{}/{}", choice.provider, choice.model)
        }
    }

    /// The models of the current provider, then those of the other providers that can be used
    /// now, in a picker; the one chosen becomes the model.
    fn pick_model(&mut self) -> io::Result<()> {
        let current = Choice {
            provider: self.provider_name.clone(),
            model: self.config.model.clone(),
        };
        let known_here = self.switch.known_models(&current.provider);
        let mut groups = vec![(current.provider.clone(), known_here.clone())];
        for name in self.switch.names() {
            if name != current.provider {
                let known = self.switch.known_models(&name);
                groups.push((name, known));
            }
        }
        let picker = picker(&current, &groups);
        let mut title = format!(
            "Switch to which model? (now {}/{})",
            current.provider, current.model
        );
        if known_here.is_empty() {
            let place = match &self.custom_base_url {
                Some(url) => format!("{} at {url}", current.provider),
                None => current.provider.clone(),
            };
            let unknown =
                format!("jig does not know the models of {place}:\nswitch with /model ID");
            if picker.choices.len() <= 1 {
                self.note(&unknown);
                return Ok(());
            }
            title.push('\n');
            title.push_str(&unknown);
        }
        let select = Select::new(&title, picker.labels.clone())
            .with_headings(picker.headings.clone())
            .with_selected(picker.selected);
        let chosen = select
            .run(&mut self.screen)?
            .and_then(|index| picker.choices.get(index));
        match chosen {
            Some(choice) if *choice != current => {
                let choice = choice.clone();
                let shown = self.shown(&choice);
                match self.switch_model(&choice) {
                    Ok(()) => self.note(&format!("model: {shown}")),
                    Err(error) => self.say(&[Line::styled(error, Style::Error)]),
                }
            }
            _ => self.note(&format!("model unchanged: {}", current.model)),
        }
        Ok(())
    }

    /// Ctrl-P: the next known model of the current provider. The note saying what happened.
    pub(super) fn next_model(&mut self) -> String {
        let provider = self.provider_name.clone();
        let known = self.switch.known_models(&provider);
        let Some(next) = next_model(&known, &self.config.model) else {
            return format!("no known models of {provider} to cycle through: /model ID switches");
        };
        if next == self.config.model {
            return format!("model: {next} (the only model jig knows of {provider})");
        }
        let choice = Choice {
            provider,
            model: next.to_owned(),
        };
        match self.switch_model(&choice) {
            Ok(()) => format!("model: {next}"),
            Err(error) => error,
        }
    }

    /// Makes `choice` the model: another provider's client is built (or the one reached
    /// before reused), the context window follows the model, the change is recorded in the
    /// session and the status line shows it.
    fn switch_model(&mut self, choice: &Choice) -> Result<(), String> {
        let (changed, window) = self
            .switch
            .point(
                &mut self.config,
                &self.provider_name,
                &choice.provider,
                &choice.model,
            )
            .map_err(|error| format!("cannot switch to {}: {error}", choice.provider))?;
        if let Some(endpoint) = changed {
            self.provider_name = endpoint.name;
            self.custom_base_url = endpoint.custom_base_url;
            self.custom_endpoint = endpoint.custom;
        }
        self.view.status.context_window = window;
        let written = self.printer.session().append_model_change(
            &self.provider_name,
            &choice.model,
            self.custom_base_url.as_deref(),
            self.custom_endpoint.clone(),
        );
        self.report_session_error(written);
        self.view.status.model = format!("{}/{}", self.provider_name, choice.model);
        self.reload();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(provider: &str, model: &str) -> Choice {
        Choice {
            provider: provider.to_owned(),
            model: model.to_owned(),
        }
    }

    fn group(provider: &str, models: &[&str]) -> (String, Vec<String>) {
        (
            provider.to_owned(),
            models.iter().map(|m| (*m).to_owned()).collect(),
        )
    }

    #[test]
    fn the_picker_groups_providers_and_marks_and_selects_the_current_model() {
        let picker = picker(
            &choice("openai", "gpt-4.1"),
            &[
                group("openai", &["gpt-5", "gpt-4.1"]),
                group("ollama", &[]),
                group("anthropic", &["claude-opus-4-5"]),
            ],
        );
        assert_eq!(
            picker.labels,
            ["gpt-5", "gpt-4.1 (current)", "claude-opus-4-5"]
        );
        assert_eq!(
            picker.headings,
            [(0, "openai".to_owned()), (2, "anthropic".to_owned())]
        );
        assert_eq!(picker.selected, 1);
        assert_eq!(picker.choices[2], choice("anthropic", "claude-opus-4-5"));
    }

    #[test]
    fn a_current_model_the_provider_does_not_know_is_listed_first() {
        let forced = picker(
            &choice("openai", "my-tune"),
            &[group("openai", &["gpt-5"]), group("corp", &["coder"])],
        );
        assert_eq!(forced.labels, ["my-tune (current)", "gpt-5", "coder"]);
        assert_eq!(forced.selected, 0);
        // At an endpoint whose models are unknown, the current one is all its group holds.
        let unknown = picker(
            &choice("openai", "m"),
            &[group("openai", &[]), group("corp", &["coder"])],
        );
        assert_eq!(unknown.labels, ["m (current)", "coder"]);
        assert_eq!(
            unknown.headings,
            [(0, "openai".to_owned()), (1, "corp".to_owned())]
        );
    }

    #[test]
    fn cycling_goes_to_the_next_known_model_and_wraps() {
        let known: Vec<String> = ["a", "b", "c"].map(str::to_owned).to_vec();
        assert_eq!(next_model(&known, "a"), Some("b"));
        assert_eq!(next_model(&known, "c"), Some("a"));
        // From a model the provider does not know: its first.
        assert_eq!(next_model(&known, "forced"), Some("a"));
        assert_eq!(next_model(&[], "a"), None);
        assert_eq!(next_model(&known[..1], "a"), Some("a"));
    }
}
