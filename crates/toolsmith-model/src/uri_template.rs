//! URI templates for MCP resource templates: RFC 6570 level 1 (`{name}` simple string
//! expansion), which is what `resources/templates/list` clients expand, plus the reverse —
//! matching a concrete URI from `resources/read` and extracting the variables.

use std::fmt::{self, Write as _};

/// A parsed RFC 6570 level-1 URI template such as `test://template/{id}/data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Variable(String),
}

/// A URI template that is not level 1 or not well formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template `{template}`: {message}")]
pub struct UriTemplateError {
    /// The template text.
    pub template: String,
    /// What is wrong.
    pub message: String,
}

impl UriTemplate {
    /// Parses a template. Variables are `{name}` with letters, digits, `_` and `.`;
    /// operators (`{+x}`, `{?x}`, …), modifiers and two variables in a row are refused,
    /// because a concrete URI could not be matched back unambiguously.
    pub fn parse(text: &str) -> Result<Self, UriTemplateError> {
        let error = |message: String| UriTemplateError {
            template: text.to_owned(),
            message,
        };
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    break;
                }
                Some(index) if rest[index..].starts_with('}') => {
                    return Err(error("`}` without an opening `{`".into()));
                }
                Some(index) => {
                    if index > 0 {
                        parts.push(Part::Literal(rest[..index].to_owned()));
                    }
                    let Some(close) = rest[index..].find('}') else {
                        return Err(error("`{` without a closing `}`".into()));
                    };
                    let name = &rest[index + 1..index + close];
                    if name.is_empty()
                        || !name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                    {
                        return Err(error(format!(
                            "`{{{name}}}` is not a simple variable; only level-1 `{{name}}` \
                             variables (letters, digits, `_`, `.`) are supported"
                        )));
                    }
                    if matches!(parts.last(), Some(Part::Variable(_))) {
                        return Err(error(
                            "two variables in a row cannot be told apart when a URI is read; \
                             put literal text between them"
                                .into(),
                        ));
                    }
                    if parts
                        .iter()
                        .any(|part| matches!(part, Part::Variable(seen) if seen == name))
                    {
                        return Err(error(format!("variable `{name}` appears twice")));
                    }
                    parts.push(Part::Variable(name.to_owned()));
                    rest = &rest[index + close + 1..];
                }
            }
        }
        Ok(Self {
            text: text.to_owned(),
            parts,
        })
    }

    /// Whether `text` contains a `{…}` expression (and so is a template, not a plain URI).
    pub fn is_template(text: &str) -> bool {
        text.contains('{')
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Variable(name) => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Expands the template; values are percent-encoded except for unreserved characters
    /// (RFC 6570 §3.2.2), and a missing variable expands to nothing.
    pub fn expand(&self, value: impl Fn(&str) -> Option<String>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                Part::Variable(name) => {
                    if let Some(value) = value(name) {
                        out.push_str(&percent_encode(&value));
                    }
                }
            }
        }
        out
    }

    /// Matches a concrete URI: the variables' values (percent-decoded) in template order,
    /// or `None` when the URI does not fit. A value is never empty and never contains `/`.
    pub fn match_uri(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut values = Vec::new();
        match_parts(&self.parts, uri, &mut values).then_some(values)
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn match_parts(parts: &[Part], uri: &str, values: &mut Vec<(String, String)>) -> bool {
    match parts {
        [] => uri.is_empty(),
        [Part::Literal(text), rest @ ..] => uri
            .strip_prefix(text.as_str())
            .is_some_and(|remaining| match_parts(rest, remaining, values)),
        [Part::Variable(name), rest @ ..] => {
            // The value ends before the next literal (or at the end); try each place that
            // literal occurs, shortest value first, without crossing a `/`.
            let limit = uri.find('/').unwrap_or(uri.len());
            let candidates: Vec<usize> = match rest.first() {
                None => vec![uri.len()],
                Some(Part::Literal(next)) => uri
                    .match_indices(next.as_str())
                    .map(|(index, _)| index)
                    .collect(),
                Some(Part::Variable(_)) => unreachable!("parse refuses two variables in a row"),
            };
            for end in candidates {
                if end == 0 || end > limit {
                    continue;
                }
                values.push((name.clone(), percent_decode(&uri[..end])));
                if match_parts(rest, &uri[end..], values) {
                    return true;
                }
                values.pop();
            }
            false
        }
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
#[must_use]
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// Decodes `%XX` escapes; text that does not decode to UTF-8 is returned as it was.
pub(crate) fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escape = bytes.get(index + 1..index + 3).and_then(|hex| {
            std::str::from_utf8(hex)
                .ok()
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        });
        match (bytes[index], escape) {
            (b'%', Some(byte)) => {
                out.push(byte);
                index += 3;
            }
            (byte, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(text: &str) -> UriTemplate {
        UriTemplate::parse(text).unwrap()
    }

    #[test]
    fn matches_and_extracts_variables() {
        let data = template("test://template/{id}/data");
        assert_eq!(
            data.match_uri("test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        assert_eq!(data.match_uri("test://template/1/2/data"), None);
        assert_eq!(data.match_uri("test://template//data"), None);
        assert_eq!(data.match_uri("test://template/123/data/x"), None);
        assert_eq!(data.variables().collect::<Vec<_>>(), ["id"]);
    }

    #[test]
    fn values_are_decoded_and_may_contain_the_next_literal() {
        let file = template("docs://{name}.md");
        assert_eq!(
            file.match_uri("docs://a.b%20c.md"),
            Some(vec![("name".into(), "a.b c".into())])
        );
        let pair = template("x://{a}-{b}");
        assert_eq!(
            pair.match_uri("x://1-2-3"),
            Some(vec![("a".into(), "1".into()), ("b".into(), "2-3".into())])
        );
    }

    #[test]
    fn expands_with_percent_encoding() {
        let data = template("test://template/{id}/data");
        assert_eq!(
            data.expand(|_| Some("a b/c".into())),
            "test://template/a%20b%2Fc/data"
        );
    }

    #[test]
    fn percent_encoding_keeps_only_unreserved_characters() {
        assert_eq!(
            percent_encode("Oslo & Bergen/ø"),
            "Oslo%20%26%20Bergen%2F%C3%B8"
        );
    }

    #[test]
    fn refuses_what_cannot_be_matched_back() {
        for bad in [
            "x://{+path}",
            "x://{a}{b}",
            "x://{a",
            "x://a}",
            "x://{}",
            "x://{a}/{a}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
        let error = UriTemplate::parse("x://{?q}").unwrap_err();
        assert!(error.to_string().contains("level-1"), "{error}");
    }
}
