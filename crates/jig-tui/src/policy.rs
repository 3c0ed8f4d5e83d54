//! Permission modes and the one policy that decides whether a tool call runs, is asked about,
//! or is denied — the same function for the interactive session (which asks) and print mode
//! (which never asks: what would be asked is denied, and the model sees why).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use jig_tool::Effects;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How much the model may do without asking, for one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Only tools that change nothing run; everything else is denied.
    ReadOnly,
    /// Read-only tools run; file changes, commands and other tools are asked about.
    #[default]
    Ask,
    /// Read-only tools and file changes run; commands and other tools are asked about.
    AutoEdit,
    /// Everything runs.
    FullAuto,
}

impl PermissionMode {
    /// Every mode, in order of how much runs without asking.
    pub const ALL: [Self; 4] = [Self::ReadOnly, Self::Ask, Self::AutoEdit, Self::FullAuto];

    /// The mode's name, as on the command line (`auto-edit`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::Ask => "ask",
            Self::AutoEdit => "auto-edit",
            Self::FullAuto => "full-auto",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a permission mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission mode `{0}`: use read-only, ask, auto-edit or full-auto")]
pub struct UnknownMode(pub String);

impl FromStr for PermissionMode {
    type Err = UnknownMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.as_str() == text.trim())
            .ok_or_else(|| UnknownMode(text.to_owned()))
    }
}

/// Tools and bash command prefixes allowed without asking.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Allowlist {
    /// Tools allowed whatever their arguments.
    #[serde(default)]
    pub tools: BTreeSet<String>,
    /// `bash` commands starting with one of these words (see [`prefix_matches`]).
    #[serde(default)]
    pub bash_prefixes: BTreeSet<String>,
}

impl Allowlist {
    /// True when nothing is allowed.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.bash_prefixes.is_empty()
    }

    /// Adds everything `other` allows.
    pub fn extend(&mut self, other: &Self) {
        self.tools.extend(other.tools.iter().cloned());
        self.bash_prefixes
            .extend(other.bash_prefixes.iter().cloned());
    }

    fn allows(&self, tool: &str, command: Option<&str>) -> bool {
        self.tools.contains(tool)
            || command.is_some_and(|command| {
                self.bash_prefixes
                    .iter()
                    .any(|prefix| prefix_matches(prefix, command))
            })
    }
}

/// What the policy says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Ask the user (print mode denies instead, see [`Verdict::without_asking`]).
    Ask,
    /// Do not run it; the model is told this.
    Deny(String),
}

impl Verdict {
    /// The verdict when nobody can be asked: `Ask` becomes a denial naming the mode.
    #[must_use]
    pub fn without_asking(self, mode: PermissionMode, tool: &str) -> Self {
        match self {
            Self::Ask => Self::Deny(format!(
                "The `{tool}` call was not run: permission mode `{mode}` requires approval for it and this session cannot ask (non-interactive). Do not retry it; continue without it or explain what is needed."
            )),
            other => other,
        }
    }
}

/// Decides one call: `tool` with `effects` and `args`, in `mode`, given what is allowed for this
/// session and (persisted) for this project.
///
/// - `full-auto`: everything runs. `read-only`: only tools that change nothing run.
/// - `ask`: read-only tools run; others run when allowlisted, else are asked about.
/// - `auto-edit`: like `ask`, and file-changing tools run too.
///
/// A bash command is allowlisted by prefix only when it is one simple command (no `;`, `&`,
/// `|`, redirection, substitution or newline): `cargo test && rm -rf ~` never matches
/// `cargo test`.
pub fn decide(
    mode: PermissionMode,
    tool: &str,
    effects: Effects,
    args: &Value,
    allowed: &Allowlist,
) -> Verdict {
    if mode == PermissionMode::FullAuto || effects.is_read_only() {
        return Verdict::Allow;
    }
    if mode == PermissionMode::ReadOnly {
        return Verdict::Deny(format!(
            "The `{tool}` call was not run: this session is read-only (permission mode `read-only`); only tools that change nothing may run."
        ));
    }
    if mode == PermissionMode::AutoEdit && effects == Effects::Mutates {
        return Verdict::Allow;
    }
    if allowed.allows(tool, bash_command(tool, args)) {
        return Verdict::Allow;
    }
    Verdict::Ask
}

/// The command of a `bash` call.
pub fn bash_command<'a>(tool: &str, args: &'a Value) -> Option<&'a str> {
    (tool == "bash")
        .then(|| args.get("command").and_then(Value::as_str))
        .flatten()
}

/// Characters that make a command more than one simple command.
const SHELL_CONTROL: &[char] = &[';', '&', '|', '<', '>', '`', '$', '(', ')', '\n', '\r'];

/// True when `command` is one simple command whose words start with the words of `prefix`.
pub fn prefix_matches(prefix: &str, command: &str) -> bool {
    if command.contains(SHELL_CONTROL) {
        return false;
    }
    let wanted: Vec<&str> = prefix.split_whitespace().collect();
    let words: Vec<&str> = command.split_whitespace().collect();
    !wanted.is_empty() && words.len() >= wanted.len() && words[..wanted.len()] == wanted[..]
}

/// The prefix offered for "allow commands starting with …": the program and, when the second
/// word is a subcommand (not an option or a path), that too — `cargo test`, `git status`, `ls`.
/// `None` for commands that are not one simple command.
pub fn suggested_prefix(command: &str) -> Option<String> {
    if command.contains(SHELL_CONTROL) {
        return None;
    }
    let mut words = command.split_whitespace();
    let program = words.next()?;
    match words.next() {
        Some(sub)
            if sub
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                && !sub.starts_with('-') =>
        {
            Some(format!("{program} {sub}"))
        }
        _ => Some(program.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bash(command: &str) -> Value {
        json!({ "command": command })
    }

    #[test]
    fn modes_decide_by_effects() {
        let none = Allowlist::default();
        let args = json!({});
        let table = [
            (PermissionMode::ReadOnly, Effects::ReadOnly, "allow"),
            (PermissionMode::ReadOnly, Effects::Mutates, "deny"),
            (PermissionMode::ReadOnly, Effects::Process, "deny"),
            (PermissionMode::Ask, Effects::ReadOnly, "allow"),
            (PermissionMode::Ask, Effects::Mutates, "ask"),
            (PermissionMode::Ask, Effects::Process, "ask"),
            (PermissionMode::AutoEdit, Effects::ReadOnly, "allow"),
            (PermissionMode::AutoEdit, Effects::Mutates, "allow"),
            (PermissionMode::AutoEdit, Effects::Process, "ask"),
            (PermissionMode::FullAuto, Effects::Mutates, "allow"),
            (PermissionMode::FullAuto, Effects::Process, "allow"),
        ];
        for (mode, effects, expected) in table {
            let got = match decide(mode, "t", effects, &args, &none) {
                Verdict::Allow => "allow",
                Verdict::Ask => "ask",
                Verdict::Deny(_) => "deny",
            };
            assert_eq!(got, expected, "{mode} {effects:?}");
        }
    }

    #[test]
    fn allowlists_skip_the_question() {
        let mut allowed = Allowlist::default();
        allowed.tools.insert("edit".into());
        allowed.bash_prefixes.insert("cargo test".into());
        let ask = PermissionMode::Ask;
        assert_eq!(
            decide(ask, "edit", Effects::Mutates, &json!({}), &allowed),
            Verdict::Allow
        );
        assert_eq!(
            decide(ask, "write", Effects::Mutates, &json!({}), &allowed),
            Verdict::Ask
        );
        assert_eq!(
            decide(
                ask,
                "bash",
                Effects::Process,
                &bash("cargo test -p x"),
                &allowed
            ),
            Verdict::Allow
        );
        assert_eq!(
            decide(
                ask,
                "bash",
                Effects::Process,
                &bash("cargo test && rm -rf ~"),
                &allowed
            ),
            Verdict::Ask
        );
        assert_eq!(
            decide(
                ask,
                "bash",
                Effects::Process,
                &bash("cargo testx"),
                &allowed
            ),
            Verdict::Ask
        );
        // Read-only mode denies even allowlisted tools.
        assert!(matches!(
            decide(
                PermissionMode::ReadOnly,
                "edit",
                Effects::Mutates,
                &json!({}),
                &allowed
            ),
            Verdict::Deny(_)
        ));
    }

    #[test]
    fn print_mode_denies_what_would_be_asked() {
        let verdict = decide(
            PermissionMode::Ask,
            "bash",
            Effects::Process,
            &bash("ls"),
            &Allowlist::default(),
        )
        .without_asking(PermissionMode::Ask, "bash");
        let Verdict::Deny(reason) = verdict else {
            panic!("expected a denial");
        };
        insta::assert_snapshot!(reason, @"The `bash` call was not run: permission mode `ask` requires approval for it and this session cannot ask (non-interactive). Do not retry it; continue without it or explain what is needed.");
        assert_eq!(
            Verdict::Allow.without_asking(PermissionMode::Ask, "read"),
            Verdict::Allow
        );
    }

    #[test]
    fn suggested_prefixes() {
        assert_eq!(
            suggested_prefix("cargo test -p x").as_deref(),
            Some("cargo test")
        );
        assert_eq!(suggested_prefix("ls -la").as_deref(), Some("ls"));
        assert_eq!(
            suggested_prefix("python3 script.py").as_deref(),
            Some("python3")
        );
        assert_eq!(suggested_prefix("make | tee log"), None);
        assert_eq!(suggested_prefix("   "), None);
    }

    #[test]
    fn modes_parse_and_print() {
        for mode in PermissionMode::ALL {
            assert_eq!(mode.as_str().parse::<PermissionMode>(), Ok(mode));
        }
        assert!("yolo".parse::<PermissionMode>().is_err());
        assert_eq!(PermissionMode::default(), PermissionMode::Ask);
    }
}
