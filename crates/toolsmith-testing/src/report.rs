//! A finished run as machines read it: totals, the `--json` document and `JUnit` XML.
//! Human output is the CLI's, which styles it for the terminal.

use std::fmt::{self, Write as _};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_model::Diagnostic;

use crate::run::{CaseResult, Status};

/// Every case's result, and the load errors that fail the run by themselves.
#[derive(Debug, Clone)]
pub struct Report {
    /// The tools folder.
    pub folder: PathBuf,
    /// The results, in case order.
    pub results: Vec<CaseResult>,
    /// Error-severity diagnostics: tool files and test files that failed to load.
    pub load_errors: Vec<Diagnostic>,
    /// Wall-clock time of the run.
    pub duration: Duration,
}

/// How many cases passed, failed and were skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Cases whose expectations all held.
    pub passed: usize,
    /// Cases that failed or could not run.
    pub failed: usize,
    /// Cases not run (`skip`, or a tool hidden by `requires`).
    pub skipped: usize,
}

impl fmt::Display for Totals {
    /// `N passed, N failed`, then `, N skipped` when any were.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} passed, {} failed", self.passed, self.failed)?;
        if self.skipped > 0 {
            write!(f, ", {} skipped", self.skipped)?;
        }
        Ok(())
    }
}

impl Report {
    /// Counts the results.
    pub fn totals(&self) -> Totals {
        let mut totals = Totals::default();
        for result in &self.results {
            match result.status {
                Status::Passed => totals.passed += 1,
                Status::Failed(_) => totals.failed += 1,
                Status::Skipped(_) => totals.skipped += 1,
            }
        }
        totals
    }

    /// Whether the run passed: no failed case and no load error.
    pub fn passed(&self) -> bool {
        self.totals().failed == 0 && self.load_errors.is_empty()
    }

    /// The `toolsmith test --json` document.
    pub fn to_json(&self) -> Value {
        let totals = self.totals();
        json!({
            "folder": self.folder.display().to_string(),
            "passed": self.passed(),
            "totals": {"passed": totals.passed, "failed": totals.failed, "skipped": totals.skipped},
            "duration_ms": millis(self.duration),
            "cases": self.results.iter().map(case_json).collect::<Vec<_>>(),
            "load_errors": self.load_errors.iter().map(Diagnostic::to_json).collect::<Vec<_>>(),
        })
    }

    /// `JUnit` XML: one `<testsuite>` of cases (class = tool), and one of load errors when
    /// there are any.
    pub fn to_junit(&self) -> String {
        let totals = self.totals();
        let suite_name = escape(&self.folder.display().to_string());
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let errors = self.load_errors.len();
        let _ = writeln!(
            xml,
            "<testsuites name=\"toolsmith test\" tests=\"{}\" failures=\"{}\" errors=\"{errors}\" skipped=\"{}\" time=\"{}\">",
            self.results.len() + errors,
            totals.failed,
            totals.skipped,
            seconds(self.duration)
        );
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{suite_name}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\">",
            self.results.len(),
            totals.failed,
            totals.skipped,
            seconds(self.duration)
        );
        for result in &self.results {
            let case = &result.case;
            let _ = write!(
                xml,
                "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" line=\"{}\" time=\"{}\"",
                escape(&case.tool),
                escape(&case.name),
                escape(&case.source.path.display().to_string()),
                case.source.line,
                seconds(result.duration)
            );
            match &result.status {
                Status::Passed => xml.push_str("/>\n"),
                Status::Skipped(reason) => {
                    let _ = write!(
                        xml,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                        escape(reason)
                    );
                }
                Status::Failed(failures) => {
                    let message = failures
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ");
                    let _ = write!(
                        xml,
                        ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                        escape(&message),
                        failures.first().map_or("case", |failure| failure.check()),
                        escape_content(&failure_text(failures))
                    );
                }
            }
        }
        xml.push_str("  </testsuite>\n");
        if errors > 0 {
            let _ = writeln!(
                xml,
                "  <testsuite name=\"load errors\" tests=\"{errors}\" failures=\"0\" errors=\"{errors}\" skipped=\"0\" time=\"0\">"
            );
            for diagnostic in &self.load_errors {
                let _ = write!(
                    xml,
                    "    <testcase classname=\"load\" name=\"{}\" file=\"{}\" line=\"{}\" time=\"0\">\n      <error message=\"{}\" type=\"{}\"/>\n    </testcase>\n",
                    escape(&diagnostic.location.to_string()),
                    escape(&diagnostic.location.path.display().to_string()),
                    diagnostic.location.line,
                    escape(&diagnostic.message),
                    escape(diagnostic.rule)
                );
            }
            xml.push_str("  </testsuite>\n");
        }
        xml.push_str("</testsuites>\n");
        xml
    }
}

fn case_json(result: &CaseResult) -> Value {
    let case = &result.case;
    let mut object = json!({
        "tool": case.tool,
        "name": case.name,
        "source": case.source.to_string(),
        "status": match result.status {
            Status::Passed => "passed",
            Status::Failed(_) => "failed",
            Status::Skipped(_) => "skipped",
        },
        "duration_ms": millis(result.duration),
    });
    match &result.status {
        Status::Passed => {}
        Status::Skipped(reason) => object["message"] = json!(reason),
        Status::Failed(failures) => {
            object["message"] = json!(
                failures
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            let details: Vec<String> = failures.iter().filter_map(crate::Failure::detail).collect();
            if !details.is_empty() {
                object["diff"] = json!(details.join("\n"));
            }
            object["failures"] = failures.iter().map(crate::Failure::to_json).collect();
        }
    }
    if let Some(outcome) = &result.outcome {
        object["result"] = outcome.to_json();
    }
    object
}

/// Every failure's message and detail, as the body of a `JUnit` `<failure>`.
fn failure_text(failures: &[crate::Failure]) -> String {
    let mut text = String::new();
    for failure in failures {
        let _ = writeln!(text, "{failure}");
        if let Some(detail) = failure.detail() {
            let _ = writeln!(text, "{detail}");
        }
    }
    text
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn seconds(duration: Duration) -> String {
    format!("{:.3}", duration.as_secs_f64())
}

/// Escapes text for an XML attribute, keeping line breaks and tabs as references.
fn escape(text: &str) -> String {
    escape_xml(text, true)
}

/// Escapes text for XML element content, where line breaks stay as they are.
fn escape_content(text: &str) -> String {
    escape_xml(text, false)
}

/// Drops the characters XML 1.0 cannot hold (terminal escapes in tool output, for one).
fn escape_xml(text: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' | '\r' if in_attribute => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            '\n' | '\t' => out.push(c),
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_line() {
        assert_eq!(
            Totals {
                passed: 3,
                failed: 1,
                skipped: 0
            }
            .to_string(),
            "3 passed, 1 failed"
        );
        assert_eq!(
            Totals {
                passed: 3,
                failed: 0,
                skipped: 2
            }
            .to_string(),
            "3 passed, 0 failed, 2 skipped"
        );
    }

    #[test]
    fn xml_escaping_drops_control_characters() {
        assert_eq!(
            escape("a<b & \"c\"\x1b[0m\n"),
            "a&lt;b &amp; &quot;c&quot;[0m&#10;"
        );
        assert_eq!(escape_content("-a\n+b\r"), "-a\n+b");
    }
}
