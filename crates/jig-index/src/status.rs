//! What an index may hold ([`IndexOptions`]) and what it reports ([`IndexStatus`]).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Bounds of one index. Beyond any of them the root is answered cold, and its status says why.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Most entries (files, directories, symlinks) indexed.
    pub max_entries: usize,
    /// Most memory the index may hold (paths and content summaries, estimated).
    pub max_memory_bytes: usize,
    /// Files larger than this are not summarised (every search reads them).
    pub max_file_bytes: u64,
    /// More events than this in one read of the queue make the index rebuild (as an overflow
    /// of the kernel's queue does).
    pub max_events_per_drain: usize,
    /// Rebuilds allowed within a minute before the root is left cold for a minute: a tree
    /// that changes this fast is cheaper to search cold.
    pub max_rebuilds_per_minute: usize,
    /// Threads that summarise files and search candidates.
    pub threads: usize,
    /// Apply changes as they arrive, between queries (so the kernel's queue stays short and a
    /// query has little to apply); without it only queries apply them.
    pub follow_between_queries: bool,
    /// Told each time an index becomes ready or cold (from the index's own thread).
    pub reporter: Option<Reporter>,
}

/// What is told when an index becomes ready or cold (`--verbose`, logs).
#[derive(Clone)]
pub struct Reporter(pub Arc<dyn Fn(&IndexStatus) + Send + Sync>);

impl fmt::Debug for Reporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Reporter")
    }
}

impl Default for IndexOptions {
    fn default() -> Self {
        Self {
            max_entries: 2_000_000,
            max_memory_bytes: 1 << 30,
            max_file_bytes: 8 << 20,
            max_events_per_drain: 100_000,
            max_rebuilds_per_minute: 5,
            threads: std::thread::available_parallelism()
                .map_or(2, std::num::NonZero::get)
                .min(8),
            follow_between_queries: true,
            reporter: None,
        }
    }
}

/// Where an index is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexState {
    /// Being built: searches are cold until it is ready.
    Building,
    /// Answering.
    Ready,
    /// Not answering, for this reason (too large, a network filesystem, no notifications).
    Cold(String),
}

/// What an index holds and how it has answered.
#[derive(Debug, Clone)]
pub struct IndexStatus {
    /// The canonical root.
    pub root: PathBuf,
    /// Building, ready or cold.
    pub state: IndexState,
    /// Entries indexed (files, directories, symlinks).
    pub entries: usize,
    /// Regular files indexed.
    pub files: usize,
    /// Directories watched.
    pub watches: usize,
    /// Memory held (estimate).
    pub memory_bytes: usize,
    /// How long the last build took.
    pub build_time: Option<Duration>,
    /// Walks and searches answered warm.
    pub warm_answers: u64,
    /// Walks and searches left to the cold path.
    pub cold_answers: u64,
    /// Why the last one went cold.
    pub last_cold_reason: Option<String>,
    /// Rebuilds after losing track of the tree.
    pub rebuilds: u64,
    /// Files a warm search would have read without the content summaries.
    pub files_considered: u64,
    /// Files warm searches read.
    pub files_read: u64,
}

impl fmt::Display for IndexStatus {
    /// One line for a person: `warm index of /srv/repo: ready, 59,601 files (60,912 entries),
    /// 35.2 MiB, 1,311 directories watched, built in 1.2 s; 14 answers warm, 0 cold`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "warm index of {}: ", self.root.display())?;
        match &self.state {
            IndexState::Building => {
                f.write_str("building (searches are cold until it is ready)")?;
            }
            IndexState::Cold(reason) => write!(f, "cold ({reason}); searches take the cold path")?,
            IndexState::Ready => {
                #[expect(
                    clippy::cast_precision_loss,
                    reason = "a size shown to a tenth of a MiB"
                )]
                let mebibytes = self.memory_bytes as f64 / (1024.0 * 1024.0);
                write!(
                    f,
                    "ready, {}, {}, {mebibytes:.1} MiB, {} watched",
                    counted(self.files as u64, "file"),
                    counted(self.entries as u64, "entry"),
                    counted(self.watches as u64, "directory"),
                )?;
                if let Some(took) = self.build_time {
                    write!(f, ", built in {:.1} s", took.as_secs_f64())?;
                }
            }
        }
        write!(
            f,
            "; {} answers warm, {} cold",
            thousands(self.warm_answers),
            thousands(self.cold_answers)
        )?;
        if let Some(reason) = &self.last_cold_reason
            && self.cold_answers > 0
        {
            write!(f, " (last: {reason})")?;
        }
        if self.rebuilds > 0 {
            write!(f, "; rebuilt {} times", thousands(self.rebuilds))?;
        }
        Ok(())
    }
}

/// `1 file`, `2 files`, `3 entries`.
fn counted(value: u64, noun: &str) -> String {
    let noun = match (value, noun.strip_suffix('y')) {
        (1, _) => noun.to_owned(),
        (_, Some(stem)) => format!("{stem}ies"),
        (_, None) => format!("{noun}s"),
    };
    format!("{} {noun}", thousands(value))
}

/// `1234567` as `1,234,567`.
fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(state: IndexState) -> IndexStatus {
        IndexStatus {
            root: PathBuf::from("/srv/repo"),
            state,
            entries: 60_912,
            files: 59_601,
            watches: 1_311,
            memory_bytes: 36_909_875,
            build_time: Some(Duration::from_millis(1_234)),
            warm_answers: 14,
            cold_answers: 1,
            last_cold_reason: Some("the index is being built".to_owned()),
            rebuilds: 0,
            files_considered: 0,
            files_read: 0,
        }
    }

    #[test]
    fn a_status_reads_as_one_line() {
        insta::assert_snapshot!(status(IndexState::Ready).to_string(), @"warm index of /srv/repo: ready, 59,601 files, 60,912 entries, 35.2 MiB, 1,311 directories watched, built in 1.2 s; 14 answers warm, 1 cold (last: the index is being built)");
        insta::assert_snapshot!(status(IndexState::Building).to_string(), @"warm index of /srv/repo: building (searches are cold until it is ready); 14 answers warm, 1 cold (last: the index is being built)");
        insta::assert_snapshot!(
            status(IndexState::Cold("more than 2000000 entries under the root".to_owned())).to_string(),
            @"warm index of /srv/repo: cold (more than 2000000 entries under the root); searches take the cold path; 14 answers warm, 1 cold (last: the index is being built)"
        );
    }
}
