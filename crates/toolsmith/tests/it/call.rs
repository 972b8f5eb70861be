//! `toolsmith call`.

use serde_json::Value;

use crate::{folder, json_output, snapshot, toolsmith};

#[test]
fn prints_text_content() {
    let mut command = toolsmith();
    command.args(["call", "examples/tools", "hello", "name=Alice", "times=2"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn json_prints_the_call_tool_result() {
    let mut command = toolsmith();
    command.args([
        "call",
        "examples/tools",
        "process_list",
        "--json",
        "--args",
        r#"{"numbers": [1, 2, 3], "operation": "average"}"#,
    ]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn error_result_exits_one() {
    let mut command = toolsmith();
    command.args(["call", "examples/tools", "forecast_get", "city=Atlantis"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn invalid_arguments_list_every_violation() {
    let mut command = toolsmith();
    command.args([
        "call",
        "examples/tools",
        "calendar_month",
        "year=0",
        "month=13",
        "colour=red",
    ]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn unknown_tool_exits_two_with_a_suggestion() {
    let mut command = toolsmith();
    command.args(["call", "examples/tools", "helo"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

// What caused an error is a `Caused by:` line of its own, between the
// error and its hints, not flattened into the message.
#[test]
fn invalid_args_json_names_its_cause() {
    let mut command = toolsmith();
    command.args(["call", "examples/tools", "hello", "--args", "{"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn string_values_are_coerced_and_json_values_kept() {
    let result = json_output(toolsmith().args([
        "call",
        "examples/tools",
        "process_list",
        "numbers=[2, 4]",
        "operation=sum",
        "--json",
    ]));
    let text = result["content"][0]["text"].as_str().unwrap();
    let object: Value = serde_json::from_str(text).unwrap();
    assert_eq!(object["result"], 6);
}

#[test]
fn image_results_are_summarised_on_stderr() {
    let output = toolsmith()
        .args(["call", "examples/tools", "chart_bar", "values=[1, 2]"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Bar chart of 2 bars, largest 2.\n"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("image/png"));
}

#[test]
fn runaway_script_is_stopped_near_its_timeout() {
    let dir = folder(&[(
        "spin.star",
        "def spin() -> str:\n    \"\"\"Spin forever.\"\"\"\n    for i in range(10000000):\n        for j in range(10000000):\n            pass\n    return \"done\"\n\nmcp.tool(spin, timeout = \"300ms\")\n",
    )]);
    let started = std::time::Instant::now();
    let output = toolsmith()
        .arg("call")
        .arg(dir.path())
        .arg("spin")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The words the server answers with too: the tool stops itself at its deadline, the
    // same deadline on both paths.
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "tool `spin` timed out after 300ms\n"
    );
    // Generous bound: this only guards against a call that never stops.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn no_tool_given_for_a_folder_explains_usage() {
    let dir = folder(&[]);
    let mut command = toolsmith();
    command.arg("call").arg(dir.path());
    snapshot!(dir.path(), command);
}

const NOTES: &str = r#"
def notes_read(name: str) -> str:
    """Returns a note."""
    return mcp.read_file("notes/" + name)

mcp.tool(notes_read, permissions = {"fs.read": ["notes/"]})

def notes_add(name: str, text: str) -> list:
    """Adds a note; returns the names of all notes."""
    mcp.write_file("notes/" + name, text)
    return mcp.list_dir("notes")

mcp.tool(notes_add, permissions = {"fs.read": ["notes/"], "fs.write": ["notes/"]})

def notes_key() -> str:
    """Returns the notes service key."""
    return mcp.getenv("NOTES_KEY", "none")

mcp.tool(notes_key, permissions = {"env": ["NOTES_KEY"]})

def notes_leak() -> str:
    """Returns a variable it was not granted."""
    return mcp.getenv("NOTES_SECRET")

mcp.tool(notes_leak)
"#;

/// Runs `toolsmith call DIR TOOL ARGS…`: exit code and stdout.
fn call_in(dir: &std::path::Path, tool: &str, args: &[&str]) -> (Option<i32>, String) {
    let output = toolsmith()
        .arg("call")
        .arg(dir)
        .arg(tool)
        .args(args)
        .env("NOTES_KEY", "k-123")
        .env("NOTES_SECRET", "hunter2")
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn a_script_reaches_only_the_files_its_permissions_grant() {
    let dir = folder(&[
        ("tools.star", NOTES),
        ("notes/today.txt", "buy milk"),
        ("secret.txt", "hunter2"),
    ]);
    assert_eq!(
        call_in(dir.path(), "notes_read", &["name=today.txt"]),
        (Some(0), "buy milk\n".to_owned())
    );

    let (code, stdout) = call_in(dir.path(), "notes_read", &["name=../secret.txt"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("outside the tool's `fs.read` permission"),
        "{stdout}"
    );
    assert!(!stdout.contains("hunter2"), "{stdout}");

    let (code, stdout) = call_in(
        dir.path(),
        "notes_add",
        &["name=tomorrow.txt", "text=call mum"],
    );
    assert_eq!(
        (code, stdout.as_str()),
        (Some(0), "[\"today.txt\",\"tomorrow.txt\"]\n")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes/tomorrow.txt")).unwrap(),
        "call mum"
    );

    // Writing outside the grant leaves the file alone.
    let (code, stdout) = call_in(dir.path(), "notes_add", &["name=../secret.txt", "text=x"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("secret.txt")).unwrap(),
        "hunter2"
    );
}

#[test]
fn a_script_reads_only_the_environment_variables_its_permissions_name() {
    let dir = folder(&[("tools.star", NOTES)]);
    assert_eq!(
        call_in(dir.path(), "notes_key", &[]),
        (Some(0), "k-123\n".to_owned())
    );
    let (code, stdout) = call_in(dir.path(), "notes_leak", &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(r#"permissions = {"env": ["NOTES_SECRET"]}"#),
        "{stdout}"
    );
    assert!(!stdout.contains("hunter2"), "{stdout}");
}

/// `/old` redirects to `/echo`, `/away` to `localhost`; anything else echoes.
fn echo_server() -> u16 {
    crate::http_server::echo_server(|target, port| {
        match target.split('?').next().unwrap_or_default() {
            "/old" => Some("/echo?from=old".to_owned()),
            "/away" => Some(format!("http://localhost:{port}/echo")),
            _ => None,
        }
    })
}

#[test]
fn a_script_reaches_only_the_hosts_its_permissions_name() {
    let port = echo_server();
    let tools = format!(
        r#"
def fetch(path: str) -> dict:
    """Fetches a path of the test server."""
    response = http.get("http://127.0.0.1:{port}" + path, params = {{"q": "rain & snow"}})
    return {{"status": response.status, "type": response.headers["content-type"], "echo": response.json}}

mcp.tool(fetch, permissions = {{"net": ["127.0.0.1:{port}"]}})

def submit(city: str) -> str:
    """Posts a city to the test server."""
    return http.post("http://127.0.0.1:{port}/echo", json = {{"city": city}}).json["body"]

mcp.tool(submit, permissions = {{"net": ["127.0.0.1"]}})

def sneak() -> str:
    """Fetches without a grant."""
    return http.get("http://127.0.0.1:{port}/echo").text

mcp.tool(sneak)
"#
    );
    let dir = folder(&[("tools.star", &tools)]);
    let (code, stdout) = call_in(dir.path(), "fetch", &["path=/echo"]);
    assert_eq!(code, Some(0), "{stdout}");
    let fetched: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(fetched["status"], 200);
    assert_eq!(fetched["type"], "application/json");
    assert_eq!(
        fetched["echo"]["request"],
        "GET /echo?q=rain%20%26%20snow HTTP/1.1"
    );

    // A redirect on the same host is followed.
    let (code, stdout) = call_in(dir.path(), "fetch", &["path=/old"]);
    assert_eq!(code, Some(0), "{stdout}");
    let fetched: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(fetched["echo"]["request"], "GET /echo?from=old HTTP/1.1");

    // A redirect to a host the permission does not name is refused.
    let (code, stdout) = call_in(dir.path(), "fetch", &["path=/away"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!("`localhost:{port}` is not among the hosts")),
        "{stdout}"
    );

    assert_eq!(
        call_in(dir.path(), "submit", &["city=Oslo"]),
        (Some(0), "{\"city\":\"Oslo\"}\n".to_owned())
    );

    let (code, stdout) = call_in(dir.path(), "sneak", &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(r#"permissions = {{"net": ["127.0.0.1:{port}"]}}"#)),
        "{stdout}"
    );
}

/// A host granted by name, or by `*`, is reached at public addresses only: the machine
/// itself and its networks need a grant that names the address (or `localhost`).
#[test]
fn a_host_granted_by_name_does_not_reach_the_machine_itself() {
    let port = echo_server();
    let tools = format!(
        r#"
def anywhere(url: str) -> str:
    """Fetches any URL."""
    return http.get(url).text

mcp.tool(anywhere, permissions = {{"net": ["*"]}})

def local(url: str) -> str:
    """Fetches from this machine."""
    return http.get(url).json["request"]

mcp.tool(local, permissions = {{"net": ["localhost:{port}"]}})
"#
    );
    let dir = folder(&[("tools.star", &tools)]);
    let url = format!("url=http://127.0.0.1:{port}/echo");
    let (code, stdout) = call_in(dir.path(), "anywhere", &[&url]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("127.0.0.1 is a loopback, private or link-local address"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(r#"permissions = {{"net": ["127.0.0.1:{port}"]}}"#)),
        "{stdout}"
    );
    // A name that resolves to a loopback address is refused too.
    let url = format!("url=http://localhost:{port}/echo");
    let (code, stdout) = call_in(dir.path(), "anywhere", &[&url]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("`localhost` resolves to") && stdout.contains("loopback"),
        "{stdout}"
    );
    // `localhost`, named, reaches the machine.
    let url = format!("url=http://localhost:{port}/echo");
    let (code, stdout) = call_in(dir.path(), "local", &[&url]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("GET /echo HTTP/1.1"), "{stdout}");
}
