//! The endpoint as an OAuth 2.1 resource server (MCP authorization spec; docs/auth.md):
//! every request to MCP carries an access token from the configured issuer, verified
//! ([`keys`]) into a [`Caller`](toolsmith_model::Caller) that goes with the request to the handler, which shows and
//! runs only the tools the caller's scopes cover. `GET` [`PROTECTED_RESOURCE_PATH`] is the
//! RFC 9728 metadata naming the issuer; a missing or bad token is 401 and a token without
//! a required scope 403, each with the `WWW-Authenticate` challenge that points at it.
//! A token that is not a JWT is introspected ([`introspect`]) when `[auth]` names an
//! introspection endpoint.

mod introspect;
mod keys;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use introspect::Introspector;
pub(crate) use keys::TokenError;
use keys::{Fetch, KeyCache};

/// RFC 9728 §3: where the protected resource's metadata is served.
pub const PROTECTED_RESOURCE_PATH: &str = "/.well-known/oauth-protected-resource";

pub use toolsmith_model::OAuthSettings;

/// The token check's state: the settings and the issuer's keys.
pub(super) struct OAuth {
    settings: OAuthSettings,
    keys: Arc<KeyCache>,
    /// For opaque tokens, with `[auth] introspection_url`.
    introspector: Option<Arc<Introspector>>,
}

impl OAuth {
    pub(super) fn new(settings: OAuthSettings) -> Arc<Self> {
        Arc::new(Self {
            keys: Arc::new(KeyCache::new(settings.clone())),
            introspector: settings.introspection.clone().map(|introspection| {
                Arc::new(Introspector::new(introspection, settings.issuer.clone()))
            }),
            settings,
        })
    }

    /// This server's URL for a request with `headers`.
    fn resource(&self, headers: &HeaderMap) -> String {
        self.settings.resource.clone().unwrap_or_else(|| {
            let host = headers
                .get(header::HOST)
                .and_then(|host| host.to_str().ok())
                .unwrap_or("localhost");
            format!("http://{host}{}", super::MCP_PATH)
        })
    }

    /// The metadata's address for a request with `headers` (RFC 9728 §3.1: the
    /// well-known path before the resource's path).
    fn metadata_url(&self, headers: &HeaderMap) -> String {
        let resource = self.resource(headers);
        match resource.find("://").and_then(|scheme| {
            resource[scheme + 3..]
                .find('/')
                .map(|path| scheme + 3 + path)
        }) {
            Some(path) => format!(
                "{}{PROTECTED_RESOURCE_PATH}{}",
                &resource[..path],
                &resource[path..]
            ),
            None => format!("{resource}{PROTECTED_RESOURCE_PATH}"),
        }
    }

    fn refuse(&self, headers: &HeaderMap, refusal: &Refusal) -> Response {
        let metadata = self.metadata_url(headers);
        let (status, challenge, text) = match refusal {
            Refusal::Missing => (
                StatusCode::UNAUTHORIZED,
                format!(r#"Bearer resource_metadata="{metadata}""#),
                "Unauthorized: an OAuth access token is required".to_owned(),
            ),
            Refusal::Token(error) => (
                StatusCode::UNAUTHORIZED,
                format!(
                    r#"Bearer resource_metadata="{metadata}", error="invalid_token", error_description="{}""#,
                    quoted(&error.to_string())
                ),
                format!("Unauthorized: {error}"),
            ),
            Refusal::Scope(scope) => (
                StatusCode::FORBIDDEN,
                format!(
                    r#"Bearer resource_metadata="{metadata}", error="insufficient_scope", scope="{}""#,
                    quoted(&self.settings.required_scopes.join(" "))
                ),
                format!("Forbidden: the access token lacks the scope `{scope}`"),
            ),
        };
        let mut response = (status, text).into_response();
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

enum Refusal {
    Missing,
    Token(TokenError),
    Scope(String),
}

/// A quoted-string's content (RFC 9110 §5.6.4) without quotes or backslashes to escape.
fn quoted(text: &str) -> String {
    text.replace(['"', '\\'], "'")
}

/// Verifies the request's access token and hands the request on with its
/// [`Caller`](toolsmith_model::Caller) in
/// its extensions, or refuses it (401, 403).
pub(super) async fn authorize(
    State(oauth): State<Arc<OAuth>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(token) = super::guard::bearer_token(request.headers()) else {
        return oauth.refuse(request.headers(), &Refusal::Missing);
    };
    let audience = oauth
        .settings
        .audience
        .clone()
        .unwrap_or_else(|| oauth.resource(request.headers()));
    let opaque = jsonwebtoken::decode_header(token).is_err();
    let verified = if let (Some(introspector), true) = (&oauth.introspector, opaque) {
        // Not a JWT: the issuer says what it is (RFC 7662), unless it said so lately.
        if let Some(caller) = introspector.cached(token) {
            Ok(caller)
        } else {
            let introspector = Arc::clone(introspector);
            let token = token.to_owned();
            tokio::task::spawn_blocking(move || introspector.introspect(&token, &audience))
                .await
                .unwrap_or_else(|error| Err(TokenError::Issuer(error.to_string())))
        }
    } else if oauth.keys.needs_fetch(token) {
        // The fetch blocks (ureq): off the async threads.
        let keys = Arc::clone(&oauth.keys);
        let token = token.to_owned();
        tokio::task::spawn_blocking(move || keys.verify(&token, &audience, Fetch::Allowed))
            .await
            .unwrap_or_else(|error| Err(TokenError::Issuer(error.to_string())))
    } else {
        // Never a blocking fetch here: a key that went missing since `needs_fetch` looked
        // is refused, as it was a moment before.
        oauth.keys.verify(token, &audience, Fetch::Never)
    };
    let mut caller = match verified {
        Ok(caller) => caller,
        Err(error) => {
            tracing::info!(%error, "refused an access token");
            return oauth.refuse(request.headers(), &Refusal::Token(error));
        }
    };
    if let Some(scope) = caller.missing(&oauth.settings.required_scopes) {
        return oauth.refuse(request.headers(), &Refusal::Scope(scope.to_owned()));
    }
    // Kept for an upstream that opts in to receive it (`forward_caller_token`,
    // docs/gateway.md); never sent anywhere else.
    caller.token = Some(toolsmith_model::AccessToken::new(token));
    request.extensions_mut().insert(Arc::new(caller));
    next.run(request).await
}

/// `GET` [`PROTECTED_RESOURCE_PATH`] (also with the resource's path after it, RFC 9728
/// §3.1): the issuer, the scopes, how to send the token. Open to all: a client reads it
/// before it has a token.
pub(super) fn routes(oauth: Arc<OAuth>) -> Router {
    let nested = format!("{PROTECTED_RESOURCE_PATH}{}", super::MCP_PATH);
    Router::new()
        .route(PROTECTED_RESOURCE_PATH, get(metadata))
        .route(&nested, get(metadata))
        .with_state(oauth)
}

async fn metadata(State(oauth): State<Arc<OAuth>>, headers: HeaderMap) -> Response {
    let settings = &oauth.settings;
    let mut scopes = settings.required_scopes.clone();
    for scope in &settings.scopes_supported {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    let document = json!({
        "resource": oauth.resource(&headers),
        "authorization_servers": [settings.issuer],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "Toolsmith",
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        document.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_puts_the_well_known_path_first() {
        let mut settings = OAuthSettings::new("https://issuer".into());
        settings.resource = Some("https://tools.example.com/mcp".into());
        let oauth = OAuth::new(settings);
        assert_eq!(
            oauth.metadata_url(&HeaderMap::new()),
            "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let oauth = OAuth::new(OAuthSettings::new("https://issuer".into()));
        let headers = super::super::peek::one_header(header::HOST, "127.0.0.1:8080");
        assert_eq!(
            oauth.metadata_url(&headers),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
    }
}
