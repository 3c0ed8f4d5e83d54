//! Agent Skills (the agentskills.io format): a directory with a `SKILL.md` whose YAML front
//! matter gives the skill's `name` and `description`, then instructions, with optional
//! `scripts/`, `references/` and `assets/`. The model is shown every skill's name, description
//! and location ([`skills_prompt`]) and reads a body only when a task needs it.
//!
//! Where skills come from, in precedence order (the first skill of a name wins; a later one of
//! the same name is reported as shadowed):
//!
//! 1. `--skill PATH` (repeatable), then the user settings' `skills` paths;
//! 2. for a [`TrustedProject`] only: the project's `.jig/skills/`, then `.agents/skills/` in the
//!    working directory and each parent up to the repository root (the nearest first);
//! 3. the user's `$XDG_CONFIG_HOME/jig/skills/`, then `~/.agents/skills/`.
//!
//! `--no-skills` drops 2 and 3. A path given explicitly may be a skill directory, its
//! `SKILL.md`, or a directory of skills. In a skills directory, each subdirectory (one level;
//! names starting with `.` are skipped) with a `SKILL.md` is a skill.
//!
//! Validation follows the specification; a problem is a warning that names the file, never an
//! exit. A skill without a valid `name` or `description` is skipped; a name that differs from
//! its directory's, unknown fields and an over-long `compatibility` are warnings and the skill
//! loads. A project skill whose directory resolves outside the repository (a symlink out) is
//! skipped: what the model is pointed at must be the project's own.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::PROJECT_DIR_NAME;
use crate::diagnostics::{DiagnosticKind, Diagnostics, Severity};
use crate::front_matter::{self, text_field};
use crate::trust::TrustedProject;

/// The file that makes a directory a skill.
pub const SKILL_FILE: &str = "SKILL.md";
/// The longest valid skill name.
pub const MAX_NAME: usize = 64;
/// The longest valid description.
pub const MAX_DESCRIPTION: usize = 1024;
/// The longest valid `compatibility`.
pub const MAX_COMPATIBILITY: usize = 500;
/// At most this much of a `SKILL.md` is read to find its front matter.
pub const MAX_SKILL_FILE: u64 = 256 * 1024;
/// The front matter fields of the specification.
const KNOWN_FIELDS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillSource {
    /// `--skill PATH`.
    Cli,
    /// The user settings' `skills`.
    Settings,
    /// The trusted project (`.jig/skills/`, `.agents/skills/`).
    Project,
    /// The user's skill directories.
    User,
}

impl SkillSource {
    /// How it is named in messages and listings.
    pub fn label(self) -> &'static str {
        match self {
            Self::Cli => "--skill",
            Self::Settings => "settings",
            Self::Project => "project",
            Self::User => "user",
        }
    }
}

/// One valid skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The `name` of its front matter.
    pub name: String,
    /// Its `description`.
    pub description: String,
    /// The canonical path of its `SKILL.md`.
    pub file: PathBuf,
    /// Where it was found.
    pub source: SkillSource,
}

impl Skill {
    /// The skill's directory (its scripts and references are relative to it).
    pub fn dir(&self) -> &Path {
        self.file.parent().unwrap_or(&self.file)
    }
}

/// What skill discovery looks at, apart from the project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillInputs {
    /// `--skill` paths (absolute).
    pub cli_paths: Vec<PathBuf>,
    /// The user settings' `skills` (absolute).
    pub settings_paths: Vec<PathBuf>,
    /// `--no-skills`: only the explicit paths.
    pub no_skills: bool,
    /// jig's config directory (`$XDG_CONFIG_HOME/jig`), whose `skills/` is the user's.
    pub config_dir: Option<PathBuf>,
    /// The home directory, whose `.agents/skills/` is the user's too.
    pub home: Option<PathBuf>,
    /// The working directory, where the search for `.agents/skills/` starts.
    pub cwd: PathBuf,
}

/// The skills to offer, in precedence order. Pass `project` only for a trusted project.
pub fn discover_skills(
    inputs: &SkillInputs,
    project: Option<&TrustedProject>,
    diagnostics: &mut Diagnostics,
) -> Vec<Skill> {
    let mut found = Found::default();
    for path in &inputs.cli_paths {
        found.explicit(path, SkillSource::Cli, diagnostics);
    }
    for path in &inputs.settings_paths {
        found.explicit(path, SkillSource::Settings, diagnostics);
    }
    if inputs.no_skills {
        return found.skills;
    }
    // A project trusted because nothing in it required trust had no skills then: none load.
    if let Some(project) = project.filter(|project| project.runs_code()) {
        let repository = repository_root(&inputs.cwd, project.dir());
        let boundary = std::fs::canonicalize(&repository).unwrap_or(repository.clone());
        let mut dirs = vec![project.dir().join(PROJECT_DIR_NAME).join("skills")];
        let start = if inputs.cwd.starts_with(&repository) {
            inputs.cwd.as_path()
        } else {
            repository.as_path()
        };
        for dir in start.ancestors() {
            dirs.push(dir.join(".agents").join("skills"));
            if dir == repository {
                break;
            }
        }
        for dir in dirs {
            found.directory(&dir, SkillSource::Project, Some(&boundary), diagnostics);
        }
    }
    if let Some(config_dir) = &inputs.config_dir {
        found.directory(
            &config_dir.join("skills"),
            SkillSource::User,
            None,
            diagnostics,
        );
    }
    if let Some(home) = &inputs.home {
        found.directory(
            &home.join(".agents").join("skills"),
            SkillSource::User,
            None,
            diagnostics,
        );
    }
    found.skills
}

/// The nearest directory from `cwd` up that holds `.git`; outside a repository, `cwd` itself
/// (never the user's own `~/.agents/skills/` above it). The project directory when `cwd` is not
/// below it.
fn repository_root(cwd: &Path, project_dir: &Path) -> PathBuf {
    if !cwd.starts_with(project_dir) {
        return project_dir.to_path_buf();
    }
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

#[derive(Default)]
struct Found {
    skills: Vec<Skill>,
    by_name: BTreeMap<String, usize>,
}

impl Found {
    /// A path given explicitly: a skill directory, a `SKILL.md`, or a directory of skills.
    fn explicit(&mut self, path: &Path, source: SkillSource, diagnostics: &mut Diagnostics) {
        if path.is_file() {
            self.skill(path, source, None, diagnostics);
        } else if path.join(SKILL_FILE).is_file() {
            self.skill(&path.join(SKILL_FILE), source, None, diagnostics);
        } else if path.is_dir() {
            self.directory(path, source, None, diagnostics);
        } else {
            warn(
                diagnostics,
                format!(
                    "Skill path {} ({}) does not exist; give a skill directory, its {SKILL_FILE}, \
                     or a directory of skills",
                    path.display(),
                    source.label()
                ),
            );
        }
    }

    /// Every skill in `dir` (one level). A missing directory is nothing.
    fn directory(
        &mut self,
        dir: &Path,
        source: SkillSource,
        boundary: Option<&Path>,
        diagnostics: &mut Diagnostics,
    ) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut names: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| !name.starts_with('.'))
            })
            .collect();
        names.sort();
        for path in names {
            let file = path.join(SKILL_FILE);
            if file.is_file() {
                self.skill(&file, source, boundary, diagnostics);
            }
        }
    }

    fn skill(
        &mut self,
        file: &Path,
        source: SkillSource,
        boundary: Option<&Path>,
        diagnostics: &mut Diagnostics,
    ) {
        let canonical = match std::fs::canonicalize(file) {
            Ok(path) => path,
            Err(error) => {
                warn(
                    diagnostics,
                    format!("Skipped skill {}: {error}", file.display()),
                );
                return;
            }
        };
        if let Some(boundary) = boundary
            && !canonical.starts_with(boundary)
        {
            warn(
                diagnostics,
                format!(
                    "Skipped skill {}: it resolves to {}, outside the repository {}",
                    file.display(),
                    canonical.display(),
                    boundary.display()
                ),
            );
            return;
        }
        if self.skills.iter().any(|skill| skill.file == canonical) {
            return;
        }
        let Some(skill) = read_skill(file, &canonical, source, diagnostics) else {
            return;
        };
        if let Some(&first) = self.by_name.get(&skill.name) {
            let winner = &self.skills[first];
            warn(
                diagnostics,
                format!(
                    "Skill \"{}\" in {} ({}) is shadowed by {} ({}), which comes first",
                    skill.name,
                    file.display(),
                    source.label(),
                    winner.file.display(),
                    winner.source.label()
                ),
            );
            return;
        }
        self.by_name.insert(skill.name.clone(), self.skills.len());
        self.skills.push(skill);
    }
}

fn warn(diagnostics: &mut Diagnostics, message: String) {
    diagnostics.push(Severity::Warning, DiagnosticKind::Resource, message);
}

/// Reads and validates one `SKILL.md`; problems are warnings naming `file`.
fn read_skill(
    file: &Path,
    canonical: &Path,
    source: SkillSource,
    diagnostics: &mut Diagnostics,
) -> Option<Skill> {
    let skip = |diagnostics: &mut Diagnostics, reason: &str| {
        warn(
            diagnostics,
            format!("Skipped skill {}: {reason}", file.display()),
        );
    };
    let mut text = String::new();
    let read = std::fs::File::open(canonical).and_then(|handle| {
        handle
            .take(MAX_SKILL_FILE)
            .read_to_string(&mut text)
            .map(drop)
    });
    if let Err(error) = read {
        skip(diagnostics, &error.to_string());
        return None;
    }
    let parsed = match front_matter::parse(&text) {
        Ok(parsed) => parsed,
        Err(error) => {
            skip(diagnostics, &error.to_string());
            return None;
        }
    };
    let fields = &parsed.fields;
    let name = match text_field(fields, "name") {
        Ok(Some(name)) => name,
        Ok(None) => {
            skip(diagnostics, "its front matter has no `name`");
            return None;
        }
        Err(reason) => {
            skip(diagnostics, &reason.to_string());
            return None;
        }
    };
    if let Err(reason) = check_name(&name) {
        skip(diagnostics, &reason.to_string());
        return None;
    }
    let description = match text_field(fields, "description") {
        Ok(Some(text)) if !text.trim().is_empty() => text.trim().to_owned(),
        Ok(_) => {
            skip(diagnostics, "its front matter has no `description`");
            return None;
        }
        Err(reason) => {
            skip(diagnostics, &reason.to_string());
            return None;
        }
    };
    let length = description.chars().count();
    if length > MAX_DESCRIPTION {
        skip(
            diagnostics,
            &format!("its description has {length} characters, more than {MAX_DESCRIPTION}"),
        );
        return None;
    }
    advise(file, canonical, &name, fields, diagnostics);
    Some(Skill {
        name,
        description,
        file: canonical.to_path_buf(),
        source,
    })
}

/// The warnings of a valid skill: a name unlike its directory's, unknown fields, an
/// over-long `compatibility`.
fn advise(
    file: &Path,
    canonical: &Path,
    name: &str,
    fields: &BTreeMap<String, serde_yaml_ng::Value>,
    diagnostics: &mut Diagnostics,
) {
    let dir_name = canonical
        .parent()
        .and_then(Path::file_name)
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    if dir_name != name {
        warn(
            diagnostics,
            format!(
                "Skill {}: its name \"{name}\" differs from its directory's \"{dir_name}\"; it \
                 is offered as \"{name}\"",
                file.display()
            ),
        );
    }
    let unknown: Vec<&str> = fields
        .keys()
        .map(String::as_str)
        .filter(|key| !KNOWN_FIELDS.contains(key))
        .collect();
    if !unknown.is_empty() {
        warn(
            diagnostics,
            format!(
                "Skill {}: unknown front matter field{} {} (known: {})",
                file.display(),
                if unknown.len() == 1 { "" } else { "s" },
                unknown.join(", "),
                KNOWN_FIELDS.join(", ")
            ),
        );
    }
    if let Ok(Some(compatibility)) = text_field(fields, "compatibility")
        && compatibility.chars().count() > MAX_COMPATIBILITY
    {
        warn(
            diagnostics,
            format!(
                "Skill {}: `compatibility` is longer than {MAX_COMPATIBILITY} characters",
                file.display()
            ),
        );
    }
}

/// Why a skill name is not valid; displayed as a clause for a bigger message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillNameError {
    /// Empty, or longer than [`MAX_NAME`].
    #[error("its name \"{name}\" must have 1 to {MAX_NAME} characters")]
    Length {
        /// The name as written.
        name: String,
    },
    /// A character other than a lowercase letter, digit or hyphen, a hyphen first or last, or
    /// two hyphens in a row.
    #[error(
        "its name \"{name}\" may use only lowercase letters, digits and single hyphens (not \
         first or last)"
    )]
    Characters {
        /// The name as written.
        name: String,
    },
}

/// Whether `name` is a valid skill name: 1 to 64 lowercase letters, digits and hyphens, not
/// starting or ending with a hyphen, without two in a row.
pub fn check_name(name: &str) -> Result<(), SkillNameError> {
    let valid_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(SkillNameError::Length {
            name: name.to_owned(),
        });
    }
    if !valid_chars || name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Err(SkillNameError::Characters {
            name: name.to_owned(),
        });
    }
    Ok(())
}

/// The system prompt's section listing `skills` (empty when there are none). The format is
/// fixed and documented in docs/skills.md.
pub fn skills_prompt(skills: &[Skill]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "The following skills provide specialized instructions for specific tasks. When a task \
         matches a skill's description, use the read tool to load its SKILL.md from the \
         location given, then follow it. Paths in a skill are relative to its directory.\n\n\
         <available_skills>\n",
    );
    for skill in skills {
        text.push_str("  <skill>\n    <name>");
        text.push_str(&escape(&skill.name));
        text.push_str("</name>\n    <description>");
        text.push_str(&escape(&skill.description));
        text.push_str("</description>\n    <location>");
        text.push_str(&escape(&skill.file.display().to_string()));
        text.push_str("</location>\n  </skill>\n");
    }
    text.push_str("</available_skills>");
    text
}

/// A skill's instructions forced into a prompt (`/skill:NAME`, `jig run --skill NAME`): its
/// `SKILL.md` body, with where it lives, then what the user typed.
pub fn skill_invocation(skill: &Skill, arguments: &str) -> Result<String, std::io::Error> {
    let mut text = String::new();
    std::fs::File::open(&skill.file)?
        .take(MAX_SKILL_FILE)
        .read_to_string(&mut text)?;
    let body = front_matter::parse(&text).map_or(text.as_str(), |parsed| {
        // The body starts after the front matter.
        let offset = text.len() - parsed.body.len();
        &text[offset..]
    });
    let mut out = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        escape(&skill.name),
        escape(&skill.file.display().to_string()),
        skill.dir().display(),
        body.trim()
    );
    if !arguments.trim().is_empty() {
        out.push_str("\n\n");
        out.push_str(arguments.trim());
    }
    Ok(out)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_specification() {
        for good in ["pdf", "pdf-forms", "a1", "x"] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "PDF",
            "-pdf",
            "pdf-",
            "pdf--forms",
            "pdf_forms",
            "pdf forms",
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert!(check_name(&"a".repeat(65)).is_err());
        assert_eq!(check_name(&"a".repeat(64)), Ok(()));
    }

    #[test]
    fn the_prompt_escapes_and_lists_every_skill() {
        let skills = [Skill {
            name: "pdf".to_owned(),
            description: "Fill <forms> & sign".to_owned(),
            file: PathBuf::from("/s/pdf/SKILL.md"),
            source: SkillSource::User,
        }];
        let text = skills_prompt(&skills);
        assert!(text.contains("<description>Fill &lt;forms&gt; &amp; sign</description>"));
        assert!(text.contains("<location>/s/pdf/SKILL.md</location>"));
        assert_eq!(skills_prompt(&[]), "");
    }
}
