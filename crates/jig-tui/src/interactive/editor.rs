//! The prompt editor: reedline with history, multi-line input (Alt-Enter or Ctrl-J for a new
//! line, bracketed paste), Tab completion of `/commands` and `@path`s of the workspace, Ctrl-P
//! for the next model, and a prompt whose first line is the status line.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use reedline::{
    ColumnarMenu, Completer, CompletionResult, DefaultHinter, Emacs, FileBackedHistory, KeyCode,
    KeyModifiers, MenuBuilder as _, Prompt, PromptEditMode, PromptHistorySearch,
    PromptHistorySearchStatus, Reedline, ReedlineEvent, ReedlineMenu, Span, Suggestion,
    default_emacs_keybindings,
};

use super::COMMANDS;

/// Most files listed for `@path` completion.
const MAX_FILES: usize = 20_000;

/// Lines kept in the history file.
const HISTORY_SIZE: usize = 1_000;

/// What the editor returns for Ctrl+O (show the last shortened tool result whole); what was
/// typed stays in the editor.
pub(super) const EXPAND: &str = "\u{0}expand";

/// What the editor returns (as a host command) for Ctrl-P: switch to the next model.
pub(super) const NEXT_MODEL: &str = "next-model";

/// The prompt: the status line, then `› `.
pub(super) struct StatusPrompt {
    pub(super) status: String,
    pub(super) indicator: &'static str,
}

impl Prompt for StatusPrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Owned(format!("{}\n", self.status))
    }

    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed(self.indicator)
    }

    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("· ")
    }

    fn render_prompt_history_search_indicator(&self, search: PromptHistorySearch) -> Cow<'_, str> {
        let state = match search.status {
            PromptHistorySearchStatus::Passing => "",
            PromptHistorySearchStatus::Failing => "failing ",
        };
        Cow::Owned(format!("({state}search: {}) ", search.term))
    }

    fn get_prompt_color(&self) -> reedline::Color {
        reedline::Color::DarkGray
    }

    fn get_indicator_color(&self) -> reedline::Color {
        reedline::Color::Cyan
    }
}

/// Completes `/commands` at the start of the input and `@paths` of the workspace anywhere.
struct JigCompleter {
    cwd: PathBuf,
    files: Option<Vec<String>>,
    /// The extensions' commands, `/name` and help.
    extension_commands: Vec<(String, String)>,
}

impl JigCompleter {
    fn files(&mut self) -> &[String] {
        let cwd = self.cwd.clone();
        self.files.get_or_insert_with(|| workspace_files(&cwd))
    }
}

/// The workspace's files (as `.gitignore` and friends allow), relative, sorted.
fn workspace_files(cwd: &Path) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(cwd)
        .hidden(true)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.depth() > 0)
        .filter_map(|entry| {
            let relative = entry.path().strip_prefix(cwd).ok()?.to_str()?.to_owned();
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            Some(if is_dir {
                format!("{relative}/")
            } else {
                relative
            })
        })
        .take(MAX_FILES)
        .collect();
    files.sort();
    files
}

impl Completer for JigCompleter {
    fn complete(&mut self, line: &str, pos: usize) -> CompletionResult {
        CompletionResult::fresh(self.suggest(line, pos))
    }
}

impl JigCompleter {
    fn suggest(&mut self, line: &str, pos: usize) -> Vec<Suggestion> {
        let before = &line[..pos.min(line.len())];
        let start = before
            .rfind(char::is_whitespace)
            .map_or(0, |index| index + 1);
        let word = &before[start..];
        let span = Span::new(start, pos);
        if start == 0 && word.starts_with('/') {
            return COMMANDS
                .iter()
                .map(|(name, help)| ((*name).to_owned(), (*help).to_owned()))
                .chain(self.extension_commands.iter().cloned())
                .filter(|(name, _)| name.starts_with(word))
                .map(|(name, help)| Suggestion {
                    value: name,
                    display_override: None,
                    description: Some(help),
                    style: None,
                    extra: None,
                    span,
                    append_whitespace: true,
                    match_indices: None,
                })
                .collect();
        }
        let Some(prefix) = word.strip_prefix('@') else {
            return Vec::new();
        };
        let prefix = prefix.to_owned();
        let mut found: Vec<Suggestion> = self
            .files()
            .iter()
            .filter(|path| path.starts_with(&prefix) || path.contains(&format!("/{prefix}")))
            .take(50)
            .map(|path| Suggestion {
                value: format!("@{path}"),
                display_override: None,
                description: None,
                style: None,
                extra: None,
                span,
                append_whitespace: !path.ends_with('/'),
                match_indices: None,
            })
            .collect();
        // Paths that start with what was typed first.
        found.sort_by_key(|s| !s.value[1..].starts_with(&prefix));
        found
    }
}

/// The editor for a session in `cwd`; history in `history` (none when `None`);
/// `extension_commands` (`/name`, help) are completed after the built-in ones.
pub(super) fn editor(
    cwd: &Path,
    history: Option<PathBuf>,
    color: bool,
    extension_commands: Vec<(String, String)>,
) -> Reedline {
    let mut keybindings = default_emacs_keybindings();
    for (modifiers, key) in [
        (KeyModifiers::ALT, KeyCode::Enter),
        (KeyModifiers::SHIFT, KeyCode::Enter),
        (KeyModifiers::CONTROL, KeyCode::Char('j')),
    ] {
        keybindings.add_binding(
            modifiers,
            key,
            ReedlineEvent::Edit(vec![reedline::EditCommand::InsertNewline]),
        );
    }
    keybindings.add_binding(
        KeyModifiers::CONTROL,
        KeyCode::Char('o'),
        ReedlineEvent::ExecuteHostCommand(EXPAND.to_owned()),
    );
    keybindings.add_binding(
        KeyModifiers::NONE,
        KeyCode::Tab,
        ReedlineEvent::UntilFound(vec![
            ReedlineEvent::Menu("completion".to_owned()),
            ReedlineEvent::MenuNext,
        ]),
    );
    // Ctrl-P is the next model (as in Pi), not the previous history line as in Emacs: ↑ still
    // walks the history, and with the completion menu open Ctrl-P still moves up in it.
    keybindings.add_binding(
        KeyModifiers::CONTROL,
        KeyCode::Char('p'),
        ReedlineEvent::UntilFound(vec![
            ReedlineEvent::MenuUp,
            ReedlineEvent::ExecuteHostCommand(NEXT_MODEL.to_owned()),
        ]),
    );
    let menu = ColumnarMenu::default().with_name("completion");
    let mut editor = Reedline::create()
        .with_edit_mode(Box::new(Emacs::new(keybindings)))
        .with_completer(Box::new(JigCompleter {
            cwd: cwd.to_path_buf(),
            files: None,
            extension_commands,
        }))
        .with_menu(ReedlineMenu::EngineCompleter(Box::new(menu)))
        .with_hinter(Box::new(DefaultHinter::default()))
        .with_ansi_colors(color)
        .use_bracketed_paste(true);
    if let Some(path) = history
        && let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_ok()
        && let Ok(history) = FileBackedHistory::with_file(HISTORY_SIZE, path)
    {
        editor = editor.with_history(Box::new(history));
    }
    editor
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_commands_and_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("README.md"), "").unwrap();
        let mut completer = JigCompleter {
            cwd: dir.path().to_path_buf(),
            files: None,
            extension_commands: vec![("/abbrev".to_owned(), "abbreviations".to_owned())],
        };
        let values = |found: Vec<Suggestion>| -> Vec<String> {
            found.into_iter().map(|s| s.value).collect()
        };
        assert_eq!(values(completer.suggest("/re", 3)), vec!["/resume"]);
        assert_eq!(values(completer.suggest("/ab", 3)), vec!["/abbrev"]);
        assert_eq!(
            values(completer.suggest("look at @src/m", 14)),
            vec!["@src/main.rs"]
        );
        assert_eq!(
            values(completer.suggest("@", 1)),
            vec!["@README.md", "@src/", "@src/main.rs"]
        );
        assert!(completer.suggest("plain", 5).is_empty());
    }
}
