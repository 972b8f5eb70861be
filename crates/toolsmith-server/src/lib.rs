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

mod audit;
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
mod limits;
mod metrics;
mod mrtr;
mod pool;
mod replicas;
mod signal;
mod state;
mod stdio;
mod task_run;
mod tasks;
pub mod telemetry;
#[doc(hidden)]
pub mod testing;

pub use audit::{AuditDestination, AuditLog, AuditSettings};
pub use convert::PAGE_SIZE;
pub use error::ServeError;
pub use handler::CALL_LOG_TARGET;
pub use http::{
    AI_CATALOG_MEDIA_TYPE, AI_CATALOG_PATH, DEFAULT_MAX_BODY_BYTES, HEALTH_PATH, HttpOptions,
    INFO_PATH, InstallSnippet, InstallSnippets, MCP_PATH, METRICS_PATH, OAuthSettings, PAGE_PATH,
    PROTECTED_RESOURCE_PATH, READY_PATH, REPLICA_HEADER, SERVER_CARD_MEDIA_TYPE, SERVER_CARD_PATH,
    SERVER_CARD_SCHEMA, ServerCard, SnippetServer, ai_catalog, router, serve_http, serve_metrics,
};
pub use limits::{
    CounterError, Counters, LimitKind, Limits, MemoryCounters, RATE_LIMITED, RedisCounters,
    Refusal, Window,
};
pub use metrics::Reload;
pub use replicas::{SharedState, StateError};
pub use state::{DEFAULT_MAX_CONCURRENT_CALLS, ServerOptions, ServerState};
pub use stdio::{serve_stdio, serve_stream};
pub use tasks::{TaskLimits, TaskSettings};
