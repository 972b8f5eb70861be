//! Replicas sharing their sessions through Redis, behind nginx round-robin (issue 19, items
//! 4 and 5): Debian's `redis-server` and `nginx`, started on free loopback ports with
//! their files in a temp dir (`services.rs`), and two `toolsmith serve --http --state redis://…` processes.
//! nginx runs `docs/deploy/nginx.conf`, the file docs/deploy.md shows, so the two agree.
//! Without both programs these tests skip, except under `TOOLSMITH_REQUIRE_REDIS=1` (set by
//! `.ci/run`), which makes them fail.

use std::collections::BTreeSet;

use serde_json::json;

use crate::mcp_client::{McpClient, text};
use crate::services::{free_port, nginx, redis, replica, replicas_that_answered, services_present};

const ECHO: &str = "def echo(text: str) -> str:\n    \"\"\"Echo the text back.\n\n    Args:\n        text: What to echo.\n    \"\"\"\n    return text\n\nmcp.tool(echo)\n";

#[test]
fn one_session_is_served_by_both_replicas_and_survives_losing_one() {
    if !services_present() {
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let tools = crate::folder(&[("echo.star", ECHO)]);
    let redis_port = free_port();
    let redis = redis(temp.path(), redis_port);
    let state = format!("redis://127.0.0.1:{redis_port}/0");
    let a = replica(tools.path(), &state, "replica-a");
    let b = replica(tools.path(), &state, "replica-b");
    let balancer = free_port();
    let _nginx = nginx(temp.path(), balancer, &[a.address(), b.address()]);

    let client = McpClient::http(&format!("http://127.0.0.1:{balancer}/mcp"));
    for call in 0..50 {
        let said = format!("call {call}");
        assert_eq!(text(&client.call("echo", &json!({"text": said}))), said);
    }
    // Round-robin sent the one session's requests to both, and both answered them: before
    // the shared state, the second replica answered "Session not found" (issue 19, item 4).
    let answered = replicas_that_answered(temp.path());
    assert_eq!(
        answered,
        BTreeSet::from(["replica-a".to_owned(), "replica-b".to_owned()]),
        "the replicas that answered POSTs"
    );

    // One replica gone: the session goes on through the other, every call answered once.
    drop(a);
    for call in 0..20 {
        let said = format!("after {call}");
        let answer = client.try_call("echo", &json!({"text": said}));
        assert_eq!(answer.map(|result| text(&result)), Ok(said));
    }

    // Redis gone: a new session is refused clearly, the open one keeps working.
    drop(redis);
    let (status, head, body) = b.post(
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(status, 503, "{head}\n{body}");
    assert!(body.contains("shared state"), "{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("toolsmith-replica: replica-b"),
        "{head}"
    );
    assert_eq!(
        text(&client.call("echo", &json!({"text": "still here"}))),
        "still here"
    );
}
