//! The pieces of jig's interactive terminal session that do not need a terminal:
//!
//! - [`policy`]: permission modes (`read-only`, `ask`, `auto-edit`, `full-auto`), allowlists by
//!   tool and bash command prefix, and [`policy::decide`] — the one function that decides
//!   whether a call runs, is asked about or is denied, used by interactive and print mode alike.
//! - [`prefix`]: bash command prefixes — which is offered, which commands a saved one allows
//!   (one simple command, never a program that deletes or runs others, never a denied
//!   argument such as `find -exec`).
//! - [`approval`]: that policy as a `before_tool_call` hook ([`approval::PermissionHooks`]);
//!   asking goes to an [`approval::Approver`] (the interactive prompt), and without one what
//!   would be asked is denied with a result the model reads.
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
//! The `jig` binary composes them with the prompt editor and the agent.

pub mod approval;
pub mod line;
pub mod markdown;
pub mod policy;
pub mod prefix;
pub mod screen;
pub mod select;
pub mod view;
pub mod wrap;
