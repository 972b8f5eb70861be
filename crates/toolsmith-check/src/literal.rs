//! String literals in Starlark and TOML sources: reading the literal at a span the loader
//! recorded (a schema `pattern`'s value) and writing a replacement in the same quoting
//! style, so that a fix edits exactly that literal and nothing else.

use std::fmt::Write as _;
use std::ops::Range;

/// One string literal in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Literal {
    /// The literal, prefix and quotes included.
    pub(crate) span: Range<usize>,
    /// Its value.
    pub(crate) value: String,
    /// Written without escapes (`r"…"` in Starlark, `'…'` in TOML).
    raw: bool,
    /// `"` or `'`.
    quote: char,
    /// `"""…"""` or `'''…'''`.
    triple: bool,
}

/// The language of a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Starlark (`r"…"` raw strings, Python escapes).
    Starlark,
    /// TOML (`'…'` literal strings, TOML escapes).
    Toml,
}

/// The string literal written at `span` of `source` (a span a loader recorded), decoded;
/// `None` when the text there is not exactly one string literal.
pub(crate) fn at(source: &str, span: Range<usize>, dialect: Dialect) -> Option<Literal> {
    let text = source.get(span.clone())?;
    let bytes = text.as_bytes();
    let prefixed = dialect == Dialect::Starlark && matches!(bytes.first(), Some(b'r' | b'R'));
    let index = usize::from(prefixed);
    let byte = *bytes.get(index)?;
    if byte != b'"' && byte != b'\'' {
        return None;
    }
    let raw = prefixed || (dialect == Dialect::Toml && byte == b'\'');
    let quote = char::from(byte);
    let triple = text[index..].starts_with(&quote.to_string().repeat(3));
    let delimiter = if triple {
        quote.to_string().repeat(3)
    } else {
        quote.to_string()
    };
    let body_start = index + delimiter.len();
    let body_end = text.len().checked_sub(delimiter.len())?;
    if body_end < body_start || !text.ends_with(&delimiter) {
        return None;
    }
    let body = &text[body_start..body_end];
    let mut value = if raw { body.to_owned() } else { unescape(body) };
    if triple && dialect == Dialect::Toml {
        // TOML trims the newline right after the opening delimiter.
        value = value.strip_prefix('\n').map(str::to_owned).unwrap_or(value);
    }
    Some(Literal {
        span,
        value,
        raw,
        quote,
        triple,
    })
}

/// `value` written as a literal in the style of `like` (raw stays raw when it can).
pub(crate) fn encode(value: &str, like: &Literal, dialect: Dialect) -> String {
    let quote = like.quote.to_string();
    let raw_fits = !value.contains(like.quote)
        && (like.triple || !value.contains('\n'))
        && !value.ends_with('\\');
    if like.raw && raw_fits {
        let prefix = if dialect == Dialect::Starlark {
            "r"
        } else {
            ""
        };
        return format!("{prefix}{quote}{value}{quote}");
    }
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Decodes the escapes of a non-raw literal (Python/Starlark and TOML share these).
fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut hex = |count: usize| -> Option<char> {
            let digits: String = (0..count).filter_map(|_| chars.next()).collect();
            u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32)
        };
        match next {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'a' => out.push('\u{7}'),
            '0' => out.push('\0'),
            'e' => out.push('\u{1b}'),
            '\\' | '"' | '\'' => out.push(next),
            '\n' => {}
            'x' => out.extend(hex(2)),
            'u' => out.extend(hex(4)),
            'U' => out.extend(hex(8)),
            other => {
                // Python keeps unknown escapes as they are.
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starlark_literals_decode_and_reencode() {
        let source = "x = {\"pattern\": \"\\\\A[a-z]+\\\\z\"}\ny = r'\\d+'\n";
        let escaped = at(source, 16..30, Dialect::Starlark).unwrap();
        assert_eq!(escaped.value, "\\A[a-z]+\\z");
        assert_eq!(
            encode("^[a-z]+$", &escaped, Dialect::Starlark),
            "\"^[a-z]+$\""
        );
        let raw = at(source, 36..42, Dialect::Starlark).unwrap();
        assert_eq!(raw.value, "\\d+");
        assert_eq!(encode("^\\d+$", &raw, Dialect::Starlark), "r'^\\d+$'");
        assert!(at(source, 0..1, Dialect::Starlark).is_none());
    }

    #[test]
    fn toml_literal_strings_are_raw() {
        let source = "pattern = '\\A\\w+'\nother = \"a\\\\b\"\n";
        let literal = at(source, 10..17, Dialect::Toml).unwrap();
        assert_eq!(literal.value, "\\A\\w+");
        assert_eq!(at(source, 26..32, Dialect::Toml).unwrap().value, "a\\b");
        assert_eq!(encode("^\\w+", &literal, Dialect::Toml), "'^\\w+'");
        assert_eq!(encode("it's", &literal, Dialect::Toml), "\"it's\"");
    }
}
