//! Serve a Toolsmith [`Catalog`](toolsmith_model::Catalog) over MCP, on stdio or Streamable
//! HTTP, with the official `rmcp` SDK. This is the only crate that names rmcp: it converts
//! between rmcp's types and the model's, and holds no tool logic (STYLE.md, "The protocol
//! layer stays thin").
//!
//! - [`ServerState`]: what all connections share — the catalog, prompts and resources
//!   behind swappable handles ([`ServerState::replace`] for hot reload), server identity,
//!   call limits.
//! - [`serve_stdio`] / [`serve_stream`]: MCP over stdin/stdout (or any byte streams).
//! - [`serve_http`] / [`router`]: MCP over Streamable HTTP at `/mcp`, as an axum
//!   [`Router`](axum::Router) that tests can drive in-process.
//!
//! Every `tools/call` runs the tool on a pool of call threads with the tool's timeout as its
//! deadline, under a hard watchdog, and always answers with a `CallToolResult` (DESIGN.md
//! §3); only an unknown tool name is a JSON-RPC error (`-32602`, with "did you mean").
//! Calls run concurrently; a client's `notifications/cancelled` interrupts its call.
//!
//! ```no_run
//! use std::path::Path;
//! use toolsmith_folder::ToolFolder;
//! use toolsmith_server::{HttpOptions, ServerState};
//!
//! let folder = ToolFolder::load(Path::new("examples/tools")).expect("the folder exists");
//! let state = ServerState::from_folder(&folder);
//! let address = "127.0.0.1:8080".parse().expect("a socket address");
//! toolsmith_server::serve_http(state, &HttpOptions::default(), address, |bound| {
//!     eprintln!("http://{bound}/mcp");
//! })
//! .expect("the server ran");
//! ```

mod bridge;
mod call;
mod content;
mod convert;
mod direct;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod handler;
mod http;
mod jsonrpc;
mod mrtr;
mod pool;
mod signal;
mod state;
mod stdio;
#[doc(hidden)]
pub mod testing;

pub use convert::PAGE_SIZE;
pub use error::ServeError;
pub use http::{DEFAULT_MAX_BODY_BYTES, HttpOptions, MCP_PATH, router, serve_http};
pub use state::{DEFAULT_MAX_CONCURRENT_CALLS, ServerOptions, ServerState};
pub use stdio::{serve_stdio, serve_stream};
