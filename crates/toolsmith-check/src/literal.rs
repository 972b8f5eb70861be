//! String literals in Starlark and TOML sources: finding the literal that holds a value
//! (a schema `pattern`) and writing a replacement in the same quoting style, so that a fix
//! edits exactly that literal and nothing else.

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

/// Every string literal in `source`, in order (comments skipped).
pub(crate) fn literals(source: &str, dialect: Dialect) -> Vec<Literal> {
    let bytes = source.as_bytes();
    let mut found = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte == b'#' {
            index = source[index..]
                .find('\n')
                .map_or(bytes.len(), |n| index + n);
            continue;
        }
        if byte != b'"' && byte != b'\'' {
            index += 1;
            continue;
        }
        let prefixed = dialect == Dialect::Starlark
            && index > 0
            && matches!(bytes[index - 1], b'r' | b'R')
            && (index < 2
                || !(bytes[index - 2].is_ascii_alphanumeric() || bytes[index - 2] == b'_'));
        let raw = prefixed || (dialect == Dialect::Toml && byte == b'\'');
        let start = if prefixed { index - 1 } else { index };
        let quote = char::from(byte);
        let triple = source[index..].starts_with(&quote.to_string().repeat(3));
        let delimiter = if triple {
            quote.to_string().repeat(3)
        } else {
            quote.to_string()
        };
        let body_start = index + delimiter.len();
        let mut at = body_start;
        let mut end = None;
        while at < bytes.len() {
            if bytes[at] == b'\\' && !(dialect == Dialect::Toml && raw) {
                at += 2;
                continue;
            }
            if !triple && bytes[at] == b'\n' {
                break;
            }
            if source[at..].starts_with(&delimiter) {
                end = Some(at);
                break;
            }
            at += 1;
        }
        let Some(body_end) = end else {
            index = at.max(index + 1);
            continue;
        };
        let body = &source[body_start..body_end];
        let mut value = if raw { body.to_owned() } else { unescape(body) };
        if triple && dialect == Dialect::Toml {
            // TOML trims the newline right after the opening delimiter.
            value = value.strip_prefix('\n').map(str::to_owned).unwrap_or(value);
        }
        found.push(Literal {
            span: start..body_end + delimiter.len(),
            value,
            raw,
            quote,
            triple,
        });
        index = body_end + delimiter.len();
    }
    found
}

/// The one literal in `region` whose value is `value`; `None` when there is none or more
/// than one (a fix must not guess).
pub(crate) fn unique(
    source: &str,
    dialect: Dialect,
    region: Range<usize>,
    value: &str,
) -> Option<Literal> {
    let mut matches = literals(source, dialect)
        .into_iter()
        .filter(|literal| literal.span.start >= region.start && literal.span.end <= region.end)
        .filter(|literal| literal.value == value);
    let first = matches.next()?;
    matches.next().is_none().then_some(first)
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
        let source = "x = {\"pattern\": \"\\\\A[a-z]+\\\\z\"}  # \"not this\"\ny = r'\\d+'\n";
        let found = literals(source, Dialect::Starlark);
        let values: Vec<&str> = found.iter().map(|l| l.value.as_str()).collect();
        assert_eq!(values, ["pattern", "\\A[a-z]+\\z", "\\d+"]);
        assert_eq!(
            encode("^[a-z]+$", &found[1], Dialect::Starlark),
            "\"^[a-z]+$\""
        );
        assert_eq!(encode("^\\d+$", &found[2], Dialect::Starlark), "r'^\\d+$'");
    }

    #[test]
    fn toml_literal_strings_are_raw() {
        let source = "pattern = '\\A\\w+'\nother = \"a\\\\b\"\n";
        let found = literals(source, Dialect::Toml);
        assert_eq!(found[0].value, "\\A\\w+");
        assert_eq!(found[1].value, "a\\b");
        assert_eq!(encode("^\\w+", &found[0], Dialect::Toml), "'^\\w+'");
        assert_eq!(encode("it's", &found[0], Dialect::Toml), "\"it's\"");
        assert!(unique(source, Dialect::Toml, 0..source.len(), "a\\b").is_some());
    }
}
