//! What a loader saw in a tool's source, recorded for `toolsmith check`: the calls the
//! tool's code makes, and where its name, parameters, docstring and keys are written. The
//! lint rules read these facts the way a linter reads a syntax tree; searching the source
//! text instead would take `http.get(` written in a docstring for a call.

use std::ops::Range;
use std::path::PathBuf;

/// The syntax facts of one tool; empty for a definition built in code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceFacts {
    /// The tool's name as written in its file: the `def` name of a Starlark tool.
    pub name: Option<Range<usize>>,
    /// The first line of a Starlark tool's docstring, from its opening quote.
    pub docstring: Option<Range<usize>>,
    /// Each parameter and where its name is written: in the `def`, or the `name = "…"`
    /// value (quotes included) of a manifest's `[[parameters]]` table.
    pub parameters: Vec<(String, Range<usize>)>,
    /// The keys written for the tool, in source order: a Starlark tool's `mcp.tool`
    /// keywords and the string keys of the dict literals given to them, or every key of a
    /// manifest at every depth.
    pub keys: Vec<Key>,
    /// The code the tool runs, as its loader parsed it.
    pub code: Option<Code>,
}

impl SourceFacts {
    /// No facts.
    pub const NONE: Self = Self {
        name: None,
        docstring: None,
        parameters: Vec::new(),
        keys: Vec::new(),
        code: None,
    };
}

/// One key as written, with its path from the top: `["permissions"]`,
/// `["params", "city", "pattern"]`. An entry of an array of tables (`[[parameters]]`) is
/// named by its `name` key when it has one, else by its index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The keys from the top down to this one.
    pub path: Vec<String>,
    /// The key as written (a string key with its quotes).
    pub span: Range<usize>,
    /// Its value as written.
    pub value: Range<usize>,
}

/// The code a tool runs: a Starlark tool's file, or a manifest tool's script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    /// The file the code is in, as the loader named it.
    pub path: PathBuf,
    /// The calls the tool's own code makes, in source order: the `def` body of a Starlark
    /// tool (not the helpers it calls), a manifest tool's whole script.
    pub calls: Vec<Call>,
    /// Every call in the file but the `mcp.tool` registrations, helpers included.
    pub file_calls: Vec<Call>,
    /// The values of the file's string literals (f-strings as written), docstrings and
    /// registrations left out.
    pub strings: Vec<String>,
}

/// One call whose callee is a name or a dotted name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The callee as written: `http.get`, `_fetch`.
    pub name: String,
    /// Where the callee is written.
    pub span: Range<usize>,
    /// The first positional argument, when it is a string literal
    /// (`http.request("GET", …)`).
    pub first_literal: Option<String>,
}

impl SourceFacts {
    /// The first key (in source order) at `path`.
    pub fn key(&self, path: &[&str]) -> Option<&Key> {
        self.keys.iter().find(|key| key.is(path))
    }

    /// The first key (in source order) named `name` under `prefix`, at any depth.
    pub fn key_under(&self, prefix: &[&str], name: &str) -> Option<&Key> {
        self.keys.iter().find(|key| {
            key.path.len() > prefix.len()
                && starts_with(&key.path, prefix)
                && key.path.last().is_some_and(|last| last == name)
        })
    }

    /// Where the parameter `name` is written.
    pub fn parameter(&self, name: &str) -> Option<Range<usize>> {
        self.parameters
            .iter()
            .find(|(parameter, _)| parameter == name)
            .map(|(_, span)| span.clone())
    }
}

impl Key {
    /// Whether the key's path is `path`.
    pub fn is(&self, path: &[&str]) -> bool {
        self.path.len() == path.len() && starts_with(&self.path, path)
    }
}

fn starts_with(path: &[String], prefix: &[&str]) -> bool {
    path.len() >= prefix.len() && path.iter().zip(prefix).all(|(a, b)| a == b)
}
