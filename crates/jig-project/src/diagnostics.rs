//! Startup diagnostics: what went wrong while reading settings and loading extensions, and
//! whether jig may start.
//!
//! | Source | Severity | Message |
//! |---|---|---|
//! | settings files | warning | `Invalid settings file <path>: <reason>` |
//! | the trust decision (an untrusted project with gated resources, a store write that failed) | warning | as given |
//! | an extension that cannot be loaded (also a `[hooks]` or settings `hooks` key that is no event) | error | `Failed to load extension "<path>": <reason>` |
//! | an extension that subscribes to an event this jig does not send | warning | `Extension "<path>": unknown event "<name>", …` |
//! | an invalid `JIG_EXTENSION_TIMEOUT` | warning | `JIG_EXTENSION_TIMEOUT="<value>" is not a timeout: …` |
//! | a tool or flag name registered twice | error | `Failed to load extension "<path>": Tool "<name>" conflicts with <first>` |
//! | a provider registration that is invalid or conflicts | error (no hint) | `Failed to load extension "<path>": <reason>` |
//! | a `--flag` no extension registers, or of the wrong type | usage error (no hint) | `Unknown flag "--<name>": no loaded extension registers it` |
//!
//! Warnings print and startup continues. Any error stops startup, in every mode: with exit 2 when
//! the only errors are flag errors (a command line jig cannot take is a usage error, like any
//! other unknown option), else with exit 1. When an extension failed to load (or conflicted), the hint
//! `Hint: Start without extensions using "jig -ne".` follows. [`Diagnostics::report`] prints and
//! gives the verdict.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

/// The hint printed after extension load errors.
pub const NO_EXTENSIONS_HINT: &str = "Hint: Start without extensions using \"jig -ne\".";

/// The exit code of a command line jig cannot take (`--flag` errors), as for every usage error.
pub const USAGE_EXIT: u8 = 2;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Printed; startup continues.
    Warning,
    /// Printed; startup stops with exit 1.
    Error,
}

/// Where a diagnostic comes from (it decides the severity and the hint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// A settings file problem.
    Settings,
    /// About the trust decision.
    Trust,
    /// An extension could not be loaded.
    ExtensionLoad,
    /// A tool or flag name registered by two extensions.
    Conflict,
    /// A provider registration from an extension failed.
    ProviderRegistration,
    /// A `--flag` no extension registers, or with a value of the wrong type.
    Flag,
    /// A skill or prompt template that is invalid, shadowed or out of bounds (always a
    /// warning: the rest loads).
    Resource,
}

/// One diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Warning or error.
    pub severity: Severity,
    /// Its source.
    pub kind: DiagnosticKind,
    /// The message, without prefix.
    pub message: String,
}

/// Whether startup may go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartupVerdict {
    /// No errors: start.
    Continue,
    /// At least one error: stop with this exit code (2 for flag errors alone, else 1).
    Exit(u8),
}

/// The diagnostics collected during startup, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Adds a diagnostic.
    pub fn push(&mut self, severity: Severity, kind: DiagnosticKind, message: impl Into<String>) {
        self.items.push(Diagnostic {
            severity,
            kind,
            message: message.into(),
        });
    }

    /// A settings problem: `Invalid settings file <path>: <reason>` (warning).
    pub fn settings_warning(&mut self, path: &Path, reason: &str) {
        self.push(
            Severity::Warning,
            DiagnosticKind::Settings,
            format!("Invalid settings file {}: {reason}", path.display()),
        );
    }

    /// A warning about the trust decision.
    pub fn trust_warning(&mut self, message: impl Into<String>) {
        self.push(Severity::Warning, DiagnosticKind::Trust, message);
    }

    /// `Failed to load extension "<path>": <reason>` (error).
    pub fn extension_load_error(&mut self, path: &Path, reason: &str) {
        self.push(
            Severity::Error,
            DiagnosticKind::ExtensionLoad,
            format!("Failed to load extension \"{}\": {reason}", path.display()),
        );
    }

    /// `Failed to load extension "<path>": Tool "<name>" conflicts with <first>` (error).
    pub fn tool_conflict(&mut self, path: &Path, name: &str, first: &Path) {
        self.push(
            Severity::Error,
            DiagnosticKind::Conflict,
            format!(
                "Failed to load extension \"{}\": Tool \"{name}\" conflicts with {}",
                path.display(),
                first.display()
            ),
        );
    }

    /// `Failed to load extension "<path>": Flag "--<name>" conflicts with <first>` (error).
    pub fn flag_conflict(&mut self, path: &Path, name: &str, first: &Path) {
        self.push(
            Severity::Error,
            DiagnosticKind::Conflict,
            format!(
                "Failed to load extension \"{}\": Flag \"--{name}\" conflicts with {}",
                path.display(),
                first.display()
            ),
        );
    }

    /// `Failed to load extension "<path>": <reason>` for a provider registration that is
    /// invalid or conflicts (error, no hint: starting without extensions is not the fix).
    pub fn provider_registration_error(&mut self, path: &Path, reason: &str) {
        self.push(
            Severity::Error,
            DiagnosticKind::ProviderRegistration,
            format!("Failed to load extension \"{}\": {reason}", path.display()),
        );
    }

    /// A `--flag` that no extension registers or whose value does not fit (error, no hint).
    pub fn flag_error(&mut self, message: &str) {
        self.push(Severity::Error, DiagnosticKind::Flag, message);
    }

    /// The diagnostics in order.
    pub fn items(&self) -> &[Diagnostic] {
        &self.items
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    /// Moves `other`'s diagnostics to the end of these.
    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }

    /// What [`report`](Self::report) prints: `jig: warning: …` / `jig: error: …` lines,
    /// duplicates once, then the hint when an extension failed to load.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut seen: Vec<(&Severity, &str)> = Vec::new();
        for item in &self.items {
            if seen.contains(&(&item.severity, item.message.as_str())) {
                continue;
            }
            seen.push((&item.severity, &item.message));
            let prefix = match item.severity {
                Severity::Warning => "warning",
                Severity::Error => "error",
            };
            let _ = writeln!(out, "jig: {prefix}: {}", item.message);
        }
        let load_failed = self.items.iter().any(|d| {
            d.severity == Severity::Error
                && matches!(
                    d.kind,
                    DiagnosticKind::ExtensionLoad | DiagnosticKind::Conflict
                )
        });
        if load_failed {
            let _ = writeln!(out, "{NO_EXTENSIONS_HINT}");
        }
        out
    }

    /// Prints the diagnostics to `out` (stderr in the CLI) and decides: flag errors alone →
    /// exit 2 (a usage error), any other error → exit 1.
    /// What was printed is forgotten, so a later call prints only what was added since.
    pub fn report(&mut self, out: &mut dyn Write) -> StartupVerdict {
        let text = self.render();
        if !text.is_empty() {
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
        let mut errors = self
            .items
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .peekable();
        let verdict = if errors.peek().is_none() {
            StartupVerdict::Continue
        } else if errors.all(|d| d.kind == DiagnosticKind::Flag) {
            StartupVerdict::Exit(USAGE_EXIT)
        } else {
            StartupVerdict::Exit(1)
        };
        self.items.clear();
        verdict
    }

    /// [`report`](Self::report) to stderr.
    pub fn report_to_stderr(&mut self) -> StartupVerdict {
        self.report(&mut io::stderr().lock())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn warnings_print_and_startup_continues() {
        let mut diagnostics = Diagnostics::default();
        diagnostics.settings_warning(Path::new("/c/settings.json"), "expected a JSON object");
        let mut out = Vec::new();
        assert_eq!(diagnostics.report(&mut out), StartupVerdict::Continue);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "jig: warning: Invalid settings file /c/settings.json: expected a JSON object\n"
        );
    }

    #[test]
    fn a_load_error_exits_1_with_the_hint() {
        let mut diagnostics = Diagnostics::default();
        diagnostics.settings_warning(Path::new("/c/settings.json"), "bad");
        diagnostics
            .extension_load_error(Path::new("/x/ext"), "Extension path does not exist: /x/ext");
        diagnostics
            .extension_load_error(Path::new("/x/ext"), "Extension path does not exist: /x/ext");
        let mut out = Vec::new();
        assert_eq!(diagnostics.report(&mut out), StartupVerdict::Exit(1));
        insta::assert_snapshot!(String::from_utf8_lossy(&out), @r#"
        jig: warning: Invalid settings file /c/settings.json: bad
        jig: error: Failed to load extension "/x/ext": Extension path does not exist: /x/ext
        Hint: Start without extensions using "jig -ne".
        "#);
        // Reported once: nothing is left.
        assert_eq!(
            diagnostics.report(&mut Vec::new()),
            StartupVerdict::Continue
        );
    }

    #[test]
    fn conflicts_are_load_errors_and_provider_errors_exit_without_the_hint() {
        let mut diagnostics = Diagnostics::default();
        diagnostics.tool_conflict(Path::new("/b"), "lint", Path::new("/a"));
        diagnostics.flag_conflict(Path::new("/b"), "plan", Path::new("/a"));
        let mut out = Vec::new();
        assert_eq!(diagnostics.report(&mut out), StartupVerdict::Exit(1));
        insta::assert_snapshot!(String::from_utf8_lossy(&out), @r#"
        jig: error: Failed to load extension "/b": Tool "lint" conflicts with /a
        jig: error: Failed to load extension "/b": Flag "--plan" conflicts with /a
        Hint: Start without extensions using "jig -ne".
        "#);

        diagnostics.provider_registration_error(Path::new("/p"), "bad provider config");
        let mut out = Vec::new();
        assert_eq!(diagnostics.report(&mut out), StartupVerdict::Exit(1));
        assert_eq!(
            String::from_utf8_lossy(&out),
            "jig: error: Failed to load extension \"/p\": bad provider config\n"
        );
    }

    #[test]
    fn flag_errors_alone_are_usage_errors_and_exit_2() {
        let mut diagnostics = Diagnostics::default();
        diagnostics.flag_error("Unknown flag \"--nope\": no loaded extension registers it");
        let mut out = Vec::new();
        assert_eq!(diagnostics.report(&mut out), StartupVerdict::Exit(2));
        assert_eq!(
            String::from_utf8_lossy(&out),
            "jig: error: Unknown flag \"--nope\": no loaded extension registers it\n"
        );

        diagnostics.flag_error("Unknown flag \"--nope\": no loaded extension registers it");
        diagnostics.extension_load_error(Path::new("/x"), "it exited");
        assert_eq!(diagnostics.report(&mut Vec::new()), StartupVerdict::Exit(1));
    }
}
