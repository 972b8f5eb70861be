//! Diagnostics: one type for load errors and lint findings, so that a broken file and a
//! badly described tool are reported, rendered and counted the same way.

use std::ops::Range;

/// A byte range in a file (kept small: diagnostics travel in `Result`s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span as a byte range.
    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl From<Range<usize>> for Span {
    fn from(range: Range<usize>) -> Self {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Self {
            start: clamp(range.start),
            end: clamp(range.end),
        }
    }
}

use serde::Serialize;

use crate::definition::SourceLocation;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Probably a mistake.
    Warning,
    /// The tool is broken or will misbehave.
    Error,
}

impl Severity {
    /// The lowercase name (`error`, `warning`, `info`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// Something wrong with a file or a tool, with where it is and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Kebab-case id naming the problem (`syntax-error`, `unknown-parameter-type`).
    pub rule: &'static str,
    /// How serious it is.
    pub severity: Severity,
    /// What is wrong, in a few words.
    pub message: String,
    /// Where: file, line and column.
    pub location: SourceLocation,
    /// Byte range in the file, when known (for snippets).
    pub span: Option<Span>,
    /// How to fix it.
    pub help: Option<String>,
    /// The tool this problem kept out of the catalog, when known: a call of that name says
    /// why instead of "unknown tool". A name ending in `*` stands for every name that
    /// starts with the rest ([`Diagnostic::for_tools_prefixed`]).
    /// (Boxed: it keeps `Result<_, Diagnostic>` small.)
    pub tool: Option<Box<str>>,
    /// More tools this problem kept out, when it kept out several (a file that failed to
    /// load after it was read: every tool its `mcp.tool(...)` calls name).
    pub more_tools: Box<[Box<str>]>,
}

impl Diagnostic {
    /// An error diagnostic.
    pub fn error(rule: &'static str, location: SourceLocation, message: impl Into<String>) -> Self {
        Self {
            rule,
            severity: Severity::Error,
            message: message.into(),
            location,
            span: None,
            help: None,
            tool: None,
            more_tools: Box::default(),
        }
    }

    /// Names the tool this problem kept out of the catalog (unless one is named already).
    #[must_use]
    pub fn for_tool(mut self, name: impl Into<String>) -> Self {
        if self.tool.is_none() {
            self.tool = Some(name.into().into_boxed_str());
        }
        self
    }

    /// Names every tool this problem kept out of the catalog (unless one is named already):
    /// a call of any of these names says why instead of suggesting another tool.
    #[must_use]
    pub fn for_tools(mut self, names: impl IntoIterator<Item = String>) -> Self {
        if self.tool.is_some() {
            return self;
        }
        let mut names = names.into_iter().map(String::into_boxed_str);
        self.tool = names.next();
        self.more_tools = names.collect();
        self
    }

    /// Whether this problem kept out the tool `name` itself (not by a prefix).
    pub fn names_tool(&self, name: &str) -> bool {
        self.tool.as_deref() == Some(name) || self.more_tools.iter().any(|tool| &**tool == name)
    }

    /// Renames the tools this problem names with `rename` (a package's prefix).
    pub fn rename_tools(&mut self, rename: impl Fn(&str) -> String) {
        if let Some(tool) = &mut self.tool {
            *tool = rename(tool).into_boxed_str();
        }
        for tool in &mut self.more_tools {
            *tool = rename(tool).into_boxed_str();
        }
    }

    /// Names the tools this problem may have kept out of the catalog by what their names
    /// start with: an upstream that did not start, whose tools are not known (unless a
    /// tool is named already).
    #[must_use]
    pub fn for_tools_prefixed(self, prefix: &str) -> Self {
        self.for_tool(format!("{prefix}*"))
    }

    /// Whether this problem kept the tool `name` out of the catalog, or may have (a
    /// prefix it names).
    pub fn keeps_out(&self, name: &str) -> bool {
        match self.tool.as_deref() {
            Some(tool) => match tool.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => tool == name,
            },
            None => false,
        }
    }

    /// Adds a help line.
    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a byte span.
    #[must_use]
    pub fn with_span(mut self, span: Range<usize>) -> Self {
        self.span = Some(span.into());
        self
    }

    /// The diagnostic as JSON: `{path, line, column, rule, severity, message, help}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.location.path.display().to_string(),
            "line": self.location.line,
            "column": self.location.column,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "help": self.help,
        })
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}: {} [{}]",
            self.location,
            self.severity.as_str(),
            self.message,
            self.rule
        )?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// The 1-based line and column of byte `offset` in `source`.
pub fn line_column(source: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(source.len());
    let before = &source[..source.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |text| text.chars().count())
        + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

/// The byte offset of a 1-based line and column in `source`.
pub fn offset_of(source: &str, line: u32, column: u32) -> usize {
    let mut offset = 0;
    for (index, text) in source.split_inclusive('\n').enumerate() {
        if index + 1 == line as usize {
            let chars = column.saturating_sub(1) as usize;
            return offset
                + text
                    .char_indices()
                    .nth(chars)
                    .map_or(text.len(), |(byte, _)| byte);
        }
        offset += text.len();
    }
    source.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_round_trip() {
        let source = "a = 1\nbé = 2\n";
        assert_eq!(line_column(source, 0), (1, 1));
        let offset = offset_of(source, 2, 3);
        assert_eq!(&source[offset..=offset], " ");
        assert_eq!(line_column(source, offset), (2, 3));
    }
}
