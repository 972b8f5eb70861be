//! `{{name}}` text templates, shared by prompt bodies and resource templates: a scanner
//! that finds the placeholders (with their byte spans, for diagnostics) and a
//! [`TextTemplate`] that fills them in.
//!
//! Syntax: `{{name}}` (spaces inside the braces are ignored) is a placeholder; `\{{` is a
//! literal `{{`; a `}}` outside a placeholder is literal text. What a placeholder may name
//! is decided by whoever uses the template.

use std::ops::Range;

/// One piece of scanned template text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// Literal text (escapes already resolved).
    Literal(String),
    /// A `{{…}}` placeholder.
    Placeholder {
        /// What is between the braces, trimmed.
        name: String,
        /// Byte range of the whole placeholder, braces included.
        span: Range<usize>,
    },
}

/// A `{{` without its closing `}}`, or an empty `{{}}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TemplateSyntaxError {
    /// What is wrong.
    pub message: String,
    /// Byte range of the offending text.
    pub span: Range<usize>,
}

/// Splits `text` into literal text and `{{…}}` placeholders.
pub fn scan(text: &str) -> Result<Vec<Token>, TemplateSyntaxError> {
    let mut tokens = Vec::new();
    let mut literal = String::new();
    let mut rest = 0;
    while let Some(found) = text[rest..].find("{{") {
        let start = rest + found;
        if text[..start].ends_with('\\') {
            literal.push_str(&text[rest..start - 1]);
            literal.push_str("{{");
            rest = start + 2;
            continue;
        }
        literal.push_str(&text[rest..start]);
        let Some(length) = text[start + 2..].find("}}") else {
            let line_end = text[start..]
                .find('\n')
                .map_or(text.len(), |end| start + end);
            return Err(TemplateSyntaxError {
                message: "`{{` has no closing `}}`".into(),
                span: start..line_end,
            });
        };
        let end = start + 2 + length + 2;
        let name = text[start + 2..end - 2].trim();
        if name.is_empty() || name.contains('\n') {
            return Err(TemplateSyntaxError {
                message: format!("`{}` is not a placeholder", &text[start..end]),
                span: start..end,
            });
        }
        if !literal.is_empty() {
            tokens.push(Token::Literal(std::mem::take(&mut literal)));
        }
        tokens.push(Token::Placeholder {
            name: name.to_owned(),
            span: start..end,
        });
        rest = end;
    }
    literal.push_str(&text[rest..]);
    if !literal.is_empty() {
        tokens.push(Token::Literal(literal));
    }
    Ok(tokens)
}

/// A piece of a [`TextTemplate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextPiece {
    /// Literal text.
    Literal(String),
    /// A value filled in when the template renders (a prompt argument, a URI variable).
    Placeholder(String),
}

/// Text with `{{name}}` placeholders, ready to render.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextTemplate {
    /// The pieces, in order.
    pub pieces: Vec<TextPiece>,
}

impl TextTemplate {
    /// A template of scanned tokens; every placeholder becomes a [`TextPiece::Placeholder`].
    pub fn from_tokens(tokens: Vec<Token>) -> Self {
        let pieces = tokens
            .into_iter()
            .map(|token| match token {
                Token::Literal(text) => TextPiece::Literal(text),
                Token::Placeholder { name, .. } => TextPiece::Placeholder(name),
            })
            .collect();
        Self { pieces }
    }

    /// The names of the placeholders, in order (repeats included).
    pub fn placeholders(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            TextPiece::Placeholder(name) => Some(name.as_str()),
            TextPiece::Literal(_) => None,
        })
    }

    /// Whether the template has no text and no placeholders.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// Fills in every placeholder with `value(name)`.
    pub fn render(&self, mut value: impl FnMut(&str) -> String) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                TextPiece::Literal(text) => out.push_str(text),
                TextPiece::Placeholder(name) => out.push_str(&value(name)),
            }
        }
        out
    }

    /// Trims whitespace at the start of the first piece and the end of the last one, when
    /// they are literal text (a placeholder's value is never trimmed).
    #[must_use]
    pub fn trimmed(mut self) -> Self {
        if let Some(TextPiece::Literal(text)) = self.pieces.first_mut() {
            *text = text.trim_start().to_owned();
        }
        if let Some(TextPiece::Literal(text)) = self.pieces.last_mut() {
            *text = text.trim_end().to_owned();
        }
        self.pieces
            .retain(|piece| !matches!(piece, TextPiece::Literal(text) if text.is_empty()));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_placeholders_with_spans() {
        let tokens = scan("Hi {{ name }}, see {{image:icons/x.png}}!").unwrap();
        assert_eq!(
            tokens,
            vec![
                Token::Literal("Hi ".into()),
                Token::Placeholder {
                    name: "name".into(),
                    span: 3..13
                },
                Token::Literal(", see ".into()),
                Token::Placeholder {
                    name: "image:icons/x.png".into(),
                    span: 19..40
                },
                Token::Literal("!".into()),
            ]
        );
    }

    #[test]
    fn backslash_escapes_braces_and_lone_closers_are_text() {
        let tokens = scan(r"use \{{x}} and }} here").unwrap();
        assert_eq!(tokens, vec![Token::Literal("use {{x}} and }} here".into())]);
    }

    #[test]
    fn unclosed_placeholder_is_an_error_with_its_span() {
        let error = scan("a\nb {{name\nc").unwrap_err();
        assert_eq!(error.message, "`{{` has no closing `}}`");
        assert_eq!(error.span, 4..10);
        assert!(scan("{{ }}").is_err());
    }

    #[test]
    fn renders_and_trims_only_literal_edges() {
        let template = TextTemplate::from_tokens(scan("\n  Hello {{who}}!  \n").unwrap()).trimmed();
        assert_eq!(template.render(|_| " you ".into()), "Hello  you !");
        let edge = TextTemplate::from_tokens(scan("{{who}}").unwrap()).trimmed();
        assert_eq!(edge.render(|_| " x ".into()), " x ");
        assert_eq!(edge.placeholders().collect::<Vec<_>>(), ["who"]);
    }
}
