//! `toolsmith dev`: `serve --http --watch` for someone writing tools,
//! which prints the page's URL and opens it with `--open`.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::mcp_client::McpClient;
use crate::serve_process::{PATIENCE, ServeProcess};
use crate::{folder, toolsmith};

const HELLO: &str = r#"
def hello(name: str) -> str:
    """Greet someone by name."""
    return "Hello, " + name

mcp.tool(hello)
"#;

/// The URL on the `Page:` line of what `dev` said.
fn page_of(server: &ServeProcess) -> String {
    let said = server.stderr_until(|line| line.starts_with("Page: "));
    let line = said.last().unwrap();
    line.split_whitespace().nth(1).unwrap().to_owned()
}

#[test]
fn dev_serves_http_opens_its_page_and_follows_edits() {
    let tools = folder(&[("hello.star", HELLO)]);
    // A "browser" that writes down what it was asked to open.
    let browser_dir = tempfile::tempdir().unwrap();
    let opened = browser_dir.path().join("opened");
    let browser = browser_dir.path().join("browser");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" > {}\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();

    let mut command = toolsmith();
    command
        .arg("dev")
        .arg(tools.path())
        .args(["--http", "127.0.0.1:0", "--open"])
        .env("BROWSER", &browser);
    let server = ServeProcess::spawn_http(command);
    let page = page_of(&server);
    assert_eq!(format!("{page}mcp"), server.url());

    let deadline = Instant::now() + PATIENCE;
    while !opened.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let asked = std::fs::read_to_string(&opened).expect("the browser was started");
    assert_eq!(asked.trim(), page);

    let client = McpClient::http(server.url());
    assert_eq!(client.tool_names(), ["hello"]);
    assert_eq!(
        client.call_text("hello", &json!({"name": "Ada"})),
        "Hello, Ada"
    );
    // Watching: a new tool file is served without a restart.
    std::fs::write(
        tools.path().join("shout.star"),
        "def shout(text: str) -> str:\n    \"\"\"Say a text loudly.\"\"\"\n    return text.upper()\n\nmcp.tool(shout)\n",
    )
    .unwrap();
    client.wait_for_tools_changed(1);
    assert_eq!(client.tool_names(), ["hello", "shout"]);
}

#[test]
fn dev_takes_another_port_when_8080_is_taken() {
    // Held for the whole test (by this listener, or by whoever has it already).
    let _holding = std::net::TcpListener::bind("127.0.0.1:8080");
    let tools = folder(&[("hello.star", HELLO)]);
    let mut command = toolsmith();
    command.arg("dev").arg(tools.path());
    let server = ServeProcess::spawn_http(command);
    let said = server.stderr_until(|line| line.starts_with("Page: "));
    assert!(
        said.iter()
            .any(|line| line.starts_with("port 8080 is taken, so this is port")),
        "{said:#?}"
    );
    assert!(!server.url().contains(":8080/"), "{}", server.url());
    assert_eq!(McpClient::http(server.url()).tool_names(), ["hello"]);
}

// Regression test: `dev --open` said nothing when no browser could start
// (no display, no `BROWSER`: `xdg-open` fails quietly); it says so and prints the URL.
#[test]
fn dev_open_says_when_no_browser_can_start() {
    let tools = folder(&[("hello.star", HELLO)]);
    let mut command = toolsmith();
    command
        .arg("dev")
        .arg(tools.path())
        .args(["--http", "127.0.0.1:0", "--open"]);
    for name in [
        "BROWSER",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "WSL_DISTRO_NAME",
        "WSL_INTEROP",
    ] {
        command.env_remove(name);
    }
    let server = ServeProcess::spawn_http(command);
    let page = page_of(&server);
    let said = server.stderr_until(|line| line.contains("yourself"));
    let said = said.join("\n");
    assert!(
        said.contains("cannot open a browser: there is no graphical display"),
        "{said}"
    );
    assert!(said.contains(&format!("open {page} yourself")), "{said}");
}
