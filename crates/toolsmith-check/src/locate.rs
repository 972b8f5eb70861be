//! Finding the text a finding is about in a tool's source, so that snippets point at the
//! parameter, keyword or docstring in question rather than at the top of the file.
//!
//! A `.star` tool is located through its `def` (at the definition's source line) and its
//! `mcp.tool(NAME, ...)` call; a manifest through its `key = ...` lines. Every lookup falls
//! back to the definition's own location when the text cannot be found.

use std::ops::Range;

use toolsmith_model::offset_of;

use crate::checker::{At, Form, ToolView};

impl ToolView<'_> {
    /// Byte offset where the definition starts (the `def` line of a Starlark tool).
    fn start(&self, source: &str) -> usize {
        let location = &self.definition.source;
        if location.line == 0 {
            0
        } else {
            offset_of(source, location.line, location.column)
        }
    }

    /// The `def NAME` of a Starlark tool: the name's span. The definition's location
    /// points at the name or at the `def` keyword on that line.
    fn def_name(&self, source: &str) -> Option<Range<usize>> {
        let start = self.start(source);
        let line_start = source[..start].rfind('\n').map_or(0, |n| n + 1);
        let line_end = source[start..]
            .find('\n')
            .map_or(source.len(), |n| start + n);
        let def = line_start + source[line_start..line_end].find("def ")?;
        let rest = &source[def + 3..line_end];
        let name_start = def + 3 + (rest.len() - rest.trim_start().len());
        let name_len = source[name_start..line_end]
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(line_end - name_start);
        Some(name_start..name_start + name_len)
    }

    /// The span of the argument list of the `mcp.tool(FUNCTION, ...)` call.
    fn call(&self, source: &str) -> Option<Range<usize>> {
        let function = &source[self.def_name(source)?];
        let mut from = 0;
        while let Some(found) = source[from..].find("mcp.tool(") {
            let open = from + found + "mcp.tool".len();
            let inner = source[open + 1..].trim_start();
            if inner.starts_with(function)
                && inner[function.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| !(c.is_alphanumeric() || c == '_'))
            {
                return Some(open..matching(source, open));
            }
            from = open;
        }
        None
    }

    /// The parameter list of the `def`.
    fn signature(&self, source: &str) -> Option<Range<usize>> {
        let name = self.def_name(source)?;
        let open = name.end + source[name.end..].find('(')?;
        Some(open..matching(source, open))
    }

    /// The first match of `keyword=` inside the `mcp.tool(...)` call (Starlark) or of a
    /// `keyword = ...`/`[keyword]` line (manifest).
    pub(crate) fn find_keyword(&self, keyword: &str) -> Option<Range<usize>> {
        let source = self.source?;
        match self.form {
            Form::Starlark => {
                let call = self.call(source)?;
                find_assignment(source, call, keyword)
            }
            Form::Manifest => manifest_key(source, 0..source.len(), keyword),
            Form::Other => None,
        }
    }

    /// Where `keyword` is set on the tool (see [`ToolView::find_keyword`]).
    pub(crate) fn at_keyword(&self, keyword: &str) -> At {
        match self.find_keyword(keyword) {
            Some(span) => self.at_span(span),
            None => self.at_name(),
        }
    }

    /// The `def` of a Starlark tool up to the next top-level line: the code that runs when
    /// the tool is called, but for the helpers it calls.
    pub(crate) fn body(&self) -> Option<Range<usize>> {
        let source = self.source?;
        let start = self.def_name(source)?.start;
        let mut end = source.len();
        let mut offset = start
            + source[start..]
                .find('\n')
                .map_or(source.len() - start, |n| n + 1);
        while offset < source.len() {
            let line_end = source[offset..]
                .find('\n')
                .map_or(source.len(), |n| offset + n + 1);
            let line = &source[offset..line_end];
            if line.starts_with(|c: char| !c.is_whitespace() && c != '#') {
                end = offset;
                break;
            }
            offset = line_end;
        }
        Some(start..end)
    }

    /// The code the tool runs and where it starts in the tool's source: a Starlark tool's
    /// `def` ([`ToolView::body`]), or a manifest's whole script (another file, so no offset).
    pub(crate) fn running_code(&self) -> Option<(&str, Option<usize>)> {
        match self.form {
            Form::Starlark => {
                let body = self.body()?;
                Some((&self.source?[body.clone()], Some(body.start)))
            }
            Form::Manifest => Some((self.code?, None)),
            Form::Other => None,
        }
    }

    /// Where `call` (at `at` in [`ToolView::running_code`], which started at `offset`) is:
    /// the call itself in a Starlark tool, else the manifest's `keyword`.
    pub(crate) fn at_call(
        &self,
        offset: Option<usize>,
        at: usize,
        call: &str,
        keyword: &str,
    ) -> At {
        match offset {
            Some(start) => self.at_span(start + at..start + at + call.len()),
            None => self.at_keyword(keyword),
        }
    }

    /// The tool's name: the `def` name, `name=` or the manifest file.
    pub(crate) fn at_name(&self) -> At {
        let Some(source) = self.source else {
            return self.at_definition();
        };
        if self.form == Form::Starlark
            && let Some(span) = self.find_keyword("name").or_else(|| self.def_name(source))
        {
            return self.at_span(span);
        }
        self.at_definition()
    }

    /// The description: the docstring's first line, `description=` or `description = `.
    pub(crate) fn at_description(&self) -> At {
        let Some(source) = self.source else {
            return self.at_definition();
        };
        if let Some(span) = self.find_keyword("description") {
            return self.at_span(span);
        }
        if self.form == Form::Starlark
            && let Some(span) = self.docstring(source)
        {
            return self.at_span(span);
        }
        self.at_name()
    }

    /// The first line of the function's docstring.
    fn docstring(&self, source: &str) -> Option<Range<usize>> {
        let signature = self.signature(source)?;
        let colon = signature.end + source[signature.end..].find(':')?;
        let body = &source[colon + 1..];
        let trimmed = body.trim_start();
        if !trimmed.starts_with(['"', '\'']) {
            return None;
        }
        let start = source.len() - trimmed.len();
        let end = source[start..]
            .find('\n')
            .map_or(source.len(), |n| start + n);
        Some(start..end)
    }

    /// A parameter: its name in the `def`, or its `name = "..."` line in a manifest.
    pub(crate) fn at_parameter(&self, parameter: &str) -> At {
        match self.find_parameter(parameter) {
            Some(span) => self.at_span(span),
            None => self.at_name(),
        }
    }

    fn find_parameter(&self, parameter: &str) -> Option<Range<usize>> {
        let source = self.source?;
        match self.form {
            Form::Starlark => {
                let signature = self.signature(source)?;
                find_word(source, signature, parameter)
            }
            Form::Manifest => {
                for quote in ['"', '\''] {
                    let needle = format!("{quote}{parameter}{quote}");
                    let mut from = 0;
                    while let Some(found) = source[from..].find(&needle) {
                        let at = from + found;
                        let line_start = source[..at].rfind('\n').map_or(0, |n| n + 1);
                        if source[line_start..at].trim_start().starts_with("name") {
                            return Some(at..at + needle.len());
                        }
                        from = at + needle.len();
                    }
                }
                None
            }
            Form::Other => None,
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
    /// parameter's manifest table or in `[params.p]`.
    pub(crate) fn at_parameter_keyword(&self, parameter: &str, keyword: &str) -> At {
        match self.find_parameter_keyword(parameter, keyword) {
            Some(span) => self.at_span(span),
            None => self.at_parameter(parameter),
        }
    }

    pub(crate) fn find_parameter_keyword(
        &self,
        parameter: &str,
        keyword: &str,
    ) -> Option<Range<usize>> {
        let source = self.source?;
        match self.form {
            Form::Starlark => {
                let call = self.call(source)?;
                let params = find_assignment(source, call.clone(), "params")?;
                let region = params.end..call.end;
                let name = find_quoted(source, region.clone(), parameter)?;
                let open = name.end + source[name.end..region.end].find('{')?;
                let inner = open..matching(source, open);
                find_quoted(source, inner, keyword)
            }
            Form::Manifest => {
                if let Some(name) = self.find_parameter(parameter) {
                    let table_end = next_table(source, name.end);
                    if let Some(span) = manifest_key(source, name.end..table_end, keyword) {
                        return Some(span);
                    }
                }
                let header = format!("[params.{parameter}]");
                let start = source.find(&header)? + header.len();
                manifest_key(source, start..next_table(source, start), keyword)
            }
            Form::Other => None,
        }
    }
}

/// The first of `calls` (each written with its `(`, as `http.get(`) in `code`: where it is,
/// and its name without the `(`.
pub(crate) fn first_call<'c>(code: &str, calls: &[&'c str]) -> Option<(usize, &'c str)> {
    calls
        .iter()
        .filter_map(|call| code.find(call).map(|at| (at, call.trim_end_matches('('))))
        .min()
}

/// `code` without its `mcp.tool(...)` registrations, whose keywords (`permissions=`, …)
/// would otherwise count as uses of what they grant.
pub(crate) fn without_registrations(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut from = 0;
    while let Some(found) = code[from..].find("mcp.tool(") {
        let start = from + found;
        out.push_str(&code[from..start]);
        from = matching(code, start + "mcp.tool".len());
    }
    out.push_str(&code[from..]);
    out
}

/// The offset just past the bracket matching the one at `open` (or the end of `source`).
/// Brackets inside string literals are skipped.
pub(crate) fn matching(source: &str, open: usize) -> usize {
    let bytes = source.as_bytes();
    let mut depth = 0usize;
    let mut index = open;
    let mut quote: Option<u8> = None;
    while index < bytes.len() {
        let byte = bytes[index];
        match quote {
            Some(q) => {
                if byte == b'\\' {
                    index += 1;
                } else if byte == q {
                    quote = None;
                }
            }
            None => match byte {
                b'"' | b'\'' => quote = Some(byte),
                b'#' => {
                    index = source[index..]
                        .find('\n')
                        .map_or(bytes.len(), |n| index + n);
                    continue;
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return index + 1;
                    }
                }
                _ => {}
            },
        }
        index += 1;
    }
    source.len()
}

/// `keyword =` (not `==`) as a whole word inside `region`: the keyword's span.
fn find_assignment(source: &str, region: Range<usize>, keyword: &str) -> Option<Range<usize>> {
    let mut from = region.start;
    while let Some(span) = find_word(source, from..region.end, keyword) {
        let rest = source[span.end..region.end].trim_start();
        if rest.starts_with('=') && !rest.starts_with("==") {
            return Some(span);
        }
        from = span.end;
    }
    None
}

/// `word` as a whole identifier inside `region`.
fn find_word(source: &str, region: Range<usize>, word: &str) -> Option<Range<usize>> {
    let text = &source[region.clone()];
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(found) = text[from..].find(word) {
        let at = from + found;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
            return Some(region.start + at..region.start + at + word.len());
        }
        from = at + word.len();
    }
    None
}

/// `"word"` or `'word'` inside `region`: the span of the quoted text, quotes included.
fn find_quoted(source: &str, region: Range<usize>, word: &str) -> Option<Range<usize>> {
    let text = &source[region.clone()];
    ['"', '\''].iter().find_map(|quote| {
        let needle = format!("{quote}{word}{quote}");
        text.find(&needle)
            .map(|at| region.start + at..region.start + at + needle.len())
    })
}

/// A TOML `key = ...` line or `[key]`/`[[key]]` header inside `region`: the key's span.
fn manifest_key(source: &str, region: Range<usize>, key: &str) -> Option<Range<usize>> {
    let mut offset = region.start;
    for line in source[region.clone()].split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let header = trimmed.trim_start_matches('[');
        let is_header = trimmed.starts_with('[')
            && header
                .strip_prefix(key)
                .is_some_and(|rest| rest.starts_with(']') || rest.starts_with('.'));
        let is_assignment = trimmed
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('=') || rest.starts_with('.'));
        if is_assignment {
            return Some(offset + indent..offset + indent + key.len());
        }
        if is_header {
            let start = offset + indent + (trimmed.len() - header.len());
            return Some(start..start + key.len());
        }
        offset += line.len();
    }
    None
}

/// Where the TOML table that contains `from` ends: the next `[` header line.
fn next_table(source: &str, from: usize) -> usize {
    let mut offset = from;
    for line in source[from..].split_inclusive('\n') {
        if offset > from && line.trim_start().starts_with('[') {
            return offset;
        }
        offset += line.len();
    }
    source.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_match_across_strings_and_comments() {
        let source = "f(a, \")\", [1, (2)], # )\n b)";
        assert_eq!(matching(source, 1), source.len());
    }

    #[test]
    fn manifest_keys_and_headers() {
        let source = "description = \"x\"\n[ui]\nresource_uri = \"ui://a\"\n";
        assert_eq!(manifest_key(source, 0..source.len(), "ui"), Some(19..21));
        assert_eq!(
            manifest_key(source, 0..source.len(), "description"),
            Some(0..11)
        );
    }
}
