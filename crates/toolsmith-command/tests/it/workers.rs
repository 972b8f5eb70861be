//! Warm command tools: `worker = true` programs written with the helper
//! libraries of `examples/workers/`, served by a [`WorkerPool`] with real processes.
//!
//! The Node.js tests are ignored unless run with `cargo test -- --include-ignored` (as
//! `.ci/run` does); there, without `node`, they fail saying so.

use std::collections::BTreeSet;
use std::num::{NonZeroU64, NonZeroUsize};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith_command::{CommandTool, WorkerPool, WorkerSettings};
use toolsmith_model::{CallContext, StopReason, Tool, ToolFailure, ToolReturn};

use crate::support::{PATIENCE, definition, eventually_gone, failure, object, text};

/// The examples folder holding the helper libraries.
fn helpers() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workers")
}

/// A temp tools folder with both helper libraries and `file` holding `code`.
fn folder(file: &str, code: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir can be created");
    for helper in ["toolsmith_worker.py", "toolsmith_worker.js"] {
        std::fs::copy(helpers().join(helper), dir.path().join(helper))
            .expect("the helper library is in examples/workers");
    }
    std::fs::write(dir.path().join(file), code).expect("the temp dir is writable");
    dir
}

/// A pool running `command` in `dir`.
fn pool(dir: &Path, command: &[&str], settings: WorkerSettings) -> Arc<WorkerPool> {
    let command = command.iter().map(|&element| element.to_owned()).collect();
    WorkerPool::new(command, dir, settings).expect("the worker command has no placeholders")
}

/// The tool `name` with `properties`, served by `pool`.
fn tool(pool: &Arc<WorkerPool>, name: &str, properties: &Value) -> CommandTool {
    let mut definition = definition(name, properties);
    definition.timeout = Some(PATIENCE);
    CommandTool::new(definition, pool.command().to_vec(), pool.base_dir())
        .expect("the worker command has no placeholders")
        .with_worker(Arc::clone(pool))
}

fn processes(count: usize) -> WorkerSettings {
    WorkerSettings {
        processes: NonZeroUsize::new(count).expect("a positive count"),
        ..WorkerSettings::default()
    }
}

/// Fails the test unless `node` runs here. The Node tests are ignored unless run with
/// `cargo test -- --include-ignored` (as `.ci/run` does), where this says what is missing.
fn require_node() {
    let found = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        found,
        "this test needs `node` on PATH (Node.js 20 or later); leave out --include-ignored to skip the tests that need it"
    );
}

const PYTHON_WORKER: &str = r#"
import os, sys, time
from pathlib import Path
from toolsmith_worker import tool, serve, cancelled, progress

@tool
def greet(name):
    return f"Hello, {name}!"

@tool
def pid():
    return {"pid": os.getpid()}

@tool
def nap(seconds):
    Path("pidfile").write_text(str(os.getpid()))
    print("napping in the worker", file=sys.stderr, flush=True)
    time.sleep(seconds)
    return "rested"

@tool
def until_cancelled():
    Path("started").write_text(str(os.getpid()))
    while not cancelled():
        time.sleep(0.01)
    Path("saw-cancel").write_text("yes")
    return "stopped"

@tool
def chatty():
    progress(1, 2, "half way")
    time.sleep(0.2)
    return "done"

serve()
"#;

const NODE_WORKER: &str = r#"
const fs = require("node:fs");
const { tool, serve } = require("./toolsmith_worker");

tool(function greet({ name }) {
  return `Hello, ${name}!`;
});

tool(function pid() {
  return { pid: process.pid };
});

tool(function nap({ seconds }) {
  fs.writeFileSync("pidfile", String(process.pid));
  console.error("napping in the worker");
  return new Promise((resolve) => setTimeout(() => resolve("rested"), seconds * 1000));
});

// Answers once the test writes `release`, after writing `holding` (its pid).
tool(function hold() {
  fs.writeFileSync("holding", String(process.pid));
  return new Promise((resolve) => {
    const poll = setInterval(() => {
      if (fs.existsSync("release")) {
        clearInterval(poll);
        resolve({ pid: process.pid });
      }
    }, 10);
  });
});

// Blocks the event loop (without spinning): the worker reads no cancel, answers nothing.
tool(function hang() {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});

tool(function until_cancelled(args, call) {
  fs.writeFileSync("started", String(process.pid));
  return new Promise((resolve, reject) => {
    call.signal.addEventListener("abort", () => {
      fs.writeFileSync("saw-cancel", "yes");
      reject(new Error("cancelled"));
    });
  });
});

serve();
"#;

/// 1,000 calls from 8 threads over 4 processes: every call gets its own answer once.
fn thousand_calls(tool: &CommandTool, pool: &WorkerPool) {
    const THREADS: usize = 8;
    const CALLS: usize = 125;
    let answers: Vec<(usize, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|thread| {
                scope.spawn(move || {
                    (0..CALLS)
                        .map(|call| {
                            let n = thread * CALLS + call;
                            let arguments = object(&json!({ "name": n.to_string() }));
                            let context = CallContext::detached(PATIENCE);
                            (n, text(tool.call(&arguments, &context)))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("a calling thread panicked"))
            .collect()
    });
    assert_eq!(answers.len(), THREADS * CALLS);
    for (n, answer) in &answers {
        assert_eq!(answer, &format!("Hello, {n}!"));
    }
    let distinct: BTreeSet<&String> = answers.iter().map(|(_, answer)| answer).collect();
    assert_eq!(distinct.len(), THREADS * CALLS, "an answer was duplicated");
    assert!(
        pool.running() <= 4,
        "{} processes for a pool of 4",
        pool.running()
    );
}

#[test]
fn python_worker_serves_a_thousand_calls_from_several_threads() {
    let dir = folder("worker.py", PYTHON_WORKER);
    let pool = pool(dir.path(), &["python3", "worker.py"], processes(4));
    let greet = tool(&pool, "greet", &json!({"name": {"type": "string"}}));
    thousand_calls(&greet, &pool);
}

#[test]
#[ignore = "needs node, Node.js 20 or later (CI runs it: cargo test -- --include-ignored)"]
fn node_worker_serves_a_thousand_calls_from_several_threads() {
    require_node();
    let dir = folder("worker.js", NODE_WORKER);
    let pool = pool(dir.path(), &["node", "worker.js"], processes(4));
    let greet = tool(&pool, "greet", &json!({"name": {"type": "string"}}));
    thousand_calls(&greet, &pool);
}

fn pid_of(tool: &CommandTool) -> u64 {
    match tool.call(&object(&json!({})), &CallContext::detached(PATIENCE)) {
        Ok(ToolReturn::Value(value)) => value["pid"].as_u64().expect("the pid is a number"),
        other => panic!("expected the worker's pid, got {other:?}"),
    }
}

#[test]
fn one_process_serves_the_tools_naming_its_command() {
    let dir = folder("worker.py", PYTHON_WORKER);
    let pool = pool(dir.path(), &["python3", "worker.py"], processes(1));
    let greet = tool(&pool, "greet", &json!({"name": {"type": "string"}}));
    let pid = tool(&pool, "pid", &json!({}));
    let first = pid_of(&pid);
    assert_eq!(
        text(greet.call(
            &object(&json!({"name": "Ada"})),
            &CallContext::detached(PATIENCE)
        )),
        "Hello, Ada!"
    );
    assert_eq!(pid_of(&pid), first, "the warm process was replaced");
    assert_eq!(pool.running(), 1);
}

/// Waits (bounded) for `dir/name` to exist and returns its contents.
fn wait_for_file(dir: &Path, name: &str) -> String {
    let until = Instant::now() + PATIENCE;
    while Instant::now() < until {
        if let Ok(contents) = std::fs::read_to_string(dir.join(name))
            && !contents.is_empty()
        {
            return contents;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("`{name}` was not written within {PATIENCE:?}");
}

#[test]
fn a_worker_killed_mid_call_fails_that_call_only() {
    let dir = folder("worker.py", PYTHON_WORKER);
    let pool = pool(dir.path(), &["python3", "worker.py"], processes(1));
    let nap = tool(&pool, "nap", &json!({"seconds": {"type": "number"}}));
    let pid = tool(&pool, "pid", &json!({}));
    let returned = std::thread::scope(|scope| {
        let call = scope.spawn(|| {
            nap.call(
                &object(&json!({"seconds": 60})),
                &CallContext::detached(PATIENCE),
            )
        });
        let napping: i32 = wait_for_file(dir.path(), "pidfile").parse().expect("a pid");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(napping),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("the worker can be killed");
        call.join().expect("the calling thread panicked")
    });
    let message = failure(returned);
    assert!(
        message.contains("was killed by signal 9 (SIGKILL) during the call"),
        "{message}"
    );
    assert!(message.contains("napping in the worker"), "{message}");
    assert!(pid_of(&pid) > 0, "the next call is served");
}

#[test]
fn a_hanging_worker_is_replaced_after_the_calls_timeout() {
    let dir = folder("worker.py", PYTHON_WORKER);
    let pool = pool(dir.path(), &["python3", "worker.py"], processes(1));
    let pid = tool(&pool, "pid", &json!({}));
    // Started first, so that the short timeout below is spent in the call, not in startup.
    let hung = u32::try_from(pid_of(&pid)).expect("a pid fits");
    let mut definition = definition("nap", &json!({"seconds": {"type": "number"}}));
    definition.timeout = Some(Duration::from_millis(500));
    let nap = CommandTool::new(definition, pool.command().to_vec(), dir.path())
        .expect("no placeholders")
        .with_worker(Arc::clone(&pool));
    let context = CallContext::detached(Duration::from_millis(500));
    let message = failure(nap.call(&object(&json!({"seconds": 60})), &context));
    assert!(
        message.contains("did not answer within 500ms and was killed"),
        "{message}"
    );
    assert!(
        eventually_gone(hung),
        "the hung worker {hung} is still running"
    );
    assert_ne!(pid_of(&pid), u64::from(hung));
}

#[test]
#[ignore = "needs node, Node.js 20 or later (CI runs it: cargo test -- --include-ignored)"]
fn a_node_worker_killed_mid_call_fails_that_call_only() {
    require_node();
    let dir = folder("worker.js", NODE_WORKER);
    let pool = pool(dir.path(), &["node", "worker.js"], processes(2));
    let nap = tool(&pool, "nap", &json!({"seconds": {"type": "number"}}));
    let second = tool(&pool, "hold", &json!({}));
    let pid = tool(&pool, "pid", &json!({}));
    let (napped, second_answer, holding) = std::thread::scope(|scope| {
        let napping_call = scope.spawn(|| {
            nap.call(
                &object(&json!({"seconds": 60})),
                &CallContext::detached(PATIENCE),
            )
        });
        let napping: i32 = wait_for_file(dir.path(), "pidfile").parse().expect("a pid");
        // A second call, on the pool's other process, is in flight during the kill.
        let holding_call =
            scope.spawn(|| second.call(&object(&json!({})), &CallContext::detached(PATIENCE)));
        let holding: i32 = wait_for_file(dir.path(), "holding").parse().expect("a pid");
        assert_ne!(napping, holding, "the two calls share a process");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(napping),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("the worker can be killed");
        let napped = napping_call.join().expect("the calling thread panicked");
        std::fs::write(dir.path().join("release"), "").expect("the temp dir is writable");
        let second_answer = holding_call.join().expect("the calling thread panicked");
        (napped, second_answer, holding)
    });
    let message = failure(napped);
    assert!(
        message.contains("was killed by signal 9 (SIGKILL) during the call"),
        "{message}"
    );
    assert!(message.contains("napping in the worker"), "{message}");
    match second_answer {
        Ok(ToolReturn::Value(value)) => assert_eq!(value["pid"], holding, "{value}"),
        other => panic!("the call on the other process failed: {other:?}"),
    }
    assert!(pid_of(&pid) > 0, "the next call is served");
}

#[test]
#[ignore = "needs node, Node.js 20 or later (CI runs it: cargo test -- --include-ignored)"]
fn a_hanging_node_worker_is_replaced_after_the_calls_timeout() {
    require_node();
    let dir = folder("worker.js", NODE_WORKER);
    let pool = pool(dir.path(), &["node", "worker.js"], processes(1));
    let pid = tool(&pool, "pid", &json!({}));
    // Started first, so that the short timeout below is spent in the call, not in startup.
    let hung = u32::try_from(pid_of(&pid)).expect("a pid fits");
    let mut definition = definition("hang", &json!({}));
    definition.timeout = Some(Duration::from_millis(500));
    let blocking = CommandTool::new(definition, pool.command().to_vec(), dir.path())
        .expect("no placeholders")
        .with_worker(Arc::clone(&pool));
    let context = CallContext::detached(Duration::from_millis(500));
    let message = failure(blocking.call(&object(&json!({})), &context));
    assert!(
        message.contains("did not answer within 500ms and was killed"),
        "{message}"
    );
    assert!(
        eventually_gone(hung),
        "the hung worker {hung} is still running"
    );
    assert_ne!(pid_of(&pid), u64::from(hung));
}

/// Cancels a call of `until_cancelled` once the worker says it started; returns the call's
/// result and the worker's pid.
fn cancel_mid_call(tool: &CommandTool, dir: &Path) -> (Result<ToolReturn, ToolFailure>, String) {
    let context = CallContext::detached(PATIENCE);
    std::thread::scope(|scope| {
        let call = scope.spawn(|| tool.call(&object(&json!({})), &context));
        let started = wait_for_file(dir, "started");
        context.interrupt.raise(StopReason::Cancelled);
        (call.join().expect("the calling thread panicked"), started)
    })
}

#[test]
fn cancellation_reaches_a_python_worker_which_keeps_serving() {
    let dir = folder("worker.py", PYTHON_WORKER);
    let pool = pool(dir.path(), &["python3", "worker.py"], processes(1));
    let waiting = tool(&pool, "until_cancelled", &json!({}));
    let (returned, started) = cancel_mid_call(&waiting, dir.path());
    assert!(
        matches!(returned, Err(ToolFailure::Cancelled)),
        "{returned:?}"
    );
    assert_eq!(wait_for_file(dir.path(), "saw-cancel"), "yes");
    let pid = tool(&pool, "pid", &json!({}));
    assert_eq!(
        pid_of(&pid).to_string(),
        started,
        "the worker answered the cancel in time"
    );
}

#[test]
#[ignore = "needs node, Node.js 20 or later (CI runs it: cargo test -- --include-ignored)"]
fn cancellation_reaches_a_node_worker() {
    require_node();
    let dir = folder("worker.js", NODE_WORKER);
    let pool = pool(dir.path(), &["node", "worker.js"], processes(1));
    let waiting = tool(&pool, "until_cancelled", &json!({}));
    let (returned, _) = cancel_mid_call(&waiting, dir.path());
    assert!(
        matches!(returned, Err(ToolFailure::Cancelled)),
        "{returned:?}"
    );
    assert_eq!(wait_for_file(dir.path(), "saw-cancel"), "yes");
    let greet = tool(&pool, "greet", &json!({"name": {"type": "string"}}));
    let context = CallContext::detached(PATIENCE);
    assert_eq!(
        text(greet.call(&object(&json!({"name": "Ada"})), &context)),
        "Hello, Ada!"
    );
}

#[test]
fn a_worker_writing_garbage_is_replaced_and_the_message_says_why() {
    // Prints its pid before each answer: not a protocol line.
    let dir = folder(
        "noisy.py",
        "import json, os, sys\nfor line in sys.stdin:\n    call = json.loads(line)\n    print(f'debug {os.getpid()}', flush=True)\n",
    );
    let pool = pool(dir.path(), &["python3", "noisy.py"], processes(1));
    let noisy = tool(&pool, "noisy", &json!({}));
    let message = failure(noisy.call(&object(&json!({})), &CallContext::detached(PATIENCE)));
    assert!(
        message.contains("wrote a line that is not an answer"),
        "{message}"
    );
    assert!(message.contains("`debug "), "{message}");
    assert!(message.contains("logs to stderr"), "{message}");
    assert_eq!(pool.running(), 0, "the broken process is gone");
}

#[test]
fn errors_and_mcp_results_come_back_as_the_worker_wrote_them() {
    let dir = folder(
        "answers.py",
        concat!(
            "from toolsmith_worker import tool, serve\n",
            "@tool\ndef fail():\n    raise ValueError('no such city')\n",
            "@tool\ndef whole():\n    return {'content': [{'type': 'text', 'text': 'as is'}], 'isError': True}\n",
            "serve()\n",
        ),
    );
    let pool = pool(dir.path(), &["python3", "answers.py"], processes(1));
    let fail = tool(&pool, "fail", &json!({}));
    let whole = tool(&pool, "whole", &json!({}));
    let missing = tool(&pool, "missing", &json!({}));
    let context = || CallContext::detached(PATIENCE);
    assert_eq!(
        failure(fail.call(&object(&json!({})), &context())),
        "ValueError: no such city"
    );
    assert_eq!(
        whole.call(&object(&json!({})), &context()),
        Ok(ToolReturn::Outcome(toolsmith_model::CallOutcome::error(
            "as is"
        )))
    );
    let message = failure(missing.call(&object(&json!({})), &context()));
    assert!(message.contains("no tool `missing`"), "{message}");
    assert_eq!(pool.running(), 1, "errors do not replace the process");
}

#[test]
fn max_calls_replaces_the_process() {
    let dir = folder("worker.py", PYTHON_WORKER);
    let settings = WorkerSettings {
        max_calls: NonZeroU64::new(2),
        ..WorkerSettings::default()
    };
    let pool = pool(dir.path(), &["python3", "worker.py"], settings);
    let pid = tool(&pool, "pid", &json!({}));
    let pids = [pid_of(&pid), pid_of(&pid), pid_of(&pid)];
    assert_eq!(pids[0], pids[1]);
    assert_ne!(pids[1], pids[2]);
}

#[test]
fn idle_timeout_stops_an_idle_process() {
    let dir = folder("worker.py", PYTHON_WORKER);
    let settings = WorkerSettings {
        idle_timeout: Some(Duration::from_millis(100)),
        ..WorkerSettings::default()
    };
    let pool = pool(dir.path(), &["python3", "worker.py"], settings);
    let pid = tool(&pool, "pid", &json!({}));
    let first = u32::try_from(pid_of(&pid)).expect("a pid fits");
    assert!(eventually_gone(first), "the idle worker {first} still runs");
    assert_eq!(pool.running(), 0);
    assert_ne!(u32::try_from(pid_of(&pid)).expect("a pid fits"), first);
}

#[test]
fn progress_carries_the_call_id_to_the_client() {
    use crate::events::Recorder;
    let dir = folder("worker.py", PYTHON_WORKER);
    let pool = pool(dir.path(), &["python3", "worker.py"], processes(1));
    let chatty = tool(&pool, "chatty", &json!({}));
    let recorder = Arc::new(Recorder::default());
    let mut context = CallContext::detached(PATIENCE);
    context.client = recorder.clone();
    assert_eq!(text(chatty.call(&object(&json!({})), &context)), "done");
    assert_eq!(
        recorder.0.lock().expect("not poisoned").as_slice(),
        ["progress 1 Some(2.0) Some(\"half way\")"]
    );
}

#[test]
fn a_worker_command_takes_no_placeholders() {
    let command = vec!["python3".to_owned(), "{script}".to_owned()];
    let error = WorkerPool::new(command, ".", WorkerSettings::default()).unwrap_err();
    assert!(error.to_string().contains("script"), "{error}");
}

#[test]
fn editing_the_worker_program_restarts_it_on_the_next_call() {
    let dir = folder("worker.py", PYTHON_WORKER);
    let pool = pool(dir.path(), &["python3", "worker.py"], processes(1));
    let greet = tool(&pool, "greet", &json!({"name": {"type": "string"}}));
    let arguments = object(&json!({"name": "Ada"}));
    let context = || CallContext::detached(PATIENCE);
    assert_eq!(text(greet.call(&arguments, &context())), "Hello, Ada!");
    let edited = PYTHON_WORKER.replace("Hello, {name}!", "Hi, {name}!");
    std::fs::write(dir.path().join("worker.py"), edited).expect("the temp dir is writable");
    assert_eq!(text(greet.call(&arguments, &context())), "Hi, Ada!");
}

#[test]
fn a_call_waits_for_a_busy_pool_until_its_deadline_and_a_deaf_worker_is_killed_on_cancel() {
    let dir = folder("worker.py", PYTHON_WORKER);
    let pool = pool(dir.path(), &["python3", "worker.py"], processes(1));
    let nap = tool(&pool, "nap", &json!({"seconds": {"type": "number"}}));
    let greet = tool(&pool, "greet", &json!({"name": {"type": "string"}}));
    let napping = CallContext::detached(PATIENCE);
    let (waited, cancelled) = std::thread::scope(|scope| {
        let call = scope.spawn(|| nap.call(&object(&json!({"seconds": 60})), &napping));
        wait_for_file(dir.path(), "pidfile");
        let arguments = object(&json!({"name": "Ada"}));
        let waited = greet.call(
            &arguments,
            &CallContext::detached(Duration::from_millis(300)),
        );
        // `nap` never looks at `cancelled()`: after the grace, the worker is killed.
        napping.interrupt.raise(StopReason::Cancelled);
        (waited, call.join().expect("the calling thread panicked"))
    });
    let message = failure(waited);
    assert!(message.contains("had no free process"), "{message}");
    assert!(message.contains("raise `processes`"), "{message}");
    assert!(
        matches!(cancelled, Err(ToolFailure::Cancelled)),
        "{cancelled:?}"
    );
    let napper: u32 = wait_for_file(dir.path(), "pidfile").parse().expect("a pid");
    assert!(
        eventually_gone(napper),
        "the worker that ignored the cancel still runs"
    );
    let context = CallContext::detached(PATIENCE);
    assert_eq!(
        text(greet.call(&object(&json!({"name": "Ada"})), &context)),
        "Hello, Ada!"
    );
}
