//! jig's [`ExecutionEnv`](jig_env::ExecutionEnv) on another machine, container or pod.
//!
//! - [`serve`]: the loop behind `jig env serve`: serves one env (a `LocalEnv` where it runs)
//!   over a byte stream with the versioned protocol of `docs/env-protocol.md`.
//! - [`RemoteEnv`]: the client, an `ExecutionEnv` over any byte stream
//!   ([`RemoteEnv::connect`]); every operation runs on the far side, `walk` and `search`
//!   included (the search engine runs next to the files; only results cross). A lost
//!   connection is an error result, never a fall back to the local machine.
//! - [`protocol`]: the frames and messages.
//! - [`transport`]: env URLs (`stdio:`, `ssh://`, `k8s://`, `docker://`, `podman://`) and
//!   the commands that carry the stream.
//! - [`container`]: `docker://` and `podman://`, an exec through the Docker Engine API
//!   (bollard) on the engine's unix socket or plain HTTP (`tcp://`), copying jig into the
//!   container when absent.
//!
//! Bulk bytes cross as raw frame payloads in chunks of at most 1 MiB (a walk's or search's
//! result as length-prefixed binary records, line texts raw), so no frame is ever big; a write
//! is applied on the far side only once its whole body arrived (old or new file, never a
//! partial one). The server reads every file and writes every big one through the served
//! env's `read_chunks`/`write_chunks`, confined views included, with at most four bulk frames
//! waiting for the client, so a big file never sits whole in its memory. The client's
//! `read_chunks` and `write_chunks` stream too: a read acknowledges each chunk once its sink
//! took it (at most eight unacknowledged), a write sends each chunk of its source as it comes
//! (at most four frames waiting for the stream) and is applied far side only at its end, so a
//! failing source, a dropped call or a lost connection leaves the old file.
//!
//! Every answer is bounded whatever a call asks for: a `read_start`/`read_head` answer carries
//! at most 16 MiB (the client reads a longer start as a stream), a `read_lines` window and an
//! `append` body are capped, and neither side accepts a frame over its limits. A far side that
//! stops sending (mid-frame, or never answering) fails the waiting call after
//! [`DEFAULT_IDLE_TIMEOUT`] of silence ([`RemoteEnv::set_idle_timeout`]); a running call is
//! never silent, as the server sends an `alive` frame every second while calls run.
//!
//! ```
//! use std::sync::Arc;
//! use jig_env::ExecutionEnv;
//! use jig_env_memory::MemoryEnv;
//! use jig_env_remote::{RemoteEnv, ServeOptions, serve};
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let (client, server) = tokio::io::duplex(1 << 20);
//! let (server_read, server_write) = tokio::io::split(server);
//! let served: Arc<dyn ExecutionEnv> = Arc::new(MemoryEnv::new());
//! tokio::spawn(serve(served, ServeOptions::default(), server_read, server_write));
//! let (client_read, client_write) = tokio::io::split(client);
//! let env = RemoteEnv::connect("in-process", client_read, client_write, None, None)
//!     .await
//!     .unwrap();
//! env.write("/ws/a.txt".as_ref(), "hi".into()).await.unwrap();
//! assert_eq!(env.read("/ws/a.txt".as_ref()).await.unwrap(), b"hi");
//! # });
//! ```

mod client;
pub mod container;
pub mod protocol;
mod server;
pub mod stdio;
pub mod transport;

pub use client::{ConnectError, DEFAULT_IDLE_TIMEOUT, Diagnostics, RemoteEnv};
pub use server::{ServeError, ServeOptions, serve};
