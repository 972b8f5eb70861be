//! The server's front door for people: `GET /`, a page that shows what the server serves
//! and lets a user try each tool, and `GET /api/info`, the same as JSON (docs/http.md,
//! "The page" and "/api/info").
//!
//! Both are built from one [`info::info`] value, so the page never shows what the JSON does
//! not say. The page is HTML and CSS with a small inline script (`assets/`), compiled into
//! the binary; it reads without JavaScript, and its try-it forms POST plain `tools/call`
//! messages to `/mcp`. Both paths apply `/mcp`'s `Host` and `Origin` rules. With a bearer
//! token set, what the server serves is as secret as `tools/list` is: `/api/info` answers
//! 401 without the token, and `/` answers 401 with a page that asks for it and fetches
//! the full page with it. The token is never written into a page.

mod form;
mod html;
mod info;

use std::fmt;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::guard::{Bearer, HostRule, OriginRule};
use super::replies::unauthorized;
use crate::state::ServerState;

/// The page's path.
pub const PAGE_PATH: &str = "/";

/// The path of the page's data as JSON.
pub const INFO_PATH: &str = "/api/info";

/// One client's install snippet on the page: what `toolsmith install CLIENT --http URL`
/// would write, for a user to paste by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallSnippet {
    /// The client's name as people write it (`Claude Code`).
    pub client: String,
    /// The command that installs it (`toolsmith install claude-code --http URL`).
    pub command: String,
    /// The client's configuration file (`~/.claude.json`).
    pub file: String,
    /// The entry, in the file's own format.
    pub text: String,
}

/// The server a page's install snippets are for.
#[derive(Debug, Clone, Copy)]
pub struct SnippetServer<'a> {
    /// The server's name (`serverInfo.name`), as the entry's name.
    pub name: &'a str,
    /// The MCP endpoint's URL, as the browser reached it.
    pub url: &'a str,
    /// Whether the server wants a bearer token: snippets then name an environment variable
    /// for it, never the token itself.
    pub needs_token: bool,
}

/// Writes the page's install snippets: the CLI hands in its `install` table
/// ([`HttpOptions::install_snippets`](super::HttpOptions::install_snippets)), which this
/// crate cannot depend on.
#[derive(Clone)]
pub struct InstallSnippets(Arc<WriteSnippets>);

/// What writes a page's snippets.
type WriteSnippets = dyn Fn(&SnippetServer<'_>) -> Vec<InstallSnippet> + Send + Sync;

impl InstallSnippets {
    /// Snippets written by `write`.
    pub fn new(
        write: impl Fn(&SnippetServer<'_>) -> Vec<InstallSnippet> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(write))
    }

    fn for_server(&self, server: &SnippetServer<'_>) -> Vec<InstallSnippet> {
        (self.0)(server)
    }
}

impl fmt::Debug for InstallSnippets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InstallSnippets(..)")
    }
}

/// What the page and `/api/info` need besides the server state.
pub(super) struct Front {
    pub(super) state: ServerState,
    pub(super) hosts: HostRule,
    pub(super) origins: OriginRule,
    pub(super) token: Option<Arc<Vec<u8>>>,
    pub(super) snippets: Option<InstallSnippets>,
    /// The endpoint takes OAuth tokens; the page takes none, so it shows only the tools
    /// that need no scope (docs/auth.md).
    pub(super) oauth: bool,
    /// A Server Card is served (docs/http.md): the data names it and the catalog.
    pub(super) card: bool,
}

/// The page's and `/api/info`'s routes, to be merged outside the endpoint's token layer
/// (they check the token themselves, to answer in their own form).
pub(super) fn routes(front: Front) -> Router {
    Router::new()
        .route(PAGE_PATH, get(page))
        .route(INFO_PATH, get(api_info))
        .with_state(Arc::new(front))
}

/// Why a request for the page or its data is refused.
enum Refusal {
    /// `Host`, request target or `Origin` not allowed: `/mcp`'s own answer.
    Guard(Response),
    /// No valid bearer token.
    Token(Bearer),
}

impl Front {
    fn admit(&self, request: &Request) -> Result<(), Refusal> {
        let headers = request.headers();
        if let Some(refusal) = self.hosts.refuse_target(request.uri(), headers) {
            return Err(Refusal::Guard(refusal));
        }
        if !self.hosts.accepts(headers) {
            tracing::warn!(host = ?headers.get(header::HOST), "refused a request for a host that is not allowed");
            return Err(Refusal::Guard(
                (
                    StatusCode::FORBIDDEN,
                    "Forbidden: Host header is not allowed",
                )
                    .into_response(),
            ));
        }
        if let Some(refusal) = self.origins.refuse(headers) {
            return Err(Refusal::Guard(refusal));
        }
        match &self.token {
            Some(expected) => match Bearer::of(headers, expected) {
                Bearer::Valid => Ok(()),
                refused => Err(Refusal::Token(refused)),
            },
            None => Ok(()),
        }
    }

    /// The page's data for a request that reached the server at its `Host`.
    fn info(&self, headers: &HeaderMap) -> serde_json::Value {
        let mcp_url = mcp_url(headers);
        let mut info = info::info(&self.state, &mcp_url, self.token.is_some(), self.oauth);
        if self.card {
            info["serverCard"] = format!("{mcp_url}/server-card").into();
            info["aiCatalog"] = super::AI_CATALOG_PATH.into();
        }
        info
    }

    fn snippets(&self, info: &serde_json::Value) -> Vec<InstallSnippet> {
        let Some(snippets) = &self.snippets else {
            return Vec::new();
        };
        snippets.for_server(&SnippetServer {
            name: info["name"].as_str().unwrap_or("toolsmith"),
            url: info["mcpUrl"].as_str().unwrap_or_default(),
            needs_token: self.token.is_some(),
        })
    }
}

/// `GET /`: the page, or with a token set and none given, the page that asks for it.
async fn page(State(front): State<Arc<Front>>, request: Request) -> Response {
    match front.admit(&request) {
        Ok(()) => {
            let info = front.info(request.headers());
            let snippets = front.snippets(&info);
            html_response(StatusCode::OK, html::page(&info, &snippets))
        }
        Err(Refusal::Guard(refusal)) => refusal,
        Err(Refusal::Token(bearer)) => {
            let mut response = html_response(StatusCode::UNAUTHORIZED, html::locked());
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(bearer.challenge()),
            );
            response
        }
    }
}

/// `GET /api/info`: the page's data as JSON.
async fn api_info(State(front): State<Arc<Front>>, request: Request) -> Response {
    match front.admit(&request) {
        Ok(()) => {
            let info = front.info(request.headers());
            (
                [(header::CONTENT_TYPE, "application/json")],
                info.to_string(),
            )
                .into_response()
        }
        Err(Refusal::Guard(refusal)) => refusal,
        Err(Refusal::Token(bearer)) => unauthorized(bearer.challenge()),
    }
}

fn html_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                html::content_security_policy(),
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// The MCP endpoint's URL as the browser reached the server: its `Host` (already checked),
/// `https` behind a proxy that says so (`X-Forwarded-Proto`).
fn mcp_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("localhost");
    let https = headers
        .get("x-forwarded-proto")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|proto| proto.eq_ignore_ascii_case("https"));
    let scheme = if https { "https" } else { "http" };
    format!("{scheme}://{host}{}", super::MCP_PATH)
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use tower::ServiceExt as _;

    use super::*;
    use crate::http::{HttpOptions, router};
    use crate::state::ServerOptions;

    const TOOL: &str = "def t(n: int, tags: list[str], mode: str = \"a\") -> str:\n    \"\"\"<script>alert(1)</script> & more.\n\n    Args:\n        n: A number.\n        tags: Some tags.\n        mode: A mode.\n    \"\"\"\n    return \"t\"\n\nmcp.tool(t, params = {\"mode\": {\"enum\": [\"a\", \"b\"]}})\n";

    async fn get(
        options: &HttpOptions,
        path: &str,
        headers: &[(&str, &str)],
    ) -> (StatusCode, String) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.star"), TOOL).unwrap();
        let folder = toolsmith_folder::ToolFolder::load(dir.path()).unwrap();
        let state = ServerState::new(
            Arc::clone(folder.catalog()),
            ServerOptions::new(folder.root().to_owned()),
        );
        let mut request = Request::builder()
            .uri(path)
            .header(header::HOST, "localhost:8080");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = router(state, options)
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn the_page_escapes_descriptions_and_builds_a_control_per_type() {
        // docs/http.md, "The page".
        let (status, page) = get(&HttpOptions::default(), PAGE_PATH, &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more."),
            "{page}"
        );
        assert!(!page.contains("<script>alert"));
        assert!(page.contains("<input type=\"number\" step=\"1\" id=\"try-0-0\" data-param=\"n\" data-kind=\"integer\" data-required"), "{page}");
        assert!(page.contains("data-param=\"tags\" data-kind=\"json\" data-required placeholder=\"JSON array, e.g. [1, 2]\""), "{page}");
        assert!(
            page.contains("<option value=\"&quot;b&quot;\">b</option>"),
            "{page}"
        );
        assert!(page.contains("toolsmith install CLIENT --http http://localhost:8080/mcp"));
    }

    #[tokio::test]
    async fn api_info_wants_the_token_the_endpoint_wants() {
        let options = HttpOptions {
            auth_token: Some("secret".into()),
            ..HttpOptions::default()
        };
        let (status, _) = get(&options, INFO_PATH, &[]).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, body) = get(&options, INFO_PATH, &[("authorization", "Bearer secret")]).await;
        assert_eq!(status, StatusCode::OK);
        let info: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(info["mcpUrl"], "http://localhost:8080/mcp");
        assert_eq!(info["tools"][0]["name"], "t");
        assert_eq!(info["authRequired"], true);
    }
}
