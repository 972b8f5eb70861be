//! The front matter of prompt files (`---` … `---` at the top of a `.md` file), read with
//! a small, hand-written YAML subset: `key: value` maps, `- item` lists (of scalars or of
//! maps), `[a, b]` flow lists, plain, `'single'` and `"double"` quoted scalars, `|` and `>`
//! block scalars, and `#` comments. Anchors, tags, flow maps and multi-document streams are
//! refused with a message. Every node keeps its line, so problems point at the file's line.

/// A parsed front-matter value with the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node {
    pub(crate) line: u32,
    pub(crate) value: Value,
}

/// The shapes a front-matter value takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// Nothing after the colon, `~` or `null`.
    Null,
    /// Text: unquoted scalars are kept as text, so `true` and `3` are read by the consumer.
    Scalar(String),
    /// A `- item` list or a `[a, b]` flow list.
    List(Vec<Node>),
    /// `key: value` lines, in order.
    Map(Vec<(String, Node)>),
}

/// A front-matter syntax error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// 1-based line in the file.
    pub(crate) line: u32,
    pub(crate) message: String,
}

/// A file split into its front matter and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split<'a> {
    /// The front matter text and the file line it starts on, when there is front matter.
    pub(crate) front: Option<(&'a str, u32)>,
    /// Byte offset of the body in the file.
    pub(crate) body_offset: usize,
}

/// Finds the front matter: a first line `---`, up to the next line `---` (or `...`).
pub(crate) fn split(source: &str) -> Result<Split<'_>, SyntaxError> {
    let start = if source.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lines = source[start..].split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Ok(Split {
            front: None,
            body_offset: start,
        });
    };
    if first.trim_end() != "---" {
        return Ok(Split {
            front: None,
            body_offset: start,
        });
    }
    let front_start = start + first.len();
    let mut offset = front_start;
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            return Ok(Split {
                front: Some((&source[front_start..offset], 2)),
                body_offset: offset + line.len(),
            });
        }
        offset += line.len();
    }
    Err(SyntaxError {
        line: 1,
        message: "the front matter opened with `---` is never closed".into(),
    })
}

#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    number: u32,
    indent: usize,
    /// The text after the indentation, trailing whitespace removed.
    text: &'a str,
    /// Blank or a `#` comment: skipped by the structure, kept in block scalars.
    blank: bool,
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
}

/// Parses front matter text whose first line is line `first_line` of the file.
pub(crate) fn parse(text: &str, first_line: u32) -> Result<Node, SyntaxError> {
    let mut lines = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let number = first_line + u32::try_from(index).unwrap_or(u32::MAX - first_line);
        let content = raw.trim_start_matches(' ');
        if content.starts_with('\t') {
            return Err(SyntaxError {
                line: number,
                message: "indent with spaces, not tabs".into(),
            });
        }
        let text = content.trim_end();
        lines.push(Line {
            number,
            indent: raw.len() - content.len(),
            text,
            blank: text.is_empty() || text.starts_with('#'),
        });
    }
    let mut parser = Parser { lines, pos: 0 };
    let node = parser.node(0, first_line)?;
    if let Some(line) = parser.peek() {
        return Err(SyntaxError {
            line: line.number,
            message: "unexpected indentation".into(),
        });
    }
    Ok(node)
}

fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// `key: rest` when `text` starts with a key (the colon must be followed by a space or the
/// end of the line, so `https://x` is not a key).
fn split_key(text: &str) -> Option<(String, &str)> {
    if text.starts_with(['"', '\'', '[', '{', '-', '#']) {
        return None;
    }
    let colon = text
        .char_indices()
        .find(|&(index, c)| c == ':' && text[index + 1..].chars().next().is_none_or(|c| c == ' '))?
        .0;
    let key = text[..colon].trim();
    (!key.is_empty()).then(|| (key.to_owned(), text[colon + 1..].trim()))
}

impl<'a> Parser<'a> {
    /// The next non-blank line, without consuming it.
    fn peek(&mut self) -> Option<Line<'a>> {
        while self.pos < self.lines.len() && self.lines[self.pos].blank {
            self.pos += 1;
        }
        self.lines.get(self.pos).copied()
    }

    /// The node starting at the next line, if it is indented at least `min_indent`.
    fn node(&mut self, min_indent: usize, line: u32) -> Result<Node, SyntaxError> {
        match self.peek() {
            Some(next) if next.indent >= min_indent => {
                if is_item(next.text) {
                    self.list(next.indent)
                } else {
                    self.map(next.indent)
                }
            }
            _ => Ok(Node {
                line,
                value: Value::Null,
            }),
        }
    }

    fn map(&mut self, indent: usize) -> Result<Node, SyntaxError> {
        let first = self.peek().map_or(0, |line| line.number);
        let mut entries: Vec<(String, Node)> = Vec::new();
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return Err(SyntaxError {
                    line: line.number,
                    message: "unexpected indentation".into(),
                });
            }
            let Some((key, rest)) = split_key(line.text) else {
                let message = if is_item(line.text) {
                    "a list item where a `key: value` line was expected".to_owned()
                } else {
                    format!("expected `key: value`, found `{}`", line.text)
                };
                return Err(SyntaxError {
                    line: line.number,
                    message,
                });
            };
            if entries.iter().any(|(seen, _)| *seen == key) {
                return Err(SyntaxError {
                    line: line.number,
                    message: format!("`{key}` is set twice"),
                });
            }
            self.pos += 1;
            let value = if rest.is_empty() || rest.starts_with('#') {
                match self.peek() {
                    Some(next) if next.indent > indent => self.node(indent + 1, line.number)?,
                    // YAML lets a list under a key sit at the key's own indentation.
                    Some(next) if next.indent == indent && is_item(next.text) => {
                        self.list(indent)?
                    }
                    _ => Node {
                        line: line.number,
                        value: Value::Null,
                    },
                }
            } else if let Some(header) = rest.strip_prefix(['|', '>']) {
                let folded = rest.starts_with('>');
                self.block_scalar(indent, line.number, header, folded)?
            } else {
                scalar(rest, line.number)?
            };
            entries.push((key, value));
        }
        Ok(Node {
            line: first,
            value: Value::Map(entries),
        })
    }

    fn list(&mut self, indent: usize) -> Result<Node, SyntaxError> {
        let first = self.peek().map_or(0, |line| line.number);
        let mut items = Vec::new();
        while let Some(line) = self.peek() {
            if line.indent < indent || (line.indent == indent && !is_item(line.text)) {
                break;
            }
            if line.indent > indent {
                return Err(SyntaxError {
                    line: line.number,
                    message: "unexpected indentation".into(),
                });
            }
            let after = line.text[1..].trim_start();
            if after.is_empty() {
                self.pos += 1;
                items.push(self.node(indent + 1, line.number)?);
            } else if split_key(after).is_some() {
                // `- key: value` opens a map whose keys line up with `key`.
                let column = indent + (line.text.len() - after.len());
                self.lines[self.pos] = Line {
                    indent: column,
                    text: after,
                    ..line
                };
                items.push(self.map(column)?);
            } else {
                self.pos += 1;
                items.push(scalar(after, line.number)?);
            }
        }
        Ok(Node {
            line: first,
            value: Value::List(items),
        })
    }

    /// A `|` (literal) or `>` (folded) block scalar under a key at `indent`.
    fn block_scalar(
        &mut self,
        indent: usize,
        line: u32,
        header: &str,
        folded: bool,
    ) -> Result<Node, SyntaxError> {
        let header = header.split(" #").next().unwrap_or_default().trim();
        let chomp = match header {
            "" => None,
            "-" => Some(false),
            "+" => Some(true),
            other => {
                return Err(SyntaxError {
                    line,
                    message: format!(
                        "unsupported block scalar header `{other}`; use `|`, `|-`, `>` or `>-`"
                    ),
                });
            }
        };
        let mut body: Vec<Line<'a>> = Vec::new();
        while let Some(&next) = self.lines.get(self.pos) {
            if !next.text.is_empty() && next.indent <= indent {
                break;
            }
            body.push(next);
            self.pos += 1;
        }
        let content_indent = body
            .iter()
            .filter(|line| !line.text.is_empty())
            .map(|line| line.indent)
            .min()
            .unwrap_or(indent + 1);
        let texts: Vec<String> = body
            .iter()
            .map(|line| {
                if line.text.is_empty() {
                    String::new()
                } else {
                    format!("{}{}", " ".repeat(line.indent - content_indent), line.text)
                }
            })
            .collect();
        let mut text = if folded {
            let mut out = String::new();
            for (index, piece) in texts.iter().enumerate() {
                if piece.is_empty() {
                    out.push('\n');
                } else {
                    if index > 0 && !texts[index - 1].is_empty() {
                        out.push(' ');
                    }
                    out.push_str(piece);
                }
            }
            out
        } else {
            texts.join("\n")
        };
        let trimmed_len = text.trim_end_matches('\n').len();
        match chomp {
            Some(false) => text.truncate(trimmed_len),
            Some(true) => text.push('\n'),
            None => {
                text.truncate(trimmed_len);
                text.push('\n');
            }
        }
        Ok(Node {
            line,
            value: Value::Scalar(text),
        })
    }
}

/// A scalar or flow list written after `key:` or `- `.
fn scalar(text: &str, line: u32) -> Result<Node, SyntaxError> {
    let error = |message: String| SyntaxError { line, message };
    let value = match text.chars().next() {
        Some('"' | '\'') => {
            let (value, rest) = quoted(text).map_err(error)?;
            let rest = rest.trim();
            if !rest.is_empty() && !rest.starts_with('#') {
                return Err(error(format!("unexpected `{rest}` after a quoted string")));
            }
            Value::Scalar(value)
        }
        Some('[') => Value::List(flow_list(text, line)?),
        Some('{') => {
            return Err(error(
                "flow maps `{…}` are not supported; write each key on its own line".into(),
            ));
        }
        Some('&' | '*' | '!') => {
            return Err(error(
                "anchors, aliases and tags are not supported in front matter".into(),
            ));
        }
        _ => {
            let plain = text.split(" #").next().unwrap_or_default().trim();
            match plain {
                "~" | "null" | "Null" | "NULL" => Value::Null,
                _ => Value::Scalar(plain.to_owned()),
            }
        }
    };
    Ok(Node { line, value })
}

/// A quoted scalar at the start of `text`: its value and the text after it.
fn quoted(text: &str) -> Result<(String, &str), String> {
    let quote = text.chars().next().unwrap_or('"');
    let mut value = String::new();
    let mut chars = text.char_indices().skip(1);
    while let Some((index, c)) = chars.next() {
        match c {
            '\'' if quote == '\'' => {
                if text[index + 1..].starts_with('\'') {
                    value.push('\'');
                    chars.next();
                } else {
                    return Ok((value, &text[index + 1..]));
                }
            }
            '"' if quote == '"' => return Ok((value, &text[index + 1..])),
            '\\' if quote == '"' => {
                let Some((_, escaped)) = chars.next() else {
                    break;
                };
                match escaped {
                    'n' => value.push('\n'),
                    't' => value.push('\t'),
                    'r' => value.push('\r'),
                    '0' => value.push('\0'),
                    '"' | '\\' | '/' | ' ' => value.push(escaped),
                    'u' => {
                        let hex: String = chars.by_ref().take(4).map(|(_, c)| c).collect();
                        let decoded = u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or_else(|| format!("invalid escape `\\u{hex}`"))?;
                        value.push(decoded);
                    }
                    other => return Err(format!("unknown escape `\\{other}`")),
                }
            }
            _ => value.push(c),
        }
    }
    Err(format!("the string opened with {quote} is never closed"))
}

/// `[a, "b, c", d]`: a one-line list of scalars.
fn flow_list(text: &str, line: u32) -> Result<Vec<Node>, SyntaxError> {
    let error = |message: &str| SyntaxError {
        line,
        message: message.into(),
    };
    let mut items = Vec::new();
    let mut rest = text[1..].trim_start();
    loop {
        if let Some(after) = rest.strip_prefix(']') {
            let after = after.trim();
            if !after.is_empty() && !after.starts_with('#') {
                return Err(error("unexpected text after `]`"));
            }
            return Ok(items);
        }
        if rest.is_empty() {
            return Err(error(
                "the list opened with `[` is never closed on its line",
            ));
        }
        let (item, after) = if rest.starts_with(['"', '\'']) {
            let (value, after) = quoted(rest).map_err(|message| SyntaxError { line, message })?;
            (Value::Scalar(value), after.trim_start())
        } else if rest.starts_with(['[', '{']) {
            return Err(error("nested lists and maps are not supported in `[…]`"));
        } else {
            let end = rest.find([',', ']']).unwrap_or(rest.len());
            let plain = rest[..end].trim();
            (Value::Scalar(plain.to_owned()), &rest[end..])
        };
        items.push(Node { line, value: item });
        rest = match after.strip_prefix(',') {
            Some(next) => next.trim_start(),
            None if after.starts_with(']') => after,
            None => return Err(error("expected `,` or `]` in the list")),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar_of(node: &Node) -> &str {
        match &node.value {
            Value::Scalar(text) => text,
            other => panic!("expected a scalar, got {other:?}"),
        }
    }

    fn map_of(node: &Node) -> &[(String, Node)] {
        match &node.value {
            Value::Map(entries) => entries,
            other => panic!("expected a map, got {other:?}"),
        }
    }

    fn list_of(node: &Node) -> &[Node] {
        match &node.value {
            Value::List(items) => items,
            other => panic!("expected a list, got {other:?}"),
        }
    }

    #[test]
    fn splits_front_matter_from_the_body() {
        let source = "---\nname: x\n---\nHello\n";
        let parts = split(source).unwrap();
        assert_eq!(parts.front, Some(("name: x\n", 2)));
        assert_eq!(&source[parts.body_offset..], "Hello\n");
        assert_eq!(
            split(source.trim_start_matches("---\n")).unwrap().front,
            None
        );
        assert_eq!(split("---\nname: x\n").unwrap_err().line, 1);
    }

    #[test]
    fn reads_maps_lists_and_quoting() {
        let text = "\
name: review   # the name
title: 'It''s a \"title\"'
description: \"Line one\\nLine two\"
arguments:
  - name: arg1
    required: true
    values: [paris, \"park, big\", 'party']
  - name: arg2

    description: Second: with colon
tags:
- a
- b
";
        let node = parse(text, 2).unwrap();
        let entries = map_of(&node);
        assert_eq!(scalar_of(&entries[0].1), "review");
        assert_eq!(scalar_of(&entries[1].1), "It's a \"title\"");
        assert_eq!(scalar_of(&entries[2].1), "Line one\nLine two");
        let arguments = list_of(&entries[3].1);
        assert_eq!(arguments.len(), 2);
        let first = map_of(&arguments[0]);
        assert_eq!(first[0].1.line, 6);
        assert_eq!(scalar_of(&first[1].1), "true");
        let values: Vec<&str> = list_of(&first[2].1).iter().map(scalar_of).collect();
        assert_eq!(values, ["paris", "park, big", "party"]);
        assert_eq!(scalar_of(&map_of(&arguments[1])[1].1), "Second: with colon");
        assert_eq!(list_of(&entries[4].1).len(), 2);
    }

    #[test]
    fn block_scalars_keep_or_fold_lines() {
        let node = parse(
            "literal: |\n  one\n    two\n\n  # not a comment\nfolded: >-\n  a\n  b\n\n  c\nafter: x\n",
            1,
        )
        .unwrap();
        let entries = map_of(&node);
        assert_eq!(scalar_of(&entries[0].1), "one\n  two\n\n# not a comment\n");
        assert_eq!(scalar_of(&entries[1].1), "a b\nc");
        assert_eq!(scalar_of(&entries[2].1), "x");
    }

    #[test]
    fn errors_carry_the_file_line() {
        let error = parse("name: x\n  bad: indent\n", 2).unwrap_err();
        assert_eq!(
            (error.line, error.message.as_str()),
            (3, "unexpected indentation")
        );
        let error = parse("name: x\nname: y\n", 2).unwrap_err();
        assert_eq!(
            (error.line, error.message.as_str()),
            (3, "`name` is set twice")
        );
        let error = parse("a: {b: c}\n", 2).unwrap_err();
        assert!(error.message.contains("flow maps"), "{}", error.message);
        let error = parse("just text\n", 2).unwrap_err();
        assert_eq!(error.message, "expected `key: value`, found `just text`");
        let error = parse("a: \"open\n", 2).unwrap_err();
        assert!(error.message.contains("never closed"), "{}", error.message);
    }
}
