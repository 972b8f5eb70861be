//! An upstream that fails ("Faults", and the gaps its audit found): one that
//! cannot start has its tools listed as unavailable from the last time it listed them, and
//! calls to them answer an `isError` naming it; one that keeps crashing soon after it
//! starts is started again with backoff, not on every call; an answer Toolsmith cannot
//! parse fails its call at once. The upstream is `scripted_upstream/server.py`, a server on
//! Python's standard library that misbehaves on purpose.

use std::time::Instant;

use serde_json::{Value, json};

use crate::mcp_client::{McpClient, text};
use crate::serve_process::{PATIENCE, ServeProcess};
use crate::toolsmith;
use crate::upstreams::{Fixture, scripted_upstream};

/// `[upstream.NAME]` running the scripted server with `args`.
fn scripted(name: &str, args: &[&str]) -> String {
    let mut command = vec!["python3".to_owned(), scripted_upstream()];
    command.extend(args.iter().map(|arg| (*arg).to_owned()));
    format!("[upstream.{name}]\ncommand = {command:?}\n")
}

/// "its tools listed as unavailable in `toolsmith list` and calls to them
/// get an `isError` naming the upstream".
#[test]
fn an_upstream_that_stops_starting_serves_its_last_tools_as_unavailable() {
    let fixture = Fixture::new("");
    let token = fixture.path("token");
    // Starts only while `token` exists, as a server whose credentials went away.
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "[upstream.flaky]\ncommand = [\"sh\", \"-c\", \"test -f \\\"$0\\\" || {{ echo 'the token file is gone' >&2; exit 3; }}; exec python3 \\\"$1\\\"\", {:?}, {:?}]\n",
            token.display().to_string(),
            scripted_upstream()
        ),
    );
    std::fs::write(&token, "secret").unwrap();
    let listed = crate::json_output(toolsmith().args(["list", "--json", &fixture.outer()]));
    assert!(listed.to_string().contains("flaky_echo"), "{listed}");
    assert!(listed.get("unavailable").is_none(), "{listed}");

    std::fs::remove_file(&token).unwrap();
    let output = toolsmith()
        .args(["list", &fixture.outer()])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        stdout.contains("flaky_echo (unavailable)"),
        "{stdout}{stderr}"
    );
    assert!(
        stdout.contains("own") && !stdout.contains("own (unavailable)"),
        "{stdout}"
    );
    assert!(stderr.contains("the token file is gone"), "{stderr}");
    assert!(
        stderr.contains("listed from the last time it ran"),
        "{stderr}"
    );
    let listed: Value = serde_json::from_slice(
        &toolsmith()
            .args(["list", "--json", &fixture.outer()])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let why = listed["unavailable"]["flaky_echo"]
        .as_str()
        .unwrap_or_default();
    assert!(why.starts_with("upstream `flaky`"), "{listed}");
    assert!(listed["unavailable"].get("own").is_none(), "{listed}");

    let client = McpClient::stdio(&[&fixture.outer()]);
    assert!(client.tool_names().contains(&"flaky_echo".to_owned()));
    let failed = client.call("flaky_echo", &json!({"text": "hi"}));
    assert_eq!(failed.is_error, Some(true), "{failed:?}");
    assert!(
        text(&failed).contains("upstream `flaky`"),
        "{}",
        text(&failed)
    );

    // Once it can start again, a call starts it (after the backoff) and is answered.
    std::fs::write(&token, "secret").unwrap();
    let deadline = Instant::now() + PATIENCE;
    let answered = loop {
        let result = client.call("flaky_echo", &json!({"text": "back"}));
        if result.is_error != Some(true) {
            break result;
        }
        assert!(
            Instant::now() < deadline,
            "it never started again: {}",
            text(&result)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(text(&answered), "back");
}

/// An upstream that never listed its tools has none to list, and a call
/// under its prefix is still an unknown tool (-32602), whose message names the upstream.
#[test]
fn a_call_under_the_prefix_of_an_upstream_that_never_started_names_it() {
    let fixture = Fixture::new(
        "[upstream.broken]\ncommand = [\"sh\", \"-c\", \"echo cannot find the token >&2; exit 3\"]\n",
    );
    let mut server = ServeProcess::stdio(&[&fixture.outer()]);
    server.initialize();
    let answer = server.request(
        "tools/call",
        &json!({"name": "broken_create_issue", "arguments": {}}),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("unknown tool `broken_create_issue`"),
        "{message}"
    );
    assert!(message.contains("upstream `broken`"), "{message}");
    assert!(message.contains("cannot find the token"), "{message}");

    // A name under no unavailable upstream's prefix is only unknown.
    let answer = server.request("tools/call", &json!({"name": "ownn", "arguments": {}}));
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(!message.contains("upstream"), "{message}");
    assert!(message.contains("did you mean `own`"), "{message}");
}

/// An upstream that starts and then keeps crashing is started again with
/// backoff, like one that cannot start, and not on every call. Each start of the server
/// adds a line to a file; each call makes it exit.
#[test]
fn a_crash_looping_upstream_is_not_started_again_on_every_call() {
    let fixture = Fixture::new("");
    let starts = fixture.path("starts");
    fixture.write(
        "outer/toolsmith.toml",
        &scripted("looping", &["--starts", starts.to_str().unwrap()]),
    );
    let client = McpClient::stdio(&[&fixture.outer()]);
    let calls = 12;
    let mut backing_off = 0;
    for _ in 0..calls {
        let result = client.call("looping_crash", &json!({}));
        assert_eq!(result.is_error, Some(true), "{result:?}");
        let said = text(&result);
        assert!(said.contains("upstream `looping`"), "{said}");
        if said.contains("Toolsmith starts it again in") {
            assert!(said.contains("times in a row"), "{said}");
            backing_off += 1;
        }
    }
    let started = std::fs::read_to_string(&starts).unwrap().lines().count();
    assert!(
        started < calls,
        "{started} starts for {calls} calls: restarted on every call"
    );
    assert!(backing_off > 0, "no call was told of the backoff");
}

/// An answer to a call that is not JSON, or not a tool result, fails that
/// call at once with an `isError` naming the upstream, long before its timeout (ten
/// minutes here, past the test's patience); a stray line that answers nothing is passed
/// over, as MCP's SDKs do.
#[test]
fn an_answer_toolsmith_cannot_read_fails_its_call_at_once() {
    let fixture = Fixture::new("");
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "[defaults]\ntimeout = \"10m\"\n\n{}",
            scripted("scripted", &[])
        ),
    );
    let mut server = ServeProcess::stdio(&[&fixture.outer()]);
    server.initialize();
    let garbled = server.call("scripted_garbled", &json!({}));
    assert_eq!(garbled["isError"], true, "{garbled}");
    let said = garbled["content"][0]["text"].as_str().unwrap();
    assert!(said.starts_with("upstream `scripted`"), "{said}");
    assert!(said.contains("not JSON"), "{said}");

    let mangled = server.call("scripted_mangled", &json!({}));
    assert_eq!(mangled["isError"], true, "{mangled}");
    let said = mangled["content"][0]["text"].as_str().unwrap();
    assert!(said.starts_with("upstream `scripted`"), "{said}");
    assert!(said.contains("cannot read"), "{said}");

    let noisy = server.call_text("scripted_noisy", &json!({}));
    assert_eq!(noisy, "done after the noise");
    // The upstream still serves.
    assert_eq!(
        server.call_text("scripted_echo", &json!({"text": "still here"})),
        "still here"
    );
}
