//! Integration tests: the server over an in-memory duplex pipe, driven by rmcp's client, with
//! the built-in tools on a `MemoryEnv` plus a test tool that streams and waits for cancellation.

mod support;

mod calls;
mod lifecycle;
mod roots;
