//! Why a case failed, and the diff that shows it: a unified line diff for text, and the
//! JSON paths where structured content differs from the expected subset.

use std::fmt::{self, Write as _};
use std::time::Duration;

use serde_json::{Value, json};

/// One reason a case failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The case cannot run as written (unknown key, unknown tool, bad `args`, …).
    Invalid {
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The case expected a successful result and got `isError: true`.
    UnexpectedError {
        /// The error text.
        text: String,
    },
    /// The case expected `isError: true` and the call succeeded.
    UnexpectedSuccess {
        /// The result text.
        text: String,
    },
    /// The call did not finish within the case's own `timeout`.
    TimedOut {
        /// The case's timeout.
        after: Duration,
        /// The error text.
        text: String,
    },
    /// `text` differs.
    Text {
        /// The expected text.
        expected: String,
        /// The joined text of the result.
        actual: String,
    },
    /// `text_contains`: the text lacks a piece.
    TextContains {
        /// The missing piece.
        expected: String,
        /// The joined text of the result.
        actual: String,
    },
    /// `text_matches`: the text does not match a pattern.
    TextMatches {
        /// The regular expression.
        pattern: String,
        /// The joined text of the result.
        actual: String,
    },
    /// `error_contains`: the error text lacks a piece.
    ErrorContains {
        /// The missing piece.
        expected: String,
        /// The error text.
        actual: String,
    },
    /// `structured` was expected and the result has no structured content.
    NoStructuredContent {
        /// The result text.
        text: String,
    },
    /// `structured` does not match.
    Structured {
        /// Every place where the structured content differs.
        differences: Vec<Difference>,
    },
}

impl Failure {
    /// The `expect` key (or `case`, `is_error`, `timeout`) this failure is about.
    pub fn check(&self) -> &'static str {
        match self {
            Self::Invalid { .. } => "case",
            Self::UnexpectedError { .. } | Self::UnexpectedSuccess { .. } => "is_error",
            Self::TimedOut { .. } => "timeout",
            Self::Text { .. } => "text",
            Self::TextContains { .. } => "text_contains",
            Self::TextMatches { .. } => "text_matches",
            Self::ErrorContains { .. } => "error_contains",
            Self::NoStructuredContent { .. } | Self::Structured { .. } => "structured",
        }
    }

    /// What shows the failure: a diff, the differing paths, or the actual text.
    pub fn detail(&self) -> Option<String> {
        match self {
            Self::Invalid { .. } => None,
            Self::UnexpectedError { text }
            | Self::UnexpectedSuccess { text }
            | Self::TimedOut { text, .. }
            | Self::NoStructuredContent { text }
            | Self::TextContains { actual: text, .. }
            | Self::TextMatches { actual: text, .. }
            | Self::ErrorContains { actual: text, .. } => {
                Some(format!("actual text:\n{}", indent(text)))
            }
            Self::Text { expected, actual } => Some(text_diff(expected, actual)),
            Self::Structured { differences } => Some(
                differences
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        }
    }

    /// The failure as JSON: `check`, `message`, `detail`, and `differences` for structured
    /// content.
    pub fn to_json(&self) -> Value {
        let mut object = json!({"check": self.check(), "message": self.to_string()});
        if let Some(detail) = self.detail() {
            object["detail"] = json!(detail);
        }
        if let Self::Structured { differences } = self {
            object["differences"] = differences.iter().map(Difference::to_json).collect();
        }
        object
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid { message } => f.write_str(message),
            Self::UnexpectedError { .. } => {
                f.write_str("expected a successful result, got an error (isError: true)")
            }
            Self::UnexpectedSuccess { .. } => {
                f.write_str("expected an error (isError: true), the call succeeded")
            }
            Self::TimedOut { after, .. } => write!(
                f,
                "timed out after {} (the case's `timeout`)",
                toolsmith_model::duration::format(*after)
            ),
            Self::Text { .. } => f.write_str("`text` differs"),
            Self::TextContains { expected, .. } => {
                write!(f, "`text_contains`: the text does not contain {expected:?}")
            }
            Self::TextMatches { pattern, .. } => {
                write!(f, "`text_matches`: the text does not match /{pattern}/")
            }
            Self::ErrorContains { expected, .. } => {
                write!(
                    f,
                    "`error_contains`: the error text does not contain {expected:?}"
                )
            }
            Self::NoStructuredContent { .. } => {
                f.write_str("`structured`: the result has no structured content")
            }
            Self::Structured { differences } => {
                let count = differences.len();
                write!(
                    f,
                    "`structured` differs in {count} place{}",
                    if count == 1 { "" } else { "s" }
                )
            }
        }
    }
}

/// One place where structured content differs from the expected subset.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// JSON Pointer to the place (`/days/0/sky`; empty for the root).
    pub path: String,
    /// The expected value there.
    pub expected: Value,
    /// The actual value there; `None` when the key is missing.
    pub actual: Option<Value>,
}

impl Difference {
    /// `{"path", "expected", "actual"}`, or `"missing": true` instead of `actual`.
    pub fn to_json(&self) -> Value {
        let mut object = json!({"path": self.path, "expected": self.expected});
        match &self.actual {
            Some(actual) => object["actual"] = actual.clone(),
            None => object["missing"] = json!(true),
        }
        object
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        let expected = compact(&self.expected);
        match &self.actual {
            None => write!(f, "{path}: missing; expected {expected}"),
            Some(actual @ Value::Array(items)) if matches!(&self.expected, Value::Array(e) if e.len() != items.len()) =>
            {
                let want = self.expected.as_array().map_or(0, Vec::len);
                write!(
                    f,
                    "{path}: expected {want} item{}, got {}\n  expected {expected}\n  actual   {}",
                    if want == 1 { "" } else { "s" },
                    items.len(),
                    compact(actual)
                )
            }
            Some(actual) => write!(f, "{path}: expected {expected}, got {}", compact(actual)),
        }
    }
}

/// Where `actual` differs from `expected`, read as a subset: objects match when every
/// expected key is present and matches (extra keys are fine); arrays match when they have
/// the same length and match element by element; numbers match by value (`2` = `2.0`);
/// anything else must be equal.
pub fn structured_differences(expected: &Value, actual: &Value) -> Vec<Difference> {
    let mut differences = Vec::new();
    compare(expected, actual, &mut String::new(), &mut differences);
    differences
}

fn compare(expected: &Value, actual: &Value, path: &mut String, out: &mut Vec<Difference>) {
    let mismatch = |out: &mut Vec<Difference>, path: &str| {
        out.push(Difference {
            path: path.to_owned(),
            expected: expected.clone(),
            actual: Some(actual.clone()),
        });
    };
    match (expected, actual) {
        (Value::Object(want), Value::Object(have)) => {
            for (key, value) in want {
                let length = path.len();
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                match have.get(key) {
                    Some(found) => compare(value, found, path, out),
                    None => out.push(Difference {
                        path: path.clone(),
                        expected: value.clone(),
                        actual: None,
                    }),
                }
                path.truncate(length);
            }
        }
        (Value::Array(want), Value::Array(have)) => {
            if want.len() != have.len() {
                mismatch(out, path);
                return;
            }
            for (index, (value, found)) in want.iter().zip(have).enumerate() {
                let length = path.len();
                let _ = write!(path, "/{index}");
                compare(value, found, path, out);
                path.truncate(length);
            }
        }
        (Value::Number(want), Value::Number(have)) => {
            let equal =
                want == have || (want.is_f64() || have.is_f64()) && want.as_f64() == have.as_f64();
            if !equal {
                mismatch(out, path);
            }
        }
        _ if expected == actual => {}
        _ => mismatch(out, path),
    }
}

/// A unified line diff of `expected` against `actual`.
///
/// A missing final line break is marked only when one side has it and the other does not.
pub fn text_diff(expected: &str, actual: &str) -> String {
    let (expected, actual) = if expected.ends_with('\n') || actual.ends_with('\n') {
        (expected.to_owned(), actual.to_owned())
    } else {
        (format!("{expected}\n"), format!("{actual}\n"))
    };
    similar::TextDiff::from_lines(&expected, &actual)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .to_string()
        .trim_end()
        .to_owned()
}

/// JSON on one line, cut at 200 characters.
fn compact(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn indent(text: &str) -> String {
    if text.is_empty() {
        return "  (empty)".to_owned();
    }
    text.lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(expected: &Value, actual: &Value) -> Vec<String> {
        structured_differences(expected, actual)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn objects_match_by_key_subset() {
        assert!(paths(&json!({"a": 1}), &json!({"a": 1, "b": 2})).is_empty());
        assert_eq!(
            paths(&json!({"a": {"b": 1}}), &json!({"a": {"b": 2}})),
            ["/a/b: expected 1, got 2"]
        );
        assert_eq!(
            paths(&json!({"c": "x"}), &json!({"a": 1})),
            ["/c: missing; expected \"x\""]
        );
    }

    #[test]
    fn arrays_match_element_by_element() {
        assert!(
            paths(
                &json!([{"city": "Lisbon"}, {"city": "Oslo"}]),
                &json!([{"city": "Lisbon", "t": 1}, {"city": "Oslo"}])
            )
            .is_empty()
        );
        assert_eq!(
            paths(&json!({"r": [1, 2]}), &json!({"r": [1, 3]})),
            ["/r/1: expected 2, got 3"]
        );
        assert_eq!(
            paths(&json!({"r": [1]}), &json!({"r": [1, 2]})),
            ["/r: expected 1 item, got 2\n  expected [1]\n  actual   [1,2]"]
        );
    }

    #[test]
    fn numbers_match_by_value() {
        assert!(paths(&json!({"n": 2}), &json!({"n": 2.0})).is_empty());
        assert_eq!(
            paths(&json!(2), &json!("2")),
            ["(root): expected 2, got \"2\""]
        );
    }

    #[test]
    fn pointer_segments_are_escaped() {
        assert_eq!(
            paths(&json!({"a/b": 1}), &json!({"a/b": 2})),
            ["/a~1b: expected 1, got 2"]
        );
    }

    #[test]
    fn text_diff_is_unified() {
        assert_eq!(
            text_diff("a\nb\n", "a\nc\n"),
            "--- expected\n+++ actual\n@@ -1,2 +1,2 @@\n a\n-b\n+c"
        );
        assert_eq!(
            text_diff("a", "b"),
            "--- expected\n+++ actual\n@@ -1 +1 @@\n-a\n+b"
        );
        assert!(text_diff("a\n", "a").ends_with("\\ No newline at end of file"));
    }
}
