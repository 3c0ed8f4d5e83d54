//! The sandbox policy a command runs under: which files it may write, which it may not read,
//! and whether it reaches the network. The env that runs the command enforces it (see
//! `jig-env-local`'s `sandbox` module and docs/sandbox.md).

use std::fmt;
use std::path::PathBuf;

/// How much of the filesystem a sandboxed command may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// No sandbox: the command runs with the user's full rights.
    #[default]
    Off,
    /// The command may read (except protected paths) and write nothing but a private temp dir.
    ReadOnly,
    /// The command may write inside the writable roots and a private temp dir.
    WorkspaceWrite,
}

impl SandboxMode {
    /// The name used by `--sandbox` and the settings.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
        }
    }

    /// Parses a mode name (`off`, `read-only`, `workspace-write`).
    ///
    /// # Errors
    /// An unknown name, with the accepted ones in the message.
    pub fn parse(name: &str) -> Result<Self, UnknownSandboxMode> {
        match name {
            "off" => Ok(Self::Off),
            "read-only" => Ok(Self::ReadOnly),
            "workspace-write" => Ok(Self::WorkspaceWrite),
            other => Err(UnknownSandboxMode {
                name: other.to_owned(),
            }),
        }
    }
}

/// A sandbox mode name that is none of `off`, `read-only` and `workspace-write`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{name}`: use workspace-write, read-only or off")]
pub struct UnknownSandboxMode {
    /// The name as given.
    pub name: String,
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Directory names inside a writable root that stay read-only (git hooks and config, jig's own
/// project files).
pub const READ_ONLY_SUBDIRS: &[&str] = &[".git", ".jig"];

/// Protected names denied wherever they appear directly inside a writable root or the working
/// directory: a name ending in `*` is a prefix (`.env*` covers `.env` and `.env.local`).
pub const PROTECTED_NAMES: &[&str] = &[".env*"];

/// Protected paths relative to the home directory (denied to read and to write).
pub const PROTECTED_HOME_PATHS: &[&str] = &[
    ".ssh",
    ".aws",
    ".config/gh",
    ".netrc",
    ".gnupg",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".config/fish",
    ".config/jig",
];

/// What a sandboxed command may do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxPolicy {
    /// The filesystem mode; [`SandboxMode::Off`] turns everything else off too.
    pub mode: SandboxMode,
    /// Whether the command may use the network.
    pub network: bool,
    /// Directories the command may write (in [`SandboxMode::WorkspaceWrite`]); absolute.
    pub writable_roots: Vec<PathBuf>,
    /// Paths the command may neither read nor write, whether or not they exist yet; absolute
    /// by the time the env enforces them (a tool context joins relative ones, from the
    /// settings, to each writable root); a final component ending in `*` is a prefix pattern.
    pub protected: Vec<PathBuf>,
}

impl SandboxPolicy {
    /// No sandbox.
    #[must_use]
    pub fn off() -> Self {
        Self::default()
    }

    /// True when the policy restricts anything.
    #[must_use]
    pub fn is_on(&self) -> bool {
        self.mode != SandboxMode::Off
    }

    /// A policy for `roots` with the default protected paths of `home` (and the `.env*` names
    /// inside every root).
    #[must_use]
    pub fn for_roots(
        mode: SandboxMode,
        network: bool,
        roots: Vec<PathBuf>,
        home: Option<PathBuf>,
    ) -> Self {
        let mut protected: Vec<PathBuf> = Vec::new();
        if let Some(home) = home {
            protected.extend(PROTECTED_HOME_PATHS.iter().map(|path| home.join(path)));
        }
        for root in &roots {
            protected.extend(PROTECTED_NAMES.iter().map(|name| root.join(name)));
        }
        Self {
            mode,
            network,
            writable_roots: roots,
            protected,
        }
    }

    /// One line saying what the policy enforces (for reports and notes).
    #[must_use]
    pub fn summary(&self) -> String {
        match self.mode {
            SandboxMode::Off => "off: commands run with your full rights".to_owned(),
            SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite => {
                let writes = if self.mode == SandboxMode::ReadOnly {
                    "no writes except a private temporary directory".to_owned()
                } else {
                    let roots: Vec<String> = self
                        .writable_roots
                        .iter()
                        .map(|root| root.display().to_string())
                        .collect();
                    format!(
                        "writes only in {} and a private temporary directory ({} read-only)",
                        roots.join(", "),
                        READ_ONLY_SUBDIRS.join(", ")
                    )
                };
                format!(
                    "{}: {writes}; network {}; {} protected paths unreadable",
                    self.mode,
                    if self.network { "on" } else { "off" },
                    self.protected.len()
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_print_their_names() {
        for mode in [
            SandboxMode::Off,
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
        ] {
            assert_eq!(SandboxMode::parse(mode.name()), Ok(mode));
        }
        let error = SandboxMode::parse("strict").unwrap_err().to_string();
        assert!(
            error.contains("workspace-write, read-only or off"),
            "{error}"
        );
    }

    #[test]
    fn for_roots_protects_home_secrets_and_env_files() {
        let policy = SandboxPolicy::for_roots(
            SandboxMode::WorkspaceWrite,
            false,
            vec![PathBuf::from("/ws")],
            Some(PathBuf::from("/home/u")),
        );
        assert!(policy.protected.contains(&PathBuf::from("/home/u/.ssh")));
        assert!(
            policy
                .protected
                .contains(&PathBuf::from("/home/u/.config/jig"))
        );
        assert!(policy.protected.contains(&PathBuf::from("/ws/.env*")));
        assert!(policy.is_on());
        assert!(!SandboxPolicy::off().is_on());
    }
}
