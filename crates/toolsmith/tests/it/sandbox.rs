//! The Starlark sandbox against files and hosts set up to lead a tool astray: links, FIFOs,
//! addresses in disguise and redirects to other hosts.

use std::path::Path;

use crate::{folder, toolsmith};

/// Runs `toolsmith call DIR TOOL ARGS…`: exit code and stdout.
fn call_in(dir: &Path, tool: &str, args: &[&str]) -> (Option<i32>, String) {
    let output = toolsmith()
        .arg("call")
        .arg(dir)
        .arg(tool)
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

const FILES: &str = r#"
def put(name: str, text: str) -> str:
    """Writes a file under data/."""
    mcp.write_file("data/" + name, text)
    return "written"

mcp.tool(put, permissions = {"fs.write": ["data/"]})

def get(name: str) -> str:
    """Reads a file under data/."""
    return mcp.read_file("data/" + name)

mcp.tool(get, permissions = {"fs.read": ["data/"]}, timeout = 1)
"#;

// Regression test: a dangling link inside a write grant led the write
// out of it (`outside.txt` was created beside `data/`).
#[test]
fn a_write_does_not_follow_a_dangling_link_out_of_its_grant() {
    let dir = folder(&[("tools.star", FILES), ("data/kept.txt", "kept")]);
    std::os::unix::fs::symlink("../outside.txt", dir.path().join("data/d")).unwrap();
    let (code, stdout) = call_in(dir.path(), "put", &["name=d", "text=x"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("`data/d` is a symbolic link"), "{stdout}");
    assert!(!dir.path().join("outside.txt").exists());

    // A link to an existing file inside the grant still works, as does a new name.
    std::os::unix::fs::symlink("kept.txt", dir.path().join("data/alias")).unwrap();
    assert_eq!(
        call_in(dir.path(), "put", &["name=alias", "text=new"]),
        (Some(0), "written\n".to_owned())
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("data/kept.txt")).unwrap(),
        "new"
    );
    assert_eq!(
        call_in(dir.path(), "put", &["name=fresh.txt", "text=hi"]),
        (Some(0), "written\n".to_owned())
    );
}

// Regression test (file half): reading a FIFO in a read grant blocked
// the call's thread forever (the watchdog answered, but the thread and its slot were lost).
#[test]
fn a_read_refuses_a_fifo_instead_of_blocking() {
    let dir = folder(&[("tools.star", FILES), ("data/note.txt", "hello")]);
    let fifo = dir.path().join("data/pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let (code, stdout) = call_in(dir.path(), "get", &["name=pipe"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("`data/pipe` is a FIFO, device or socket, not a regular file"),
        "{stdout}"
    );
    // Writing to it is refused too, rather than waiting for a reader.
    let (code, stdout) = call_in(dir.path(), "put", &["name=pipe", "text=x"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("not a regular file"), "{stdout}");
    assert_eq!(
        call_in(dir.path(), "get", &["name=note.txt"]),
        (Some(0), "hello\n".to_owned())
    );
}

/// `/hop?to=PORT` redirects to `//127.0.0.1:PORT/echo` (a network-path reference: another
/// host); anything else echoes, with this server's port.
fn hop_server() -> u16 {
    crate::http_server::echo_server(|target, _| {
        target
            .strip_prefix("/hop?to=")
            .map(|to| format!("//127.0.0.1:{to}/echo"))
    })
}

// Regression test: `Location: //127.0.0.1:PORT/x` was fetched as the
// path `//127.0.0.1:PORT/x` on the same host instead of as that other host, whose grant
// was then never checked.
#[test]
fn a_network_path_redirect_goes_to_its_host_and_needs_its_grant() {
    let (first, second) = (hop_server(), hop_server());
    let tools = format!(
        r#"
def hop(path: str) -> dict:
    """Fetches a path of the first server."""
    return http.get("http://127.0.0.1:{first}" + path).json

mcp.tool(hop, permissions = {{"net": ["127.0.0.1:{first}"]}})

def hop_both(path: str) -> dict:
    """Fetches a path of the first server, which may send it to the second."""
    return http.get("http://127.0.0.1:{first}" + path).json

mcp.tool(hop_both, permissions = {{"net": ["127.0.0.1:{first}", "127.0.0.1:{second}"]}})
"#
    );
    let dir = folder(&[("tools.star", &tools)]);
    let path = format!("path=/hop?to={second}");
    let (code, stdout) = call_in(dir.path(), "hop", &[&path]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!("`127.0.0.1:{second}` is not among the hosts")),
        "{stdout}"
    );
    let (code, stdout) = call_in(dir.path(), "hop_both", &[&path]);
    assert_eq!(code, Some(0), "{stdout}");
    let echo: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(echo["port"], second, "{stdout}");
    assert_eq!(echo["request"], "GET /echo HTTP/1.1", "{stdout}");
}

// Regression test: an IPv4-compatible IPv6 address
// (`[::127.0.0.1]`) passed the check that keeps `*` grants off the machine itself.
#[test]
fn an_ipv4_compatible_address_is_not_public() {
    let port = hop_server();
    let tools = r#"
def anywhere(url: str) -> str:
    """Fetches any URL."""
    return http.get(url).text

mcp.tool(anywhere, permissions = {"net": ["*"]})
"#;
    let dir = folder(&[("tools.star", tools)]);
    for host in [
        "[::127.0.0.1]",
        "[::ffff:127.0.0.1]",
        "[64:ff9b::127.0.0.1]",
    ] {
        let url = format!("url=http://{host}:{port}/echo");
        let (code, stdout) = call_in(dir.path(), "anywhere", &[&url]);
        assert_eq!(code, Some(1), "{host}: {stdout}");
        assert!(
            stdout.contains("a loopback, private or link-local address"),
            "{host}: {stdout}"
        );
    }
}
