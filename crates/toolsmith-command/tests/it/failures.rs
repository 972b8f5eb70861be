//! Programs that fail, crash or cannot be started.

use serde_json::json;

use crate::support::{call, failure, tool};

#[test]
fn non_zero_exit_fails_with_the_tail_of_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let program = "for i in $(seq 1 50); do echo \"problem $i\" >&2; done; echo partial; exit 3";
    let tool = tool(dir.path(), &json!({}), &["bash", "-c", program]);
    let message = failure(call(&tool, &json!({})));
    assert!(
        message.starts_with(&format!("command `bash -c {program}` exited with status 3")),
        "{message}"
    );
    assert!(message.contains("earlier output cut"), "{message}");
    assert!(message.contains("problem 31\n"), "{message}");
    assert!(message.ends_with("problem 50"), "{message}");
    assert!(!message.contains("problem 30\n"), "{message}");
}

#[test]
fn short_stderr_is_shown_whole() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(
        dir.path(),
        &json!({}),
        &["bash", "-c", "echo 'no such city' >&2; exit 1"],
    );
    let message = failure(call(&tool, &json!({})));
    assert!(
        message.ends_with("exited with status 1\nstderr:\nno such city"),
        "{message}"
    );
}

#[test]
fn stdout_is_shown_when_a_failing_program_printed_nothing_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(
        dir.path(),
        &json!({}),
        &["bash", "-c", "echo 'usage: weather CITY'; exit 2"],
    );
    let message = failure(call(&tool, &json!({})));
    assert!(
        message.ends_with("stdout:\nusage: weather CITY"),
        "{message}"
    );
}

#[test]
fn death_by_signal_is_a_failure_naming_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), &json!({}), &["bash", "-c", "kill -SEGV $$"]);
    let message = failure(call(&tool, &json!({})));
    assert!(
        message.contains("was killed by signal 11 (SIGSEGV)"),
        "{message}"
    );
}

#[test]
fn program_not_on_path_fails_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), &json!({}), &["pyhton3", "weather.py"]);
    let message = failure(call(&tool, &json!({})));
    assert!(
        message.contains("program `pyhton3` not found on PATH"),
        "{message}"
    );
}

#[test]
fn missing_program_path_is_reported_relative_to_the_tools_folder() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), &json!({}), &["bin/weather"]);
    let message = failure(call(&tool, &json!({})));
    let expected = dir.path().join("bin/weather");
    assert!(
        message.contains("program `bin/weather` not found at"),
        "{message}"
    );
    assert!(message.contains(&*expected.to_string_lossy()), "{message}");
}

#[test]
fn program_without_execute_permission_gets_a_chmod_hint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    let tool = tool(dir.path(), &json!({}), &["./run.sh"]);
    let message = failure(call(&tool, &json!({})));
    assert!(
        message.contains("is not executable; run `chmod +x"),
        "{message}"
    );
}

#[test]
fn missing_working_directory_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), &json!({}), &["true"]);
    let mut context = toolsmith_model::CallContext::detached(crate::support::PATIENCE);
    context.working_dir = Some(dir.path().join("gone"));
    let returned = toolsmith_model::Tool::call(&tool, &serde_json::Map::new(), &context);
    let message = failure(returned);
    assert!(message.contains("working directory"), "{message}");
}
