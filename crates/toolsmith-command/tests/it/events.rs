//! `mcp:` lines on stderr: a command tool's progress and log messages for the client.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith_model::{CallContext, ClientBridge, LogLevel, Tool, ToolFailure, ToolReturn};

use crate::support::{failure, object, script, text, tool};

/// A client that records what the tool sent it.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

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
