//! The gateway in front of an upstream behind its own OAuth (docs/gateway.md, "Upstreams
//! behind their own OAuth"): every part real. oauth2-mock-server (npm, pinned in
//! `.ci/oauth/`, run by `.ci/oauth/client-issuer.mjs`) is the authorization server, with one
//! registered client; a `toolsmith serve --http --oauth-issuer` is the upstream, whose
//! `whoami` tool says whose token reached it; a second `toolsmith serve --http
//! --oauth-issuer` is the gateway, with `[upstream.NAME] oauth = {...}`, called with a
//! user's token. Ignored unless run with `--include-ignored` (as `.ci/run` does).

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve_process::ServeProcess;
use crate::toolsmith;

const SECRET: &str = "s3cret-of-the-gateway";

/// A running `.ci/oauth/client-issuer.mjs` (the OAuth tests' issuer, with a registered
/// client), killed on drop.
struct Issuer(crate::oauth::Issuer);

impl Issuer {
    /// Starts the issuer with the client `gateway` (secret [`SECRET`]), which must
    /// authenticate with `method` (`basic` or `post`) and whose tokens last `expires_in`
    /// seconds.
    fn start(method: &str, expires_in: u64) -> Self {
        let mut issuer = crate::oauth::Issuer::run("client-issuer.mjs");
        issuer.ask(&json!({"client": {
            "id": "gateway", "secret": SECRET, "method": method, "expires_in": expires_in
        }}));
        Self(issuer)
    }

    fn ask(&mut self, command: &Value) -> Value {
        self.0.ask(command)
    }

    fn url(&self) -> &str {
        &self.0.url
    }

    /// A user's token with `claims`.
    fn token(&mut self, claims: &Value) -> String {
        let answer = self.ask(&json!({"token": {"claims": claims}}));
        answer["token"].as_str().unwrap().to_owned()
    }

    /// The client credentials requests answered so far, and the last one.
    fn requests(&mut self) -> (u64, Value) {
        let answer = self.ask(&json!({"requests": true}));
        (answer["count"].as_u64().unwrap(), answer["last"].clone())
    }
}

/// The upstream: a tools folder whose `whoami` says whose token reached it, served over HTTP
/// behind `issuer`.
fn upstream(issuer: &Issuer) -> (tempfile::TempDir, ServeProcess) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("whoami.star"),
        r#"def whoami() -> dict:
    """Say whose access token reached this server: its subject and its client."""
    caller = mcp.caller()
    return {"subject": caller["subject"], "client_id": caller["client_id"]}

mcp.tool(whoami, read_only=True)
"#,
    )
    .unwrap();
    let mut command = ServeProcess::http_command(&[dir.path().to_str().unwrap()], None);
    command.args(["--oauth-issuer", issuer.url()]);
    let server = ServeProcess::spawn_http(command);
    (dir, server)
}

/// The gateway: a folder with `toml` as its toolsmith.toml, served over HTTP behind
/// `issuer`, with the client secret in its environment.
fn gateway(issuer: &Issuer, toml: &str) -> (tempfile::TempDir, ServeProcess) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("toolsmith.toml"), toml).unwrap();
    let mut command = ServeProcess::http_command(&[dir.path().to_str().unwrap()], None);
    // JSON lines, and ureq's requests (which it logs with their URLs, paths and headers
    // redacted) left out: the URL the test reads from stderr is the listening line's.
    command
        .args(["--oauth-issuer", issuer.url(), "--log-format", "json"])
        .env("GATEWAY_SECRET", SECRET)
        .env("TOOLSMITH_LOG", "debug,rmcp=trace,ureq=info");
    let server = ServeProcess::spawn_http(command);
    (dir, server)
}

/// Calls `name` at `server` with `token`; the result's structured content.
fn call(server: &ServeProcess, token: &str, name: &str) -> Value {
    let bearer = format!("Bearer {token}");
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": name, "arguments": {}}});
    let (status, _, answer) = server.post(
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &bearer),
        ],
        &body.to_string(),
    );
    assert_eq!(status, 200, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let result = &answer["result"];
    assert_eq!(result["isError"], json!(false), "{answer}");
    result["structuredContent"].clone()
}

/// Stops `server` with SIGTERM; everything its stderr said.
fn stderr_of(server: ServeProcess) -> String {
    Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    server.exit().1
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn the_gateway_gets_its_own_token_and_passes_the_callers_on_only_when_told() {
    let mut issuer = Issuer::start("basic", 3600);
    let (_upstream_dir, upstream) = upstream(&issuer);
    let (gateway_dir, gateway) = gateway(
        &issuer,
        &format!(
            r#"[upstream.remote]
url = "{url}"
oauth = {{ client_id = "gateway", client_secret = "${{GATEWAY_SECRET}}", scopes = ["tools:call", "whoami"] }}

[upstream.shared]
url = "{url}"
oauth = {{ client_id = "gateway", client_secret = "${{GATEWAY_SECRET}}" }}
forward_caller_token = true
"#,
            url = upstream.url()
        ),
    );
    // A user's token, valid at the gateway and (same issuer, both audiences) at the upstream.
    let alice = issuer.token(&json!({
        "sub": "alice", "client_id": "alice-app",
        "aud": [gateway.url(), upstream.url()],
    }));

    // Not forwarded by default: the upstream sees the gateway's own client.
    assert_eq!(
        call(&gateway, &alice, "remote_whoami"),
        json!({"subject": "gateway", "client_id": "gateway"})
    );
    // Forwarded where the table says so: the upstream sees alice.
    assert_eq!(
        call(&gateway, &alice, "shared_whoami"),
        json!({"subject": "alice", "client_id": "alice-app"})
    );
    // Both upstreams were reached (initialize, tools/list, the calls) with the gateway's own
    // token, one each, got by the client credentials grant, authenticated the way the
    // server's metadata asks, for the upstream's URL as the resource.
    let (fetched, last) = issuer.requests();
    assert_eq!(fetched, 2, "one token per upstream");
    assert_eq!(last["client_id"], json!("gateway"), "{last}");
    assert_eq!(last["method"], json!("basic"), "{last}");
    assert_eq!(last["grant_type"], json!("client_credentials"), "{last}");
    assert_eq!(last["resource"], json!(upstream.url()), "{last}");
    assert!(
        [json!("tools:call whoami"), Value::Null].contains(&last["scope"]),
        "{last}"
    );

    // `toolsmith check` warns about the forwarding, pointing at the key.
    let output = toolsmith()
        .args(["check", gateway_dir.path().to_str().unwrap()])
        .env("GATEWAY_SECRET", SECRET)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(text.contains("token-passthrough"), "{text}");
    assert!(text.contains("`shared`"), "{text}");
    assert!(!text.contains("`remote`"), "{text}");

    // Neither the secret nor a token is in the gateway's log, at debug level (rmcp's at
    // trace, which prints each request it receives and sends).
    let log = stderr_of(gateway);
    assert!(
        log.contains("ProxyMessage") && log.contains("shared_whoami"),
        "{log}"
    );
    assert!(!log.contains(SECRET), "{log}");
    assert!(!log.contains(&alice), "the caller's token is in the log");
    assert!(!log.contains("eyJ"), "a token is in the log: {log}");
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn a_token_is_renewed_before_it_expires_and_once_when_the_upstream_refuses_it() {
    // Tokens of two seconds, asked for with client_secret_post as the metadata says.
    let mut issuer = Issuer::start("post", 2);
    let (_upstream_dir, upstream) = upstream(&issuer);
    let (_gateway_dir, gateway) = gateway(
        &issuer,
        &format!(
            r#"[upstream.remote]
url = "{}"
oauth = {{ client_id = "gateway", client_secret = "${{GATEWAY_SECRET}}" }}
"#,
            upstream.url()
        ),
    );
    let alice = issuer.token(&json!({"sub": "alice", "aud": gateway.url()}));
    let expected = json!({"subject": "gateway", "client_id": "gateway"});
    assert_eq!(call(&gateway, &alice, "remote_whoami"), expected);
    let (before, last) = issuer.requests();
    assert_eq!(last["method"], json!("post"), "{last}");

    // The next token the issuer signs is already expired, though its answer says two
    // seconds: the upstream refuses it. Past the refresh time (1.6 s of 2 s), the call
    // gets a new token before it is sent, is refused, gets one more, and goes through.
    issuer.ask(&json!({"expired": 1}));
    std::thread::sleep(Duration::from_millis(2200));
    assert_eq!(call(&gateway, &alice, "remote_whoami"), expected);
    assert_eq!(
        issuer.requests().0,
        before + 2,
        "a refresh before expiry, then one retry after the refusal"
    );
    let log = stderr_of(gateway);
    assert!(log.contains("refused its access token"), "{log}");
    assert!(!log.contains(SECRET), "{log}");
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn config_mistakes_say_what_to_fix() {
    let issuer = Issuer::start("basic", 3600);
    let (_upstream_dir, upstream) = upstream(&issuer);
    let url = upstream.url();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toolsmith.toml"),
        format!(
            r#"[upstream.unset]
url = "{url}"
oauth = {{ client_id = "gateway", client_secret = "${{TOOLSMITH_TEST_NOT_SET}}" }}

[upstream.noid]
url = "{url}"
oauth = {{ client_secret = "${{GATEWAY_SECRET}}" }}

[upstream.both]
url = "{url}"
headers = {{ Authorization = "Bearer ${{GATEWAY_SECRET}}" }}
oauth = {{ client_id = "gateway", client_secret = "${{GATEWAY_SECRET}}" }}

[upstream.literal]
url = "{url}"
oauth = {{ client_id = "gateway", client_secret = "{SECRET}" }}
"#
        ),
    )
    .unwrap();
    let output = toolsmith()
        .args(["list", dir.path().to_str().unwrap()])
        .env("GATEWAY_SECRET", SECRET)
        .env_remove("TOOLSMITH_TEST_NOT_SET")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    for expected in [
        "`oauth.client_secret`: environment variable `TOOLSMITH_TEST_NOT_SET` is not set",
        "`[upstream.noid] oauth` needs `client_id`",
        "`[upstream.both]` has both `oauth` and `headers.Authorization`",
        "`[upstream.literal] oauth.client_secret` must name an environment variable",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }
    assert!(!text.contains(SECRET), "{text}");
}
