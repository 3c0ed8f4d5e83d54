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

impl PermissionMode {
    /// How much runs without asking: `read-only` 0 … `full-auto` 3.
    fn rank(self) -> usize {
        Self::ALL.iter().position(|mode| *mode == self).unwrap_or(0)
    }

    /// The mode when a project's settings ask for `project` and the user's choice is `self`: a
    /// project may narrow the mode (`full-auto` → `ask`), never widen it. The second value is
    /// true when the project asked for more than the user allows (and was ignored), for a
    /// warning.
    #[must_use]
    pub fn narrowed_by(self, project: Self) -> (Self, bool) {
        if project.rank() <= self.rank() {
            (project, false)
        } else {
            (self, true)
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
/// A call that changes a `protected` path (see [`protected_path`]) is asked about in `ask` and
/// `auto-edit`, even when its tool is allowlisted.
///
/// A bash command is allowlisted by prefix only under the rules of [`crate::prefix`]: one
/// simple command (`cargo test && rm -rf ~` never matches `cargo test`), never a program that
/// deletes or runs others (`rm`, `python3`), never a denied argument (`find -exec`).
pub fn decide(
    mode: PermissionMode,
    tool: &str,
    effects: Effects,
    args: &Value,
    allowed: &Allowlist,
    protected: bool,
) -> Verdict {
    if mode == PermissionMode::FullAuto || effects.is_read_only() {
        return Verdict::Allow;
    }
    if mode == PermissionMode::ReadOnly {
        return Verdict::Deny(format!(
            "The `{tool}` call was not run: this session is read-only (permission mode `read-only`); only tools that change nothing may run."
        ));
    }
    if protected {
        return Verdict::Ask;
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

pub use crate::prefix::{prefix_matches, suggested_prefix};

/// Directories whose files decide what later commands run: git's configuration and hooks
/// (`core.fsmonitor`, `core.pager`, `hooks/*` run on `git status`, `git log`, `git commit`)
/// and jig's own project directory (extensions, hooks and settings). A change to anything
/// beneath a component of these names (in any letter case, as on a case-insensitive file
/// system), or to the component itself (a `.git` file pointing at another git directory), is
/// asked about.
pub const PROTECTED_DIRS: &[&str] = &[".git", ".jig"];

/// Which protected directory `path` is in or names ([`PROTECTED_DIRS`]); `path` is relative to
/// the workspace root (a path outside it is checked whole).
pub fn protected_path(path: &std::path::Path) -> Option<&'static str> {
    path.components().find_map(|component| {
        let name = component.as_os_str().to_str()?;
        PROTECTED_DIRS
            .iter()
            .find(|dir| dir.eq_ignore_ascii_case(name))
            .copied()
    })
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
            let got = match decide(mode, "t", effects, &args, &none, false) {
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
            decide(ask, "edit", Effects::Mutates, &json!({}), &allowed, false),
            Verdict::Allow
        );
        assert_eq!(
            decide(ask, "write", Effects::Mutates, &json!({}), &allowed, false),
            Verdict::Ask
        );
        assert_eq!(
            decide(
                ask,
                "bash",
                Effects::Process,
                &bash("cargo test -p x"),
                &allowed,
                false
            ),
            Verdict::Allow
        );
        assert_eq!(
            decide(
                ask,
                "bash",
                Effects::Process,
                &bash("cargo test && rm -rf ~"),
                &allowed,
                false
            ),
            Verdict::Ask
        );
        assert_eq!(
            decide(
                ask,
                "bash",
                Effects::Process,
                &bash("cargo testx"),
                &allowed,
                false
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
                &allowed,
                false
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
            false,
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
    fn protected_paths_are_asked_about_even_in_auto_edit() {
        let mut allowed = Allowlist::default();
        allowed.tools.insert("write".into());
        for mode in [PermissionMode::Ask, PermissionMode::AutoEdit] {
            assert_eq!(
                decide(mode, "write", Effects::Mutates, &json!({}), &allowed, true),
                Verdict::Ask,
                "{mode}"
            );
        }
        assert_eq!(
            decide(
                PermissionMode::FullAuto,
                "write",
                Effects::Mutates,
                &json!({}),
                &allowed,
                true
            ),
            Verdict::Allow
        );
        let table = [
            (".git/config", Some(".git")),
            (".git/hooks/pre-commit", Some(".git")),
            (".git", Some(".git")),
            ("sub/.git/config", Some(".git")),
            (".GIT/config", Some(".git")),
            (".jig/settings.json", Some(".jig")),
            (".jig/extensions/x.py", Some(".jig")),
            ("src/main.rs", None),
            (".github/workflows/ci.yml", None),
            (".gitignore", None),
            ("docs/.jigsaw", None),
        ];
        for (path, expected) in table {
            assert_eq!(
                protected_path(std::path::Path::new(path)),
                expected,
                "{path}"
            );
        }
    }

    #[test]
    fn a_project_narrows_the_mode_and_never_widens_it() {
        use PermissionMode::{Ask, AutoEdit, FullAuto, ReadOnly};
        assert_eq!(Ask.narrowed_by(FullAuto), (Ask, true));
        assert_eq!(Ask.narrowed_by(AutoEdit), (Ask, true));
        assert_eq!(FullAuto.narrowed_by(Ask), (Ask, false));
        assert_eq!(AutoEdit.narrowed_by(ReadOnly), (ReadOnly, false));
        assert_eq!(ReadOnly.narrowed_by(FullAuto), (ReadOnly, true));
        for mode in PermissionMode::ALL {
            assert_eq!(mode.narrowed_by(mode), (mode, false));
        }
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
