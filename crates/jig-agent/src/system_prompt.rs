//! The default system prompt: tools, guidelines, project context files, date and cwd.

use std::fmt::Write as _;
use std::path::PathBuf;

/// A project context file (`AGENTS.md`, `CLAUDE.md`) to include in the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// Where it was found.
    pub path: PathBuf,
    /// Its text.
    pub content: String,
}

/// What the system prompt is built from.
#[derive(Debug, Clone, Default)]
pub struct SystemPromptOptions {
    /// `(name, description)` of each offered tool, in order.
    pub tools: Vec<(String, String)>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Today's date (`YYYY-MM-DD`).
    pub date: String,
    /// Context files, outermost directory first.
    pub context_files: Vec<ContextFile>,
    /// The skills section (a list of skills the model may load with `read`), after the
    /// context files; empty for none.
    pub skills: String,
    /// Replaces the base prompt (tools and guidelines); context, date and cwd still follow.
    pub custom_prompt: Option<String>,
    /// Text appended at the end, each part as its own paragraph.
    pub append: Vec<String>,
}

/// Builds the system prompt.
pub fn build_system_prompt(options: &SystemPromptOptions) -> String {
    let mut prompt = match &options.custom_prompt {
        Some(custom) => custom.trim_end().to_owned(),
        None => base_prompt(options),
    };
    if !options.context_files.is_empty() {
        prompt.push_str("\n\n# Project Context\n\nProject-specific instructions and guidelines:");
        for file in &options.context_files {
            let _ = write!(
                prompt,
                "\n\n## {}\n\n{}",
                file.path.display(),
                file.content.trim_end()
            );
        }
    }
    if !options.skills.is_empty() {
        prompt.push_str("\n\n# Skills\n\n");
        prompt.push_str(options.skills.trim_end());
    }
    for part in &options.append {
        prompt.push_str("\n\n");
        prompt.push_str(part.trim_end());
    }
    let _ = write!(
        prompt,
        "\n\nCurrent date: {}\nCurrent working directory: {}",
        options.date,
        options.cwd.display()
    );
    prompt
}

fn has(options: &SystemPromptOptions, name: &str) -> bool {
    options.tools.iter().any(|(tool, _)| tool == name)
}

fn base_prompt(options: &SystemPromptOptions) -> String {
    let mut prompt = String::from(
        "You are an expert coding assistant working inside jig, a coding-agent harness. You help users by reading files, running commands, editing code and writing new files.\n\nAvailable tools:\n",
    );
    if options.tools.is_empty() {
        prompt.push_str("(none)\n");
    }
    for (name, description) in &options.tools {
        let summary = description
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or_default();
        let _ = writeln!(prompt, "- {name}: {summary}");
    }
    let mut guidelines: Vec<&str> = Vec::new();
    let search_tools = ["grep", "find", "ls"].iter().any(|name| has(options, name));
    if has(options, "bash") && search_tools {
        guidelines.push("Prefer grep, find and ls over bash for exploring files: they are faster and respect .gitignore");
    } else if has(options, "bash") {
        guidelines.push("Use bash for file operations such as ls, rg and find");
    }
    if has(options, "read") && has(options, "edit") {
        guidelines.push("Use read to examine a file before editing it");
    }
    if has(options, "edit") {
        guidelines.push("Use edit for precise changes: oldText must match the current file exactly and only once");
    }
    if has(options, "write") {
        guidelines.push("Use write only for new files or complete rewrites");
    }
    if has(options, "bash") {
        guidelines.push("bash runs in the working directory; commands see JIG_SESSION_ID, JIG_SESSION_FILE, JIG_PROVIDER, JIG_MODEL and JIG_REASONING_LEVEL when asked which model or session is running");
    }
    guidelines.push("Be concise in your responses");
    guidelines.push("Show file paths clearly when working with files");
    prompt.push_str("\nGuidelines:\n");
    for guideline in guidelines {
        let _ = writeln!(prompt, "- {guideline}");
    }
    prompt.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> SystemPromptOptions {
        SystemPromptOptions {
            tools: ["read", "bash", "edit", "write"]
                .iter()
                .map(|name| {
                    (
                        (*name).to_owned(),
                        format!("Does {name} things.\n\nMore detail."),
                    )
                })
                .collect(),
            cwd: PathBuf::from("/home/u/proj"),
            date: "2026-11-29".into(),
            context_files: vec![ContextFile {
                path: PathBuf::from("/home/u/proj/AGENTS.md"),
                content: "Run `cargo test` before finishing.\n".into(),
            }],
            skills: String::new(),
            custom_prompt: None,
            append: vec!["Answer in English.".into()],
        }
    }

    #[test]
    fn default_prompt_lists_tools_guidelines_context_date_and_cwd() {
        insta::assert_snapshot!(build_system_prompt(&options()));
    }

    #[test]
    fn custom_prompt_replaces_the_base_but_keeps_context() {
        let mut options = options();
        options.custom_prompt = Some("You are terse.".into());
        options.append.clear();
        insta::assert_snapshot!(build_system_prompt(&options), @r"
        You are terse.

        # Project Context

        Project-specific instructions and guidelines:

        ## /home/u/proj/AGENTS.md

        Run `cargo test` before finishing.

        Current date: 2026-11-29
        Current working directory: /home/u/proj
        ");
    }
}
