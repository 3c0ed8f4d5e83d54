//! Project trust in the interactive session: the question at startup (the trust chain's last
//! step, asked before any project extension is discovered or started) and `/trust`.

use std::io;
use std::path::Path;

use crate::screen::{Screen, color_enabled};
use crate::select::Select;
use crate::view::{Line, Style};
use async_trait::async_trait;
use crossterm::terminal;
use jig_project::{
    GatedResource, TrustChoice, TrustPrompt, TrustStep, TrustStore, config_dir, prompt_title,
};

use super::App;

/// Asks "Trust project folder?" in the terminal, with the choices of
/// [`TrustChoice::at_startup`]; Esc (or a terminal error) is no answer: untrusted, not saved.
pub(super) struct TerminalTrustPrompt;

#[async_trait]
impl TrustPrompt for TerminalTrustPrompt {
    async fn ask(&self, project_dir: &Path, gated: &[GatedResource]) -> Option<TrustChoice> {
        let dir = project_dir.to_path_buf();
        let gated: Vec<String> = gated.iter().map(GatedResource::label).collect();
        tokio::task::spawn_blocking(move || {
            let choices = TrustChoice::at_startup(&dir);
            let title = format!("{}\nFound: {}", prompt_title(&dir), gated.join(", "));
            let select = Select::new(
                &title,
                choices.iter().map(|choice| choice.label(&dir)).collect(),
            );
            let (width, _) = terminal::size().unwrap_or((80, 24));
            let mut screen = Screen::new(io::stdout(), width, color_enabled());
            let chosen = select.run(&mut screen).ok().flatten();
            chosen.and_then(|index| choices.get(index).copied())
        })
        .await
        .ok()
        .flatten()
    }
}

impl App {
    /// `/trust`: this session's decision and the saved one; offers to change the saved one
    /// (takes effect at the next start).
    pub(super) fn trust(&mut self) -> io::Result<()> {
        let decision = self.trust.clone();
        let dir = decision.project_dir.clone();
        let store = config_dir().map(|config| TrustStore::in_config_dir(&config));
        let saved = match store.as_ref().map(|store| store.lookup(&dir)) {
            None => "no config directory (set XDG_CONFIG_HOME or HOME)".to_owned(),
            Some(Err(error)) => error.to_string(),
            Some(Ok(None)) => "none".to_owned(),
            Some(Ok(Some(saved))) => {
                let verdict = if saved.trusted {
                    "trusted"
                } else {
                    "untrusted"
                };
                if saved.dir == dir {
                    verdict.to_owned()
                } else {
                    format!("{verdict} (inherited from {})", saved.dir.display())
                }
            }
        };
        let mut text = format!(
            "this session: {}\nsaved decision: {saved}",
            decision.describe()
        );
        if decision.step == TrustStep::NothingToGate {
            text.push_str("\nnothing in this project requires trust today");
        }
        self.note(&text);
        let Some(store) = store else {
            return Ok(());
        };
        let choices = TrustChoice::persistent(&dir);
        let select = Select::new(
            &format!(
                "Change the saved trust decision?\n{}\n\nIt takes effect the next time jig starts here.",
                dir.display()
            ),
            choices.iter().map(|choice| choice.label(&dir)).collect(),
        );
        let Some(choice) = select
            .run(&mut self.screen)?
            .and_then(|index| choices.get(index).copied())
        else {
            self.note("trust decision unchanged");
            return Ok(());
        };
        match choice.save(&dir, &store) {
            Ok(_) => {
                let verdict = if choice.trusted() {
                    "trusted"
                } else {
                    "untrusted"
                };
                self.note(&format!(
                    "Saved trust decision: {verdict}. Restart jig for this to take effect."
                ));
            }
            Err(error) => self.say(&[Line::styled(
                format!("the trust decision was not saved: {error}"),
                Style::Error,
            )]),
        }
        Ok(())
    }
}
