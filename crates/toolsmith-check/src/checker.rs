//! Running the rules: the [`Server`] they look at, the [`Report`] they write to, and the
//! [`Finding`]s that come out — a model [`Diagnostic`] plus the tool it is about and, for
//! some, a [`Fix`].

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toolsmith_model::{Diagnostic, Severity, SourceLocation, ToolDefinition, line_column};

use crate::context::CheckContext;
use crate::registry;
use crate::rule::Rule;
use crate::settings::Settings;

/// One problem found: a diagnostic, the tool it concerns and possibly a fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What, where, how serious, and how to fix it.
    pub diagnostic: Diagnostic,
    /// The tool it is about; `None` for whole-server findings and load errors.
    pub tool: Option<String>,
    /// A safe, mechanical fix (`toolsmith check --fix` applies it).
    pub fix: Option<Fix>,
}

impl Finding {
    /// A finding for a load diagnostic (a file that failed to load).
    #[must_use]
    pub fn from_load(diagnostic: Diagnostic) -> Self {
        Self {
            diagnostic,
            tool: None,
            fix: None,
        }
    }

    /// Adds a help line.
    pub(crate) fn help(&mut self, help: impl Into<String>) -> &mut Self {
        self.diagnostic.help = Some(help.into());
        self
    }

    /// Attaches a fix.
    pub(crate) fn fix(&mut self, fix: Fix) -> &mut Self {
        self.fix = Some(fix);
        self
    }
}

/// Text edits that resolve a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, e.g. "rewrite the pattern as `^[a-z]+$`".
    pub message: String,
    /// The edits, in any order; they never overlap.
    pub edits: Vec<Edit>,
}

/// Replace a byte range of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The file, as the tool's source location names it.
    pub path: PathBuf,
    /// The bytes to replace.
    pub range: Range<usize>,
    /// What to put there.
    pub replacement: String,
}

/// Applies edits to a text; edits that overlap an earlier one are skipped. Returns the new
/// text and how many edits were applied.
#[must_use]
pub fn apply_edits(source: &str, edits: &[&Edit]) -> (String, usize) {
    let mut sorted: Vec<&&Edit> = edits.iter().collect();
    sorted.sort_by_key(|edit| (edit.range.start, edit.range.end));
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    let mut applied = 0;
    for edit in sorted {
        if edit.range.start < at || edit.range.end > source.len() {
            continue;
        }
        out.push_str(&source[at..edit.range.start]);
        out.push_str(&edit.replacement);
        at = edit.range.end;
        applied += 1;
    }
    out.push_str(&source[at..]);
    (out, applied)
}

/// Where a finding points: a file and, when known, a byte span in it.
#[derive(Debug, Clone)]
pub(crate) struct At {
    pub(crate) path: PathBuf,
    pub(crate) line: u32,
    pub(crate) column: u32,
    pub(crate) span: Option<Range<usize>>,
}

impl At {
    /// The start of `path` (or the path as a whole when `line` is 0).
    pub(crate) fn location(location: &SourceLocation) -> Self {
        Self {
            path: location.path.clone(),
            line: location.line,
            column: location.column,
            span: None,
        }
    }

    /// `span` of `source`, the text of `path`.
    pub(crate) fn span(path: &Path, source: &str, span: Range<usize>) -> Self {
        let (line, column) = line_column(source, span.start);
        Self {
            path: path.to_owned(),
            line,
            column,
            span: Some(span),
        }
    }
}

/// The form a tool was written in, as far as locating text in its source goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// A `.star` file registering tools with `mcp.tool(...)`.
    Starlark,
    /// A TOML manifest (with a script or a command).
    Manifest,
    /// Anything else (a Rust tool, a definition built in code).
    Other,
}

/// One tool as the rules see it: its definition (with the facts its loader recorded) and
/// its source text, for snippets and fixes.
#[derive(Debug)]
pub(crate) struct ToolView<'a> {
    pub(crate) definition: &'a ToolDefinition,
    pub(crate) form: Form,
    /// The text of `definition.source.path`.
    pub(crate) source: Option<&'a str>,
}

impl<'a> ToolView<'a> {
    fn new(definition: &'a ToolDefinition, context: &'a CheckContext) -> Self {
        let path = &definition.source.path;
        let source = context.source(path);
        let form = match path.extension().and_then(|e| e.to_str()) {
            Some("star") => Form::Starlark,
            Some("toml") => Form::Manifest,
            _ => Form::Other,
        };
        Self {
            definition,
            form,
            source,
        }
    }

    /// The tool's name.
    pub(crate) fn name(&self) -> &'a str {
        &self.definition.name
    }

    /// The span `span` of the tool's source file.
    pub(crate) fn at_span(&self, span: Range<usize>) -> At {
        match self.source {
            Some(source) => At::span(&self.definition.source.path, source, span),
            None => self.at_definition(),
        }
    }

    /// Where the tool is defined (no span).
    pub(crate) fn at_definition(&self) -> At {
        At::location(&self.definition.source)
    }
}

/// What the rules run over: the tools and the context.
#[derive(Debug)]
pub(crate) struct Server<'a> {
    pub(crate) tools: Vec<ToolView<'a>>,
    pub(crate) context: &'a CheckContext,
}

impl Server<'_> {
    /// Where whole-server findings point: `toolsmith.toml`, else the folder.
    pub(crate) fn at_config(&self) -> At {
        let path = self
            .context
            .config_path
            .clone()
            .unwrap_or_else(|| self.context.root.clone());
        let line = u32::from(self.context.config_path.is_some());
        At {
            path,
            line,
            column: line,
            span: None,
        }
    }
}

/// Where a rule writes its findings.
#[derive(Debug)]
pub(crate) struct Report<'a> {
    rule: &'static Rule,
    findings: &'a mut Vec<Finding>,
}

impl Report<'_> {
    /// Records a finding about `tool` (or the server, with `None`) at `at`.
    pub(crate) fn add(
        &mut self,
        at: At,
        tool: Option<&str>,
        message: impl Into<String>,
    ) -> &mut Finding {
        let location = SourceLocation {
            path: at.path,
            line: at.line,
            column: at.column,
        };
        let mut diagnostic = Diagnostic::error(self.rule.id, location, message);
        diagnostic.severity = self.rule.severity;
        diagnostic.span = at.span.map(Into::into);
        self.findings.push(Finding {
            diagnostic,
            tool: tool.map(str::to_owned),
            fix: None,
        });
        self.findings.last_mut().expect("a finding was just pushed")
    }
}

/// Runs every enabled rule over `tools` and returns the findings, sorted by file, line and
/// column.
pub fn check<'a>(
    tools: impl IntoIterator<Item = &'a ToolDefinition>,
    context: &CheckContext,
    settings: &Settings,
) -> Vec<Finding> {
    let server = Server {
        tools: tools
            .into_iter()
            .map(|definition| ToolView::new(definition, context))
            .collect(),
        context,
    };
    let mut findings = Vec::new();
    for rule in registry::RULES {
        if !settings.is_selected(rule.id) {
            continue;
        }
        let mut report = Report {
            rule,
            findings: &mut findings,
        };
        (rule.check)(&server, &mut report);
    }
    findings
        .retain(|finding| settings.is_enabled(finding.diagnostic.rule, finding.tool.as_deref()));
    sort(&mut findings);
    findings
}

/// Turns a folder's load diagnostics into findings: those that share an id with a rule
/// (`duplicate-tool-name`, `invalid-icon`, `missing-requirement`) obey `select`/`ignore`;
/// every other load error is always reported.
pub fn load_findings(diagnostics: &[Diagnostic], settings: &Settings) -> Vec<Finding> {
    diagnostics
        .iter()
        .filter(|diagnostic| {
            registry::rule(diagnostic.rule).is_none() || settings.is_enabled(diagnostic.rule, None)
        })
        .cloned()
        .map(Finding::from_load)
        .collect()
}

/// Sorts findings by file, line, column and rule, the order every renderer prints.
pub fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        let key = |f: &Finding| {
            let d = &f.diagnostic;
            (
                d.location.path.clone(),
                d.location.line,
                d.location.column,
                d.rule,
            )
        };
        key(a).cmp(&key(b))
    });
}

/// How many findings of each severity: `(errors, warnings, infos)`.
#[must_use]
pub fn counts(findings: &[Finding]) -> (usize, usize, usize) {
    let count = |severity| {
        findings
            .iter()
            .filter(|f| f.diagnostic.severity == severity)
            .count()
    };
    (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    )
}

/// The tools findings are about, for the summary line.
#[must_use]
pub fn tools_with_findings(findings: &[Finding]) -> BTreeSet<&str> {
    findings.iter().filter_map(|f| f.tool.as_deref()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_in_order_and_skip_overlaps() {
        let edit = |range: Range<usize>, text: &str| Edit {
            path: PathBuf::from("a"),
            range,
            replacement: text.into(),
        };
        let (a, b, c) = (edit(6..7, "X"), edit(0..1, "h"), edit(5..8, "Y"));
        let (text, applied) = apply_edits("Hello world", &[&a, &b, &c]);
        assert_eq!((text.as_str(), applied), ("helloYrld", 2));
    }
}
