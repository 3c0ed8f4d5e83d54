//! jig's interactive terminal session: the rendering pieces, which need no terminal, and the
//! session itself over `jig-session`'s harness (the permission policy lives there too, shared
//! with print mode):
//!
//! - [`line`](mod@line): a terminal line as styled spans.
//! - [`view`]: a run's [`jig_agent::AgentEvent`]s as terminal lines — finished lines for the
//!   scrollback, and a small live region (the reply's unfinished line, running tools with the
//!   tail of their output); memory stays bounded whatever the size of a reply or an output.
//! - [`markdown`]: a reply's Markdown rendered line by line as it streams (headings, lists,
//!   quotes, tables, code blocks highlighted with `syntect`, inline markup with `pulldown-cmark`).
//! - [`screen`]: draws those lines inline with crossterm (no alternate screen), honouring
//!   `NO_COLOR`; [`wrap`] breaks finished lines between words as the terminal's own soft wrap.
//! - [`select`]: a question with a few choices (the project-trust prompt, `/trust`), its keys
//!   and lines, and [`select::Select::run`], which asks in the terminal.
//!
//! - [`interactive`]: the session itself: the prompt editor (reedline), the agent's turns, the
//!   approval questions, slash commands; `jig` alone in a terminal runs it.

#[expect(
    clippy::disallowed_methods,
    reason = "the session reads its prompt history and writes /export files on the host"
)]
pub mod interactive;
pub mod line;
pub mod markdown;
pub mod screen;
pub mod select;
pub mod view;
pub mod wrap;
