//! Sessions: a conversation kept as an append-only JSONL file.
//!
//! Line 1 is the header `{"type":"session","version":1,"id":…,"timestamp":…,"cwd":…}`; every
//! other line is an entry with `type`, `id`, `parentId` and `timestamp`: `message` (a
//! [`Message`]), `model_change` (`provider`, `modelId`, `baseUrl` when not the provider's default,
//! `providerKind` and `apiKeyEnv` for a provider the user defined) or `thinking_level_change`
//! (`thinkingLevel`), `custom` (`customType`, `data`: an extension's own state, never sent to
//! the model) or `compaction` (`reason`, `summary`, `firstKeptEntryId`, `replacedMessages`,
//! `tokensBefore`: from there on the model is sent the summary and the messages from the first
//! kept one on; the file keeps everything). Appending makes the new entry a child of the current leaf (the last entry),
//! so a file can later hold branches; the conversation is the path from the leaf to the root.
//!
//! The file is written only once a successful assistant reply (or a compaction summary) is
//! appended: until then entries are kept in memory. So a new session's file is created at its
//! first reply (a run that failed or was aborted before any reply leaves no file), and a resumed
//! session that gets no reply is left byte for byte as it was, modification time included (it
//! does not become the session `--continue` picks, and the failed prompt is not kept). Each entry is written with one
//! `write` call. Reading skips blank and malformed lines, so a last line cut by a crash loses only
//! that entry; the next append first ends the cut line.
//!
//! Sessions live in `$XDG_DATA_HOME/jig/sessions` (default `~/.local/share/jig/sessions`), one
//! directory per working directory: `/home/u/proj` → `--home-u-proj--`, file
//! `<created time>_<session id>.jsonl`.
//!
//! During a run, a [`SessionRecorder`](crate::SessionRecorder) owns the session and writes it from a task of its own, so
//! the agent loop and its observers never wait for the disk.
#![expect(
    clippy::disallowed_methods,
    reason = "sessions are host state: files in the user's data directory, not the tool environment"
)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use jig_llm::ThinkingLevel;

use crate::compaction::CompactionReason;
use jig_protocol::{EnvVars, Message, StopReason};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The session file format version this build writes and reads.
pub const SESSION_VERSION: u32 = 1;

/// Why a session could not be opened or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// Reading or writing the file failed.
    #[error("session file {}: {operation} failed", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was attempted.
        operation: &'static str,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The file is not a jig session.
    #[error("{} is not a jig session file: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    /// Always `session`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The format version.
    pub version: u32,
    /// The session id (a UUIDv7 unless chosen by the user).
    pub id: String,
    /// When the session was created (RFC 3339).
    pub timestamp: String,
    /// The working directory it was created in.
    pub cwd: PathBuf,
}

/// What an entry records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EntryKind {
    /// A conversation message.
    #[serde(rename_all = "camelCase")]
    Message {
        /// The message.
        message: Message,
        /// For a message an extension sent (`sendMessage`): its own type tag.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        custom_type: Option<String>,
        /// For a message an extension sent: `false` when it is not shown to the user.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<bool>,
    },
    /// The model used from here on.
    #[serde(rename_all = "camelCase")]
    ModelChange {
        /// The provider's name.
        provider: String,
        /// The model id.
        model_id: String,
        /// The endpoint, when it is not the provider's default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base_url: Option<String>,
        /// For a provider the user defined (not built in): its protocol and key variable, so a
        /// resumed session reaches it again.
        #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
        custom: Option<CustomEndpoint>,
    },
    /// The reasoning level used from here on.
    #[serde(rename_all = "camelCase")]
    ThinkingLevelChange {
        /// The level.
        thinking_level: ThinkingLevel,
    },
    /// From here on the model is sent `summary` in place of the messages on the branch before
    /// the entry `firstKeptEntryId` (the file keeps them).
    #[serde(rename_all = "camelCase")]
    Compaction {
        /// Why it happened.
        reason: CompactionReason,
        /// The model's summary of the replaced messages.
        summary: String,
        /// The first message entry still sent verbatim.
        first_kept_entry_id: String,
        /// How many message entries of the branch the summary replaces.
        replaced_messages: usize,
        /// Input tokens of the last request before the compaction, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens_before: Option<u64>,
    },
    /// State an extension keeps in the session (`appendEntry`); never sent to the model.
    #[serde(rename_all = "camelCase")]
    Custom {
        /// The extension's own type tag.
        custom_type: String,
        /// Any JSON.
        #[serde(default)]
        data: Value,
    },
}

/// How a provider the user defined is reached, as a session records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEndpoint {
    /// Its protocol: `openai` or `anthropic`.
    pub provider_kind: String,
    /// The environment variable holding its API key, if it needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

/// One entry line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEntry {
    /// The entry's id (8 hex digits, unique in the file).
    pub id: String,
    /// The entry it follows; `None` for the first.
    pub parent_id: Option<String>,
    /// When it was written (RFC 3339).
    pub timestamp: String,
    /// What it records.
    #[serde(flatten)]
    pub kind: EntryKind,
}

/// An entry as read: known kinds parsed, unknown ones (from a newer version) kept as ids only so
/// the parent chain stays intact.
#[derive(Debug, Clone)]
struct StoredEntry {
    id: String,
    parent_id: Option<String>,
    kind: Option<EntryKind>,
}

/// An open session: its header, its entries, and where new entries go.
#[derive(Debug)]
pub struct Session {
    header: SessionHeader,
    path: Option<PathBuf>,
    entries: Vec<StoredEntry>,
    ids: HashSet<String>,
    leaf: Option<String>,
    /// Lines waiting for the file to be written (before the first assistant reply).
    pending: Vec<String>,
    /// Open for appending from the first reply on (see the module docs).
    file: Option<File>,
    /// The file already existed when the session was opened: it is appended to, not created.
    resumed: bool,
    /// The file's last line has no newline (cut by a crash): end it before appending.
    needs_newline: bool,
    skipped_lines: usize,
}

fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

/// True for ids made of ASCII letters, digits, `-`, `_` and `.`, starting and ending with a
/// letter or digit.
pub fn is_valid_session_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

impl Session {
    /// A new session whose file will be `dir/<time>_<id>.jsonl`.
    pub fn create_in(dir: &Path, cwd: &Path) -> Self {
        let header = Self::new_header(None, cwd);
        let name = format!(
            "{}_{}.jsonl",
            header.timestamp.replace([':', '.'], "-"),
            header.id
        );
        Self::with_header(header, Some(dir.join(name)))
    }

    /// A new session written to `path` (created with its parent directories on first reply),
    /// with id `id` or a fresh one.
    pub fn create_at(path: PathBuf, cwd: &Path, id: Option<String>) -> Self {
        Self::with_header(Self::new_header(id, cwd), Some(path))
    }

    /// A session that is never written (`--no-session`).
    pub fn in_memory(cwd: &Path) -> Self {
        Self::with_header(Self::new_header(None, cwd), None)
    }

    fn new_header(id: Option<String>, cwd: &Path) -> SessionHeader {
        SessionHeader {
            kind: "session".to_owned(),
            version: SESSION_VERSION,
            id: id.unwrap_or_else(|| uuid::Uuid::now_v7().to_string()),
            timestamp: now_rfc3339(),
            cwd: cwd.to_path_buf(),
        }
    }

    fn with_header(header: SessionHeader, path: Option<PathBuf>) -> Self {
        Self {
            header,
            path,
            entries: Vec::new(),
            ids: HashSet::new(),
            leaf: None,
            pending: Vec::new(),
            file: None,
            resumed: false,
            needs_newline: false,
            skipped_lines: 0,
        }
    }

    /// Opens an existing session file. Blank and malformed entry lines are skipped (see
    /// [`Session::skipped_lines`]); a file whose first line is not a session header is
    /// [`SessionError::Invalid`].
    pub fn open(path: &Path) -> Result<Self, SessionError> {
        let bytes = fs::read(path).map_err(|source| SessionError::Io {
            path: path.to_path_buf(),
            operation: "reading",
            source,
        })?;
        let text = String::from_utf8_lossy(&bytes);
        let mut lines = text.split('\n');
        let first = lines.next().unwrap_or_default();
        let header: SessionHeader = serde_json::from_str(first)
            .ok()
            .filter(|h: &SessionHeader| h.kind == "session")
            .ok_or_else(|| SessionError::Invalid {
                path: path.to_path_buf(),
                reason: "the first line is not a session header".to_owned(),
            })?;
        if header.version > SESSION_VERSION {
            return Err(SessionError::Invalid {
                path: path.to_path_buf(),
                reason: format!(
                    "format version {} is newer than this jig understands ({SESSION_VERSION})",
                    header.version
                ),
            });
        }
        let mut session = Self::with_header(header, Some(path.to_path_buf()));
        for line in lines {
            if line.trim().is_empty() {
                continue;
            }
            match parse_entry(line) {
                Some(entry) => {
                    session.ids.insert(entry.id.clone());
                    session.leaf = Some(entry.id.clone());
                    session.entries.push(entry);
                }
                None => session.skipped_lines += 1,
            }
        }
        session.needs_newline = !bytes.is_empty() && !bytes.ends_with(b"\n");
        // Opened for appending at the first reply: a run that gets none leaves the file alone.
        session.resumed = true;
        Ok(session)
    }

    /// The header.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.header.id
    }

    /// The file, unless the session is in memory only. It may not exist yet (see the module
    /// docs).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Lines skipped as malformed when the file was opened.
    pub fn skipped_lines(&self) -> usize {
        self.skipped_lines
    }

    /// The entries on the path from the root to the leaf, in order.
    pub fn branch(&self) -> Vec<&EntryKind> {
        self.branch_entries()
            .into_iter()
            .filter_map(|entry| entry.kind.as_ref())
            .collect()
    }

    /// What the model is sent on resuming: after the last compaction on the branch, its summary
    /// and the messages from its first kept entry on; else `None` and every message.
    pub fn context(&self) -> (Option<String>, Vec<Message>) {
        let entries = self.branch_entries();
        let compaction = entries.iter().rev().find_map(|entry| match &entry.kind {
            Some(EntryKind::Compaction {
                summary,
                first_kept_entry_id,
                ..
            }) => Some((summary.clone(), first_kept_entry_id.as_str())),
            _ => None,
        });
        let Some((summary, first_kept)) = compaction else {
            return (None, self.messages());
        };
        let start = entries
            .iter()
            .position(|entry| entry.id == first_kept)
            .unwrap_or(entries.len());
        let messages = entries[start..]
            .iter()
            .filter_map(|entry| match &entry.kind {
                Some(EntryKind::Message { message, .. }) => Some(message.clone()),
                _ => None,
            })
            .collect();
        (Some(summary), messages)
    }

    /// Records a compaction: the model is sent `summary` and the last `kept_messages` messages
    /// of the branch from now on.
    pub fn append_compaction(
        &mut self,
        reason: CompactionReason,
        summary: &str,
        kept_messages: usize,
        tokens_before: Option<u64>,
    ) -> Result<(), SessionError> {
        let message_ids: Vec<String> = self
            .branch_entries()
            .into_iter()
            .filter(|entry| matches!(entry.kind, Some(EntryKind::Message { .. })))
            .map(|entry| entry.id.clone())
            .collect();
        let Some(first_kept) = message_ids
            .len()
            .checked_sub(kept_messages)
            .and_then(|index| message_ids.get(index))
        else {
            return Err(SessionError::Invalid {
                path: self.path.clone().unwrap_or_default(),
                reason: format!(
                    "a compaction keeps {kept_messages} messages but the session has {}",
                    message_ids.len()
                ),
            });
        };
        self.append(
            EntryKind::Compaction {
                reason,
                summary: summary.to_owned(),
                first_kept_entry_id: first_kept.clone(),
                replaced_messages: message_ids.len() - kept_messages,
                tokens_before,
            },
            // The summary is a model's reply: a resumed session keeps it even when the prompt
            // after it fails.
            true,
        )
    }

    fn branch_entries(&self) -> Vec<&StoredEntry> {
        let by_id: HashMap<&str, &StoredEntry> = self
            .entries
            .iter()
            .map(|entry| (entry.id.as_str(), entry))
            .collect();
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor = self.leaf.as_deref();
        while let Some(id) = cursor {
            if !seen.insert(id) {
                break; // a cycle in a damaged file
            }
            let Some(entry) = by_id.get(id) else { break };
            path.push(*entry);
            cursor = entry.parent_id.as_deref();
        }
        path.reverse();
        path
    }

    /// The conversation: the messages on the current branch.
    pub fn messages(&self) -> Vec<Message> {
        self.branch()
            .into_iter()
            .filter_map(|kind| match kind {
                EntryKind::Message { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }

    /// How many messages the conversation has ([`Session::messages`] without copying them).
    pub fn message_count(&self) -> usize {
        self.branch()
            .into_iter()
            .filter(|kind| matches!(kind, EntryKind::Message { .. }))
            .count()
    }

    /// The last model on the branch (from a model change or an assistant reply).
    pub fn model(&self) -> Option<(String, String)> {
        self.branch().into_iter().rev().find_map(|kind| match kind {
            EntryKind::ModelChange {
                provider, model_id, ..
            } => Some((provider.clone(), model_id.clone())),
            EntryKind::Message {
                message: Message::Assistant(reply),
                ..
            } => Some((reply.provider.clone(), reply.model.clone())),
            _ => None,
        })
    }

    /// The endpoint of the last model change on the branch (`None` when it was the provider's
    /// default).
    pub fn base_url(&self) -> Option<String> {
        self.branch()
            .into_iter()
            .rev()
            .find_map(|kind| match kind {
                EntryKind::ModelChange { base_url, .. } => Some(base_url.clone()),
                _ => None,
            })?
    }

    /// How the provider of the last model change on the branch is reached, when it is one the
    /// user defined.
    pub fn custom_endpoint(&self) -> Option<CustomEndpoint> {
        self.branch()
            .into_iter()
            .rev()
            .find_map(|kind| match kind {
                EntryKind::ModelChange { custom, .. } => Some(custom.clone()),
                _ => None,
            })?
    }

    /// The last thinking level on the branch.
    pub fn thinking_level(&self) -> Option<ThinkingLevel> {
        self.branch().into_iter().rev().find_map(|kind| match kind {
            EntryKind::ThinkingLevelChange { thinking_level } => Some(*thinking_level),
            _ => None,
        })
    }

    /// Forces what was written to the file onto the disk (nothing to do before the file
    /// exists).
    pub fn sync(&mut self) -> Result<(), SessionError> {
        match (&self.file, &self.path) {
            (Some(file), Some(path)) => file.sync_data().map_err(|source| SessionError::Io {
                path: path.clone(),
                operation: "syncing",
                source,
            }),
            _ => Ok(()),
        }
    }

    /// Appends an extension's entry (`{"type": "custom", "customType", "data"}`); it is not
    /// part of the conversation.
    pub fn append_custom(&mut self, custom_type: &str, data: Value) -> Result<(), SessionError> {
        self.append(
            EntryKind::Custom {
                custom_type: custom_type.to_owned(),
                data,
            },
            false,
        )
    }

    /// Appends a message.
    pub fn append_message(&mut self, message: &Message) -> Result<(), SessionError> {
        self.append_tagged_message(message, None, None)
    }

    /// Appends a message an extension sent, with its type tag and whether it is shown to the
    /// user (both recorded on the entry as `customType` and `display`; the message is part of
    /// the conversation like any other).
    pub fn append_tagged_message(
        &mut self,
        message: &Message,
        custom_type: Option<String>,
        display: Option<bool>,
    ) -> Result<(), SessionError> {
        let is_reply = matches!(message, Message::Assistant(reply)
            if !matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted));
        self.append(
            EntryKind::Message {
                message: message.clone(),
                custom_type,
                display,
            },
            is_reply,
        )
    }

    /// Records the model in use and its endpoint (`None`: the provider's default); `custom` for
    /// a provider the user defined.
    pub fn append_model_change(
        &mut self,
        provider: &str,
        model_id: &str,
        base_url: Option<&str>,
        custom: Option<CustomEndpoint>,
    ) -> Result<(), SessionError> {
        self.append(
            EntryKind::ModelChange {
                provider: provider.to_owned(),
                model_id: model_id.to_owned(),
                base_url: base_url.map(str::to_owned),
                custom,
            },
            false,
        )
    }

    /// Records the thinking level in use.
    pub fn append_thinking_level(
        &mut self,
        thinking_level: ThinkingLevel,
    ) -> Result<(), SessionError> {
        self.append(EntryKind::ThinkingLevelChange { thinking_level }, false)
    }

    /// The variables bash sees for this session: `JIG_SESSION_ID`, `JIG_SESSION_FILE` (only
    /// when the session has a file), `JIG_PROVIDER`, `JIG_MODEL`, `JIG_REASONING_LEVEL` (always;
    /// `off` when thinking is off).
    pub fn tool_variables(
        &self,
        provider: &str,
        model: &str,
        thinking: ThinkingLevel,
    ) -> BTreeMap<String, String> {
        let mut vars = BTreeMap::new();
        vars.insert(EnvVars::JIG_SESSION_ID.to_owned(), self.header.id.clone());
        if let Some(path) = &self.path {
            vars.insert(
                EnvVars::JIG_SESSION_FILE.to_owned(),
                path.display().to_string(),
            );
        }
        vars.insert(EnvVars::JIG_PROVIDER.to_owned(), provider.to_owned());
        vars.insert(EnvVars::JIG_MODEL.to_owned(), model.to_owned());
        vars.insert(
            EnvVars::JIG_REASONING_LEVEL.to_owned(),
            thinking.as_str().to_owned(),
        );
        vars
    }

    fn new_entry_id(&self) -> String {
        loop {
            let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
            if !self.ids.contains(&id) {
                return id;
            }
        }
    }

    fn append(&mut self, kind: EntryKind, is_reply: bool) -> Result<(), SessionError> {
        let entry = SessionEntry {
            id: self.new_entry_id(),
            parent_id: self.leaf.clone(),
            timestamp: now_rfc3339(),
            kind,
        };
        let line = serde_json::to_string(&entry).map_err(|error| SessionError::Invalid {
            path: self.path.clone().unwrap_or_default(),
            reason: format!("an entry could not be serialised: {error}"),
        })?;
        self.ids.insert(entry.id.clone());
        self.leaf = Some(entry.id.clone());
        self.entries.push(StoredEntry {
            id: entry.id,
            parent_id: entry.parent_id,
            kind: Some(entry.kind),
        });
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        self.pending.push(line);
        if self.file.is_none() {
            if !is_reply {
                return Ok(());
            }
            self.file = Some(if self.resumed {
                OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .map_err(|source| SessionError::Io {
                        path: path.clone(),
                        operation: "opening for append",
                        source,
                    })?
            } else {
                create_file(&path, &self.header)?
            });
        }
        let mut text = String::new();
        if self.needs_newline {
            text.push('\n');
        }
        for line in self.pending.drain(..) {
            text.push_str(&line);
            text.push('\n');
        }
        if let Some(file) = &mut self.file {
            file.write_all(text.as_bytes())
                .map_err(|source| SessionError::Io {
                    path: path.clone(),
                    operation: "appending",
                    source,
                })?;
        }
        self.needs_newline = false;
        Ok(())
    }
}

fn parse_entry(line: &str) -> Option<StoredEntry> {
    let value: Value = serde_json::from_str(line).ok()?;
    let id = value.get("id")?.as_str()?.to_owned();
    let parent_id = match value.get("parentId") {
        None | Some(Value::Null) => None,
        Some(Value::String(parent)) => Some(parent.clone()),
        Some(_) => return None,
    };
    let kind = serde_json::from_value::<SessionEntry>(value)
        .ok()
        .map(|entry| entry.kind);
    Some(StoredEntry {
        id,
        parent_id,
        kind,
    })
}

fn create_file(path: &Path, header: &SessionHeader) -> Result<File, SessionError> {
    let io_error = |operation| {
        move |source| SessionError::Io {
            path: path.to_path_buf(),
            operation,
            source,
        }
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        private_dir(parent).map_err(io_error("creating its directory"))?;
    }
    let mut file = OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(io_error("creating"))?;
    let mut line = serde_json::to_string(header).unwrap_or_default();
    line.push('\n');
    file.write_all(line.as_bytes())
        .map_err(io_error("writing the header"))?;
    Ok(file)
}

/// Creates `dir` and its missing parents `0700`: sessions are the user's alone (an existing
/// directory keeps its mode).
fn private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Where sessions are stored: one directory per working directory below a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStore {
    root: PathBuf,
}

impl SessionStore {
    /// A store rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The user's store: `$XDG_DATA_HOME/jig/sessions`, or `$HOME/.local/share/jig/sessions`.
    /// `None` when neither variable is set (to an absolute path).
    pub fn from_env() -> Option<Self> {
        let absolute = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let data = absolute(EnvVars::XDG_DATA_HOME)
            .or_else(|| absolute(EnvVars::HOME).map(|home| home.join(".local/share")))?;
        Some(Self::new(data.join("jig").join("sessions")))
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory holding the sessions of the project `key` (its canonical directory, or
    /// for a remote project its URL): `--{name}--` where `name` is [`escaped_name`]`(key)`, so
    /// two keys never share a directory.
    pub fn dir_for(&self, key: &Path) -> PathBuf {
        self.root.join(format!("--{}--", escaped_name(key)))
    }

    /// The directory earlier versions used for `key`: every `/`, `\\` and `:` turned into `-`,
    /// so `/x/a-b` and `/x/a/b` shared one. Only read, to move a project's own sessions out.
    pub fn legacy_dir_for(&self, key: &Path) -> PathBuf {
        self.root.join(format!("--{}--", legacy_name(key)))
    }

    /// Moves the sessions of `cwd` from the directory earlier versions named `key` by (see
    /// [`legacy_dir_for`](Self::legacy_dir_for)) into `key`'s own directory: only the files
    /// whose header says they were created in `cwd`; another project's, which shared the old
    /// name, stay. Returns the files moved, or the error that stopped the move.
    pub fn migrate(&self, key: &Path, cwd: &Path) -> io::Result<Vec<PathBuf>> {
        let legacy = self.legacy_dir_for(key);
        let dir = self.dir_for(key);
        if legacy == dir {
            return Ok(Vec::new());
        }
        let mut moved = Vec::new();
        for path in session_files(&legacy) {
            if header_of(&path).is_none_or(|header| header.cwd != cwd) {
                continue;
            }
            let Some(name) = path.file_name() else {
                continue;
            };
            private_dir(&dir)?;
            let target = dir.join(name);
            if target.exists() {
                continue;
            }
            fs::rename(&path, &target)?;
            moved.push(target);
        }
        Ok(moved)
    }

    /// The sessions of the project `key` created in `cwd`, most recently modified first. A file
    /// in the project's directory whose header names another directory is not the project's
    /// (put there by hand, or by an earlier version's colliding names): it is never listed or
    /// continued; [`foreign`](Self::foreign) names them.
    pub fn sessions(&self, key: &Path, cwd: &Path) -> Vec<PathBuf> {
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = session_files(&self.dir_for(key))
            .into_iter()
            .filter(|path| header_of(path).is_none_or(|header| header.cwd == cwd))
            .filter_map(|path| Some((fs::metadata(&path).ok()?.modified().ok()?, path)))
            .collect();
        files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
        files.into_iter().map(|(_, path)| path).collect()
    }

    /// The files in the project `key`'s directory whose header names another directory than
    /// `cwd` (and that [`sessions`](Self::sessions) therefore leaves out), with that directory.
    pub fn foreign(&self, key: &Path, cwd: &Path) -> Vec<(PathBuf, PathBuf)> {
        let mut found: Vec<(PathBuf, PathBuf)> = session_files(&self.dir_for(key))
            .into_iter()
            .filter_map(|path| {
                let header = header_of(&path)?;
                (header.cwd != cwd).then_some((path, header.cwd))
            })
            .collect();
        found.sort();
        found
    }

    /// The most recently modified session of the project `key` created in `cwd`.
    pub fn latest(&self, key: &Path, cwd: &Path) -> Option<PathBuf> {
        self.sessions(key, cwd).into_iter().next()
    }

    /// The session whose id is `id`, or else the only one whose id starts with `id`: first among
    /// `cwd`'s sessions, then among all. Several prefix matches in one scope are ambiguous and
    /// give the newest by file name.
    pub fn find(&self, cwd: &Path, id: &str) -> Option<PathBuf> {
        let own = session_files(&self.dir_for(cwd));
        let all: Vec<PathBuf> = fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .flat_map(|entry| session_files(&entry.path()))
            .collect();
        for scope in [&own, &all] {
            let ids: Vec<(String, &PathBuf)> = scope
                .iter()
                .filter_map(|path| Some((session_id_of(path)?, path)))
                .collect();
            if let Some((_, path)) = ids.iter().find(|(found, _)| found == id) {
                return Some((*path).clone());
            }
            let mut prefixed: Vec<&PathBuf> = ids
                .iter()
                .filter(|(found, _)| found.starts_with(id))
                .map(|(_, path)| *path)
                .collect();
            prefixed.sort();
            if let Some(path) = prefixed.last() {
                return Some((*path).clone());
            }
        }
        None
    }
}

fn session_files(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect()
}

/// A session file's header, when its first line is one.
fn header_of(path: &Path) -> Option<SessionHeader> {
    let file = File::open(path).ok()?;
    let mut first = String::new();
    io::BufRead::read_line(&mut io::BufReader::new(file), &mut first).ok()?;
    serde_json::from_str(first.trim_end()).ok()
}

/// The id in a session file's header.
fn session_id_of(path: &Path) -> Option<String> {
    header_of(path).map(|header| header.id)
}

/// A project's key as one file name, injectively: `/` becomes `-`; ASCII letters, digits and
/// `.`, `_`, `@`, `+`, `,`, `~` and (in a key that is valid UTF-8) non-ASCII characters stay;
/// every other byte, `-` and `%` included, becomes `%XX`. An absolute key drops its leading
/// `/`; any other (a remote project's URL) starts with `=`, which no absolute key's name does.
/// `/home/me/proj` → `home-me-proj`, `/x/a-b` → `x-a%2Db`, `/x/a/b` → `x-a-b`,
/// `ssh://me@box/srv` → `=ssh%3A--me@box-srv`.
pub fn escaped_name(key: &Path) -> String {
    use std::fmt::Write as _;
    use std::os::unix::ffi::OsStrExt as _;
    let bytes = key.as_os_str().as_bytes();
    let mut name = String::with_capacity(bytes.len() + 1);
    let bytes = if let Some(rest) = bytes.strip_prefix(b"/") {
        rest
    } else {
        name.push('=');
        bytes
    };
    let utf8 = std::str::from_utf8(bytes).ok();
    let push_byte = |name: &mut String, byte: u8| match byte {
        b'/' => name.push('-'),
        b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'_' | b'@' | b'+' | b',' | b'~' => {
            name.push(char::from(byte));
        }
        _ => {
            let _ = write!(name, "%{byte:02X}");
        }
    };
    match utf8 {
        Some(text) => {
            for c in text.chars() {
                if c.is_ascii() {
                    push_byte(&mut name, u8::try_from(u32::from(c)).unwrap_or(b'?'));
                } else {
                    name.push(c);
                }
            }
        }
        None => {
            for &byte in bytes {
                push_byte(&mut name, byte);
            }
        }
    }
    name
}

/// The name earlier versions gave a key (not injective; for migration only).
fn legacy_name(key: &Path) -> String {
    let text = key.to_string_lossy();
    let trimmed = text.strip_prefix(['/', '\\']).unwrap_or(&text);
    trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use jig_protocol::{AssistantBlock, AssistantMessage};

    fn reply(text: &str) -> Message {
        let mut message = AssistantMessage::empty("openai", "gpt");
        message
            .content
            .push(AssistantBlock::Text { text: text.into() });
        Message::Assistant(message)
    }

    #[test]
    fn session_files_are_created_0600_in_0700_directories() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let cwd = Path::new("/home/u/proj");
        let mut session = Session::create_in(&store.dir_for(cwd), cwd);
        session.append_message(&Message::user_text("hi")).unwrap();
        session.append_message(&reply("ok")).unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(session.path().unwrap()), 0o600);
        assert_eq!(mode(&store.dir_for(cwd)), 0o700);
        assert_eq!(mode(store.root()), 0o700);
    }

    #[test]
    fn project_names_never_collide_and_plain_paths_keep_their_old_name() {
        let name = |key: &str| escaped_name(Path::new(key));
        assert_eq!(name("/home/me/proj"), "home-me-proj");
        assert_eq!(name("/x/a-b"), "x-a%2Db");
        assert_eq!(name("/x/a/b"), "x-a-b");
        assert_eq!(name("/x/a%2Db"), "x-a%252Db");
        assert_eq!(name("ssh://me@box/srv"), "=ssh%3A--me@box-srv");
        assert_eq!(name("/ssh://me@box/srv"), "ssh%3A--me@box-srv");
        assert_eq!(name("/=x"), "%3Dx");
        assert_eq!(name("/tmp/café"), "tmp-café");
        assert_eq!(name("/a b"), "a%20b");
        let keys = [
            "/x/a-b", "/x/a/b", "/x-a/b", "/x/a%2Db", "/x/a:b", "/x/a\\b", "x/a/b", "/x/a/b/",
            "=x/a/b", "/=x/a/b",
        ];
        let names: HashSet<String> = keys.iter().map(|key| name(key)).collect();
        assert_eq!(names.len(), keys.len(), "{names:?}");
        let store = SessionStore::new("/s");
        assert_eq!(
            store.legacy_dir_for(Path::new("/x/a-b")),
            store.legacy_dir_for(Path::new("/x/a/b"))
        );
        assert_eq!(
            store.dir_for(Path::new("/home/me/proj")),
            store.legacy_dir_for(Path::new("/home/me/proj"))
        );
    }

    #[test]
    fn sessions_of_another_directory_are_left_out_and_only_a_projects_own_are_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let (dashed, nested) = (Path::new("/x/a-b"), Path::new("/x/a/b"));
        let legacy = store.legacy_dir_for(nested);
        let mut created = Vec::new();
        for cwd in [dashed, nested] {
            let mut session = Session::create_in(&legacy, cwd);
            session.append_message(&Message::user_text("hi")).unwrap();
            session.append_message(&reply("ok")).unwrap();
            created.push(session.path().unwrap().to_path_buf());
        }
        // `/x/a/b` keeps its name: the shared directory is its own, and the session of
        // `/x/a-b` in it is never one of its sessions.
        assert_eq!(store.legacy_dir_for(nested), store.dir_for(nested));
        assert_eq!(store.sessions(nested, nested), vec![created[1].clone()]);
        assert_eq!(
            store.foreign(nested, nested),
            vec![(created[0].clone(), dashed.to_path_buf())]
        );
        assert_eq!(
            store.migrate(nested, nested).unwrap(),
            Vec::<PathBuf>::new()
        );
        assert!(store.latest(dashed, dashed).is_none());
        // `/x/a-b` moves its own session out, and only it.
        let moved = store.migrate(dashed, dashed).unwrap();
        assert_eq!(moved.len(), 1);
        assert_eq!(moved[0].parent().unwrap(), store.dir_for(dashed));
        assert!(!created[0].exists());
        assert!(created[1].exists());
        assert_eq!(store.sessions(dashed, dashed), moved);
        assert_eq!(store.sessions(nested, nested), vec![created[1].clone()]);
        assert!(store.foreign(nested, nested).is_empty());
    }

    #[test]
    fn a_tagged_message_keeps_its_tag_in_the_file_and_its_place_in_the_conversation() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::create_in(dir.path(), Path::new("/work/p"));
        session
            .append_tagged_message(
                &Message::user_text("note"),
                Some("memo".into()),
                Some(false),
            )
            .unwrap();
        session.append_message(&reply("ok")).unwrap();
        let path = session.path().unwrap().to_path_buf();
        let lines: Vec<Value> = fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines[1]["type"], "message");
        assert_eq!(lines[1]["customType"], "memo");
        assert_eq!(lines[1]["display"], false);
        assert!(lines[2].get("customType").is_none(), "{}", lines[2]);
        assert!(lines[2].get("display").is_none(), "{}", lines[2]);
        let reopened = Session::open(&path).unwrap();
        assert_eq!(reopened.messages(), session.messages());
        assert_eq!(reopened.messages().len(), 2);
    }

    #[test]
    fn the_file_appears_at_the_first_reply_and_reopens_with_the_same_branch() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::create_in(dir.path(), Path::new("/work/p"));
        session
            .append_model_change("openai", "gpt", Some("http://localhost:1/v1"), None)
            .unwrap();
        session.append_thinking_level(ThinkingLevel::Off).unwrap();
        session.append_message(&Message::user_text("hi")).unwrap();
        let path = session.path().unwrap().to_path_buf();
        assert!(!path.exists(), "no file before the first reply");
        session.append_message(&reply("hello")).unwrap();
        assert!(path.exists());
        let reopened = Session::open(&path).unwrap();
        assert_eq!(reopened.id(), session.id());
        assert_eq!(reopened.messages(), session.messages());
        assert_eq!(reopened.messages().len(), 2);
        assert_eq!(reopened.model(), Some(("openai".into(), "gpt".into())));
        assert_eq!(reopened.thinking_level(), Some(ThinkingLevel::Off));
        assert_eq!(
            reopened.base_url().as_deref(),
            Some("http://localhost:1/v1")
        );
        let text = fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["type"], "session");
        assert_eq!(lines[0]["version"], 1);
        assert_eq!(lines[1]["type"], "model_change");
        assert_eq!(lines[1]["parentId"], Value::Null);
        assert_eq!(lines[2]["parentId"], lines[1]["id"]);
        assert_eq!(lines[4]["message"]["role"], "assistant");
    }

    #[test]
    fn a_compaction_entry_makes_the_context_its_summary_and_the_kept_messages() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::create_in(dir.path(), Path::new("/w"));
        session.append_message(&Message::user_text("one")).unwrap();
        session.append_message(&reply("two")).unwrap();
        session
            .append_message(&Message::user_text("three"))
            .unwrap();
        session.append_message(&reply("four")).unwrap();
        assert_eq!(session.context(), (None, session.messages()));
        session
            .append_compaction(CompactionReason::Threshold, "S", 2, Some(900))
            .unwrap();
        session.append_message(&Message::user_text("five")).unwrap();
        session.append_message(&reply("six")).unwrap();
        let reopened = Session::open(session.path().unwrap()).unwrap();
        assert_eq!(reopened.messages().len(), 6, "the file keeps everything");
        let (summary, kept) = reopened.context();
        assert_eq!(summary.as_deref(), Some("S"));
        assert_eq!(kept, reopened.messages()[2..].to_vec());
        let text = fs::read_to_string(session.path().unwrap()).unwrap();
        let line: Value = serde_json::from_str(text.lines().nth(5).unwrap()).unwrap();
        assert_eq!(line["type"], "compaction");
        assert_eq!(line["reason"], "threshold");
        assert_eq!(line["replacedMessages"], 2);
        assert_eq!(line["tokensBefore"], 900);
        let third: Value = serde_json::from_str(text.lines().nth(3).unwrap()).unwrap();
        assert_eq!(line["firstKeptEntryId"], third["id"]);
        assert!(
            session
                .append_compaction(CompactionReason::Manual, "S", 99, None)
                .is_err()
        );
    }

    #[test]
    fn a_failed_reply_creates_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::create_in(dir.path(), Path::new("/w"));
        session.append_message(&Message::user_text("hi")).unwrap();
        let Message::Assistant(mut failed) = reply("") else {
            unreachable!()
        };
        failed.stop_reason = StopReason::Error;
        session.append_message(&Message::Assistant(failed)).unwrap();
        assert!(!session.path().unwrap().exists());
        session.append_message(&reply("later")).unwrap();
        assert_eq!(
            Session::open(session.path().unwrap())
                .unwrap()
                .messages()
                .len(),
            3
        );
    }

    #[test]
    fn a_cut_last_line_is_skipped_and_the_next_append_starts_a_fresh_line() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::create_in(dir.path(), Path::new("/w"));
        session.append_message(&Message::user_text("one")).unwrap();
        session.append_message(&reply("two")).unwrap();
        session
            .append_message(&Message::user_text("three"))
            .unwrap();
        let path = session.path().unwrap().to_path_buf();
        drop(session);
        let text = fs::read_to_string(&path).unwrap();
        let cut = &text[..text.len() - 12];
        fs::write(&path, cut).unwrap();

        let mut reopened = Session::open(&path).unwrap();
        assert_eq!(reopened.skipped_lines(), 1);
        assert_eq!(reopened.messages().len(), 2);
        reopened
            .append_message(&Message::user_text("four"))
            .unwrap();
        // A resumed session writes once the model has replied.
        reopened.append_message(&reply("five")).unwrap();
        drop(reopened);
        let again = Session::open(&path).unwrap();
        assert_eq!(again.skipped_lines(), 1);
        let texts: Vec<String> = again
            .messages()
            .iter()
            .map(|m| match m {
                Message::User(u) => u.content[0].as_text().unwrap().to_owned(),
                Message::Assistant(a) => a.text(),
                Message::ToolResult(r) => r.text(),
            })
            .collect();
        assert_eq!(texts, vec!["one", "two", "four", "five"]);
    }

    #[test]
    fn a_file_without_a_header_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        fs::write(&path, "{\"hello\":1}\n").unwrap();
        let error = Session::open(&path).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("is not a jig session file: the first line is not a session header"),
            "{error}"
        );
    }

    #[test]
    fn store_groups_by_cwd_and_finds_by_id_prefix_and_latest() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let cwd = Path::new("/home/u/proj");
        assert_eq!(store.dir_for(cwd), dir.path().join("--home-u-proj--"));
        let mut first = Session::create_in(&store.dir_for(cwd), cwd);
        first.append_message(&reply("a")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut second = Session::create_in(&store.dir_for(cwd), cwd);
        second.append_message(&reply("b")).unwrap();
        assert_eq!(store.latest(cwd, cwd).as_deref(), second.path());
        assert_eq!(store.find(cwd, first.id()).as_deref(), first.path());
        assert_eq!(
            store
                .find(Path::new("/elsewhere"), &second.id()[..30])
                .as_deref(),
            second.path()
        );
        assert_eq!(store.find(cwd, "zzzz"), None);
        assert_eq!(store.latest(Path::new("/none"), Path::new("/none")), None);
    }

    #[test]
    fn session_variables_always_include_the_reasoning_level() {
        let session = Session::in_memory(Path::new("/w"));
        let vars = session.tool_variables("anthropic", "claude", ThinkingLevel::Off);
        assert_eq!(vars["JIG_REASONING_LEVEL"], "off");
        assert_eq!(vars["JIG_PROVIDER"], "anthropic");
        assert!(!vars.contains_key("JIG_SESSION_FILE"));
        assert!(is_valid_session_id("abc-1.2_x"));
        assert!(!is_valid_session_id("-abc"));
    }
}
