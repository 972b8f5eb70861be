//! Replicas sharing their sessions through Redis, behind nginx round-robin (issue 19, items
//! 4 and 5): Debian's `redis-server` and `nginx`, started here on free loopback ports with
//! their files in a temp dir, and two `toolsmith serve --http --state redis://…` processes.
//! nginx runs `docs/deploy/nginx.conf`, the file docs/deploy.md shows, so the two agree.
//! Without both programs these tests skip, except under `TOOLSMITH_REQUIRE_REDIS=1` (set by
//! `.ci/run`), which makes them fail.

use std::collections::BTreeSet;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::mcp_client::{McpClient, text};
use crate::serve_process::ServeProcess;

const ECHO: &str = "def echo(text: str) -> str:\n    \"\"\"Echo the text back.\n\n    Args:\n        text: What to echo.\n    \"\"\"\n    return text\n\nmcp.tool(echo)\n";

/// A child process in a process group of its own, the whole group killed (and the child
/// reaped) on drop: nginx's workers go with their master.
struct Daemon(Child);

impl Daemon {
    fn spawn(command: &mut Command) -> Daemon {
        Daemon(command.process_group(0).spawn().unwrap())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(-self.0.id().cast_signed());
        let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.0.wait();
    }
}

fn found(program: &str) -> bool {
    Command::new(program)
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// `redis-server` and `nginx`, or the test is skipped (failed when required).
fn services_present() -> bool {
    let redis = found("redis-server");
    let nginx = found("nginx");
    if !(redis && nginx) {
        crate::skip_unless_required(
            "redis-server and nginx are not installed (apt-get install redis-server nginx)",
            "TOOLSMITH_REQUIRE_REDIS",
        );
        return false;
    }
    true
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn redis(dir: &Path, port: u16) -> Daemon {
    let daemon = Daemon::spawn(
        Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    wait_for_port(port, "redis-server");
    daemon
}

/// nginx with `docs/deploy/nginx.conf` in front of `replicas` (`host:port`), on `port`.
fn nginx(dir: &Path, port: u16, replicas: &[&str]) -> Daemon {
    let template =
        std::fs::read_to_string(crate::workspace().join("docs/deploy/nginx.conf")).unwrap();
    let servers: String = replicas
        .iter()
        .flat_map(|address| {
            [
                "server ",
                address,
                " max_fails=1 fail_timeout=5s;\n        ",
            ]
        })
        .collect();
    let config = template
        .replace("@PREFIX@", &dir.display().to_string())
        .replace("@LISTEN@", &format!("127.0.0.1:{port}"))
        .replace("@SERVERS@", servers.trim_end());
    let file = dir.join("nginx.conf");
    std::fs::write(&file, config).unwrap();
    let daemon = Daemon::spawn(
        Command::new("nginx")
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&file)
            .args(["-e", "stderr"])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    wait_for_port(port, "nginx");
    daemon
}

fn replica(folder: &Path, state: &str, name: &str) -> ServeProcess {
    let dir = folder.display().to_string();
    let mut command =
        ServeProcess::http_command(&[&dir, "--state", state, "--replica-name", name], None);
    command.env_remove("TOOLSMITH_STATE_KEY");
    ServeProcess::spawn_http(command)
}

/// The replica names nginx logged for the POSTs answered 200 (`docs/deploy/nginx.conf`'s
/// `replicas` log format).
fn replicas_that_answered(dir: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(dir.join("access.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.first() == Some(&"POST") && fields.get(1) == Some(&"200"))
                .then(|| fields.get(3).map(|name| (*name).to_owned()))
                .flatten()
        })
        .collect()
}

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
