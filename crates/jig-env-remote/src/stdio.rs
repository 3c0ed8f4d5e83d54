//! This process's stdin and stdout as the byte stream of `jig env serve`.
//!
//! A pipe or a socket (what ssh, `kubectl exec` and the container engines hand the server) is
//! driven by the reactor, non-blocking: every read and write is one system call on the
//! runtime's threads. Anything else (a terminal, a file) goes through tokio's blocking stdio,
//! which hands each read and write to a helper thread.

use std::io::{Stdin, Stdout};
use std::os::fd::{AsFd as _, OwnedFd};
use std::os::unix::fs::FileTypeExt as _;

use tokio::io::{AsyncRead, AsyncWrite};

/// A boxed reader half.
pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// A boxed writer half.
pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

enum Kind {
    Pipe(OwnedFd),
    Socket(OwnedFd),
    Other,
}

fn kind(fd: Option<OwnedFd>) -> Kind {
    let Some(fd) = fd else { return Kind::Other };
    let Ok(copy) = fd.try_clone() else {
        return Kind::Other;
    };
    let Ok(meta) = std::fs::File::from(copy).metadata() else {
        return Kind::Other;
    };
    let file_type = meta.file_type();
    if file_type.is_fifo() {
        Kind::Pipe(fd)
    } else if file_type.is_socket() {
        Kind::Socket(fd)
    } else {
        Kind::Other
    }
}

fn stdin_fd(stdin: &Stdin) -> Option<OwnedFd> {
    stdin.as_fd().try_clone_to_owned().ok()
}

fn stdout_fd(stdout: &Stdout) -> Option<OwnedFd> {
    stdout.as_fd().try_clone_to_owned().ok()
}

/// Stdin and stdout as async halves (must be called within a tokio runtime).
pub fn stdio() -> (Reader, Writer) {
    let reader: Reader = match kind(stdin_fd(&std::io::stdin())) {
        Kind::Pipe(fd) => match tokio::net::unix::pipe::Receiver::from_owned_fd(fd) {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::io::stdin()),
        },
        Kind::Socket(fd) => match socket(fd) {
            Some(stream) => Box::new(stream),
            None => Box::new(tokio::io::stdin()),
        },
        Kind::Other => Box::new(tokio::io::stdin()),
    };
    let writer: Writer = match kind(stdout_fd(&std::io::stdout())) {
        Kind::Pipe(fd) => match tokio::net::unix::pipe::Sender::from_owned_fd(fd) {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::io::stdout()),
        },
        Kind::Socket(fd) => match socket(fd) {
            Some(stream) => Box::new(stream),
            None => Box::new(tokio::io::stdout()),
        },
        Kind::Other => Box::new(tokio::io::stdout()),
    };
    (reader, writer)
}

fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(stream).ok()
}
