//! Serves a jig [`ToolRegistry`](jig_tool::ToolRegistry) over the Model Context Protocol, with
//! the official Rust SDK (`rmcp`). This is what `jig mcp` runs.
//!
//! - `tools/list`: every tool with its JSON Schema, a `title`, and annotations derived from
//!   [`Effects`](jig_tool::Effects): `readOnlyHint` for read-only tools, `destructiveHint` for tools
//!   that change files or run processes, `openWorldHint` for process tools.
//! - `tools/call`: text and image blocks (what the model reads: the same text `jig tool`
//!   prints), `isError` for tool errors (invalid arguments and refused paths included), the
//!   tool's `details` in `_meta` under [`DETAILS_META_KEY`] (never `structuredContent`, which
//!   some clients show the model instead of the text). An unknown tool is a JSON-RPC error
//!   (`-32602`).
//! - Cancellation (`notifications/cancelled`) cancels the call's
//!   [`ToolContext`](jig_tool::ToolContext) token; progress notifications carry the tail of a
//!   tool's streamed output when the client sent a progress token; calls run concurrently, each
//!   named in its context by an id of its own ([`CallInfo::next`](jig_tool::CallInfo::next):
//!   `call-PID-1`, `call-PID-2`, …).
//! - Roots: fixed by the host, or the client's (`roots/list`, followed on
//!   `notifications/roots/list_changed`); they are the containment roots.
//! - [`serve`] runs the server over a byte stream (stdio in `jig mcp`): malformed lines get a
//!   JSON-RPC error and the server keeps serving; at end of input the requests already received
//!   are answered (unless the client is gone), the host's shutdown signal aborts running calls;
//!   either way the env is then cleaned up (killing processes, removing temp files).
//!
//! ```ignore
//! let server = JigMcpServer::new(registry, base_context, ServerOptions::default());
//! let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
//! serve(server, stdin, stdout, shutdown_signal()).await?;
//! ```

mod roots;
mod server;
mod transport;

use std::time::Duration;

use rmcp::ServiceExt as _;
use tokio::io::{AsyncRead, AsyncWrite};

pub use roots::file_uri_path;
pub use server::{
    DETAILS_META_KEY, JigMcpServer, RootsSource, ServerOptions, mcp_result, mcp_tool,
};
pub use transport::{JsonLinesTransport, MAX_LINE_LENGTH, NOT_INITIALIZED, PeerGone};

/// How long running calls get to finish after they were aborted at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Why serving stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The client closed the input.
    InputClosed,
    /// The host's shutdown signal fired.
    Signal,
}

/// Serving failed in a way the host should report.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The session ended abnormally (the service task failed).
    #[error("the MCP service failed: {0}")]
    Service(String),
}

/// Serves `server` over `reader`/`writer` (newline-delimited JSON-RPC) until the input ends or
/// `shutdown` completes. At end of input the requests already received are answered first
/// (calls run to their end); on `shutdown` running calls are aborted and awaited. Either way
/// the env is then cleaned up. A client that disconnects before initializing is a normal stop.
pub async fn serve<R, W>(
    server: JigMcpServer,
    reader: R,
    writer: W,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<StopReason, ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_watching(server, reader, writer, shutdown, None).await
}

/// [`serve`], and at end of input stop waiting for running calls once `peer_gone` completes
/// (the client can no longer read their answers).
async fn serve_watching<R, W>(
    server: JigMcpServer,
    reader: R,
    writer: W,
    shutdown: impl Future<Output = ()> + Send,
    peer_gone: Option<PeerGone>,
) -> Result<StopReason, ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let stop = server.shutdown_token().clone();
    let mut transport = JsonLinesTransport::new(reader, writer, stop.clone());
    if let Some(peer_gone) = peer_gone {
        transport = transport.with_peer_gone(peer_gone);
    }
    let service_ct = jig_env::CancellationToken::new();
    let outcome = run(&server, transport, service_ct.clone(), shutdown).await;
    // Abort whatever still runs, give it time to stop, then release the env.
    stop.cancel();
    service_ct.cancel();
    if !server.wait_for_calls(SHUTDOWN_GRACE).await {
        tracing::warn!("calls still running after the shutdown grace period");
    }
    server.env().cleanup().await;
    outcome
}

async fn run<R, W>(
    server: &JigMcpServer,
    transport: JsonLinesTransport<R, W>,
    service_ct: jig_env::CancellationToken,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<StopReason, ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let stop = server.shutdown_token().clone();
    tokio::pin!(shutdown);
    let running = tokio::select! {
        running = server.clone().serve_with_ct(transport, service_ct.clone()) => running,
        () = &mut shutdown => return Ok(StopReason::Signal),
    };
    let running = match running {
        Ok(running) => running,
        Err(error) => {
            if stop.is_cancelled() {
                tracing::info!(%error, "input closed before initialization");
                return Ok(StopReason::InputClosed);
            }
            return Err(ServeError::Service(error.to_string()));
        }
    };
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        quit = &mut waiting => {
            quit.map_err(|error| ServeError::Service(error.to_string()))?;
            Ok(StopReason::InputClosed)
        }
        () = &mut shutdown => {
            tracing::info!("shutdown signal: aborting running calls");
            stop.cancel();
            let _ = server.wait_for_calls(SHUTDOWN_GRACE).await;
            service_ct.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(3), waiting).await;
            Ok(StopReason::Signal)
        }
    }
}

/// [`serve`] over the process's stdin and stdout (non-blocking when they are pipes, as MCP
/// clients launch servers). Nothing else may write to stdout while this runs.
pub async fn serve_stdio(
    server: JigMcpServer,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<StopReason, ServeError> {
    let (reader, writer) = rmcp::transport::io::stdio_pipes();
    serve_watching(
        server,
        reader,
        writer,
        shutdown,
        Some(Box::pin(stdout_closed())),
    )
    .await
}

/// Completes when nobody reads stdout any more (the reading end of a pipe or socket closed):
/// the client is gone. Polled on a blocking thread every quarter second; never completes for
/// a terminal or a file.
async fn stdout_closed() {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let check = || {
        let stdout = std::io::stdout();
        let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
        let timeout = Timespec {
            tv_sec: 0,
            tv_nsec: 250_000_000,
        };
        match poll(&mut fds, Some(&timeout)) {
            Ok(_) => fds[0]
                .revents()
                .intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL),
            Err(_) => false,
        }
    };
    loop {
        match tokio::task::spawn_blocking(check).await {
            Ok(true) => return,
            Ok(false) => {}
            Err(error) => {
                tracing::debug!(%error, "cannot watch stdout");
                std::future::pending::<()>().await;
            }
        }
    }
}
