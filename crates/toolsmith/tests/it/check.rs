//! `toolsmith check`.

use serde_json::Value;

use crate::{folder, snapshot, toolsmith};

/// A folder with one tool of each kind of problem, and a file that fails to load.
fn problems() -> tempfile::TempDir {
    folder(&[
        (
            "weather.star",
            "def GetForecast(city: str, days: int = 10) -> dict:\n    \"\"\"Get the forecast\"\"\"\n    return {\"city\": city}\n\nmcp.tool(GetForecast, params = {\"days\": {\"maximum\": 7}, \"city\": {\"pattern\": \"\\\\A[a-z]+\\\\z\"}})\n",
        ),
        ("broken.star", "def oops(:\n    pass\n"),
    ])
}

#[test]
fn every_example_folder_passes() {
    let examples = crate::workspace().join("examples");
    for entry in std::fs::read_dir(examples).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let output = toolsmith()
            .arg("check")
            .arg(&dir)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let findings: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
        let serious: Vec<&Value> = findings
            .iter()
            .filter(|f| f["severity"] == "error")
            .collect();
        assert!(serious.is_empty(), "{}: {serious:#?}", dir.display());
        assert_eq!(output.status.code(), Some(0), "{}", dir.display());
    }
    let output = toolsmith()
        .args(["check", "examples/tools", "--format", "json"])
        .output()
        .unwrap();
    let findings: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let warnings: Vec<&Value> = findings
        .iter()
        .filter(|f| f["severity"] != "info")
        .collect();
    assert!(
        warnings.is_empty(),
        "examples/tools teaches the conventions: {warnings:#?}"
    );
}

#[test]
fn findings_show_the_source_and_exit_one() {
    let dir = problems();
    let mut command = toolsmith();
    command.arg("check").arg(dir.path());
    snapshot!(dir.path(), command);
}

#[test]
fn json_lists_findings_and_load_errors() {
    let dir = problems();
    let output = toolsmith()
        .arg("check")
        .arg(dir.path())
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let findings: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let rules: Vec<&str> = findings
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    for expected in [
        "syntax-error",
        "invalid-default",
        "non-ecma-pattern",
        "non-snake-case-name",
        "missing-summary-line",
    ] {
        assert!(
            rules.iter().any(|rule| rule.contains(expected)) || expected == "syntax-error",
            "{expected} missing from {rules:?}"
        );
    }
    for finding in &findings {
        for key in [
            "rule", "severity", "path", "line", "column", "message", "help",
        ] {
            assert!(finding.get(key).is_some(), "{key} missing in {finding}");
        }
    }
    assert!(
        findings
            .iter()
            .any(|f| f["path"].as_str().unwrap().ends_with("broken.star")),
        "load errors are findings too"
    );
}

#[test]
fn github_and_sarif_formats() {
    let dir = problems();
    let mut command = toolsmith();
    command.arg("check").arg(dir.path()).args([
        "--format",
        "github",
        "--select",
        "invalid-default,non-ecma-pattern",
    ]);
    snapshot!(dir.path(), command);
    let output = toolsmith()
        .arg("check")
        .arg(dir.path())
        .args(["--format", "sarif"])
        .output()
        .unwrap();
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    assert!(!log["runs"][0]["results"].as_array().unwrap().is_empty());
}

#[test]
fn strict_fails_on_warnings() {
    let dir = folder(&[(
        "shout.star",
        "def shout(text: str) -> str:\n    \"\"\"Shout text back.\"\"\"\n    return text.upper()\n\nmcp.tool(shout)\n",
    )]);
    let status = |extra: &[&str]| {
        toolsmith()
            .arg("check")
            .arg(dir.path())
            .args(extra)
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(status(&[]), Some(0), "warnings alone pass");
    assert_eq!(status(&["--strict"]), Some(1));
    assert_eq!(
        status(&[
            "--strict",
            "--ignore",
            "description-too-short,undocumented-parameter"
        ]),
        Some(0)
    );
}

#[test]
fn config_ignores_rules_per_folder_and_per_tool() {
    let dir = folder(&[
        (
            "shout.star",
            "def shout(text: str) -> str:\n    \"\"\"Shout text back.\"\"\"\n    return text.upper()\n\nmcp.tool(shout)\n",
        ),
        (
            "toolsmith.toml",
            "[check]\nignore = [\"missing-examples\", \"missing-usage-guidance\"]\n\n[check.per-tool-ignores]\nshout = [\"description-too-short\"]\n",
        ),
    ]);
    let mut command = toolsmith();
    command.arg("check").arg(dir.path());
    snapshot!(dir.path(), command);
}

#[test]
fn fix_rewrites_patterns_in_the_source() {
    let dir = problems();
    let mut command = toolsmith();
    command
        .arg("check")
        .arg(dir.path())
        .args(["--fix", "--select", "non-ecma-pattern"]);
    snapshot!(dir.path(), command);
    let fixed = std::fs::read_to_string(dir.path().join("weather.star")).unwrap();
    assert!(
        fixed.contains(r#""city": {"pattern": "^[a-z]+$"}"#),
        "{fixed}"
    );
}

#[test]
fn explain_prints_the_rule_documentation() {
    let mut command = toolsmith();
    command.args(["check", "--explain", "invalid-default"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn unknown_rules_get_suggestions() {
    let mut command = toolsmith();
    command.args(["check", "--explain", "invalid-defualt"]);
    insta_cmd::assert_cmd_snapshot!(command);
    let output = toolsmith()
        .args(["check", "examples/tools", "--select", "nonsense-rule-name"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn config_typos_are_warned_at_their_key_with_a_suggestion() {
    // `timout = "5s"` under `[defaults]` left the 30 s default in silence, `[auth] isuer`
    // said only "no issuer: ignored", and the config's warnings all pointed at 1:1.
    let dir = folder(&[
        (
            "shout.star",
            "def shout(text: str) -> str:\n    \"\"\"Shout text back.\"\"\"\n    return text.upper()\n\nmcp.tool(shout)\n",
        ),
        (
            "toolsmith.toml",
            "[server]\nname = \"typos\"\nnmae = \"x\"\n\n[defaults]\ntimout = \"5s\"\n\n[auth]\nisuer = \"https://auth.example.com\"\n\n[search]\nmode = \"sometimes\"\n\n[check]\nignore = [\"missing-examples\", \"missing-usage-guidance\", \"description-too-short\"]\nselct = [\"x\"]\n\n[upstream.u]\ncomand = [\"x\"]\n\n[openapi.o]\nspecc = \"a.json\"\n\n[resources.\"nope.txt\"]\nuri = \"x://y\"\n",
        ),
    ]);
    let mut command = toolsmith();
    command.arg("check").arg(dir.path());
    snapshot!(dir.path(), command);
}

#[test]
fn names_clients_reject_are_reported_once_and_a_missing_program_is_warned() {
    // `check` flagged `my shout` while `serve` still served it; now the folder leaves it
    // out with the same diagnostic, which `check` shows once. A command tool whose program
    // is not on PATH failed only at call time.
    let dir = folder(&[
        (
            "voice.star",
            "def shout(text: str) -> str:\n    \"\"\"Shout text back.\n\n    Args:\n        text: What to shout.\n    \"\"\"\n    return text.upper()\n\nmcp.tool(shout, name = \"my shout\")\n",
        ),
        (
            "fetch.toml",
            "description = \"Fetch a page.\"\ncommand = [\"toolsmith-surely-missing-program\", \"{url}\"]\n\n[[parameters]]\nname = \"url\"\ntype = \"string\"\ndescription = \"The page.\"\nrequired = true\n",
        ),
        (
            "toolsmith.toml",
            "[check]\nignore = [\"missing-examples\", \"missing-usage-guidance\", \"description-too-short\"]\n",
        ),
    ]);
    let mut command = toolsmith();
    command.arg("check").arg(dir.path());
    snapshot!(dir.path(), command);
}
