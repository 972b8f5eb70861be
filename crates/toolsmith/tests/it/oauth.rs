//! `serve --http --oauth-issuer` against a real issuer
//! (docs/auth.md): oauth2-mock-server (npm, pinned in `.ci/oauth/`) signs JWTs and serves its
//! metadata and JWKS on a free loopback port, run by `.ci/oauth/issuer.mjs`. The tests that
//! need it are ignored unless run with `cargo test -- --include-ignored` (as `.ci/run` does).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::serve_process::ServeProcess;
use crate::{require, workspace};

/// A running issuer script of `.ci/oauth/` (oauth2-mock-server), which prints its issuer URL
/// and then answers one JSON command per stdin line; killed on drop. The audit log's and the
/// upstream OAuth tests start it too.
pub(crate) struct Issuer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pub(crate) url: String,
}

impl Issuer {
    /// Starts `.ci/oauth/issuer.mjs`; the test fails when its npm package is not installed.
    pub(crate) fn start() -> Self {
        Self::run("issuer.mjs")
    }

    /// Starts `.ci/oauth/SCRIPT`; the test fails when its npm package is not installed.
    pub(crate) fn run(script: &str) -> Self {
        let dir = workspace().join(".ci/oauth");
        require(
            dir.join("node_modules/oauth2-mock-server").is_dir(),
            "oauth2-mock-server (npm ci --prefix .ci/oauth)",
        );
        let mut child = Command::new("node")
            .arg(dir.join(script))
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("node runs .ci/oauth/{script}: {error}"));
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let first: Value = serde_json::from_str(&line).unwrap();
        let url = first["issuer"].as_str().unwrap().to_owned();
        Self {
            child,
            stdin,
            stdout,
            url,
        }
    }

    /// Sends `command` and returns the answer, which must not be an error.
    pub(crate) fn ask(&mut self, command: &Value) -> Value {
        writeln!(self.stdin, "{command}").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert!(answer.get("error").is_none(), "{answer}");
        answer
    }

    /// A JWT with `claims` (on top of `iss`, `iat`, `exp`, `nbf`), signed with key `kid`.
    pub(crate) fn token(&mut self, kid: &str, expires_in: i64, claims: &Value) -> String {
        let answer =
            self.ask(&json!({"token": {"kid": kid, "expires_in": expires_in, "claims": claims}}));
        answer["token"].as_str().unwrap().to_owned()
    }

    /// Adds a new signing key `kid` to the issuer's JWKS.
    fn rotate(&mut self, kid: &str) {
        self.ask(&json!({"rotate": kid}));
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tools folder with one tool for everyone and one that needs `tickets:write`.
fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tickets.star"),
        r#"def list_tickets() -> str:
    """List the open tickets."""
    return "none open"

def close_ticket(id: int) -> str:
    """Close a ticket.

    Args:
        id: The ticket number.
    """
    return "%s closed %d" % (mcp.caller()["subject"], id)

mcp.tool(list_tickets, read_only=True)
mcp.tool(close_ticket, scopes=["tickets:write"])
"#,
    )
    .unwrap();
    dir
}

fn serve(dir: &std::path::Path, issuer: &Issuer, extra: &[&str]) -> ServeProcess {
    let mut command = ServeProcess::http_command(&[dir.to_str().unwrap()], None);
    command.args(["--oauth-issuer", &issuer.url]).args(extra);
    ServeProcess::spawn_http(command)
}

/// One stateless POST with `token`; the status, the head and the body.
fn post(server: &ServeProcess, token: Option<&str>, body: &Value) -> (u16, String, Value) {
    let bearer = token.map(|token| format!("Bearer {token}"));
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    let (status, head, body) = server.post(&headers, &body.to_string());
    let body = serde_json::from_str(&body).unwrap_or(Value::String(body));
    (status, head, body)
}

fn names(server: &ServeProcess, token: &str) -> Vec<String> {
    let (status, _, body) = post(
        server,
        Some(token),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    assert_eq!(status, 200, "{body}");
    body["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

fn call(server: &ServeProcess, token: &str, name: &str, arguments: &Value) -> Value {
    let (status, _, body) = post(
        server,
        Some(token),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}),
    );
    assert_eq!(status, 200, "{body}");
    body["result"].clone()
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn tokens_are_checked_against_the_issuer_and_tools_are_shown_by_scope() {
    // docs/auth.md, "Tokens" and "Tools by scope".
    let mut issuer = Issuer::start();
    let dir = folder();
    let server = serve(dir.path(), &issuer, &[]);
    let audience = server.url().to_owned();

    // The RFC 9728 metadata names the issuer and the scopes the tools need.
    let (status, answer) = server.raw(&format!(
        "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.address()
    ));
    assert_eq!(status, 200, "{answer}");
    let metadata: Value = serde_json::from_str(answer.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(metadata["authorization_servers"], json!([issuer.url]));
    assert_eq!(metadata["resource"], json!(audience));
    assert_eq!(metadata["scopes_supported"], json!(["tickets:write"]));

    // The page's data takes no token, so it shows only the tools that need no scope.
    let (status, answer) = server.raw(&format!(
        "GET /api/info HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.address()
    ));
    assert_eq!(status, 200, "{answer}");
    let info: Value = serde_json::from_str(answer.split_once("\r\n\r\n").unwrap().1).unwrap();
    let shown: Vec<&str> = info["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(shown, ["list_tickets"], "{info}");

    // No token: 401 pointing at the metadata.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (status, head, _) = post(&server, None, &list);
    assert_eq!(status, 401);
    let challenge = format!(
        "bearer resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp\"",
        server.address()
    );
    assert!(head.to_ascii_lowercase().contains(&challenge), "{head}");

    // A good token without the scope: the tool is hidden, and calling it names the scope.
    let reader = issuer.token(
        "first",
        600,
        &json!({"aud": audience, "sub": "alice", "scope": "tickets:read"}),
    );
    assert_eq!(names(&server, &reader), ["list_tickets"]);
    let refused = call(&server, &reader, "close_ticket", &json!({"id": 7}));
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(refused.to_string().contains("`tickets:write`"), "{refused}");
    let writer = issuer.token(
        "first",
        600,
        &json!({"aud": audience, "sub": "bob", "scope": "tickets:read tickets:write"}),
    );
    assert_eq!(names(&server, &writer), ["close_ticket", "list_tickets"]);
    let closed = call(&server, &writer, "close_ticket", &json!({"id": 7}));
    // The tool acts for the token's subject (`mcp.caller()`).
    assert_eq!(closed["content"][0]["text"], "bob closed 7", "{closed}");

    // Expired (beyond the minute of clock skew), another audience, another issuer: 401.
    let expired = issuer.token("first", -300, &json!({"aud": audience, "sub": "alice"}));
    let elsewhere = issuer.token(
        "first",
        600,
        &json!({"aud": "http://other.example/mcp", "sub": "alice"}),
    );
    let foreign = issuer.token(
        "first",
        600,
        &json!({"aud": audience, "iss": "http://evil.example", "sub": "alice"}),
    );
    for (what, token, says) in [
        // Sentences, not jsonwebtoken's enum names.
        ("expired", &expired, "it expired at "),
        (
            "wrong audience",
            &elsewhere,
            "its audience is `http://other.example/mcp`",
        ),
        (
            "wrong issuer",
            &foreign,
            "it was issued by `http://evil.example`",
        ),
        ("not a JWT", &"opaque".to_owned(), "not valid"),
    ] {
        let (status, head, _) = post(&server, Some(token), &list);
        assert_eq!(status, 401, "{what}: {head}");
        assert!(head.contains(r#"error="invalid_token""#), "{what}: {head}");
        assert!(head.contains(says), "{what}: {head}");
    }

    // Key rotation: a token signed with a key the server has not seen makes it fetch the
    // JWKS again (at most once per second, so wait that out first).
    issuer.rotate("second");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let rotated = issuer.token("second", 600, &json!({"aud": audience, "sub": "alice"}));
    assert_eq!(names(&server, &rotated), ["list_tickets"]);
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn a_required_scope_is_a_403_naming_it() {
    // `--oauth-scope`.
    let mut issuer = Issuer::start();
    let dir = folder();
    let server = serve(dir.path(), &issuer, &["--oauth-scope", "mcp:use"]);
    let audience = server.url().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let without = issuer.token(
        "first",
        600,
        &json!({"aud": audience, "sub": "alice", "scope": "tickets:write"}),
    );
    let (status, head, body) = post(&server, Some(&without), &list);
    assert_eq!(status, 403, "{body}");
    assert!(
        head.contains(r#"error="insufficient_scope", scope="mcp:use""#),
        "{head}"
    );
    assert!(body.to_string().contains("`mcp:use`"), "{body}");
    let with = issuer.token(
        "first",
        600,
        &json!({"aud": audience, "sub": "alice", "scope": "mcp:use"}),
    );
    assert_eq!(names(&server, &with), ["list_tickets"]);
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn a_profile_that_requires_a_scope_refuses_callers_without_it() {
    // "Profiles may require scopes too".
    let mut issuer = Issuer::start();
    let dir = folder();
    std::fs::write(
        dir.path().join("toolsmith.toml"),
        "[profiles.support]\ntools = [\"list_tickets\"]\nscopes = [\"support\"]\n",
    )
    .unwrap();
    let server = serve(dir.path(), &issuer, &["--profile", "support"]);
    let audience = server.url().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let other = issuer.token(
        "first",
        600,
        &json!({"aud": audience, "sub": "bob", "scope": "tickets:write"}),
    );
    let (status, head, body) = post(&server, Some(&other), &list);
    assert_eq!(status, 403, "{body}");
    assert!(
        head.contains(r#"error="insufficient_scope", scope="support""#),
        "{head}"
    );
    assert!(body.to_string().contains("`support`"), "{body}");

    let agent = issuer.token(
        "first",
        600,
        &json!({"aud": audience, "sub": "alice", "scope": "support"}),
    );
    assert_eq!(names(&server, &agent), ["list_tickets"]);
    let listed = call(&server, &agent, "list_tickets", &json!({}));
    assert_eq!(listed["content"][0]["text"], "none open", "{listed}");

    // The metadata names the scope, so a client knows to ask for it.
    let (status, answer) = server.raw(&format!(
        "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.address()
    ));
    assert_eq!(status, 200, "{answer}");
    let metadata: Value = serde_json::from_str(answer.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert!(
        metadata["scopes_supported"]
            .as_array()
            .is_some_and(|scopes| scopes.contains(&json!("support"))),
        "{metadata}"
    );
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn two_tokens_cannot_see_each_others_code_sessions() {
    // A session id is scoped to the token's subject.
    let mut issuer = Issuer::start();
    let dir = folder();
    let data = tempfile::tempdir().unwrap();
    let mut command = ServeProcess::http_command(&[dir.path().to_str().unwrap()], None);
    command
        .args(["--oauth-issuer", &issuer.url, "--code-mode"])
        .env("XDG_DATA_HOME", data.path());
    let server = ServeProcess::spawn_http(command);
    let audience = server.url().to_owned();
    let alice = issuer.token("first", 600, &json!({"aud": audience, "sub": "alice"}));
    let bob = issuer.token("first", 600, &json!({"aud": audience, "sub": "bob"}));
    let run = |token: &str, code: &str| {
        call(
            &server,
            token,
            "run_code",
            &json!({"session": "shared-name", "code": code}),
        )
    };
    let defined = run(&alice, "secret = 42\nsecret");
    assert_eq!(defined["isError"], false, "{defined}");
    let again = run(&alice, "secret + 1");
    assert!(again.to_string().contains("43"), "{again}");
    let other = run(&bob, "secret");
    assert_eq!(other["isError"], true, "bob sees alice's session: {other}");
    assert!(other.to_string().contains("secret"), "{other}");
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn search_and_execute_tool_keep_to_the_callers_scopes() {
    // A tool the token's scopes do not cover is not found by
    // `tool_search`, and `execute_tool` refuses it naming the scope.
    let mut issuer = Issuer::start();
    let dir = folder();
    let server = serve(dir.path(), &issuer, &["--search", "always"]);
    let audience = server.url().to_owned();
    let reader = issuer.token("first", 600, &json!({"aud": audience, "sub": "alice"}));
    let writer = issuer.token(
        "first",
        600,
        &json!({"aud": audience, "sub": "bob", "scope": "tickets:write"}),
    );
    let search = json!({"query": "close ticket", "max_results": 5});
    let found = call(&server, &writer, "tool_search", &search).to_string();
    assert!(found.contains("close_ticket"), "{found}");
    let hidden = call(&server, &reader, "tool_search", &search).to_string();
    assert!(!hidden.contains("close_ticket"), "{hidden}");
    let refused = call(
        &server,
        &reader,
        "execute_tool",
        &json!({"name": "close_ticket", "arguments": {"id": 1}}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(refused.to_string().contains("`tickets:write`"), "{refused}");
}

/// A 2026-07-28 request that negotiated tasks, with `token`: the answer's body.
fn post_2026(
    server: &ServeProcess,
    token: &str,
    method: &str,
    name: &str,
    params: &Value,
) -> Value {
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let (status, answer) = server.post_2026(Some(token), &tasks, (method, name), params);
    assert!(
        status == 200 || answer.get("error").is_some(),
        "{status} {answer}"
    );
    answer
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn a_task_is_reached_only_with_a_token_of_its_subject() {
    // docs/tasks.md: a task made for an OAuth caller is unknown to others.
    let mut issuer = Issuer::start();
    let dir = folder();
    std::fs::write(
        dir.path().join("crunch.toml"),
        "description = \"Works for a minute.\"\ncommand = [\"sleep\", \"60\"]\ntask = \"required\"\ntimeout = \"2m\"\n",
    )
    .unwrap();
    let server = serve(dir.path(), &issuer, &[]);
    let audience = server.url().to_owned();
    let alice = issuer.token("first", 600, &json!({"aud": audience, "sub": "alice"}));
    let bob = issuer.token("first", 600, &json!({"aud": audience, "sub": "bob"}));
    let created = post_2026(
        &server,
        &alice,
        "tools/call",
        "crunch",
        &json!({"name": "crunch", "arguments": {}}),
    );
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let get = json!({"taskId": id});
    let by_alice = post_2026(&server, &alice, "tasks/get", &id, &get);
    assert_eq!(by_alice["result"]["status"], "working", "{by_alice}");
    for method in ["tasks/get", "tasks/cancel"] {
        let by_bob = post_2026(&server, &bob, method, &id, &get);
        assert_eq!(by_bob["error"]["code"], -32602, "{method}: {by_bob}");
    }
    let cancelled = post_2026(&server, &alice, "tasks/cancel", &id, &get);
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
}

/// `toolsmith serve --http` of `dir`, whose toolsmith.toml names the issuer (no
/// `--oauth-issuer`), with `extra` flags and `env` set.
fn serve_configured(dir: &std::path::Path, extra: &[&str], env: &[(&str, &str)]) -> ServeProcess {
    let mut command = ServeProcess::http_command(&[dir.to_str().unwrap()], None);
    command.args(extra).env_remove("TOOLSMITH_OAUTH_ISSUER");
    for (name, value) in env {
        command.env(name, value);
    }
    ServeProcess::spawn_http(command)
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn auth_in_toolsmith_toml_works_like_the_flags_and_limits_count_per_subject() {
    // `[auth]` sets what the --oauth-* flags set (a flag wins over
    // its key), and `[limits] calls_per_minute` counts each token subject on its own.
    let mut issuer = Issuer::start();
    let dir = folder();
    std::fs::write(
        dir.path().join("toolsmith.toml"),
        format!(
            "[auth]\nissuer = \"{}\"\naudience = \"https://wrong.example/mcp\"\n[limits]\ncalls_per_minute = 1\n",
            issuer.url
        ),
    )
    .unwrap();
    let audience = "https://tools.example/mcp";
    let server = serve_configured(dir.path(), &["--oauth-audience", audience], &[]);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (status, head, _) = post(&server, None, &list);
    assert_eq!(status, 401, "{head}");
    // The token of the flag's audience is accepted; the file's is not.
    let wrong = issuer.token(
        "first",
        3600,
        &json!({"aud": "https://wrong.example/mcp", "sub": "alice"}),
    );
    assert_eq!(post(&server, Some(&wrong), &list).0, 401);
    let alice = issuer.token(
        "first",
        3600,
        &json!({"aud": audience, "sub": "alice", "scope": "tickets:write"}),
    );
    let bob = issuer.token(
        "first",
        3600,
        &json!({"aud": audience, "sub": "bob", "scope": "tickets:write"}),
    );
    let close = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "close_ticket", "arguments": {"id": id}}})
    };
    let (status, _, body) = post(&server, Some(&alice), &close(7));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "alice closed 7");
    let (status, head, body) = post(&server, Some(&alice), &close(8));
    assert_eq!(status, 429, "{head}\n{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("the subject `alice`"), "{message}");
    // Bob has a minute of his own.
    assert_eq!(
        call(&server, &bob, "close_ticket", &json!({"id": 9}))["content"][0]["text"],
        "bob closed 9"
    );
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn opaque_tokens_are_introspected_and_the_answer_is_cached() {
    // RFC 7662 introspection for tokens that are not JWTs, with the
    // client secret read from the environment (`${VAR}` in toolsmith.toml).
    let mut issuer = Issuer::start();
    let dir = folder();
    std::fs::write(
        dir.path().join("toolsmith.toml"),
        format!(
            "[auth]\nissuer = \"{0}\"\nintrospection_url = \"{0}/introspect\"\nclient_id = \"toolsmith\"\nclient_secret = \"${{TOOLSMITH_TEST_CLIENT_SECRET}}\"\n",
            issuer.url
        ),
    )
    .unwrap();
    let server = serve_configured(
        dir.path(),
        &[],
        &[("TOOLSMITH_TEST_CLIENT_SECRET", "s3cret")],
    );
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    issuer.ask(
        &json!({"introspection": {"client": "toolsmith:s3cret", "answer": {
            "active": true, "sub": "carol", "scope": "tickets:write", "iss": issuer.url,
            "aud": server.url(), "exp": exp, "client_id": "app"
        }}}),
    );
    assert_eq!(
        call(&server, "opaque-token-1", "close_ticket", &json!({"id": 3}))["content"][0]["text"],
        "carol closed 3"
    );
    assert_eq!(
        names(&server, "opaque-token-1"),
        ["close_ticket", "list_tickets"]
    );
    // Answered from the cache: the issuer was asked once.
    assert_eq!(issuer.ask(&json!({"introspections": true}))["count"], 1);

    // An inactive token is refused as invalid.
    issuer.ask(
        &json!({"introspection": {"client": "toolsmith:s3cret", "answer": {"active": false}}}),
    );
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (status, head, _) = post(&server, Some("opaque-token-2"), &list);
    assert_eq!(status, 401, "{head}");
    assert!(head.contains("not active"), "{head}");

    // Credentials the issuer does not accept: 401 that says what the issuer answered.
    issuer
        .ask(&json!({"introspection": {"client": "toolsmith:other", "answer": {"active": true}}}));
    let (status, head, _) = post(&server, Some("opaque-token-3"), &list);
    assert_eq!(status, 401, "{head}");
    assert!(head.contains("client_id"), "{head}");
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn introspection_is_configured_by_flags_too() {
    // `--oauth-introspection-url`, `--oauth-client-id` and the secret
    // from TOOLSMITH_OAUTH_CLIENT_SECRET set what `[auth]` sets.
    let mut issuer = Issuer::start();
    let dir = folder();
    let introspect = format!("{}/introspect", issuer.url);
    let server = serve_configured(
        dir.path(),
        &[
            "--oauth-issuer",
            &issuer.url,
            "--oauth-introspection-url",
            &introspect,
            "--oauth-client-id",
            "gateway",
        ],
        &[("TOOLSMITH_OAUTH_CLIENT_SECRET", "flag-secret")],
    );
    issuer.ask(
        &json!({"introspection": {"client": "gateway:flag-secret", "answer": {
            "active": true, "sub": "erin", "scope": "tickets:write"
        }}}),
    );
    assert_eq!(
        call(&server, "opaque-token-9", "close_ticket", &json!({"id": 4}))["content"][0]["text"],
        "erin closed 4"
    );

    // A client id without a secret is refused at start, saying what is missing.
    let mut command = ServeProcess::http_command(&[dir.path().to_str().unwrap()], None);
    command
        .args([
            "--oauth-issuer",
            &issuer.url,
            "--oauth-introspection-url",
            &introspect,
        ])
        .args(["--oauth-client-id", "gateway"])
        .env_remove("TOOLSMITH_OAUTH_CLIENT_SECRET");
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("a client id and a client secret")
            && stderr.contains("TOOLSMITH_OAUTH_CLIENT_SECRET"),
        "{stderr}"
    );
}

#[test]
#[ignore = "needs oauth2-mock-server (npm ci --prefix .ci/oauth) and the Python SDK in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn the_python_sdk_client_calls_with_a_bearer_token() {
    // The official Python SDK client calls with a bearer token, as users' agents do.
    let mut issuer = Issuer::start();
    let python = crate::gateway_clients::python_sdk();
    let dir = folder();
    let server = serve(dir.path(), &issuer, &[]);
    let audience = server.url().to_owned();
    let client = |token: &str, calls: &[&str]| -> Value {
        let output = Command::new(&python)
            .arg(workspace().join("crates/toolsmith/tests/it/oauth/py_bearer.py"))
            .arg(server.url())
            .arg(token)
            .args(calls)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    };

    let writer = issuer.token(
        "first",
        600,
        &json!({"aud": audience, "sub": "carol", "scope": "tickets:write"}),
    );
    let seen = client(&writer, &["close_ticket", r#"{"id": 7}"#]);
    assert_eq!(
        seen["tools"],
        json!(["close_ticket", "list_tickets"]),
        "{seen}"
    );
    assert_eq!(
        seen["calls"]["close_ticket"]["content"][0]["text"], "carol closed 7",
        "the tool acted for the token's subject: {seen}"
    );

    let reader = issuer.token(
        "first",
        600,
        &json!({"aud": audience, "sub": "dave", "scope": "tickets:read"}),
    );
    let seen = client(&reader, &["list_tickets", "{}"]);
    assert_eq!(seen["tools"], json!(["list_tickets"]), "{seen}");
    assert_eq!(
        seen["calls"]["list_tickets"]["content"][0]["text"],
        "none open"
    );
}
