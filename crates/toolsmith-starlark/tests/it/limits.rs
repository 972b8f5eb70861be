//! Limits (docs/tools.md, "The language and the sandbox"; docs/architecture.md, "Sandbox
//! and limits"): deadlines, cancellation, call depth, heap, giant native operations, and
//! `print` staying off stdout. No tight timing assertions: only that a runaway stops long
//! before it would have finished on its own.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith_model::{CallContext, Interrupt, StopReason};
use toolsmith_starlark::{LoadSettings, load_module};

use crate::{call, call_with, catalog, text};

const RUNAWAY: &str = r#"
def spin() -> str:
    """Loops for a very long time."""
    total = 0
    for i in range(10000000):
        for j in range(10000000):
            total += 1
    return str(total)

def recurse(n: int) -> int:
    """Unbounded recursion."""
    return recurse(n + 1)

def deep(n: int) -> int:
    """Bounded recursion."""
    if n == 0:
        return 0
    return 1 + deep(n - 1)

def hog() -> int:
    """Keeps allocating."""
    items = []
    chunk = "i" * 1024 * 100
    for i in range(10000000):
        items.append(chunk + str(i))
    return len(items)

def repeat_string(n: int) -> int:
    """A giant string in one step."""
    return len("x" * n)

def repeat_list(n: int) -> int:
    """A giant list in one step."""
    return len([0] * n)

def double_string() -> int:
    """Doubling a string in a short loop."""
    s = "ab"
    for i in range(40):
        s = s + s
    return len(s)

def huge_range() -> int:
    """Sorting a huge range."""
    return len(sorted(range(100000000)))

def deep_json() -> str:
    """Encodes a value nested far deeper than JSON parsers accept."""
    x = []
    for i in range(5000):
        x = [x]
    return json.encode(x)

def chatty() -> str:
    """Prints."""
    print("a line for the log", 42)
    return "done"

mcp.tool(spin, timeout=0.3)
mcp.tool(recurse)
mcp.tool(deep)
mcp.tool(hog)
mcp.tool(repeat_string)
mcp.tool(repeat_list)
mcp.tool(double_string)
mcp.tool(huge_range)
mcp.tool(deep_json)
mcp.tool(chatty)
"#;

fn context_for(timeout: Duration) -> CallContext {
    CallContext::detached(timeout)
}

#[test]
fn runaway_loop_stops_at_its_deadline() {
    let catalog = catalog(RUNAWAY);
    let started = Instant::now();
    let outcome = call_with(
        &catalog,
        "spin",
        json!({}),
        &context_for(Duration::from_millis(300)),
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(outcome["isError"], true);
    assert_eq!(text(&outcome), "tool `spin` timed out after 300ms");
}

#[test]
fn interrupt_cancels_a_running_call() {
    let catalog = catalog(RUNAWAY);
    let context = context_for(Duration::from_mins(1));
    let interrupt: Interrupt = context.interrupt.clone();
    let raiser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        interrupt.raise(StopReason::Cancelled);
    });
    let started = Instant::now();
    let outcome = call_with(&catalog, "spin", json!({}), &context);
    raiser.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(text(&outcome), "tool `spin` cancelled by the client");
}

#[test]
fn deep_recursion_is_a_clean_error() {
    let catalog = catalog(RUNAWAY);
    let outcome = call(&catalog, "recurse", json!({"n": 0}));
    assert_eq!(outcome["isError"], true);
    assert!(
        text(&outcome).contains("call depth limit exceeded"),
        "{outcome}"
    );
    let fine = call(&catalog, "deep", json!({"n": 50}));
    assert_eq!(fine["structuredContent"], json!({"result": 50}), "{fine}");
}

#[test]
fn heap_limit_stops_a_growing_script() {
    let outcome = call(&catalog(RUNAWAY), "hog", json!({}));
    assert_eq!(outcome["isError"], true);
    assert!(
        text(&outcome).contains("heap limit exceeded: the call allocated more than 256 MiB"),
        "{outcome}"
    );
}

#[test]
fn giant_single_operations_fail_cleanly() {
    let catalog = catalog(RUNAWAY);
    let string = call(&catalog, "repeat_string", json!({"n": 2_000_000_000}));
    assert!(
        text(&string).contains("repetition with `*` would create"),
        "{string}"
    );
    let list = call(&catalog, "repeat_list", json!({"n": 2_000_000_000}));
    assert!(
        text(&list).contains("repetition with `*` would create"),
        "{list}"
    );
    let small = call(&catalog, "repeat_string", json!({"n": 1000}));
    assert_eq!(small["structuredContent"], json!({"result": 1000}));
    let doubled = call(&catalog, "double_string", json!({}));
    assert!(text(&doubled).contains("`+` would create"), "{doubled}");
    let range = call(&catalog, "huge_range", json!({}));
    assert!(
        text(&range).contains("`range` of 100000000 items is too long"),
        "{range}"
    );
}

#[test]
fn deeply_nested_values_are_refused_not_a_stack_overflow() {
    let outcome = call(&catalog(RUNAWAY), "deep_json", json!({}));
    assert_eq!(outcome["isError"], true);
    assert!(
        text(&outcome).contains("nested more than 128 levels"),
        "{outcome}"
    );
}

/// Run by `print_goes_to_the_log_not_stdout` in a child process.
#[test]
#[ignore = "run as a child process by print_goes_to_the_log_not_stdout"]
fn print_child() {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    let outcome = call(&catalog(RUNAWAY), "chatty", json!({}));
    assert_eq!(text(&outcome), "done");
}

#[test]
fn print_goes_to_the_log_not_stdout() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "limits::print_child", "--ignored", "--nocapture"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(!stdout.contains("a line for the log"), "{stdout}");
    assert!(stderr.contains("a line for the log 42"), "{stderr}");
}

#[test]
fn infinite_top_level_loop_is_a_load_diagnostic() {
    let settings = LoadSettings {
        load_timeout: Duration::from_millis(200),
        ..LoadSettings::new("tools")
    };
    let started = Instant::now();
    let loaded = load_module(
        Path::new("tools/slow.star"),
        "for i in range(10000000):\n    for j in range(10000000):\n        pass\n",
        &settings,
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(loaded.diagnostics.len(), 1);
    assert_eq!(loaded.diagnostics[0].rule, "load-timeout");
    assert_eq!(
        loaded.diagnostics[0].message,
        "evaluating the file took longer than 200ms"
    );
}
