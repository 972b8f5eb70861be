//! Services the tests start on loopback: Debian's `redis-server` and `nginx`,
//! each on a free port with its files in a temp dir, and `toolsmith serve --http --state`
//! replicas; shared by the replica and rate-limit tests. The tests that need them are
//! ignored unless run with `cargo test -- --include-ignored` (as `.ci/run` does).

use std::collections::BTreeSet;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::serve_process::ServeProcess;

/// A child process in a process group of its own, the whole group killed (and the child
/// reaped) on drop: nginx's workers go with their master.
pub(crate) struct Daemon(Child);

impl Daemon {
    pub(crate) fn spawn(command: &mut Command) -> Daemon {
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

/// Fails the test unless `redis-server` and `nginx` are installed.
pub(crate) fn require_redis_and_nginx() {
    require_redis();
    crate::require(found("nginx"), "nginx (apt-get install nginx)");
}

/// Fails the test unless `redis-server` is installed.
pub(crate) fn require_redis() {
    crate::require(
        found("redis-server"),
        "redis-server (apt-get install redis-server)",
    );
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn redis(dir: &Path, port: u16) -> Daemon {
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
pub(crate) fn nginx(dir: &Path, port: u16, replicas: &[&str]) -> Daemon {
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

pub(crate) fn replica(folder: &Path, state: &str, name: &str) -> ServeProcess {
    replica_with(folder, state, name, &[])
}

/// [`replica`] with more `serve` flags.
pub(crate) fn replica_with(folder: &Path, state: &str, name: &str, flags: &[&str]) -> ServeProcess {
    let dir = folder.display().to_string();
    let mut args = vec![dir.as_str(), "--state", state, "--replica-name", name];
    args.extend(flags);
    let mut command = ServeProcess::http_command(&args, None);
    command.env_remove("TOOLSMITH_STATE_KEY");
    ServeProcess::spawn_http(command)
}

/// The replica names nginx logged for the POSTs answered 200 (`docs/deploy/nginx.conf`'s
/// `replicas` log format).
pub(crate) fn replicas_that_answered(dir: &Path) -> BTreeSet<String> {
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
