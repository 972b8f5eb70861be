//! Memory abuse: `toolsmith serve` under a 4 GB address-space
//! limit, driven over real stdio pipes. Scripts that would ask for more memory than the
//! process has get an `isError` answer, and the server keeps answering; before the guards
//! such calls aborted the whole process (`memory allocation of … bytes failed`).

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::folder;
use crate::serve_process::ServeProcess;

const TOOLS: &str = r#"
def big():
    # Built in two steps: repeating one character a million times is slow in a debug build.
    return "z" * 1024 * 1024

def encode_shared() -> str:
    return json.encode([big()] * 5000)

def str_shared() -> int:
    return len(str([big()] * 5000))

def percent_shared() -> int:
    c = big()
    return len(("%s" * 5000) % tuple([c] * 5000))

def return_list() -> list:
    return [big()] * 5000

def return_dict() -> dict:
    c = big()
    return {str(i): c for i in range(5000)}

def join_shared() -> int:
    return len("".join([big()] * 5000))

def replace_grows() -> int:
    s = "a" * 1024 * 1024 * 60
    return len(s.replace("a", "b" * 100))

def grow() -> int:
    chunk = "y" * 1024 * 1024
    parts = []
    for i in range(100):
        parts.append(chunk + str(i))
    for i in range(100000):
        pass
    return len(parts)

def garbage() -> int:
    # 4,000 strings of 100 KiB made and dropped at once: 400 MiB of garbage, little of it live.
    s = "g" * 1024 * 100
    n = 0
    for i in range(4000):
        t = s + str(i)
        n += len(t)
    return n

def ping() -> str:
    return "pong"

mcp.tool(encode_shared)
mcp.tool(str_shared)
mcp.tool(percent_shared)
mcp.tool(return_list)
mcp.tool(return_dict)
mcp.tool(join_shared)
mcp.tool(replace_grows)
mcp.tool(grow)
mcp.tool(garbage)
mcp.tool(ping)
"#;

/// `toolsmith serve DIR` over stdio with `ulimit -v 4000000`, initialized.
fn limited(dir: &std::path::Path) -> ServeProcess {
    limited_with(dir, &[])
}

/// Like [`limited`], with environment variables set.
fn limited_with(dir: &std::path::Path, env: &[(&str, &str)]) -> ServeProcess {
    let mut command = Command::new("sh");
    command
        .args(["-c", "ulimit -v 4000000 && exec \"$0\" serve \"$1\""])
        .arg(insta_cmd::get_cargo_bin("toolsmith"))
        .arg(dir)
        .env("NO_COLOR", "1")
        .env_remove("TOOLSMITH_LOG")
        .env_remove("TOOLSMITH_MEMORY_BUDGET")
        .env_remove("TOOLSMITH_MAX_RESULT_SIZE")
        .env_remove("TOOLSMITH_HEAP_LIMIT")
        .envs(env.iter().copied());
    // These calls work near the address-space limit: more time than the default.
    let mut server = ServeProcess::spawn(command).with_patience(Duration::from_secs(45));
    server.initialize();
    server
}

/// `ping` still answers.
fn still_answers(server: &mut ServeProcess) {
    assert_eq!(server.call_text("ping", &json!({})), "pong");
}

fn shown(result: &Value) -> String {
    result.to_string().chars().take(300).collect()
}

// Regression test: `"".join`, `json.encode`, `str` and `%` of
// `[c] * 5000`, returning it (or a dict of 5000 such values), and `s.replace("a", "b" * 100)`
// on 60 MiB asked for gigabytes in one native step.
#[test]
fn operations_that_multiply_memory_fail_the_call_not_the_server() {
    let dir = folder(&[("tools.star", TOOLS)]);
    let mut server = limited(dir.path());
    for tool in [
        "join_shared",
        "replace_grows",
        "encode_shared",
        "str_shared",
        "percent_shared",
        "return_list",
        "return_dict",
    ] {
        let result = server.call(tool, &json!({}));
        assert_eq!(result["isError"], true, "{tool}: {}", shown(&result));
        still_answers(&mut server);
    }
}

// Regression test: sixteen concurrent calls that each stay under the
// per-call heap limit (100 MiB of strings) need more than the process may have; they wait for the
// server-wide memory budget or fail as busy instead of aborting the server.
#[test]
fn concurrent_calls_share_the_memory_budget() {
    let dir = folder(&[("tools.star", TOOLS)]);
    let mut server = limited(dir.path());
    for _ in 1..=16 {
        server.send_request("tools/call", &json!({"name": "grow", "arguments": {}}));
    }
    let mut answered = 0;
    for _ in 1..=16 {
        let result = server.receive()["result"].clone();
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text == "100" || text.contains("the server is busy"),
            "{}",
            shown(&result)
        );
        answered += usize::from(text == "100");
    }
    // All sixteen used to hold a sixteenth of the budget, wait for more and fail together;
    // the call that started first now waits longest, so it (at least) finishes.
    assert!(answered >= 1, "every call failed as busy");
    still_answers(&mut server);
}

// Regression test: the per-call heap limit counts garbage (starlark
// collects it only between a module's top-level statements), so at 256 MiB a loop that
// makes and drops a value per iteration failed with "heap limit exceeded" although little of
// it was live. The limit is now 1 GiB (at most the memory budget) and can be set.
#[test]
fn a_loop_that_makes_garbage_is_not_stopped_by_the_heap_limit() {
    let dir = folder(&[("tools.star", TOOLS)]);
    let mut server = limited(dir.path());
    let result = server.call("garbage", &json!({}));
    assert_eq!(
        result["content"][0]["text"],
        "409614890",
        "{}",
        shown(&result)
    );

    let mut strict = limited_with(dir.path(), &[("TOOLSMITH_HEAP_LIMIT", "64MiB")]);
    let refused = strict.call("garbage", &json!({}));
    let text = refused["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(refused["isError"], true, "{}", shown(&refused));
    assert!(
        text.contains("heap limit exceeded: the call allocated more than 64 MiB")
            && text.contains("TOOLSMITH_HEAP_LIMIT"),
        "{text}"
    );
    still_answers(&mut strict);
}

const REPEATING: &str = r#"
def mib():
    return "z" * 1024 * 1024

def repeat_string() -> int:
    s = mib()
    s *= 3000
    return len(s)

def repeat_list() -> int:
    l = [0] * 1000 * 1000
    l *= 3000
    return len(l)

def join_in_f_string() -> int:
    e = mib()
    l = [""] * 3000
    return len(f"{e.join(l)}")

def grow_an_item() -> int:
    d = {"k": ""}
    s = mib()
    for i in range(3000):
        d["k"] += s
    return len(d["k"])

def parenthesised() -> str:
    return ("-").join(["a", str(len(("a" * 5).replace("a", "b")))])

def hold() -> int:
    parts = []
    for i in range(10000000):
        parts.append([i])
    return len(parts)

def ping() -> str:
    return "pong"

mcp.tool(repeat_string)
mcp.tool(repeat_list)
mcp.tool(join_in_f_string)
mcp.tool(grow_an_item)
mcp.tool(parenthesised)
mcp.tool(hold)
mcp.tool(ping)
"#;

/// The lines of [`REPEATING`]'s tools, as code-mode programs.
const PROGRAMS: [&str; 4] = [
    "s = 'z' * 1024 * 1024\ns *= 3000\nlen(s)",
    "l = [0] * 1000 * 1000\nl *= 3000\nlen(l)",
    "e = 'z' * 1024 * 1024\nl = [''] * 3000\nlen(f'{e.join(l)}')",
    "d = {'k': ''}\ns = 'z' * 1024 * 1024\nfor i in range(3000):\n    d['k'] += s\nlen(d['k'])",
];

// Regression test: `s *= 3000` on a 1 MiB string, `l *= 3000` on a 1M-item list and
// `f"{e.join(l)}"` aborted the server ("memory allocation of … failed"), in a tool file and in
// code mode alike, and `d["k"] += s` in a loop grew far past the memory budget; each is now an
// `isError` for that call, the server answers the next one, and a parenthesised receiver
// (`("-").join(x)`) no longer keeps the file from loading.
#[test]
fn repetition_and_augmented_assignment_fail_the_call_not_the_server() {
    let dir = folder(&[
        ("tools.star", REPEATING),
        ("toolsmith.toml", "[evaluator]\n"),
    ]);
    let data = tempfile::tempdir().expect("a data folder");
    let mut server = limited_with(
        dir.path(),
        &[("XDG_DATA_HOME", data.path().to_str().expect("a UTF-8 path"))],
    );
    assert_eq!(server.call_text("parenthesised", &json!({})), "a-5");
    for tool in [
        "repeat_string",
        "repeat_list",
        "join_in_f_string",
        "grow_an_item",
    ] {
        let result = server.call(tool, &json!({}));
        assert_eq!(result["isError"], true, "{tool}: {}", shown(&result));
        still_answers(&mut server);
    }
    for code in PROGRAMS {
        let result = server.call("run_code", &json!({"code": code}));
        assert_eq!(result["isError"], true, "{code}: {}", shown(&result));
        still_answers(&mut server);
    }
}

// Regression test: a call running alone that outgrew the memory budget was told "the server
// is busy: running scripts hold its whole memory budget", as if other calls were to blame.
#[test]
fn a_call_alone_over_the_budget_is_told_it_went_over() {
    let dir = folder(&[("tools.star", REPEATING)]);
    let mut server = limited_with(dir.path(), &[("TOOLSMITH_MEMORY_BUDGET", "64MiB")]);
    let result = server.call("hold", &json!({}));
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(result["isError"], true, "{}", shown(&result));
    assert!(
        text.contains("this call went over the memory budget")
            && text.contains("64 MiB")
            && text.contains("TOOLSMITH_MEMORY_BUDGET")
            && !text.contains("busy"),
        "{text}"
    );
    still_answers(&mut server);
}
