//! `GET /healthz` and `GET /readyz`: what a load balancer, a container orchestrator or a
//! systemd watchdog asks a server (docs/serve.md, "Health checks").
//!
//! `/healthz` answers 200 `ok` while the process serves HTTP at all. `/readyz` answers 200
//! with the counts of what is served once the folder is loaded (it is loaded before the
//! server listens, so that is at once) and 503 once the server is shutting down, so a
//! balancer stops sending new sessions to a replica that is draining. Neither needs the
//! bearer token nor checks `Host`: a probe carries neither, and neither answer says more
//! than how many tools there are.

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::state::ServerState;

/// The liveness probe's path.
pub const HEALTH_PATH: &str = "/healthz";

/// The readiness probe's path.
pub const READY_PATH: &str = "/readyz";

/// The probes' routes, to be merged outside the endpoint's guards.
pub(super) fn routes(state: ServerState) -> Router {
    Router::new()
        .route(HEALTH_PATH, get(alive))
        .route(READY_PATH, get(ready))
        .with_state(state)
}

async fn alive() -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "ok\n",
    )
        .into_response()
}

async fn ready(State(state): State<ServerState>) -> Response {
    let catalog = state.catalog();
    let stopping = state.shutdown_token().is_cancelled() || state.is_draining();
    let load_errors = state.load_errors();
    let body = json!({
        "status": if stopping { "stopping" } else { "ready" },
        "tools": catalog.entries().len(),
        "load_errors": load_errors,
        "calls_in_flight": state.calls_in_flight(),
    });
    let status = if stopping {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
