//! The `[sandbox]` note added to the result of a sandboxed command that failed in a way the
//! sandbox likely caused: what was probably denied, that the sandbox did it, and how the user
//! can allow it. A denied operation is an answer the model can act on (tell the user, or do
//! the work inside the workspace), not a mystery.

use jig_env::{SandboxMode, SandboxPolicy};

/// The note for a command that exited with `exit_code` and printed `text`, or `None` when the
/// sandbox is off, the command succeeded, or nothing points at the sandbox.
pub(super) fn note(policy: &SandboxPolicy, exit_code: i32, text: &str) -> Option<String> {
    if !policy.is_on() || exit_code == 0 {
        return None;
    }
    let lower = text.to_lowercase();
    let network = !policy.network
        && [
            "network is unreachable",
            "could not resolve host",
            "temporary failure in name resolution",
            "connection refused",
            "name or service not known",
            "failed to connect",
            "couldn't connect",
        ]
        .iter()
        .any(|sign| lower.contains(sign));
    let read_only = lower.contains("read-only file system");
    let denied = lower.contains("permission denied") || lower.contains("operation not permitted");
    let protected = policy.protected.iter().any(|path| {
        let shown = path.to_string_lossy();
        let shown = shown.trim_end_matches('*');
        !shown.is_empty() && text.contains(shown)
    }) || lower.contains(".ssh/")
        || lower.contains(".env");
    let mut reasons: Vec<&str> = Vec::new();
    if network {
        reasons.push("network access (the network is off in the sandbox)");
    }
    if read_only || denied {
        reasons.push(if protected {
            "access to a protected path (secrets such as .env*, ~/.ssh, ~/.aws)"
        } else if policy.mode == SandboxMode::ReadOnly {
            "a write (the sandbox is read-only)"
        } else {
            "a write outside the workspace roots or into .git/ or .jig/ (read-only)"
        });
    }
    if reasons.is_empty() {
        return None;
    }
    let allow = if network {
        "To allow it, the user can run jig with --network on"
    } else {
        "To allow it, the user can run jig with --sandbox off"
    };
    Some(format!(
        "[sandbox] This command ran in the {} sandbox, which likely denied {}. {allow}; \
         otherwise keep the work inside the workspace.",
        policy.mode,
        reasons.join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn policy(network: bool) -> SandboxPolicy {
        SandboxPolicy::for_roots(
            SandboxMode::WorkspaceWrite,
            network,
            vec![PathBuf::from("/ws")],
            Some(PathBuf::from("/home/u")),
        )
    }

    #[test]
    fn no_note_when_off_or_successful_or_unrelated() {
        assert_eq!(note(&SandboxPolicy::off(), 1, "Permission denied"), None);
        assert_eq!(note(&policy(false), 0, "Permission denied"), None);
        assert_eq!(note(&policy(false), 2, "syntax error near `fi'"), None);
        assert_eq!(note(&policy(true), 7, "curl: (7) Failed to connect"), None);
    }

    #[test]
    fn notes_say_what_was_denied_and_how_to_allow_it() {
        let cases = [
            ("write outside", "bash: /etc/motd: Read-only file system"),
            (
                "protected",
                "cat: /home/u/.ssh/id_ed25519: Permission denied",
            ),
            (
                "network",
                "curl: (7) Failed to connect to 127.0.0.1 port 80",
            ),
        ];
        let notes: Vec<String> = cases
            .iter()
            .map(|(name, output)| format!("{name}: {}", note(&policy(false), 1, output).unwrap()))
            .collect();
        insta::assert_snapshot!(notes.join("\n\n"));
    }
}
