//! `/export [FILE]`: the conversation as Markdown, or as one self-contained HTML page (a name
//! ending in `.html` or `.htm`): prompts, replies, reasoning, each tool call with its arguments
//! and each result, failed ones marked.
//!
//! The file is written on this machine (relative to jig's own working directory), whole or not
//! at all: a temporary file beside it is renamed over it once complete.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jig_agent::session::Session;
use jig_protocol::{AssistantBlock, ContentBlock, Message};

/// What a session looks like as a sequence of parts, shared by both formats.
enum Part {
    Heading(&'static str),
    Text(String),
    Code {
        label: String,
        text: String,
        error: bool,
    },
}

fn parts(session: &Session) -> Vec<Part> {
    let mut parts = Vec::new();
    for message in session.messages() {
        match message {
            Message::User(user) => {
                parts.push(Part::Heading("User"));
                for block in user.content {
                    parts.push(owned_block(&block));
                }
            }
            Message::Assistant(reply) => {
                parts.push(Part::Heading("Assistant"));
                for block in reply.content {
                    match block {
                        AssistantBlock::Text { text } => parts.push(Part::Text(text)),
                        AssistantBlock::Thinking { thinking, .. } => parts.push(Part::Code {
                            label: "Reasoning".to_owned(),
                            text: thinking,
                            error: false,
                        }),
                        AssistantBlock::ToolCall(call) => parts.push(Part::Code {
                            label: format!("Tool call: {}", call.name),
                            text: call.raw_arguments.clone().unwrap_or_else(|| {
                                serde_json::to_string_pretty(&call.arguments).unwrap_or_default()
                            }),
                            error: false,
                        }),
                    }
                }
            }
            Message::ToolResult(result) => {
                let text = result
                    .content
                    .iter()
                    .map(|block| match block {
                        ContentBlock::Text { text } => text.clone(),
                        ContentBlock::Image { mime_type, .. } => format!("[image: {mime_type}]"),
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                parts.push(Part::Code {
                    label: format!(
                        "Result: {}{}",
                        result.tool_name,
                        if result.is_error { " (error)" } else { "" }
                    ),
                    text,
                    error: result.is_error,
                });
            }
        }
    }
    parts
}

fn owned_block(block: &ContentBlock) -> Part {
    match block {
        ContentBlock::Text { text } => Part::Text(text.clone()),
        ContentBlock::Image { mime_type, .. } => Part::Text(format!("[image: {mime_type}]")),
    }
}

/// The session as Markdown.
pub(super) fn markdown(session: &Session) -> String {
    let header = session.header();
    let mut out = format!(
        "# jig session {}\n\n- Directory: `{}`\n- Started: {}\n",
        header.id,
        header.cwd.display(),
        header.timestamp
    );
    if let Some((provider, model)) = session.model() {
        let _ = writeln!(out, "- Model: {provider}/{model}");
    }
    for part in parts(session) {
        // One blank line between blocks.
        while !out.ends_with("\n\n") {
            out.push('\n');
        }
        match part {
            Part::Heading(title) => {
                let _ = write!(out, "## {title}\n\n");
            }
            Part::Text(text) => {
                out.push_str(text.trim_end());
                out.push_str("\n\n");
            }
            Part::Code { label, text, .. } => {
                let fence = fence_for(&text);
                let _ = write!(
                    out,
                    "**{label}**\n\n{fence}\n{}\n{fence}\n\n",
                    text.trim_end()
                );
            }
        }
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// The session as one HTML page with its style inline and nothing loaded from elsewhere.
pub(super) fn html(session: &Session) -> String {
    let header = session.header();
    let model = session
        .model()
        .map(|(provider, model)| format!(" · {}/{}", escape(&provider), escape(&model)))
        .unwrap_or_default();
    let mut out = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>jig session {id}</title><style>{STYLE}</style></head><body>\n\
         <h1>jig session {id}</h1>\n<p class=\"meta\">{cwd} · {started}{model}</p>\n",
        id = escape(&header.id),
        cwd = escape(&header.cwd.display().to_string()),
        started = escape(&header.timestamp),
    );
    for part in parts(session) {
        match part {
            Part::Heading(title) => {
                let _ = writeln!(out, "<h2 class=\"{}\">{title}</h2>", title.to_lowercase());
            }
            Part::Text(text) => {
                let _ = writeln!(out, "<div class=\"text\">{}</div>", escape(text.trim_end()));
            }
            Part::Code { label, text, error } => {
                let _ = writeln!(
                    out,
                    "<details{open}><summary{class}>{}</summary><pre>{}</pre></details>",
                    escape(&label),
                    escape(text.trim_end()),
                    open = if error { " open" } else { "" },
                    class = if error { " class=\"error\"" } else { "" },
                );
            }
        }
    }
    out.push_str("</body></html>\n");
    out
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:56rem;margin:2rem auto;\
padding:0 1rem;color:#1d1d1f;background:#fff}h1{font-size:1.3rem}.meta{color:#666}\
h2{font-size:1rem;margin:1.5rem 0 .3rem;padding-top:.6rem;border-top:1px solid #ddd}\
h2.user{color:#0a5}h2.assistant{color:#06c}.text{white-space:pre-wrap}\
details{margin:.4rem 0}summary{cursor:pointer;color:#555}summary.error{color:#c00}\
pre{background:#f5f5f7;padding:.6rem;overflow-x:auto;white-space:pre-wrap;word-break:break-word}\
@media (prefers-color-scheme:dark){body{background:#1d1d1f;color:#eee}pre{background:#2a2a2e}}";

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Where `/export FILE` writes: `FILE` relative to jig's working directory, or
/// `jig-session-ID.md` there.
pub(super) fn target(argument: &str, session_id: &str) -> PathBuf {
    let argument = argument.trim();
    if argument.is_empty() {
        PathBuf::from(format!("jig-session-{session_id}.md"))
    } else {
        PathBuf::from(argument)
    }
}

/// Whether `path` asks for HTML.
pub(super) fn is_html(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| {
            extension.eq_ignore_ascii_case("html") || extension.eq_ignore_ascii_case("htm")
        })
}

/// Writes `text` to `path` whole or not at all.
pub(super) fn write(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(&dir)?;
    file.write_all(text.as_bytes())?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        super::super::denied_call_session(
            "Clean up <build> & report",
            Some("Removing it. A fence: ```"),
            "```not now```",
        )
    }

    /// The id and start time change with every session.
    fn stable(text: &str, session: &Session) -> String {
        text.replace(session.id(), "[ID]")
            .replace(&session.header().timestamp, "[STARTED]")
    }

    #[test]
    fn markdown_shows_every_message_and_fences_hold_backticks() {
        let session = session();
        insta::assert_snapshot!(stable(&markdown(&session), &session));
    }

    #[test]
    fn html_is_escaped_and_self_contained() {
        let session = session();
        let page = html(&session);
        assert!(!page.contains("<build>"), "{page}");
        assert!(page.contains("Clean up &lt;build&gt; &amp; report"));
        assert!(!page.contains("src=") && !page.contains("href="), "{page}");
        insta::assert_snapshot!(stable(&page, &session));
    }

    #[test]
    fn the_target_and_format_follow_the_name() {
        assert_eq!(target("", "abc"), PathBuf::from("jig-session-abc.md"));
        assert_eq!(target(" out.html ", "abc"), PathBuf::from("out.html"));
        assert!(is_html(Path::new("x.HTML")) && is_html(Path::new("x.htm")));
        assert!(!is_html(Path::new("x.md")));
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("export.md");
        write(&path, "old").unwrap();
        assert!(write(&dir.path().join("missing/x.md"), "new").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        write(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left"
        );
    }
}
