//! Serve a Toolsmith [`Catalog`](toolsmith_model::Catalog) over MCP, on stdio or Streamable
//! HTTP, with the official `rmcp` SDK. This is the only crate that names rmcp: it converts
//! between rmcp's types and the model's, and holds no tool logic (docs/architecture.md, "The
//! crates").
//!
//! - [`ServerState`]: what all connections share — the catalog, prompts and resources
//!   behind swappable handles ([`ServerState::replace`] for hot reload), server identity,
//!   call limits.
//! - [`serve_stdio`] / [`serve_stream`]: MCP over stdin/stdout (or any byte streams).
//! - [`serve_http`] / [`router`]: MCP over Streamable HTTP at `/mcp`, as an axum
//!   [`Router`](axum::Router) that tests can drive in-process.
//!
//! Every `tools/call` runs the tool on a pool of call threads with the tool's timeout as its
//! deadline, under a hard watchdog, and always answers with a `CallToolResult` (the result
//! contract: docs/result-contract.md, rendered on
//! [`CallOutcome`](toolsmith_model::CallOutcome)); only an unknown tool name is a JSON-RPC
//! error (`-32602`, with "did you mean"). Calls run concurrently; a client's
//! `notifications/cancelled` interrupts its call. How a request becomes a result, and why
//! `tools/call` takes a shorter path than rmcp's, is in docs/architecture.md; every error a
//! client can see is listed at the end of this page (docs/errors.md).
//!
//! The server takes a catalog and settings, not a folder: `toolsmith serve` builds both from
//! a tools folder and its `toolsmith.toml`.
//!
//! ```no_run
//! use std::path::Path;
//! use std::sync::Arc;
//! use toolsmith_folder::ToolFolder;
//! use toolsmith_server::{HttpOptions, ServerOptions, ServerState};
//!
//! let folder = ToolFolder::load(Path::new("examples/tools")).expect("the folder exists");
//! let options = ServerOptions::new(folder.root().to_owned());
//! let state = ServerState::new(Arc::clone(folder.catalog()), options);
//! let address = "127.0.0.1:8080".parse().expect("a socket address");
//! toolsmith_server::serve_http(state, &HttpOptions::default(), address, |bound| {
//!     eprintln!("http://{bound}/mcp");
//! })
//! .expect("the server ran");
//! ```
//!
#![doc = include_str!("../../../docs/errors.md")]

mod bridge;
mod call;
mod content;
mod convert;
#[doc(hidden)]
pub mod fuzzing;
mod handler;
mod http;
mod jsonrpc;
mod mrtr;
mod pool;
mod session_calls;
mod sessions;
mod state;
mod stdio;

pub use convert::PAGE_SIZE;
pub use http::{DEFAULT_MAX_BODY_BYTES, HttpOptions, MCP_PATH, router, serve_http};
pub use state::{DEFAULT_MAX_CONCURRENT_CALLS, ServerOptions, ServerState};
pub use stdio::{serve_stdio, serve_stream};

/// Why a server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The async runtime could not be created.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    /// The HTTP address could not be bound.
    #[error("cannot listen on `{address}`")]
    Bind {
        /// The address asked for.
        address: std::net::SocketAddr,
        /// Why (in use, permission denied, …).
        #[source]
        source: std::io::Error,
    },
    /// The HTTP server failed.
    #[error("the HTTP server failed")]
    Http(#[source] std::io::Error),
    /// stdin or stdout could not be used.
    #[error("cannot serve on stdin/stdout")]
    Stdio(#[source] std::io::Error),
    /// The client's first messages were not a valid MCP handshake.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
}

impl toolsmith_model::Hint for ServeError {
    fn hints(&self) -> Vec<String> {
        match self {
            Self::Bind { address, source } if source.kind() == std::io::ErrorKind::AddrInUse => {
                vec![format!(
                    "another program is using port {}; pick another with --http PORT",
                    address.port()
                )]
            }
            _ => Vec::new(),
        }
    }
}

/// Resolves on SIGINT or SIGTERM (Ctrl-C elsewhere).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
