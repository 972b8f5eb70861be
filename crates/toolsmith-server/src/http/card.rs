//! The Server Card and the AI Catalog (SEP-2127; docs/http.md, "Server Card and AI
//! Catalog"): static JSON a client reads before it connects.
//!
//! `GET /mcp/server-card` (the MCP endpoint's URL plus `/server-card`, the location the
//! extension reserves) answers the card as `application/mcp-server-card+json`: the server's
//! reverse-DNS `name`, `version`, `description`, `title`, `icons`, `websiteUrl`, `repository`, and
//! one `remotes` entry for this endpoint with the protocol revisions it serves and the
//! `Authorization` header when auth is on. It never lists tools (the extension says not
//! to). `GET /.well-known/ai-catalog.json` lists the card. Both are public metadata:
//! readable without a token, with CORS for `GET`, an `ETag` and `304 Not Modified`. The
//! `Host` is checked as for `/mcp`, since the card's URL is built from it when no public
//! URL is set.

use std::fmt::Write as _;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::MCP_PATH;
use super::guard::HostRule;

/// Where the card is served: the MCP endpoint's path plus `/server-card`.
pub const SERVER_CARD_PATH: &str = "/mcp/server-card";

/// Where the AI Catalog is served.
pub const AI_CATALOG_PATH: &str = "/.well-known/ai-catalog.json";

/// The card's media type.
pub const SERVER_CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";

/// The catalog's media type.
pub const AI_CATALOG_MEDIA_TYPE: &str = "application/ai-catalog+json";

/// The schema a card names in `$schema`.
pub const SERVER_CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/// What a Server Card says about a server, from `[server]` of `toolsmith.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerCard {
    /// The reverse-DNS `name` (`io.github.acme/weather`).
    pub name: String,
    /// `title`: the name people read.
    pub title: Option<String>,
    /// `description`.
    pub description: String,
    /// `version`.
    pub version: String,
    /// `websiteUrl`.
    pub website: Option<String>,
    /// `repository.url` (its `source` is the forge, when known).
    pub repository: Option<String>,
    /// `icons`: each an object with `src` (an `https:` or `data:` URI) and `mimeType`.
    pub icons: Vec<Value>,
    /// The URL clients reach the MCP endpoint at (`--public-url`); `None`: the URL the card
    /// was asked on.
    pub public_url: Option<String>,
}

impl ServerCard {
    /// The card as JSON for an endpoint at `url`, with the `Authorization` header among
    /// its `remotes` entry's headers when `auth` is on.
    pub fn to_json(&self, url: &str, auth: bool) -> Value {
        let mut remote = json!({
            "type": "streamable-http",
            "url": url,
            "supportedProtocolVersions": ProtocolVersion::KNOWN_VERSIONS,
        });
        if auth {
            remote["headers"] = json!([{
                "name": "Authorization",
                "description": "A bearer token the server accepts",
                "isRequired": true,
                "isSecret": true,
                "value": "Bearer {token}",
                "variables": {"token": {"description": "The access token", "isRequired": true, "isSecret": true}},
            }]);
        }
        let mut card = json!({
            "$schema": SERVER_CARD_SCHEMA,
            "name": self.name,
            "version": self.version,
            "description": self.description,
        });
        if let Some(title) = &self.title {
            card["title"] = json!(title);
        }
        if let Some(website) = &self.website {
            card["websiteUrl"] = json!(website);
        }
        if let Some(url) = &self.repository {
            card["repository"] = json!({"url": url, "source": forge(url)});
        }
        if !self.icons.is_empty() {
            card["icons"] = json!(self.icons);
        }
        card["remotes"] = json!([remote]);
        card
    }
}

/// The AI Catalog listing the card at `card_url`, for a server named `name`.
pub fn ai_catalog(name: &str, card_url: &str) -> Value {
    let (publisher, server) = name.split_once('/').unwrap_or(("local", name));
    let publisher: String = publisher.rsplit('.').collect::<Vec<_>>().join(".");
    json!({
        "specVersion": "1.0",
        "entries": [{
            "identifier": format!("urn:air:{publisher}:mcp:{server}"),
            "type": SERVER_CARD_MEDIA_TYPE,
            "url": card_url,
        }],
    })
}

/// The forge of a repository URL (`github`, `gitlab`, …), else `git`.
fn forge(url: &str) -> &'static str {
    let host = url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_default();
    match host {
        "github.com" => "github",
        "gitlab.com" => "gitlab",
        "bitbucket.org" => "bitbucket",
        "codeberg.org" => "codeberg",
        _ => "git",
    }
}

#[derive(Clone)]
struct Cards {
    card: ServerCard,
    auth: bool,
    hosts: HostRule,
}

/// The card's and catalog's routes, to be merged outside the token layers; none when the
/// server has no card.
pub(super) fn routes(options: &super::HttpOptions) -> Router {
    let Some(card) = &options.server_card else {
        return Router::new();
    };
    let auth = options.auth_token.is_some() || options.oauth.is_some();
    let hosts = HostRule::of(options);
    Router::new()
        .route(SERVER_CARD_PATH, get(serve_card).options(preflight))
        .route(AI_CATALOG_PATH, get(serve_catalog).options(preflight))
        .with_state(Cards {
            card: card.clone(),
            auth,
            hosts,
        })
}

async fn serve_card(State(cards): State<Cards>, request: Request) -> Response {
    let Some(endpoint) = cards.endpoint(request.headers()) else {
        return refused();
    };
    let card = cards.card.to_json(&endpoint, cards.auth);
    cached(request.headers(), SERVER_CARD_MEDIA_TYPE, &card)
}

async fn serve_catalog(State(cards): State<Cards>, request: Request) -> Response {
    let Some(endpoint) = cards.endpoint(request.headers()) else {
        return refused();
    };
    let catalog = ai_catalog(&cards.card.name, &format!("{endpoint}/server-card"));
    cached(request.headers(), AI_CATALOG_MEDIA_TYPE, &catalog)
}

impl Cards {
    /// The MCP endpoint's URL: the public one, else the one this request was sent to
    /// (`None` when its `Host` is not allowed).
    fn endpoint(&self, headers: &HeaderMap) -> Option<String> {
        if let Some(url) = &self.card.public_url {
            return Some(url.trim_end_matches('/').to_owned());
        }
        if !self.hosts.accepts(headers) {
            return None;
        }
        let host = headers.get(header::HOST)?.to_str().ok()?;
        Some(format!("http://{host}{MCP_PATH}"))
    }
}

fn refused() -> Response {
    (
        StatusCode::FORBIDDEN,
        "Forbidden: Host header is not allowed",
    )
        .into_response()
}

/// `document` as `media_type` with CORS for `GET`, `Cache-Control` and an `ETag`; `304`
/// when the request's `If-None-Match` names it.
fn cached(request: &HeaderMap, media_type: &'static str, document: &Value) -> Response {
    let body = serde_json::to_string_pretty(document).unwrap_or_default();
    let mut tag = String::from("\"");
    for byte in &Sha256::digest(body.as_bytes())[..16] {
        let _ = write!(tag, "{byte:02x}");
    }
    tag.push('"');
    let matches = request
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .split(',')
                .any(|candidate| candidate.trim() == tag || candidate.trim() == "*")
        });
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, media_type)], body).into_response()
    };
    let headers = response.headers_mut();
    cors(headers);
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    if let Ok(tag) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, tag);
    }
    response
}

async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    cors(response.headers_mut());
    response
}

/// The CORS headers the extension asks of a card's host.
fn cors(headers: &mut HeaderMap) {
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Content-Type, If-None-Match"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("ETag"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_identifier_is_domain_anchored() {
        let catalog = ai_catalog("io.github.acme/weather", "https://x/mcp/server-card");
        assert_eq!(
            catalog["entries"][0]["identifier"],
            "urn:air:acme.github.io:mcp:weather"
        );
    }

    #[test]
    fn a_card_with_auth_names_the_authorization_header() {
        let card = ServerCard {
            name: "io.github.acme/weather".into(),
            description: "Weather".into(),
            version: "1.0.0".into(),
            repository: Some("https://github.com/acme/weather".into()),
            ..ServerCard::default()
        };
        let json = card.to_json("https://x/mcp", true);
        assert_eq!(json["remotes"][0]["headers"][0]["name"], "Authorization");
        assert_eq!(json["repository"]["source"], "github");
        assert!(json.get("tools").is_none());
    }
}
