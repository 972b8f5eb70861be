//! Where a finding points in a tool's source, so that snippets show the parameter, keyword
//! or docstring in question rather than the top of the file. Every place is read from the
//! facts the tool's loader recorded ([`SourceFacts`]: the `def` name, parameters, docstring,
//! `mcp.tool` keywords or manifest keys, calls), never searched for in the text. Every
//! lookup falls back to the definition's own location when the loader recorded nothing.

use std::ops::Range;

use toolsmith_model::{Call, SourceFacts};

use crate::checker::{At, Form, ToolView};

impl ToolView<'_> {
    fn facts(&self) -> &SourceFacts {
        self.definition.source_facts()
    }

    /// The keyword `keyword` of the `mcp.tool(...)` call (Starlark) or the top-level key
    /// `keyword` (manifest).
    pub(crate) fn find_keyword(&self, keyword: &str) -> Option<Range<usize>> {
        self.facts().key(&[keyword]).map(|key| key.span.clone())
    }

    /// Where `keyword` is set on the tool (see [`ToolView::find_keyword`]).
    pub(crate) fn at_keyword(&self, keyword: &str) -> At {
        match self.find_keyword(keyword) {
            Some(span) => self.at_span(span),
            None => self.at_name(),
        }
    }

    /// The calls the code the tool runs makes: a Starlark tool's `def` (but for the helpers
    /// it calls), a manifest tool's whole script.
    pub(crate) fn calls(&self) -> &[Call] {
        self.facts()
            .code
            .as_ref()
            .map_or(&[], |code| code.calls.as_slice())
    }

    /// Where `call` (one of [`ToolView::calls`]) is: the call itself when it is written in
    /// the tool's own file, else (a manifest's script) the manifest's `keyword`.
    pub(crate) fn at_call(&self, call: &Call, keyword: &str) -> At {
        match &self.facts().code {
            Some(code) if code.path == self.definition.source.path => {
                self.at_span(call.span.clone())
            }
            _ => self.at_keyword(keyword),
        }
    }

    /// The tool's name: `name=` or the `def` name of a Starlark tool, else the definition.
    pub(crate) fn at_name(&self) -> At {
        if self.form == Form::Starlark
            && let Some(span) = self
                .find_keyword("name")
                .or_else(|| self.facts().name.clone())
        {
            return self.at_span(span);
        }
        self.at_definition()
    }

    /// The description: `description=` or `description = `, else the docstring's first
    /// line.
    pub(crate) fn at_description(&self) -> At {
        if let Some(span) = self.find_keyword("description") {
            return self.at_span(span);
        }
        if self.form == Form::Starlark
            && let Some(span) = self.facts().docstring.clone()
        {
            return self.at_span(span);
        }
        self.at_name()
    }

    /// A parameter: its name in the `def`, or its `name = "..."` value in a manifest.
    pub(crate) fn at_parameter(&self, parameter: &str) -> At {
        match self.facts().parameter(parameter) {
            Some(span) => self.at_span(span),
            None => self.at_name(),
        }
    }

    /// A keyword at a JSON pointer into the input schema: at the parameter it belongs to
    /// when the pointer is under one, else at the tool's name.
    pub(crate) fn at_schema_keyword(&self, pointer: &str, keyword: &str) -> At {
        match crate::schema::parameter_of(pointer) {
            Some(parameter) => self.at_parameter_keyword(parameter, keyword),
            None => self.at_name(),
        }
    }

    /// A JSON Schema keyword of a parameter: in `params={"p": {"keyword": ...}}`, in the
    /// parameter's `[[parameters]]` table or in `[params.p]`.
    pub(crate) fn at_parameter_keyword(&self, parameter: &str, keyword: &str) -> At {
        match self.find_parameter_keyword(parameter, keyword) {
            Some(span) => self.at_span(span),
            None => self.at_parameter(parameter),
        }
    }

    fn find_parameter_keyword(&self, parameter: &str, keyword: &str) -> Option<Range<usize>> {
        let facts = self.facts();
        let in_table = || {
            let name = facts.parameter(parameter)?;
            let entry = facts.keys.iter().find(|key| {
                key.path.len() == 3
                    && key.path[0] == "parameters"
                    && key.path[2] == "name"
                    && key.value == name
            })?;
            facts.key_under(&["parameters", &entry.path[1]], keyword)
        };
        in_table()
            .or_else(|| facts.key_under(&["params", parameter], keyword))
            .map(|key| key.span.clone())
    }
}
