//! Timeouts, cancellation, output caps and process-group cleanup. No tight timing
//! assertions: "promptly" means well under the 5 s bound used here.

use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith_model::{CallContext, StopReason, Tool, ToolFailure};

use crate::support::{
    PATIENCE, call, definition, eventually_gone, failure, object, read_pid, text, tool, tool_with,
};

/// A context whose deadline matches the tool's timeout.
fn short_call(
    timeout: Duration,
    command: &[&str],
    dir: &std::path::Path,
) -> (Result<toolsmith_model::ToolReturn, ToolFailure>, Duration) {
    let mut definition = definition("slow", &json!({}));
    definition.timeout = Some(timeout);
    let tool = tool_with(definition, dir, command);
    let started = Instant::now();
    let returned = tool.call(&object(&json!({})), &CallContext::detached(timeout));
    (returned, started.elapsed())
}

#[test]
fn hanging_command_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let timeout = Duration::from_millis(300);
    let (returned, elapsed) = short_call(timeout, &["sleep", "30"], dir.path());
    assert_eq!(returned, Err(ToolFailure::TimedOut { after: timeout }));
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

#[test]
fn timeout_kills_grandchildren_too() {
    let dir = tempfile::tempdir().unwrap();
    let (returned, elapsed) = short_call(
        Duration::from_millis(300),
        &[
            "bash",
            "-c",
            "sleep 60 & sleep 60 & echo $! > pidfile; wait",
        ],
        dir.path(),
    );
    assert!(
        matches!(returned, Err(ToolFailure::TimedOut { .. })),
        "{returned:?}"
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    let grandchild = read_pid(dir.path());
    assert!(
        eventually_gone(grandchild),
        "grandchild {grandchild} survived the timeout"
    );
}

#[test]
fn background_grandchild_holding_stdout_does_not_delay_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(
        dir.path(),
        &json!({}),
        &["bash", "-c", "sleep 60 & echo $! > pidfile; echo done"],
    );
    let started = Instant::now();
    let output = text(call(&tool, &json!({})));
    let elapsed = started.elapsed();
    assert_eq!(output, "done");
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    let grandchild = read_pid(dir.path());
    assert!(
        eventually_gone(grandchild),
        "grandchild {grandchild} outlived the call"
    );
}

#[test]
fn interrupt_from_another_thread_cancels_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), &json!({}), &["sleep", "30"]);
    let context = CallContext::detached(PATIENCE);
    let interrupt = context.interrupt.clone();
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(100));
        interrupt.raise(StopReason::Cancelled);
    });
    let started = Instant::now();
    let returned = tool.call(&object(&json!({})), &context);
    canceller.join().unwrap();
    assert_eq!(returned, Err(ToolFailure::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn interrupt_raised_for_a_timeout_reports_the_tools_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), &json!({}), &["sleep", "30"]);
    let context = CallContext::detached(PATIENCE);
    context.interrupt.raise(StopReason::Timeout);
    let returned = tool.call(&object(&json!({})), &context);
    assert_eq!(
        returned,
        Err(ToolFailure::TimedOut {
            after: toolsmith_model::DEFAULT_TIMEOUT
        })
    );
}

#[test]
fn output_past_the_default_cap_stops_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), &json!({}), &["yes", "a line of output"]);
    assert_eq!(tool.output_limit(), toolsmith_command::DEFAULT_OUTPUT_LIMIT);
    let message = failure(call(&tool, &json!({})));
    assert!(message.contains("output exceeded 4 MiB"), "{message}");
}

#[test]
fn output_cap_can_be_lowered() {
    let dir = tempfile::tempdir().unwrap();
    let tool =
        tool(dir.path(), &json!({}), &["head", "-c", "5000", "/dev/zero"]).with_output_limit(4096);
    let message = failure(call(&tool, &json!({})));
    assert!(message.contains("output exceeded 4 KiB"), "{message}");

    let mut roomy = tool.clone();
    roomy.set_output_limit(5000);
    assert!(call(&roomy, &json!({})).is_ok());
}

#[test]
fn endless_stderr_is_capped_to_its_tail() {
    let dir = tempfile::tempdir().unwrap();
    let program = "head -c 3000000 /dev/zero | tr '\\0' 'e' >&2; echo; echo last words >&2; exit 1";
    let tool = tool(dir.path(), &json!({}), &["bash", "-c", program]);
    let message = failure(call(&tool, &json!({})));
    assert!(
        message.ends_with("last words"),
        "{}",
        &message[message.len().saturating_sub(200)..]
    );
    assert!(
        message.len() < 8 * 1024,
        "message is {} bytes",
        message.len()
    );
}

#[test]
fn process_that_left_the_group_cannot_hold_the_call_open() {
    let dir = tempfile::tempdir().unwrap();
    // `setsid` puts the sleeper in a session of its own, out of reach of the group kill,
    // still holding stdout; the call returns after a short grace anyway.
    let tool = tool(
        dir.path(),
        &json!({}),
        &[
            "bash",
            "-c",
            "setsid sleep 30 & echo $! > pidfile; echo done",
        ],
    );
    let started = Instant::now();
    let output = text(call(&tool, &json!({})));
    let elapsed = started.elapsed();
    let escaped = read_pid(dir.path());
    let _ = std::process::Command::new("kill")
        .args(["-9", &escaped.to_string()])
        .status();
    assert_eq!(output, "done");
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}
