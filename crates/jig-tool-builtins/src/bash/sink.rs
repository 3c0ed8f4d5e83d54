//! Where `bash`'s output goes while the command runs: cleaned into the accumulator, the raw
//! bytes spilled to a full-output file once the limits are exceeded, and updates streamed.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use jig_env::{Bytes, ExecSink, Recursive};
use jig_tool::ToolContext;

use super::accumulator::{Limits, OutputAccumulator, Reserve};
use super::config::BashConfig;
use super::head_tail::HeadTail;
use super::render::{self, FinishedOutput, FullOutput};

/// Raw output is written to the full-output file in batches of this size.
const SPILL_BATCH: usize = 1024 * 1024;

/// More than any status line takes (`\n\nCommand timed out after 2147483.647 seconds`).
pub(super) const STATUS_RESERVE: Reserve = Reserve {
    bytes: 64,
    lines: 2,
};

/// Where raw output goes before and after the limits are exceeded.
#[derive(Debug)]
enum Spill {
    /// `keep_full_output` is off.
    Disabled,
    /// Below the limits: every raw byte so far, to seed the file if it becomes needed.
    Buffering(Vec<u8>),
    /// The file exists; `buffer` holds bytes not yet appended; `capped` decides which bytes
    /// go to the file.
    Writing {
        path: PathBuf,
        buffer: Vec<u8>,
        capped: HeadTail,
    },
    /// Creating or writing the file failed; `path` is what to remove.
    Failed {
        path: Option<PathBuf>,
        reason: String,
    },
}

/// Receives the process output: accumulates it, spills raw bytes, streams updates.
pub(super) struct BashSink<'a> {
    ctx: &'a ToolContext,
    limits: Limits,
    accumulator: OutputAccumulator,
    spill: Spill,
    full_output_max_bytes: u64,
    raw_bytes: u64,
    raw_newlines: u64,
    update_interval: Duration,
    last_update: Option<Instant>,
}

impl<'a> BashSink<'a> {
    pub(super) fn new(config: &BashConfig, ctx: &'a ToolContext) -> Self {
        let limits = Limits {
            max_lines: config.max_lines,
            max_bytes: config.max_bytes,
        };
        Self {
            ctx,
            limits,
            accumulator: OutputAccumulator::new(limits),
            spill: if config.keep_full_output {
                Spill::Buffering(Vec::new())
            } else {
                Spill::Disabled
            },
            full_output_max_bytes: config.full_output_max_bytes,
            raw_bytes: 0,
            raw_newlines: 0,
            update_interval: config.update_interval,
            last_update: None,
        }
    }

    fn over_limits(&self) -> bool {
        self.raw_bytes + STATUS_RESERVE.bytes as u64 > self.limits.max_bytes as u64
            || self.raw_newlines + STATUS_RESERVE.lines as u64 > self.limits.max_lines as u64
            || !self.accumulator.text().fits(STATUS_RESERVE)
    }

    async fn spill(&mut self, chunk: &[u8]) {
        let env = self.ctx.env.as_ref();
        let over_limits = self.over_limits();
        match &mut self.spill {
            Spill::Disabled | Spill::Failed { .. } => {}
            Spill::Buffering(buffer) => {
                buffer.extend_from_slice(chunk);
                if over_limits {
                    let seed = std::mem::take(buffer);
                    self.spill = match env.create_temp_file("bash-", ".log").await {
                        Ok(path) => Spill::Writing {
                            path,
                            buffer: seed,
                            capped: HeadTail::new(self.full_output_max_bytes),
                        },
                        Err(error) => Spill::Failed {
                            path: None,
                            reason: error.to_string(),
                        },
                    };
                    self.flush_spill(false).await;
                }
            }
            Spill::Writing { buffer, .. } => {
                buffer.extend_from_slice(chunk);
                if buffer.len() >= SPILL_BATCH {
                    self.flush_spill(false).await;
                }
            }
        }
    }

    /// Appends buffered raw bytes to the file (all of them when `all`, else whole batches).
    async fn flush_spill(&mut self, all: bool) {
        let Spill::Writing {
            path,
            buffer,
            capped,
        } = &mut self.spill
        else {
            return;
        };
        if buffer.is_empty() || (!all && buffer.len() < SPILL_BATCH) {
            return;
        }
        let pending = std::mem::take(buffer);
        let head = capped.push(&pending);
        if head.is_empty() {
            return;
        }
        let data = if head.len() == pending.len() {
            Bytes::from(pending)
        } else {
            Bytes::copy_from_slice(head)
        };
        if let Err(error) = self.ctx.env.append(path, data).await {
            let path = path.clone();
            self.spill = Spill::Failed {
                path: Some(path),
                reason: error.to_string(),
            };
        }
    }

    fn full_output_now(&self) -> Option<&Path> {
        match &self.spill {
            Spill::Writing { path, .. } => Some(path),
            _ => None,
        }
    }

    fn send_update(&mut self) {
        if self.ctx.updates.is_none() {
            return;
        }
        let now = Instant::now();
        if self
            .last_update
            .is_some_and(|last| now.duration_since(last) < self.update_interval)
        {
            return;
        }
        self.last_update = Some(now);
        let store = self.accumulator.snapshot();
        let full = match self.full_output_now() {
            Some(path) => FullOutput::Kept {
                path: path.to_path_buf(),
                dropped: 0,
            },
            None if matches!(self.spill, Spill::Disabled) => FullOutput::NotKept,
            None => FullOutput::NotNeeded,
        };
        self.ctx
            .send_update(render::progress(&store, &self.limits, &full));
    }

    /// Ends the stream: flushes text and file; decides what happened to the full output.
    pub(super) async fn finish(mut self) -> FinishedOutput {
        self.accumulator.finish();
        // The last unfinished line only reaches the text now: it may be what crosses the limits.
        if matches!(self.spill, Spill::Buffering(_)) && self.over_limits() {
            self.spill(&[]).await;
        }
        self.flush_spill(true).await;
        // Room for the longest status line, so the file is kept whenever the final text can be
        // cut (the status line counts towards the budget).
        let truncated = !self.accumulator.text().fits(STATUS_RESERVE);
        let env = self.ctx.env.as_ref();
        let full = match std::mem::replace(&mut self.spill, Spill::Disabled) {
            Spill::Disabled => {
                if truncated {
                    FullOutput::NotKept
                } else {
                    FullOutput::NotNeeded
                }
            }
            Spill::Buffering(_) => FullOutput::NotNeeded,
            Spill::Writing { path, capped, .. } => {
                if truncated {
                    let (rest, dropped) = capped.finish();
                    match env.append(&path, Bytes::from(rest)).await {
                        Ok(()) => FullOutput::Kept { path, dropped },
                        Err(error) => {
                            let _ = env.remove(&path, Recursive::No).await;
                            FullOutput::Failed(error.to_string())
                        }
                    }
                } else {
                    // The raw bytes were over the limits but the cleaned text fits: the model
                    // saw everything, so the file is not needed.
                    let _ = env.remove(&path, Recursive::No).await;
                    FullOutput::NotNeeded
                }
            }
            Spill::Failed { path, reason } => {
                if let Some(path) = path {
                    let _ = env.remove(&path, Recursive::No).await;
                }
                FullOutput::Failed(reason)
            }
        };
        FinishedOutput {
            text: self.accumulator.text().clone(),
            full,
        }
    }
}

#[async_trait]
impl ExecSink for BashSink<'_> {
    async fn output(&mut self, chunk: &[u8]) {
        self.raw_bytes += chunk.len() as u64;
        self.raw_newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.accumulator.push(chunk);
        self.spill(chunk).await;
        self.send_update();
    }
}

impl fmt::Debug for BashSink<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BashSink")
            .field("raw_bytes", &self.raw_bytes)
            .finish_non_exhaustive()
    }
}
