//! `GET /metrics` (docs/http.md, "Metrics"): the server's metrics in the Prometheus text
//! format, on the serving port behind the same bearer token and `Host`/`Origin` checks as
//! `/mcp`, or on a listener of its own ([`serve_metrics`], `serve --metrics ADDR`, which
//! works over stdio too); and the layer that counts every HTTP response of the serving port
//! by status.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::Semaphore;
use tower::util::MapResponseLayer;

use super::HttpOptions;
use super::guard::{HostRule, OriginRule, authorize};
use crate::error::ServeError;
use crate::state::ServerState;

/// The metrics' path.
pub const METRICS_PATH: &str = "/metrics";

/// Connections the metrics listener takes at once: scrapers, not clients.
const METRICS_CONNECTIONS: usize = 64;

/// What answering a scrape needs.
struct Scrape {
    state: ServerState,
    hosts: HostRule,
    origins: OriginRule,
}

/// The `/metrics` route for the serving port, to be merged before the token layer; no route
/// when the metrics have a listener of their own ([`HttpOptions::metrics_on_port`]).
pub(super) fn routes(state: &ServerState, options: &HttpOptions) -> Router {
    if !options.metrics_on_port {
        return Router::new();
    }
    scrape_route(state, options)
}

fn scrape_route(state: &ServerState, options: &HttpOptions) -> Router {
    let scrape = Arc::new(Scrape {
        state: state.clone(),
        hosts: HostRule::of(options),
        origins: OriginRule::of(options),
    });
    Router::new()
        .route(METRICS_PATH, get(scrape_metrics))
        .with_state(scrape)
}

/// Counts every response of the router it wraps in `toolsmith_http_requests_total`: an
/// atomic addition, and no boxed future (axum boxes those of `middleware::from_fn`).
pub(super) fn count_statuses(
    state: ServerState,
) -> MapResponseLayer<impl Fn(Response) -> Response + Clone + Send + Sync + 'static> {
    MapResponseLayer::new(move |response: Response| {
        state.metrics().http_response(response.status().as_u16());
        response
    })
}

async fn scrape_metrics(State(scrape): State<Arc<Scrape>>, request: Request) -> Response {
    let headers = request.headers();
    if let Some(refusal) = scrape.hosts.refuse_target(request.uri(), headers) {
        return refusal;
    }
    if !scrape.hosts.accepts(headers) {
        return (
            StatusCode::FORBIDDEN,
            "Forbidden: Host header is not allowed",
        )
            .into_response();
    }
    if let Some(refusal) = scrape.origins.refuse(headers) {
        return refusal;
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
        scrape.state.render_metrics(),
    )
        .into_response()
}

/// Serves `GET /metrics` of `state` on a listener of its own at `address` (with `options`'
/// `Host`/`Origin` rules, bearer token and header timeout), on a thread of its own, until
/// the process exits or the server shuts down; returns the address bound (useful with port
/// 0). Binding happens before this returns, so a port in use is an error here.
pub fn serve_metrics(
    state: ServerState,
    options: &HttpOptions,
    address: SocketAddr,
) -> Result<SocketAddr, ServeError> {
    let bind = |source| ServeError::Bind { address, source };
    let listener = std::net::TcpListener::bind(address).map_err(bind)?;
    listener.set_nonblocking(true).map_err(bind)?;
    let bound = listener.local_addr().unwrap_or(address);
    let mut app = scrape_route(&state, options);
    if let Some(token) = &options.auth_token {
        app = app.layer(middleware::from_fn_with_state(
            Arc::new(token.as_bytes().to_vec()),
            authorize,
        ));
    }
    let header_timeout = options.header_timeout;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    std::thread::Builder::new()
        .name("toolsmith-metrics".into())
        .spawn(move || {
            runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(listener) => listener,
                    Err(error) => {
                        tracing::error!(%error, "cannot serve the metrics listener");
                        return;
                    }
                };
                let connections = Arc::new(Semaphore::new(METRICS_CONNECTIONS));
                let stop = state.shutdown_token().clone();
                super::connections::accept(listener, app, header_timeout, connections, stop).await;
            });
        })
        .map_err(ServeError::Runtime)?;
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use tower::ServiceExt as _;

    use super::*;
    use crate::state::ServerOptions;

    fn state() -> ServerState {
        let catalog = Arc::new(toolsmith_model::Catalog::new(Vec::new(), Vec::new()));
        ServerState::new(catalog, ServerOptions::new(std::env::temp_dir()))
    }

    async fn status(app: &Router, request: Request) -> StatusCode {
        app.clone().oneshot(request).await.unwrap().status()
    }

    fn get(host: &str) -> axum::http::request::Builder {
        Request::builder()
            .uri(METRICS_PATH)
            .header(header::HOST, host)
    }

    // `/metrics` checks `Host` and `Origin` as the rest of the port does,
    // is behind the token, and counts every response by status.
    #[tokio::test]
    async fn metrics_are_behind_the_token_and_the_host_and_origin_checks() {
        let state = state();
        let options = HttpOptions {
            auth_token: Some("secret".into()),
            allowed_origins: vec!["https://dash.example.com".into()],
            ..HttpOptions::default()
        };
        let app = super::super::router(state.clone(), &options);
        let bearer = "Bearer secret";
        let request = |host: &str| get(host).header(header::AUTHORIZATION, bearer);
        assert_eq!(
            status(&app, get("localhost").body(Body::empty()).unwrap()).await,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            status(&app, request("evil.example").body(Body::empty()).unwrap()).await,
            StatusCode::FORBIDDEN
        );
        let foreign = request("localhost")
            .header(header::ORIGIN, "https://evil.example")
            .body(Body::empty())
            .unwrap();
        assert_eq!(status(&app, foreign).await, StatusCode::FORBIDDEN);
        let allowed = request("localhost:8080")
            .header(header::ORIGIN, "https://dash.example.com")
            .body(Body::empty())
            .unwrap();
        let response = app.clone().oneshot(allowed).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            crate::metrics::CONTENT_TYPE
        );
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        // The responses so far, this one not yet (it is counted once it is answered).
        assert!(
            text.contains("toolsmith_http_requests_total{status=\"401\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("toolsmith_http_requests_total{status=\"403\"} 2\n"),
            "{text}"
        );
        assert!(!text.contains("status=\"200\""), "{text}");
    }

    #[tokio::test]
    async fn with_a_listener_of_its_own_the_port_has_no_metrics() {
        let options = HttpOptions {
            metrics_on_port: false,
            ..HttpOptions::default()
        };
        let app = super::super::router(state(), &options);
        let request = get("localhost").body(Body::empty()).unwrap();
        assert_eq!(status(&app, request).await, StatusCode::NOT_FOUND);
    }
}
