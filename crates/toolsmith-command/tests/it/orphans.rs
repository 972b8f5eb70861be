//! Processes a call started that left its process group (`setsid`) do not outlive it.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use toolsmith_model::{CallContext, Tool, ToolFailure};

use crate::support::{eventually_gone, object, script, text, tool};

/// A script that starts `sleep 60` in a session of its own, waits until it has written its
/// pid to `child.pid`, prints `started`, then runs `$1` (`true`, or a long `sleep`).
const DETACHING: &str = concat!(
    "#!/bin/sh\n",
    "setsid sh -c 'echo $$ > child.pid.tmp && mv child.pid.tmp child.pid && exec sleep 60' \\\n",
    "    </dev/null >/dev/null 2>&1 &\n",
    "while [ ! -s child.pid ]; do sleep 0.01; done\n",
    "echo started\n",
    "$1\n",
);

/// Kills the detached child when the test ends, whatever happened.
struct Reaped(u32);

impl Drop for Reaped {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.0).expect("a pid fits"));
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    }
}

fn child_pid(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("child.pid"))
        .expect("the script wrote the child's pid")
        .trim()
        .parse()
        .expect("a pid")
}

// Regression test: a child that called `setsid` survived the call
// (it left the process group that is killed when the call ends).
#[test]
fn a_detached_child_does_not_outlive_its_call() {
    let dir = tempfile::tempdir().expect("a temp dir can be created");
    script(dir.path(), "detach.sh", DETACHING);
    let tool = tool(dir.path(), &json!({}), &["./detach.sh", "true"]);
    let returned = tool.call(
        &object(&json!({})),
        &CallContext::detached(Duration::from_secs(20)),
    );
    assert_eq!(text(returned), "started");
    let pid = child_pid(dir.path());
    let _reaped = Reaped(pid);
    assert!(
        eventually_gone(pid),
        "the detached child {pid} outlived the call"
    );
}

// Regression test: the same child survived the call's timeout.
#[test]
fn a_detached_child_does_not_outlive_its_calls_timeout() {
    let dir = tempfile::tempdir().expect("a temp dir can be created");
    script(dir.path(), "detach.sh", DETACHING);
    let tool = tool(dir.path(), &json!({}), &["./detach.sh", "sleep 60"]);
    let returned = tool.call(
        &object(&json!({})),
        &CallContext::detached(Duration::from_secs(2)),
    );
    assert!(
        matches!(returned, Err(ToolFailure::TimedOut { .. })),
        "{returned:?}"
    );
    let pid = child_pid(dir.path());
    let _reaped = Reaped(pid);
    assert!(
        eventually_gone(pid),
        "the detached child {pid} outlived the call's timeout"
    );
}
