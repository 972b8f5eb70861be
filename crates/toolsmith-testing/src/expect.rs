//! Expectations: the `expect` table of a test case, parsed once, and checked against a
//! call's [`CallOutcome`]. A case without `expect` expects a result that is not `isError`.

use regex::Regex;
use serde_json::Value;
use toolsmith_model::{CallOutcome, kind};

use crate::failure::{Failure, structured_differences};

/// The keys an `expect` table may have.
pub const EXPECT_KEYS: &[&str] = &[
    "text",
    "text_contains",
    "text_matches",
    "structured",
    "is_error",
    "error_contains",
];

/// What a case expects of the result.
#[derive(Debug, Clone)]
pub struct Expectation {
    /// Whether the result must be an error (`isError: true`). Defaults to `false`, or to
    /// `true` when `error_contains` is given.
    pub is_error: bool,
    /// The text content blocks, joined by newlines, equal this exactly.
    pub text: Option<String>,
    /// The joined text contains each of these.
    pub text_contains: Vec<String>,
    /// The joined text matches each of these regular expressions (anywhere; anchor with
    /// `^…$` for the whole text).
    pub text_matches: Vec<Regex>,
    /// The structured content contains this value as a subset (see
    /// [`structured_differences`]).
    pub structured: Option<Value>,
    /// The error text contains each of these (implies `is_error`).
    pub error_contains: Vec<String>,
}

impl Default for Expectation {
    fn default() -> Self {
        Self::success()
    }
}

impl Expectation {
    /// Expects only a result that is not an error (a case without `expect`).
    pub fn success() -> Self {
        Self {
            is_error: false,
            text: None,
            text_contains: Vec::new(),
            text_matches: Vec::new(),
            structured: None,
            error_contains: Vec::new(),
        }
    }

    /// Parses an `expect` table.
    ///
    /// Fails with a message naming the key when a key is unknown (with the valid keys) or a
    /// value has the wrong type, and when a regular expression does not compile.
    pub fn parse(value: &Value) -> Result<Self, String> {
        let Value::Object(table) = value else {
            return Err(format!(
                "`expect` must be a table, got {}; e.g. expect = {{ text_contains = \"ok\" }}",
                kind(value)
            ));
        };
        let mut expectation = Self::success();
        let mut is_error = None;
        for (key, value) in table {
            match key.as_str() {
                "text" => expectation.text = Some(string(key, value)?),
                "text_contains" => expectation.text_contains = strings(key, value)?,
                "text_matches" => {
                    expectation.text_matches = strings(key, value)?
                        .iter()
                        .map(|pattern| {
                            Regex::new(pattern).map_err(|error| {
                                format!("`text_matches`: invalid regular expression: {error}")
                            })
                        })
                        .collect::<Result<_, _>>()?;
                }
                "structured" => expectation.structured = Some(value.clone()),
                "is_error" => {
                    is_error = Some(value.as_bool().ok_or_else(|| {
                        format!("`is_error` must be true or false, got {}", kind(value))
                    })?);
                }
                "error_contains" => expectation.error_contains = strings(key, value)?,
                unknown => return Err(unknown_key("`expect` key", unknown, EXPECT_KEYS)),
            }
        }
        expectation.is_error = match is_error {
            Some(false) if !expectation.error_contains.is_empty() => {
                return Err(
                    "`error_contains` expects an error result, but `is_error` is false".into(),
                );
            }
            Some(flag) => flag,
            None => !expectation.error_contains.is_empty(),
        };
        Ok(expectation)
    }

    /// Checks a call's outcome; an empty list means the case passed.
    ///
    /// When the outcome is an error and the case expected success (or the other way round),
    /// that is the only failure reported: the other checks would only repeat it.
    pub fn check(&self, outcome: &CallOutcome) -> Vec<Failure> {
        let text = outcome.joined_text();
        if outcome.is_error != self.is_error {
            return vec![if outcome.is_error {
                Failure::UnexpectedError { text }
            } else {
                Failure::UnexpectedSuccess { text }
            }];
        }
        let mut failures = Vec::new();
        if let Some(expected) = &self.text
            && *expected != text
        {
            failures.push(Failure::Text {
                expected: expected.clone(),
                actual: text.clone(),
            });
        }
        for needle in &self.text_contains {
            if !text.contains(needle.as_str()) {
                failures.push(Failure::TextContains {
                    expected: needle.clone(),
                    actual: text.clone(),
                });
            }
        }
        for pattern in &self.text_matches {
            if !pattern.is_match(&text) {
                failures.push(Failure::TextMatches {
                    pattern: pattern.as_str().to_owned(),
                    actual: text.clone(),
                });
            }
        }
        for needle in &self.error_contains {
            if !text.contains(needle.as_str()) {
                failures.push(Failure::ErrorContains {
                    expected: needle.clone(),
                    actual: text.clone(),
                });
            }
        }
        if let Some(expected) = &self.structured {
            match &outcome.structured_content {
                None => failures.push(Failure::NoStructuredContent { text: text.clone() }),
                Some(actual) => {
                    let differences = structured_differences(expected, actual);
                    if !differences.is_empty() {
                        failures.push(Failure::Structured { differences });
                    }
                }
            }
        }
        failures
    }
}

fn string(key: &str, value: &Value) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("`{key}` must be a string, got {}", kind(value)))
}

/// A string, or a list of strings (every one must hold).
fn strings(key: &str, value: &Value) -> Result<Vec<String>, String> {
    match value {
        Value::String(text) => Ok(vec![text.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|item| {
                item.as_str().map(str::to_owned).ok_or_else(|| {
                    format!(
                        "`{key}` must be a string or a list of strings, got a list with {}",
                        kind(item)
                    )
                })
            })
            .collect(),
        other => Err(format!(
            "`{key}` must be a string or a list of strings, got {}",
            kind(other)
        )),
    }
}

/// "unknown `what` `key`; did you mean `x`? valid keys: a, b, c".
pub(crate) fn unknown_key(what: &str, key: &str, valid: &[&str]) -> String {
    let suggestion = toolsmith_model::names::suggestion(key, valid.iter().copied())
        .map(|suggestion| suggestion + " ")
        .unwrap_or_default();
    format!(
        "unknown {what} `{key}`; {suggestion}valid keys: {}",
        valid.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolsmith_model::{TextFormat, ToolReturn};

    fn outcome(value: Value) -> CallOutcome {
        ToolReturn::Value(value).into_outcome(TextFormat::Json)
    }

    #[test]
    fn no_expectation_only_requires_success() {
        let expectation = Expectation::success();
        assert!(expectation.check(&CallOutcome::text("anything")).is_empty());
        let failures = expectation.check(&CallOutcome::error("boom"));
        assert!(matches!(&failures[..], [Failure::UnexpectedError { text }] if text == "boom"));
    }

    #[test]
    fn unknown_key_names_the_valid_keys() {
        let error = Expectation::parse(&json!({"txt": "a"})).unwrap_err();
        assert_eq!(
            error,
            "unknown `expect` key `txt`; did you mean `text`? valid keys: text, text_contains, text_matches, structured, is_error, error_contains"
        );
    }

    #[test]
    fn error_contains_implies_an_error_result() {
        let expectation = Expectation::parse(&json!({"error_contains": "unknown city"})).unwrap();
        assert!(expectation.is_error);
        assert!(
            expectation
                .check(&CallOutcome::error("unknown city: Atlantis"))
                .is_empty()
        );
        let failures = expectation.check(&CallOutcome::error("timed out"));
        assert!(matches!(&failures[..], [Failure::ErrorContains { .. }]));
        assert!(Expectation::parse(&json!({"error_contains": "x", "is_error": false})).is_err());
    }

    #[test]
    fn text_checks() {
        let expectation = Expectation::parse(&json!({
            "text": "Hello, Ada!",
            "text_contains": ["Hello", "Ada"],
            "text_matches": "^Hello, [A-Z][a-z]+!$",
        }))
        .unwrap();
        assert!(
            expectation
                .check(&CallOutcome::text("Hello, Ada!"))
                .is_empty()
        );
        let failures = expectation.check(&CallOutcome::text("Hello, bob"));
        let checks: Vec<&str> = failures.iter().map(Failure::check).collect();
        assert_eq!(checks, ["text", "text_contains", "text_matches"]);
    }

    #[test]
    fn invalid_regex_is_reported_when_parsing() {
        let error = Expectation::parse(&json!({"text_matches": "("})).unwrap_err();
        assert!(
            error.starts_with("`text_matches`: invalid regular expression"),
            "{error}"
        );
    }

    #[test]
    fn structured_needs_structured_content() {
        let expectation = Expectation::parse(&json!({"structured": {"words": 3}})).unwrap();
        assert!(
            expectation
                .check(&outcome(json!({"words": 3, "lines": 1})))
                .is_empty()
        );
        assert!(matches!(
            &expectation.check(&CallOutcome::text("3"))[..],
            [Failure::NoStructuredContent { .. }]
        ));
        assert!(matches!(
            &expectation.check(&outcome(json!({"words": 4})))[..],
            [Failure::Structured { .. }]
        ));
    }
}
