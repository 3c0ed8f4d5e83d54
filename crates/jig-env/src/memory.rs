//! Placeholder: the in-memory environment is being written; every operation says so.
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use bytes::Bytes;

use crate::{
    DirEntry, EnvError, EnvResult, ExecOutcome, ExecRequest, ExecSink, ExecutionEnv, FileInfo,
    LineWindow, LinesRead, Recursive, WriteOutcome,
};

/// An in-memory filesystem.
#[derive(Debug, Default)]
pub struct MemoryEnv {}

impl MemoryEnv {
    /// An empty in-memory filesystem.
    pub fn new() -> Self {
        Self {}
    }
}

fn todo_err(op: &'static str) -> EnvError {
    EnvError::unsupported(op, "MemoryEnv is not implemented yet")
}

#[async_trait]
impl ExecutionEnv for MemoryEnv {
    fn name(&self) -> &str {
        "memory"
    }
    fn home_dir(&self) -> Option<PathBuf> {
        None
    }
    async fn canonical_path(&self, _path: &Path) -> EnvResult<PathBuf> {
        Err(todo_err("canonicalize"))
    }
    async fn file_info(&self, _path: &Path) -> EnvResult<FileInfo> {
        Err(todo_err("stat"))
    }
    async fn stat(&self, _path: &Path) -> EnvResult<FileInfo> {
        Err(todo_err("stat"))
    }
    async fn read_link(&self, _path: &Path) -> EnvResult<PathBuf> {
        Err(todo_err("readlink"))
    }
    async fn read(&self, _path: &Path) -> EnvResult<Vec<u8>> {
        Err(todo_err("read"))
    }
    async fn read_start(&self, _path: &Path, _max: usize) -> EnvResult<Vec<u8>> {
        Err(todo_err("read"))
    }
    async fn read_lines(&self, _path: &Path, _window: LineWindow) -> EnvResult<LinesRead> {
        Err(todo_err("read"))
    }
    async fn write(&self, _path: &Path, _data: Bytes) -> EnvResult<WriteOutcome> {
        Err(todo_err("write"))
    }
    async fn append(&self, _path: &Path, _data: Bytes) -> EnvResult<()> {
        Err(todo_err("append"))
    }
    async fn rename(&self, _from: &Path, _to: &Path) -> EnvResult<()> {
        Err(todo_err("rename"))
    }
    async fn remove(&self, _path: &Path, _recursive: Recursive) -> EnvResult<()> {
        Err(todo_err("remove"))
    }
    async fn create_dir(&self, _path: &Path, _recursive: Recursive) -> EnvResult<()> {
        Err(todo_err("mkdir"))
    }
    async fn read_dir(&self, _path: &Path) -> EnvResult<Vec<DirEntry>> {
        Err(todo_err("readdir"))
    }
    async fn create_temp_file(&self, _prefix: &str, _suffix: &str) -> EnvResult<PathBuf> {
        Err(todo_err("tempfile"))
    }
    async fn create_temp_dir(&self, _prefix: &str) -> EnvResult<PathBuf> {
        Err(todo_err("tempdir"))
    }
    async fn exec(&self, _request: ExecRequest, _sink: &mut dyn ExecSink) -> EnvResult<ExecOutcome> {
        Err(EnvError::unsupported("exec", "the in-memory environment cannot run processes"))
    }
    async fn cleanup(&self) {}
}
