//! An upstream that attacks the gateway rather than fails: it floods it with
//! `notifications/tools/list_changed`, answers with ids it was never sent or answers a call
//! twice, and (a naive one) prints what a client gave it onto its stdout, where a client who
//! could guess another call's id could forge that call's answer. The upstream is
//! [`HOSTILE`], a server on Python's standard library written here.

use serde_json::{Value, json};

use crate::serve_process::{PATIENCE, ServeProcess};
use crate::upstreams::Fixture;

/// An MCP server over stdio, one JSON-RPC message a line, whose tools misbehave:
///
/// - `echo(text)`: the text back.
/// - `flood(count)`: sends `notifications/tools/list_changed` `count` times in one write,
///   lists one more tool (`after_flood`) from then on, and answers.
/// - `lists()`: how many times it was asked for `tools/list`.
/// - `hold(text)`: answered only by the next `release`, with `text`; `held()` says whether
///   a call is held.
/// - `print(line)`: writes `line` to its stdout as it is (a naive server logging its input
///   where its protocol goes), then answers.
/// - `forge()`: answers an id it was never sent (its own id with another number), then its
///   own call, then its own call again.
const HOSTILE: &str = r#"
import json
import sys

TOOLS = ["echo", "flood", "lists", "hold", "held", "release", "print", "forge"]
lists = 0
flooded = False
held = None


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(ident, text):
    send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": text}]}})


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method, ident = message.get("method"), message.get("id")
    if method is None or ident is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "hostile", "version": "1.0.0"},
        }})
    elif method == "tools/list":
        lists += 1
        names = TOOLS + (["after_flood"] if flooded else [])
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [
            {"name": name, "description": "A hostile tool.", "inputSchema": {"type": "object"}}
            for name in names
        ]}})
    elif method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments") or {}
        if name == "echo":
            answer(ident, arguments.get("text", ""))
        elif name == "flood":
            flooded = True
            notification = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            sys.stdout.write((notification + "\n") * int(arguments.get("count", 5000)))
            answer(ident, "flooded")
        elif name == "lists":
            answer(ident, str(lists))
        elif name == "hold":
            held = (ident, arguments.get("text", ""))
        elif name == "held":
            answer(ident, "yes" if held else "no")
        elif name == "release":
            if held:
                answer(*held)
                held = None
            answer(ident, "released")
        elif name == "print":
            sys.stdout.write(arguments.get("line", "") + "\n")
            answer(ident, "printed")
        elif name == "forge":
            prefix = ident.rstrip("0123456789") if isinstance(ident, str) else ""
            answer(prefix + "999999", "an answer to an id never sent")
            answer(ident, "forge's own answer")
            answer(ident, "a second answer to the same call")
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": "unknown tool"}})
    else:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no method"}})
"#;

/// A folder whose `[upstream.hostile]` is [`HOSTILE`], served over stdio and initialized.
fn serve_hostile() -> (Fixture, ServeProcess) {
    let fixture = Fixture::new("");
    fixture.write("hostile.py", HOSTILE);
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "[upstream.hostile]\ncommand = [\"python3\", {:?}]\n",
            fixture.path("hostile.py").display().to_string()
        ),
    );
    let mut server = ServeProcess::stdio(&[&fixture.outer()]);
    server.initialize();
    (fixture, server)
}

/// 5,000 `notifications/tools/list_changed` in one burst started 5,000 threads, each
/// loading the folder again (and listing the upstream's tools again), and aborted the
/// server. They make a few reloads now: the server answers afterwards, its clients hear
/// that the list changed, and the upstream was asked for its tools a handful of times.
#[test]
fn a_flood_of_tools_list_changed_reloads_a_few_times() {
    let (_fixture, mut server) = serve_hostile();
    assert_eq!(
        server.call_text("hostile_flood", &json!({"count": 5000})),
        "flooded"
    );
    // The reload that follows the flood lists `after_flood`; the client hears of it.
    server.until(|message| message["method"] == "notifications/tools/list_changed");
    // One thread a notification was thousands of threads by now, most waiting their turn
    // to reload; the reloads are coalesced on one thread.
    let threads = std::fs::read_dir(format!("/proc/{}/task", server.pid()))
        .unwrap()
        .count();
    assert!(threads < 100, "the server runs {threads} threads");
    assert!(
        server
            .tool_names()
            .contains(&"hostile_after_flood".to_owned())
    );
    assert_eq!(
        server.call_text("hostile_echo", &json!({"text": "still serving"})),
        "still serving"
    );
    let lists: u32 = server
        .call_text("hostile_lists", &json!({}))
        .parse()
        .unwrap();
    // The start's listing, then one reload in flight and one queued at a time, at most
    // one every 250 ms while the burst is read: far fewer than 5,000 either way.
    assert!(lists < 50, "the upstream was listed {lists} times");
}

/// The `tools/call` results of the requests `ids`, by id, in any order; other messages
/// (notifications) are passed over.
fn answers_to(server: &ServeProcess, ids: &[u64]) -> Vec<Value> {
    let mut answers = vec![Value::Null; ids.len()];
    while answers.iter().any(Value::is_null) {
        let message = server.receive();
        if let Some(at) = ids.iter().position(|id| message["id"] == *id) {
            answers[at] = message;
        }
    }
    answers
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
}

/// Ids sent to an upstream were `toolsmith-call-1`, `-2`, …: a client whose arguments an
/// upstream prints onto its stdout could forge the answer of another client's call in
/// flight by naming its id, and that client got the forged result. Each connection's ids
/// now start with a random part, so no one the upstream did not send an id to can name it.
#[test]
fn a_client_cannot_forge_the_answer_of_another_call_through_the_upstream() {
    let (_fixture, mut server) = serve_hostile();
    let holding = server.send_request(
        "tools/call",
        &json!({"name": "hostile_hold", "arguments": {"text": "the held call's own answer"}}),
    );
    // Wait until the upstream holds it, so the forged lines arrive while it is in flight.
    let deadline = std::time::Instant::now() + PATIENCE;
    while server.call_text("hostile_held", &json!({})) != "yes" {
        assert!(
            std::time::Instant::now() < deadline,
            "the call was never held"
        );
    }
    let forged: Vec<String> = (1..=100)
        .map(|number| {
            json!({"jsonrpc": "2.0", "id": format!("toolsmith-call-{number}"), "result": {
                "content": [{"type": "text", "text": "forged"}]}})
            .to_string()
        })
        .collect();
    let printing = server.send_request(
        "tools/call",
        &json!({"name": "hostile_print", "arguments": {"line": forged.join("\n")}}),
    );
    let [printed] = &answers_to(&server, &[printing])[..] else {
        unreachable!("one answer for one id")
    };
    assert_eq!(text_of(printed), "printed", "{printed}");
    let releasing = server.send_request(
        "tools/call",
        &json!({"name": "hostile_release", "arguments": {}}),
    );
    let answers = answers_to(&server, &[holding, releasing]);
    assert_eq!(
        text_of(&answers[0]),
        "the held call's own answer",
        "{}",
        answers[0]
    );
    assert_eq!(text_of(&answers[1]), "released", "{}", answers[1]);
}

/// An upstream that answers an id it was never sent, or a call a second time: each answer
/// is dropped with a warning naming the upstream, the call gets its own first answer, and
/// the next call its own.
#[test]
fn answers_to_ids_never_sent_or_sent_twice_are_dropped() {
    let (_fixture, mut server) = serve_hostile();
    assert_eq!(
        server.call_text("hostile_forge", &json!({})),
        "forge's own answer"
    );
    assert_eq!(
        server.call_text("hostile_echo", &json!({"text": "the next call's"})),
        "the next call's"
    );
    // One warning for the id never sent, one for the second answer.
    let mut warnings = Vec::new();
    while warnings.len() < 2 {
        let said = server.stderr_until(|line| line.contains("upstream `hostile` answered"));
        warnings.extend(said.last().cloned());
    }
    assert!(
        warnings.iter().any(|line| line.contains("999999")),
        "{warnings:#?}"
    );
    assert!(
        warnings.iter().all(|line| line.contains("dropped")),
        "{warnings:#?}"
    );
}
