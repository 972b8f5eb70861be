//! Test cases as written: one `{"args": …, "expect": …}` table from a tool's `examples`
//! (or a manifest's `[[tests]]`), or a `[[tests]]` table of a `tests/*.toml` file, which
//! also names its `tool`. Parsing never aborts: a case that cannot run carries its reason
//! and fails when run, so every problem shows up in one `toolsmith test`.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use toolsmith_model::{Diagnostic, JsonObject, Severity, SourceLocation, kind};

use crate::expect::{Expectation, unknown_key};

/// The keys a case on a tool (`examples`, manifest `[[tests]]`) may have.
pub const CASE_KEYS: &[&str] = &["name", "args", "expect", "timeout", "skip"];

/// The keys a case in a `tests/*.toml` file may have.
pub const FILE_CASE_KEYS: &[&str] = &["tool", "name", "args", "expect", "timeout", "skip"];

/// The top-level keys of a `tests/*.toml` file.
pub const FILE_KEYS: &[&str] = &["tool", "tests"];

/// The rule id of diagnostics about `tests/*.toml` files.
pub const INVALID_TEST_FILE: &str = "invalid-test-file";

/// One test case: call `tool` with `args`, check the result against `expect`.
#[derive(Debug, Clone)]
pub struct TestCase {
    /// The tool to call.
    pub tool: String,
    /// The case's `name`, or `example N` (N counts the tool's cases from 1).
    pub name: String,
    /// Where the case was written: the tool's definition, or the `[[tests]]` line.
    pub source: SourceLocation,
    /// What to run, or why the case cannot run.
    pub body: Result<CaseBody, String>,
}

impl TestCase {
    /// `tool: name`, the id `--filter` matches and reports show.
    pub fn id(&self) -> String {
        format!("{}: {}", self.tool, self.name)
    }
}

/// What a valid case runs and expects.
#[derive(Debug, Clone, Default)]
pub struct CaseBody {
    /// The call's arguments.
    pub args: JsonObject,
    /// What the result must look like.
    pub expect: Expectation,
    /// Replaces the tool's timeout for this call.
    pub timeout: Option<Duration>,
    /// Why the case is skipped (`skip = true` gives an empty reason).
    pub skip: Option<String>,
}

/// A case as parsed, before the collector names it and checks its tool.
#[derive(Debug, Clone)]
pub struct ParsedCase {
    /// The `tool` key, when given.
    pub tool: Option<String>,
    /// The `name` key, when given.
    pub name: Option<String>,
    /// The case, or why it cannot run.
    pub body: Result<CaseBody, String>,
}

/// Parses one case table; `keys` are the keys it may have ([`CASE_KEYS`] or
/// [`FILE_CASE_KEYS`]).
pub fn parse_case(value: &Value, keys: &[&str]) -> ParsedCase {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    ParsedCase {
        tool: text("tool"),
        name: text("name"),
        body: parse_body(value, keys),
    }
}

fn parse_body(value: &Value, keys: &[&str]) -> Result<CaseBody, String> {
    let Value::Object(table) = value else {
        return Err(format!(
            "a test case must be a table with `args` and `expect`, got {}",
            kind(value)
        ));
    };
    if let Some(key) = table.keys().find(|key| !keys.contains(&key.as_str())) {
        return Err(unknown_key("test case key", key, keys));
    }
    for key in ["tool", "name"] {
        if let Some(value) = table.get(key).filter(|value| !value.is_string()) {
            return Err(format!("`{key}` must be a string, got {}", kind(value)));
        }
    }
    let args = match table.get("args") {
        None | Some(Value::Null) => JsonObject::new(),
        Some(Value::Object(args)) => args.clone(),
        Some(other) => {
            return Err(format!(
                "`args` must be a table of arguments, got {}; e.g. args = {{ city = \"Oslo\" }}",
                kind(other)
            ));
        }
    };
    let expect = table
        .get("expect")
        .map(Expectation::parse)
        .transpose()?
        .unwrap_or_default();
    let timeout = table
        .get("timeout")
        .map(|value| {
            toolsmith_model::duration::parse(value)
                .map_err(|message| format!("`timeout`: {message}"))
        })
        .transpose()?;
    let skip = match table.get("skip") {
        None | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(String::new()),
        Some(Value::String(reason)) => Some(reason.clone()),
        Some(other) => {
            return Err(format!(
                "`skip` must be true, false or a reason, got {}",
                kind(other)
            ));
        }
    };
    Ok(CaseBody {
        args,
        expect,
        timeout,
        skip,
    })
}

/// The cases of one `tests/*.toml` file, each with the line of its `[[tests]]` table.
#[derive(Debug, Default)]
pub struct TestFile {
    /// The cases, in file order, with where each was written.
    pub cases: Vec<(ParsedCase, SourceLocation)>,
    /// Problems with the file as a whole.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses a `tests/*.toml` file.
///
/// ```toml
/// tool = "forecast_get"          # optional: the default tool of the file's cases
///
/// [[tests]]
/// name = "Oslo has a forecast"   # optional
/// args = { city = "Oslo" }
/// expect = { structured = { city = "Oslo" } }
/// ```
pub fn parse_test_file(path: &Path, source: &str) -> TestFile {
    let mut file = TestFile::default();
    let table = match toolsmith_folder::parse_toml(
        path,
        source,
        INVALID_TEST_FILE,
        "fix the TOML syntax; see docs/testing.md for the format",
    ) {
        Ok(table) => table,
        Err(diagnostic) => {
            file.diagnostics.push(diagnostic);
            return file;
        }
    };
    let mut problem = |message: String, help: &str| {
        file.diagnostics.push(
            Diagnostic::error(INVALID_TEST_FILE, SourceLocation::file(path), message)
                .with_help(help),
        );
    };
    for key in table
        .keys()
        .filter(|key| !FILE_KEYS.contains(&key.as_str()))
    {
        problem(
            unknown_key("key", key, FILE_KEYS),
            "a test file holds `[[tests]]` tables and an optional default `tool`",
        );
    }
    let default_tool = match table.get("tool") {
        None => None,
        Some(Value::String(tool)) => Some(tool.clone()),
        Some(other) => {
            problem(
                format!("`tool` must be a string, got {}", kind(other)),
                "write tool = \"NAME\"",
            );
            None
        }
    };
    let cases = match table.get("tests") {
        Some(Value::Array(cases)) => cases.as_slice(),
        Some(other) => {
            problem(
                format!(
                    "`tests` must be an array of tables ([[tests]]), got {}",
                    kind(other)
                ),
                "write each case as a [[tests]] table",
            );
            &[]
        }
        None => {
            let mut warning = Diagnostic::error(
                INVALID_TEST_FILE,
                SourceLocation::file(path),
                "the file has no `[[tests]]`",
            )
            .with_help("add a case: [[tests]] tool = \"NAME\" args = {...} expect = {...}");
            warning.severity = Severity::Warning;
            file.diagnostics.push(warning);
            &[]
        }
    };
    let keys = toolsmith_folder::toml_keys(source);
    for (index, value) in cases.iter().enumerate() {
        let mut case = parse_case(value, FILE_CASE_KEYS);
        if case.tool.is_none() {
            case.tool.clone_from(&default_tool);
        }
        let location =
            toolsmith_folder::key_location(path, source, &keys, &["tests", &index.to_string()]);
        file.cases.push((case, location));
    }
    file
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn case_without_expect_expects_success() {
        let case = parse_case(&json!({"args": {"city": "Oslo"}}), CASE_KEYS);
        let body = case.body.unwrap();
        assert_eq!(body.args["city"], "Oslo");
        assert!(!body.expect.is_error);
        assert_eq!(body.timeout, None);
    }

    #[test]
    fn unknown_case_key_is_a_reason_not_a_crash() {
        let case = parse_case(&json!({"name": "n", "arg": {}}), CASE_KEYS);
        assert_eq!(case.name.as_deref(), Some("n"));
        assert_eq!(
            case.body.unwrap_err(),
            "unknown test case key `arg`; did you mean `args`? valid keys: name, args, expect, timeout, skip"
        );
    }

    #[test]
    fn timeout_and_skip() {
        let body = parse_case(
            &json!({"timeout": "500ms", "skip": "needs network"}),
            CASE_KEYS,
        )
        .body
        .unwrap();
        assert_eq!(body.timeout, Some(Duration::from_millis(500)));
        assert_eq!(body.skip.as_deref(), Some("needs network"));
        assert!(
            parse_case(&json!({"args": [1]}), CASE_KEYS)
                .body
                .unwrap_err()
                .starts_with("`args` must be a table")
        );
    }

    #[test]
    fn test_file_cases_have_lines_and_a_default_tool() {
        let source = "tool = \"hello\"\n\n[[tests]]\nargs = { name = \"Ada\" }\n\n[[tests]] # named\ntool = \"add\"\nname = \"sum\"\n";
        let file = parse_test_file(Path::new("tests/t.toml"), source);
        assert!(file.diagnostics.is_empty(), "{:?}", file.diagnostics);
        let summary: Vec<(Option<&str>, u32)> = file
            .cases
            .iter()
            .map(|(case, location)| (case.tool.as_deref(), location.line))
            .collect();
        assert_eq!(summary, [(Some("hello"), 3), (Some("add"), 6)]);
    }

    #[test]
    fn broken_test_file_is_a_located_diagnostic() {
        let file = parse_test_file(Path::new("tests/t.toml"), "[[tests]]\nargs = {\n");
        assert_eq!(file.diagnostics[0].rule, INVALID_TEST_FILE);
        assert!(file.diagnostics[0].location.line >= 2);
        let file = parse_test_file(Path::new("tests/t.toml"), "test = []\n");
        assert_eq!(
            file.diagnostics[0].message,
            "unknown key `test`; did you mean `tests`? valid keys: tool, tests"
        );
    }
}
