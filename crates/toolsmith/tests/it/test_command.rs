//! `toolsmith test`.

use std::path::Path;

use serde_json::Value;

use crate::{filters, folder, toolsmith};

/// Snapshots a run with temp paths (when a folder is given) and timings hidden.
macro_rules! snapshot_run {
    ($dir:expr, $command:expr) => {{
        let dir: Option<&Path> = $dir;
        let mut filters = dir.map(filters).unwrap_or_default();
        filters.push((r" \(\d+(\.\d+)?m?s\)".to_owned(), " ([TIME])".to_owned()));
        let filters: Vec<(&str, &str)> = filters.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        insta::with_settings!({ filters => filters }, {
            insta_cmd::assert_cmd_snapshot!($command);
        });
    }};
}

/// A Starlark tool with a few cases: one that passes, and failing ones of each kind.
const GREET: &str = r#"def greet(name: str) -> dict:
    """Greet someone."""
    return {"greeting": "Hello, " + name, "days": [{"sky": "sunny"}, {"sky": "rain"}]}

mcp.tool(greet, examples = [
    {"args": {"name": "Ada"}, "expect": {"structured": {"greeting": "Hello, Ada"}}},
    {"name": "structured", "args": {"name": "Ada"}, "expect": {"structured": {"greeting": "Hello, Bob", "days": [{"sky": "sunny"}, {"sky": "fog"}], "mood": "good"}}},
    {"name": "text", "args": {"name": "Ada"}, "expect": {"text": "{\"greeting\":\"Hello, Bob\"}"}},
    {"name": "error expected", "args": {"name": "Ada"}, "expect": {"error_contains": "no such person"}},
    {"name": "bad arguments", "args": {"nam": "Ada"}},
])
"#;

#[test]
fn bundled_examples_pass() {
    let mut command = toolsmith();
    command.args(["test", "examples/tools"]);
    snapshot_run!(None, command);
}

#[test]
fn every_examples_folder_passes() {
    let examples = crate::workspace().join("examples");
    for entry in std::fs::read_dir(examples).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let output = toolsmith().arg("test").arg(&dir).output().unwrap();
        assert!(
            output.status.success(),
            "{}:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn failing_cases_show_the_diff_and_exit_one() {
    let dir = folder(&[("greet.star", GREET)]);
    let mut command = toolsmith();
    command.arg("test").arg(dir.path());
    snapshot_run!(Some(dir.path()), command);
}

#[test]
fn filter_runs_only_matching_cases() {
    let mut command = toolsmith();
    command.args([
        "test",
        "examples/tools",
        "--filter",
        "forecast",
        "--filter",
        "text_slugify: example 2",
    ]);
    snapshot_run!(None, command);
}

#[test]
fn filter_matching_nothing_says_so() {
    let mut command = toolsmith();
    command.args(["test", "examples/tools", "--filter", "no_such_tool"]);
    snapshot_run!(None, command);
}

#[test]
fn json_reports_every_case_and_the_totals() {
    let dir = folder(&[("greet.star", GREET)]);
    let output = toolsmith()
        .arg("test")
        .arg(dir.path())
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["passed"], false);
    assert_eq!(
        report["totals"],
        serde_json::json!({"passed": 1, "failed": 4, "skipped": 0})
    );
    let cases = report["cases"].as_array().unwrap();
    let statuses: Vec<(&str, &str)> = cases
        .iter()
        .map(|case| {
            (
                case["name"].as_str().unwrap(),
                case["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("example 1", "passed"),
            ("structured", "failed"),
            ("text", "failed"),
            ("error expected", "failed"),
            ("bad arguments", "failed")
        ]
    );
    for case in cases {
        assert_eq!(case["tool"], "greet");
        assert!(case["duration_ms"].is_u64());
        assert!(case["source"].as_str().unwrap().ends_with("greet.star:1:5"));
    }
    let structured = &cases[1];
    assert_eq!(structured["message"], "`structured` differs in 3 places");
    let differences = &structured["failures"][0]["differences"];
    assert_eq!(
        differences[0],
        serde_json::json!({"path": "/greeting", "expected": "Hello, Bob", "actual": "Hello, Ada"})
    );
    assert_eq!(differences[1]["path"], "/days/1/sky");
    assert_eq!(
        differences[2],
        serde_json::json!({"path": "/mood", "expected": "good", "missing": true})
    );
    assert!(
        cases[2]["diff"]
            .as_str()
            .unwrap()
            .contains("-{\"greeting\":\"Hello, Bob\"}\n+{\"greeting\":\"Hello, Ada\"")
    );
    assert_eq!(report["load_errors"], serde_json::json!([]));
}

#[test]
fn junit_report_has_a_testcase_per_case() {
    let dir = folder(&[("greet.star", GREET)]);
    let junit = dir.path().join("junit.xml");
    let output = toolsmith()
        .arg("test")
        .arg(dir.path())
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"toolsmith test\" tests=\"5\" failures=\"4\""), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 5);
    assert_eq!(xml.matches("<failure ").count(), 4);
    assert!(xml.contains("<testcase classname=\"greet\" name=\"example 1\""));
    // Quotes and angle brackets from the tool's output are escaped.
    assert!(
        xml.contains("-{&quot;greeting&quot;:&quot;Hello, Bob&quot;}"),
        "{xml}"
    );
    assert!(xml.trim_end().ends_with("</testsuites>"));
    assert_eq!(
        xml.matches("<testsuite ").count(),
        xml.matches("</testsuite>").count()
    );
}

#[test]
fn cases_in_test_files_name_their_tool() {
    let dir = folder(&[
        (
            "greet.star",
            "def greet(name: str) -> str:\n    \"\"\"Greet someone.\"\"\"\n    return \"Hello, \" + name\n\nmcp.tool(greet)\n",
        ),
        (
            "tests/greet.toml",
            "# Named after the tool: cases without `tool` test `greet`.\n[[tests]]\nargs = { name = \"Ada\" }\nexpect = { text = \"Hello, Ada\" }\n\n[[tests]]\nname = \"later\"\nskip = \"not written yet\"\n",
        ),
        (
            "tests/more.toml",
            "tool = \"greet\"\n\n[[tests]]\nname = \"contains\"\nargs = { name = \"Bob\" }\nexpect = { text_contains = [\"Hello\", \"Bob\"], text_matches = '^Hello, [A-Z]' }\n\n[[tests]]\ntool = \"gret\"\nargs = { name = \"Ada\" }\n",
        ),
    ]);
    let mut command = toolsmith();
    command.arg("test").arg(dir.path());
    snapshot_run!(Some(dir.path()), command);
}

#[test]
fn unknown_expect_key_names_the_valid_keys() {
    let dir = folder(&[
        (
            "tests/hello.toml",
            "[[tests]]\ntool = \"hello\"\nargs = { name = \"Ada\" }\nexpect = { txt = \"Hello, Ada!\" }\n",
        ),
        (
            "hello.toml",
            "description = \"Greet.\"\n[[parameters]]\nname = \"name\"\ntype = \"string\"\nrequired = true\n",
        ),
        (
            "hello.star",
            "tool.return_string(\"Hello, \" + tool.get_string(\"name\", \"\") + \"!\")\n",
        ),
    ]);
    let mut command = toolsmith();
    command.arg("test").arg(dir.path());
    snapshot_run!(Some(dir.path()), command);
}

#[test]
fn load_errors_fail_the_run() {
    let dir = folder(&[
        (
            "ping.star",
            "def ping() -> str:\n    \"\"\"Answer pong.\"\"\"\n    return \"pong\"\n\nmcp.tool(ping, examples = [{\"expect\": {\"text\": \"pong\"}}])\n",
        ),
        ("broken.star", "def oops(:\n    pass\n"),
        ("tests/broken.toml", "[[tests]]\nargs = {\n"),
    ]);
    let mut command = toolsmith();
    command.arg("test").arg(dir.path());
    snapshot_run!(Some(dir.path()), command);
}

#[test]
fn case_timeout_stops_the_call() {
    let dir = folder(&[(
        "spin.star",
        "def spin() -> str:\n    \"\"\"Spin for a long time.\"\"\"\n    for i in range(1000000):\n        for j in range(1000000):\n            pass\n    return \"done\"\n\nmcp.tool(spin, examples = [{\"timeout\": \"300ms\"}])\n",
    )]);
    let output = toolsmith().arg("test").arg(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("timed out after 300ms (the case's `timeout`)"),
        "{stdout}"
    );
    assert!(stdout.ends_with("0 passed, 1 failed\n"), "{stdout}");
}

#[test]
fn folder_without_cases_passes_with_a_hint() {
    let dir = folder(&[(
        "ping.star",
        "def ping() -> str:\n    \"\"\"Answer pong.\"\"\"\n    return \"pong\"\n\nmcp.tool(ping)\n",
    )]);
    let mut command = toolsmith();
    command.arg("test").arg(dir.path());
    snapshot_run!(Some(dir.path()), command);
}
