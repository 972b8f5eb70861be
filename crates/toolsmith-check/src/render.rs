//! Findings as text, one renderer per format: human (source snippet with the offending span
//! and a `help:` line, via `annotate-snippets`), JSON, GitHub Actions workflow commands and
//! SARIF 2.1.0 for code-scanning dashboards.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use serde_json::{Value, json};
use toolsmith_model::{Diagnostic, Severity};

use crate::checker::Finding;
use crate::registry;

/// The output formats of `toolsmith check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Source snippets with carets and help lines, for people.
    #[default]
    Human,
    /// A JSON array of `{rule, severity, path, line, column, message, help}`.
    Json,
    /// GitHub Actions workflow commands (`::error file=…,line=…::message`).
    Github,
    /// SARIF 2.1.0, for code-scanning dashboards.
    Sarif,
}

/// Renders findings for people: one block per finding, with the source line and a caret
/// under the offending text when the source is known. `colour` adds ANSI styles.
#[must_use]
pub fn human(findings: &[Finding], sources: &BTreeMap<PathBuf, String>, colour: bool) -> String {
    let renderer = if colour {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for finding in findings {
        let diagnostic = &finding.diagnostic;
        let path = diagnostic.location.path.display().to_string();
        let level = level(diagnostic.severity);
        let title = level
            .primary_title(diagnostic.message.as_str())
            .id(diagnostic.rule);
        let source = sources.get(&diagnostic.location.path);
        let span = diagnostic
            .span
            .map(toolsmith_model::Span::range)
            .or_else(|| source.and_then(|text| word_at(text, &diagnostic.location)))
            .filter(|range| {
                source.is_some_and(|text| {
                    range.end <= text.len()
                        && text.is_char_boundary(range.start)
                        && text.is_char_boundary(range.end)
                })
            });
        let mut group = if let (Some(text), Some(range)) = (source, span) {
            let range = if range.is_empty() {
                range.start..range.start
            } else {
                range
            };
            Group::with_title(title).element(
                Snippet::source(text.as_str())
                    .path(path.as_str())
                    .annotation(AnnotationKind::Primary.span(range)),
            )
        } else {
            let mut origin = Origin::path(path.as_str());
            if diagnostic.location.line > 0 {
                origin = origin.line(diagnostic.location.line as usize);
                if diagnostic.location.column > 0 {
                    origin = origin.char_column(diagnostic.location.column as usize);
                }
            }
            Group::with_title(title).element(origin)
        };
        if let Some(help) = &diagnostic.help {
            group = group.element(Level::HELP.message(help.as_str()));
        }
        out.push_str(&renderer.render(&[group]));
        out.push_str("\n\n");
    }
    out
}

/// For a diagnostic with a line and column but no span (most load errors): the word that
/// starts there, so the snippet still points somewhere.
fn word_at(
    text: &str,
    location: &toolsmith_model::SourceLocation,
) -> Option<std::ops::Range<usize>> {
    if location.line == 0 || (location.line == 1 && location.column <= 1 && text.is_empty()) {
        return None;
    }
    let start = toolsmith_model::offset_of(text, location.line, location.column.max(1));
    let rest = &text[start..];
    let word = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let length = if word > 0 {
        word
    } else {
        rest.chars()
            .next()
            .filter(|c| *c != '\n')
            .map_or(0, char::len_utf8)
    };
    (length > 0).then_some(start..start + length)
}

fn level(severity: Severity) -> Level<'static> {
    match severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::INFO,
    }
}

/// One finding as the JSON object of `--format json`.
fn json_object(diagnostic: &Diagnostic) -> Value {
    json!({
        "rule": diagnostic.rule,
        "severity": diagnostic.severity,
        "path": diagnostic.location.path.display().to_string(),
        "line": diagnostic.location.line,
        "column": diagnostic.location.column,
        "message": diagnostic.message,
        "help": diagnostic.help,
    })
}

/// Renders findings as a JSON array of `{rule, severity, path, line, column, message, help}`.
#[must_use]
pub fn json(findings: &[Finding]) -> String {
    serde_json::to_string_pretty(&json_value(findings)).expect("JSON values always serialize")
        + "\n"
}

/// The array [`json`] renders, as a value (the `toolsmith_check` tool of the
/// `toolsmith-dev` profile returns it as structured content).
#[must_use]
pub fn json_value(findings: &[Finding]) -> Value {
    findings
        .iter()
        .map(|f| json_object(&f.diagnostic))
        .collect()
}

/// Renders findings as GitHub Actions workflow commands, which annotate the pull request.
#[must_use]
pub fn github(findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        let diagnostic = &finding.diagnostic;
        let command = match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut properties = vec![format!(
            "file={}",
            escape_property(&diagnostic.location.path.display().to_string())
        )];
        if diagnostic.location.line > 0 {
            properties.push(format!("line={}", diagnostic.location.line));
            if diagnostic.location.column > 0 {
                properties.push(format!("col={}", diagnostic.location.column));
            }
        }
        properties.push(format!("title={}", escape_property(diagnostic.rule)));
        let mut message = diagnostic.message.clone();
        if let Some(help) = &diagnostic.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        let _ = writeln!(
            out,
            "::{command} {}::{}",
            properties.join(","),
            escape_data(&message)
        );
    }
    out
}

fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Renders findings as a SARIF 2.1.0 log with one run of the `toolsmith` driver.
#[must_use]
pub fn sarif(findings: &[Finding], version: &str) -> String {
    let mut rule_ids: Vec<&str> = findings.iter().map(|f| f.diagnostic.rule).collect();
    rule_ids.sort_unstable();
    rule_ids.dedup();
    let rules: Vec<Value> = rule_ids
        .iter()
        .map(|id| {
            let mut rule = json!({"id": id});
            if let Some(known) = registry::rule(id) {
                rule["shortDescription"] = json!({"text": known.summary});
                rule["helpUri"] = json!(format!(
                    "https://github.com/toolsmith-dev/toolsmith/blob/main/docs/rules/{id}.md"
                ));
                rule["defaultConfiguration"] = json!({"level": sarif_level(known.severity)});
            } else {
                rule["shortDescription"] = json!({"text": "The file failed to load"});
            }
            rule
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|finding| {
            let diagnostic = &finding.diagnostic;
            let mut text = diagnostic.message.clone();
            if let Some(help) = &diagnostic.help {
                text.push_str("\nhelp: ");
                text.push_str(help);
            }
            let uri = diagnostic
                .location
                .path
                .display()
                .to_string()
                .replace('\\', "/");
            let mut physical = json!({"artifactLocation": {"uri": uri}});
            if diagnostic.location.line > 0 {
                let mut region = json!({"startLine": diagnostic.location.line});
                if diagnostic.location.column > 0 {
                    region["startColumn"] = json!(diagnostic.location.column);
                }
                physical["region"] = region;
            }
            json!({
                "ruleId": diagnostic.rule,
                "ruleIndex": rule_ids.iter().position(|id| *id == diagnostic.rule),
                "level": sarif_level(diagnostic.severity),
                "message": {"text": text},
                "locations": [{"physicalLocation": physical}],
            })
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "toolsmith",
                "version": version,
                "informationUri": "https://github.com/toolsmith-dev/toolsmith",
                "rules": rules,
            }},
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).expect("JSON values always serialize") + "\n"
}

fn sarif_level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}
