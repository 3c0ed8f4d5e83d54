//! Prompt templates: Markdown files whose name becomes a `/name` command. `/name ARGS` sends the
//! file's body with the arguments substituted ([`PromptTemplate::expand`]).
//!
//! Where templates come from, in precedence order (the first of a name wins; a later one is
//! reported as shadowed):
//!
//! 1. for a [`TrustedProject`] only: the project's `.jig/prompts/`, then, with the
//!    `claudeCommands` setting, its `.claude/commands/`;
//! 2. the user's `$XDG_CONFIG_HOME/jig/prompts/`, then, with `claudeCommands`,
//!    `~/.claude/commands/`.
//!
//! Each `*.md` file directly in such a directory is one template, named by its file name
//! without `.md`. Optional YAML front matter gives `description` and `argument-hint` (shown in
//! completion and `/help`); without a description, the body's first line is shown. A name
//! that is not a valid command name, or that a built-in command already has, is skipped with a
//! warning.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::PROJECT_DIR_NAME;
use crate::diagnostics::{DiagnosticKind, Diagnostics, Severity};
use crate::front_matter::{self, FrontMatterError, text_field};
use crate::trust::TrustedProject;

/// At most this much of a template file is read.
pub const MAX_TEMPLATE_FILE: u64 = 256 * 1024;

/// Where a template was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateSource {
    /// The trusted project.
    Project,
    /// The user's directories.
    User,
}

/// One prompt template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The command name, without `/`.
    pub name: String,
    /// What `/help` and completion show.
    pub description: String,
    /// The front matter's `argument-hint`, if any.
    pub argument_hint: Option<String>,
    /// The text sent, before substitution.
    pub body: String,
    /// The file.
    pub file: PathBuf,
    /// Where it was found.
    pub source: TemplateSource,
}

impl PromptTemplate {
    /// The body with `$1`…`$9` (the arguments split like a shell's words: quotes group, missing
    /// ones are empty), `$ARGUMENTS` and `$@` (all of them as typed) substituted. `$$` is a `$`.
    pub fn expand(&self, arguments: &str) -> String {
        expand(&self.body, arguments)
    }

    /// `/name` and the argument hint, for completion and `/help`.
    pub fn usage(&self) -> String {
        match &self.argument_hint {
            Some(hint) => format!("/{} {hint}", self.name),
            None => format!("/{}", self.name),
        }
    }
}

/// What template discovery looks at, apart from the project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateInputs {
    /// jig's config directory, whose `prompts/` holds the user's templates.
    pub config_dir: Option<PathBuf>,
    /// The home directory (for `~/.claude/commands/`).
    pub home: Option<PathBuf>,
    /// The `claudeCommands` setting: also read `.claude/commands/`.
    pub claude_commands: bool,
    /// Command names that are taken (the built-in ones), without `/`.
    pub reserved: Vec<String>,
}

/// The templates, in precedence order. Pass `project` only for a trusted project.
pub fn discover_templates(
    inputs: &TemplateInputs,
    project: Option<&TrustedProject>,
    diagnostics: &mut Diagnostics,
) -> Vec<PromptTemplate> {
    let mut dirs = Vec::new();
    if let Some(project) = project {
        // A project trusted because nothing in it required trust had no `.jig/prompts/` then.
        if project.runs_code() {
            dirs.push((
                project.dir().join(PROJECT_DIR_NAME).join("prompts"),
                TemplateSource::Project,
            ));
        }
        if inputs.claude_commands {
            dirs.push((
                project.dir().join(".claude").join("commands"),
                TemplateSource::Project,
            ));
        }
    }
    if let Some(config_dir) = &inputs.config_dir {
        dirs.push((config_dir.join("prompts"), TemplateSource::User));
    }
    if inputs.claude_commands
        && let Some(home) = &inputs.home
    {
        dirs.push((home.join(".claude").join("commands"), TemplateSource::User));
    }
    let mut templates: Vec<PromptTemplate> = Vec::new();
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    for (dir, source) in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "md") && path.is_file())
            .collect();
        files.sort();
        for file in files {
            let Some(template) = read_template(&file, source, inputs, diagnostics) else {
                continue;
            };
            if let Some(&first) = by_name.get(&template.name) {
                warn(
                    diagnostics,
                    format!(
                        "Prompt template /{} in {} is shadowed by {}, which comes first",
                        template.name,
                        file.display(),
                        templates[first].file.display()
                    ),
                );
                continue;
            }
            by_name.insert(template.name.clone(), templates.len());
            templates.push(template);
        }
    }
    templates
}

fn warn(diagnostics: &mut Diagnostics, message: String) {
    diagnostics.push(Severity::Warning, DiagnosticKind::Resource, message);
}

fn read_template(
    file: &Path,
    source: TemplateSource,
    inputs: &TemplateInputs,
    diagnostics: &mut Diagnostics,
) -> Option<PromptTemplate> {
    let name = file.file_stem()?.to_str()?.to_owned();
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    if !valid {
        warn(
            diagnostics,
            format!(
                "Skipped prompt template {}: \"{name}\" is not a command name (letters, digits, \
                 - _ . : only)",
                file.display()
            ),
        );
        return None;
    }
    if inputs.reserved.contains(&name) {
        warn(
            diagnostics,
            format!(
                "Skipped prompt template {}: /{name} is a built-in command",
                file.display()
            ),
        );
        return None;
    }
    let mut text = String::new();
    let read = std::fs::File::open(file).and_then(|handle| {
        handle
            .take(MAX_TEMPLATE_FILE)
            .read_to_string(&mut text)
            .map(drop)
    });
    if let Err(error) = read {
        warn(
            diagnostics,
            format!("Skipped prompt template {}: {error}", file.display()),
        );
        return None;
    }
    let (fields, body) = match front_matter::parse(&text) {
        Ok(parsed) => (parsed.fields, parsed.body),
        Err(FrontMatterError::Missing) => (BTreeMap::new(), text),
        Err(error) => {
            warn(
                diagnostics,
                format!("Skipped prompt template {}: {error}", file.display()),
            );
            return None;
        }
    };
    let field = |key: &str, diagnostics: &mut Diagnostics| match text_field(&fields, key) {
        Ok(value) => value.filter(|value| !value.trim().is_empty()),
        Err(reason) => {
            warn(
                diagnostics,
                format!("Prompt template {}: {reason}; ignored", file.display()),
            );
            None
        }
    };
    let description = field("description", diagnostics).unwrap_or_else(|| {
        let first = body
            .lines()
            .find(|line| !line.trim().is_empty())
            .unwrap_or("");
        let first = first.trim().trim_start_matches('#').trim();
        match first.char_indices().nth(60) {
            Some((cut, _)) => format!("{}…", &first[..cut]),
            None => first.to_owned(),
        }
    });
    let argument_hint = field("argument-hint", diagnostics);
    Some(PromptTemplate {
        name,
        description: description.trim().to_owned(),
        argument_hint,
        body,
        file: file.to_path_buf(),
        source,
    })
}

/// Splits `arguments` into words as a shell would for plain text: whitespace separates, single
/// and double quotes group (and are removed), a backslash keeps the next character.
pub fn split_arguments(arguments: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = arguments.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// `body` with `$1`…`$9`, `$ARGUMENTS`, `$@` and `$$` substituted.
pub fn expand(body: &str, arguments: &str) -> String {
    let words = split_arguments(arguments);
    let all = arguments.trim();
    let mut out = String::with_capacity(body.len() + all.len());
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(all);
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('@') {
            out.push_str(all);
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(digit) = after.chars().next().filter(|c| matches!(c, '1'..='9')) {
            let index = digit as usize - '1' as usize;
            out.push_str(words.get(index).map_or("", String::as_str));
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_split_like_shell_words() {
        assert_eq!(
            split_arguments(r#"fix "the parser" don\'t 'a b' x\ y"#),
            vec!["fix", "the parser", "don't", "a b", "x y"]
        );
        assert!(split_arguments("   ").is_empty());
        assert_eq!(split_arguments(r#""""#), vec![""]);
    }

    #[test]
    fn substitutes_positions_all_and_dollars() {
        let body = "Review $1 for $2.\nAll: $ARGUMENTS | $@ | $9 | $$1 | $HOME | $";
        assert_eq!(
            expand(body, r#"src/lib.rs "memory leaks""#),
            "Review src/lib.rs for memory leaks.\nAll: src/lib.rs \"memory leaks\" | \
             src/lib.rs \"memory leaks\" |  | $1 | $HOME | $"
        );
        assert_eq!(expand("no arguments", "x"), "no arguments");
    }
}
