//! The skills and prompt templates of a session (`jig_project::skills`, `jig_project::prompts`):
//! discovered once trust is decided, listed in the system prompt (skills) and offered as
//! `/name` commands (templates, `/skill:NAME`).

use std::path::{Path, PathBuf};

use jig_project::{
    Diagnostics, PromptTemplate, Skill, SkillInputs, TemplateInputs, TrustedProject,
    discover_skills, discover_templates, skill_invocation,
};
use jig_protocol::EnvVars;

use crate::StartError;
use crate::settings::Settings;

/// The prefix of a command that forces a skill in.
pub const SKILL_COMMAND: &str = "/skill:";

/// What the session offers from skills and prompt templates.
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    /// Valid skills, in precedence order.
    pub skills: Vec<Skill>,
    /// Prompt templates, in precedence order.
    pub templates: Vec<PromptTemplate>,
}

/// Where discovery looks.
#[derive(Debug)]
pub struct Sources<'a> {
    /// `--skill` values.
    pub skill_args: &'a [String],
    /// `--no-skills`.
    pub no_skills: bool,
    /// The directory relative `--skill` paths are taken from.
    pub base_dir: &'a Path,
    /// The working directory of the session.
    pub cwd: &'a Path,
    /// The user's settings (their `skills` are relative to the config directory).
    pub user_settings: &'a Settings,
    /// The trusted project; `None` when the project is not trusted.
    pub project: Option<&'a TrustedProject>,
    /// The trusted project's settings' `skills` (relative to the project directory).
    pub project_skills: Vec<String>,
    /// The `claudeCommands` setting (the project's over the user's).
    pub claude_commands: bool,
    /// Where the project is.
    pub place: Place,
}

/// Where the project's files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// On this machine.
    Local,
    /// On another machine (`--env`): its files are not this machine's.
    Remote {
        /// It has skills or prompt templates (`.agents/skills/`, …).
        has_instructions: bool,
    },
}

/// `--skill` values that are paths (they contain `/`, or start with `.` or `~`) and names (a
/// skill to force into the prompt).
pub fn split_skill_args(values: &[String], base_dir: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut paths = Vec::new();
    let mut names = Vec::new();
    for value in values {
        if value.contains('/') || value.starts_with('.') || value.starts_with('~') {
            paths.push(expand_home(value, base_dir));
        } else {
            names.push(value.clone());
        }
    }
    (paths, names)
}

fn expand_home(value: &str, base_dir: &Path) -> PathBuf {
    match value.strip_prefix("~/") {
        Some(rest) => std::env::var_os(EnvVars::HOME).map_or_else(
            || base_dir.join(value),
            |home| PathBuf::from(home).join(rest),
        ),
        None => base_dir.join(value),
    }
}

/// Discovers skills and templates; problems are printed as warnings, never an exit.
pub fn discover(sources: &Sources<'_>, reserved: &[&str]) -> Knowledge {
    let mut diagnostics = Diagnostics::default();
    let config_dir = jig_project::config_dir();
    let home = std::env::var_os(EnvVars::HOME)
        .map(PathBuf::from)
        .filter(|home| home.is_absolute());
    let (cli_paths, _) = split_skill_args(sources.skill_args, sources.base_dir);
    let mut settings_paths: Vec<PathBuf> = config_dir
        .as_ref()
        .map(|dir| {
            sources
                .user_settings
                .skills
                .iter()
                .flatten()
                .map(|path| expand_home(path, dir))
                .collect()
        })
        .unwrap_or_default();
    let mut project = sources.project;
    if let Place::Remote { has_instructions } = sources.place {
        project = None;
        if has_instructions {
            diagnostics.push(
                jig_project::Severity::Warning,
                jig_project::DiagnosticKind::Resource,
                "The project's skills and prompt templates are not read over --env (only this \
             machine's user skills and templates are offered)",
            );
        }
    }
    if let Some(project) = project {
        settings_paths.extend(
            sources
                .project_skills
                .iter()
                .map(|path| expand_home(path, project.dir())),
        );
    }
    let skills = discover_skills(
        &SkillInputs {
            cli_paths,
            settings_paths,
            no_skills: sources.no_skills,
            config_dir: config_dir.clone(),
            home: home.clone(),
            cwd: sources.cwd.to_path_buf(),
        },
        project,
        &mut diagnostics,
    );
    let templates = discover_templates(
        &TemplateInputs {
            config_dir,
            home,
            claude_commands: sources.claude_commands,
            reserved: reserved
                .iter()
                .map(|name| name.trim_start_matches('/').to_owned())
                .chain(std::iter::once("skill".to_owned()))
                .collect(),
        },
        project,
        &mut diagnostics,
    );
    let _ = diagnostics.report_to_stderr();
    Knowledge { skills, templates }
}

/// Why `/skill:NAME` (or `--skill NAME`) cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    /// No skill of that name is offered.
    #[error("unknown skill \"{name}\"{}", offered_list(offered))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The skills offered.
        offered: Vec<String>,
    },
    /// The skill's file could not be read.
    #[error("cannot read skill {name} ({}): {reason}", file.display())]
    Unreadable {
        /// The skill.
        name: String,
        /// Its `SKILL.md`.
        file: PathBuf,
        /// Why it could not be read.
        reason: String,
    },
}

fn offered_list(offered: &[String]) -> String {
    if offered.is_empty() {
        ": no skills were found (see docs/skills.md)".to_owned()
    } else {
        format!("; the skills are: {}", offered.join(", "))
    }
}

impl Knowledge {
    /// The skill named `name`.
    pub fn skill(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// `text` with a leading `/skill:NAME` or `/TEMPLATE` expanded: `None` when it starts with
    /// neither (a built-in command, an extension's, a path), an error when the skill cannot be
    /// read or is unknown.
    pub fn expand(&self, text: &str) -> Option<Result<String, SkillError>> {
        let trimmed = text.trim_start();
        let (head, arguments) = trimmed
            .split_once(char::is_whitespace)
            .unwrap_or((trimmed, ""));
        if let Some(name) = head.strip_prefix(SKILL_COMMAND) {
            return Some(self.invoke(name, arguments));
        }
        let name = head.strip_prefix('/')?;
        let template = self.templates.iter().find(|t| t.name == name)?;
        Some(Ok(template.expand(arguments)))
    }

    fn invoke(&self, name: &str, arguments: &str) -> Result<String, SkillError> {
        let Some(skill) = self.skill(name) else {
            return Err(self.unknown_skill(name));
        };
        skill_invocation(skill, arguments).map_err(|error| SkillError::Unreadable {
            name: name.to_owned(),
            file: skill.file.clone(),
            reason: error.to_string(),
        })
    }

    /// The error for a skill name that is not offered.
    pub fn unknown_skill(&self, name: &str) -> SkillError {
        SkillError::Unknown {
            name: name.to_owned(),
            offered: self.skills.iter().map(|skill| skill.name.clone()).collect(),
        }
    }

    /// The prompt with each skill of `names` forced in before it (`jig run --skill NAME`).
    pub fn force(&self, names: &[String], prompt: String) -> Result<String, StartError> {
        let mut prompt = prompt;
        for name in names.iter().rev() {
            prompt = self.invoke(name, &prompt).map_err(StartError::usage)?;
        }
        Ok(prompt)
    }

    /// `(usage, description)` of each command these add: `/skill:NAME` per skill, then the
    /// templates, for completion and `/help`.
    pub fn commands(&self) -> Vec<(String, String)> {
        self.skills
            .iter()
            .map(|skill| {
                (
                    format!("{SKILL_COMMAND}{}", skill.name),
                    first_sentence(&skill.description),
                )
            })
            .chain(
                self.templates
                    .iter()
                    .map(|template| (template.usage(), template.description.clone())),
            )
            .collect()
    }
}

/// The start of a description, for a one-line listing.
fn first_sentence(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_values_are_paths_or_names() {
        let (paths, names) = split_skill_args(
            &[
                "pdf".to_owned(),
                "./local".to_owned(),
                "/abs/skill".to_owned(),
                "sub/dir".to_owned(),
            ],
            Path::new("/base"),
        );
        assert_eq!(
            paths,
            vec![
                PathBuf::from("/base/./local"),
                PathBuf::from("/abs/skill"),
                PathBuf::from("/base/sub/dir")
            ]
        );
        assert_eq!(names, vec!["pdf"]);
    }

    #[test]
    fn expands_templates_and_leaves_other_text() {
        let knowledge = Knowledge {
            skills: Vec::new(),
            templates: vec![PromptTemplate {
                name: "review".to_owned(),
                description: "Review a file".to_owned(),
                argument_hint: Some("FILE".to_owned()),
                body: "Review $1 carefully. ($ARGUMENTS)".to_owned(),
                file: PathBuf::from("/p/review.md"),
                source: jig_project::TemplateSource::User,
            }],
        };
        assert_eq!(
            knowledge.expand("/review src/a.rs now"),
            Some(Ok("Review src/a.rs carefully. (src/a.rs now)".to_owned()))
        );
        assert_eq!(knowledge.expand("/usr/bin/env is where?"), None);
        assert_eq!(knowledge.expand("plain text"), None);
        let Some(Err(message)) = knowledge.expand("/skill:pdf fill it") else {
            panic!("an unknown skill is an error");
        };
        assert!(
            message.to_string().contains("no skills were found"),
            "{message}"
        );
        assert_eq!(
            knowledge.commands(),
            vec![("/review FILE".to_owned(), "Review a file".to_owned())]
        );
    }
}
