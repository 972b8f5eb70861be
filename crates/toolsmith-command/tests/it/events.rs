//! `mcp:` lines on stderr: a command tool's progress and log messages for the client.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith_model::{CallContext, ClientBridge, LogLevel, Tool, ToolFailure, ToolReturn};

use crate::support::{failure, object, script, text, tool};

/// A client that records what the tool sent it.
#[derive(Default)]
pub(crate) struct Recorder(pub(crate) Mutex<Vec<String>>);

impl ClientBridge for Recorder {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let entry = format!("progress {progress} {total:?} {message:?}");
        self.0.lock().expect("not poisoned").push(entry);
    }
    fn log(&self, level: LogLevel, logger: &str, message: &str) {
        let entry = format!("log {level:?} {logger} {message}");
        self.0.lock().expect("not poisoned").push(entry);
    }
    fn sample(&self, _: Value) -> Result<Value, String> {
        Err("no sampling".into())
    }
    fn elicit(&self, _: &str, _: Value) -> Result<Value, String> {
        Err("no elicitation".into())
    }
    fn roots(&self) -> Result<Vec<Value>, String> {
        Ok(Vec::new())
    }
}

fn run_script(body: &str) -> (Result<ToolReturn, ToolFailure>, Vec<String>) {
    let dir = tempfile::tempdir().expect("a temp dir can be created");
    script(dir.path(), "work.sh", body);
    let tool = tool(dir.path(), &json!({}), &["./work.sh"]);
    let recorder = Arc::new(Recorder::default());
    let mut context = CallContext::detached(std::time::Duration::from_secs(30));
    context.client = recorder.clone();
    let returned = tool.call(&object(&json!({})), &context);
    let sent = recorder.0.lock().expect("not poisoned").clone();
    (returned, sent)
}

#[test]
fn progress_and_log_lines_reach_the_client() {
    let (returned, sent) = run_script(concat!(
        "#!/bin/sh\n",
        "echo 'mcp:{\"progress\": 1, \"total\": 2, \"message\": \"half way\"}' >&2\n",
        "echo 'an ordinary stderr line' >&2\n",
        "echo 'mcp:{\"log\": \"warning\", \"message\": \"disk almost full\"}' >&2\n",
        "printf 'mcp:{\"progress\": 2, \"total\": 2}' >&2\n",
        "echo done\n",
    ));
    assert_eq!(text(returned), "done");
    assert_eq!(
        sent,
        [
            "progress 1 Some(2.0) Some(\"half way\")",
            "log Warning probe disk almost full",
            "progress 2 Some(2.0) None",
        ]
    );
}

#[test]
fn event_lines_stay_out_of_the_failure_message() {
    let (returned, sent) = run_script(concat!(
        "#!/bin/sh\n",
        "echo 'mcp:{\"log\": \"info\", \"message\": \"starting\"}' >&2\n",
        "echo 'boom: the real problem' >&2\n",
        "exit 3\n",
    ));
    let message = failure(returned);
    assert!(message.contains("boom: the real problem"), "{message}");
    assert!(!message.contains("mcp:"), "{message}");
    assert_eq!(sent, ["log Info probe starting"]);
}

#[test]
fn malformed_event_lines_are_ignored() {
    let (returned, sent) = run_script(concat!(
        "#!/bin/sh\n",
        "echo 'mcp:not json' >&2\n",
        "echo 'mcp:{\"log\": \"loud\", \"message\": \"x\"}' >&2\n",
        "echo ok\n",
    ));
    assert_eq!(text(returned), "ok");
    assert!(sent.is_empty(), "{sent:?}");
}

/// The numbers of dropped notifications the warnings in `sent` report.
fn reported_drops(sent: &[String]) -> usize {
    sent.iter()
        .filter_map(|entry| {
            let (_, rest) = entry.split_once("sent too many notifications: ")?;
            rest.split(' ').next()?.parse::<usize>().ok()
        })
        .sum()
}

// Regression test: a command's `mcp:` stderr lines were forwarded
// without a limit (100k lines, 100k log notifications).
#[test]
fn a_flood_of_event_lines_is_throttled_and_the_drops_are_told() {
    let dir = tempfile::tempdir().expect("a temp dir can be created");
    script(
        dir.path(),
        "flood.sh",
        concat!(
            "#!/bin/sh\n",
            "yes 'mcp:{\"log\": \"info\", \"message\": \"tick\"}' | head -n 100000 >&2\n",
            "echo done\n",
        ),
    );
    let tool = tool(dir.path(), &json!({}), &["./flood.sh"]);
    let catalog = toolsmith_model::Catalog::new(vec![Arc::new(tool)], Vec::new());
    let recorder = Arc::new(Recorder::default());
    let mut context = CallContext::detached(std::time::Duration::from_secs(30));
    context.client = recorder.clone();
    let outcome = catalog
        .call("probe", object(&json!({})), &context)
        .expect("the tool exists");
    assert_eq!(outcome.joined_text(), "done");
    let sent = recorder.0.lock().expect("not poisoned").clone();
    let ticks = sent.iter().filter(|entry| entry.ends_with(" tick")).count();
    assert!(
        ticks < 10_000,
        "{ticks} of 100000 log lines reached the client"
    );
    assert!(
        sent.last()
            .is_some_and(|entry| entry.starts_with("log Warning toolsmith tool `probe`")),
        "{:?}",
        sent.last()
    );
    assert_eq!(ticks + reported_drops(&sent), 100_000);
}
