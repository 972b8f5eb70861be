//! Character classes: `[...]`, POSIX classes inside them, and their case folding.

use super::{Atom, ClassItem, Flags, Parser, SYNTAX, has_case, space_class};

impl Parser {
    /// Parses a class at `[`.
    #[expect(
        clippy::too_many_lines,
        reason = "one short arm per kind of class item"
    )]
    pub(super) fn class(&mut self, flags: Flags) -> Atom {
        let start = self.at;
        self.at += 1;
        let negated = self.eat("^");
        let mut items = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                let span = self.offset_of(start)..self.len;
                self.problem(span, "unclosed `[`", Some("the pattern does not parse"));
                break;
            };
            let here = self.at;
            match c {
                ']' if first => {
                    self.at += 1;
                    let span = self.offset_of(here)..self.offset();
                    self.problem(
                        span,
                        "`]` first in a class (ECMA reads `[]` as an empty class)",
                        None,
                    );
                    items.push(ClassItem::Char(']'));
                }
                ']' => {
                    self.at += 1;
                    break;
                }
                '[' if self.peek_at(1) == Some(':') => {
                    let rest = self.rest();
                    if let Some(close) = rest.find(":]") {
                        let name = &rest[2..close];
                        self.at += rest[..close + 2].chars().count();
                        let span = self.offset_of(here)..self.offset();
                        let negated_posix = name.starts_with('^');
                        match posix_class(name.trim_start_matches('^')) {
                            Some(expansion) if !negated_posix => {
                                self.problem(span, format!("POSIX class `[:{name}:]`"), None);
                                items.extend(expansion);
                            }
                            Some(expansion)
                                if items.is_empty() && !negated && self.peek() == Some(']') =>
                            {
                                self.problem(span, format!("POSIX class `[:{name}:]`"), None);
                                self.at += 1;
                                return Atom::Class {
                                    negated: true,
                                    items: expansion,
                                };
                            }
                            _ => self.problem(
                                span,
                                format!("POSIX class `[:{name}:]`"),
                                Some("only a lone or non-negated POSIX class translates"),
                            ),
                        }
                    } else {
                        self.at += 1;
                        items.push(ClassItem::Char('['));
                    }
                }
                '&' if self.peek_at(1) == Some('&') => {
                    self.at += 2;
                    let span = self.offset_of(here)..self.offset();
                    self.problem(
                        span,
                        "class intersection `&&`",
                        Some("ECMA-262 needs the `v` flag for it"),
                    );
                }
                '\\' => {
                    self.at += 1;
                    let Some(escaped) = self.peek() else {
                        continue;
                    };
                    self.at += 1;
                    let span = self.offset_of(here)..self.offset();
                    match escaped {
                        'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'n' | 'r' | 't' | 'f' => {
                            items.push(ClassItem::Raw(format!("\\{escaped}")));
                        }
                        'b' => items.push(ClassItem::Char('\u{8}')),
                        'p' | 'P' if self.peek() == Some('{') => {
                            let name = self.name_until_after('{', '}');
                            items.push(ClassItem::Raw(format!("\\{escaped}{{{name}}}")));
                        }
                        'h' | 'v' => {
                            self.problem(
                                span,
                                format!("`\\{escaped}` (whitespace class in PCRE)"),
                                None,
                            );
                            items.extend(space_class(escaped));
                        }
                        'x' | 'u' if self.peek() != Some('{') || escaped == 'u' => {
                            let (decoded, consumed) = self.hex_escape(escaped);
                            self.at += consumed;
                            match decoded {
                                Some(decoded) => items.push(ClassItem::Char(decoded)),
                                None => self.problem(
                                    span,
                                    format!("incomplete `\\{escaped}`"),
                                    Some("the pattern does not parse"),
                                ),
                            }
                        }
                        'x' => {
                            let digits = self.name_until_after('{', '}');
                            let span = self.offset_of(here)..self.offset();
                            match u32::from_str_radix(&digits, 16)
                                .ok()
                                .and_then(char::from_u32)
                            {
                                Some(decoded) => {
                                    self.problem(span, format!("`\\x{{{digits}}}`"), None);
                                    items.push(ClassItem::Char(decoded));
                                }
                                None => self.problem(
                                    span,
                                    format!("`\\x{{{digits}}}`"),
                                    Some("not a character"),
                                ),
                            }
                        }
                        'e' => {
                            self.problem(span, "`\\e` (escape character)", None);
                            items.push(ClassItem::Char('\u{1b}'));
                        }
                        c if SYNTAX.contains(c) || c == '-' => items.push(ClassItem::Char(c)),
                        c if c.is_ascii_alphanumeric() => {
                            self.problem(
                                span,
                                format!("unknown escape `\\{c}` in a class"),
                                Some("say what you meant"),
                            );
                        }
                        c => {
                            self.problem(span, format!("needless escape `\\{c}` (an error in Unicode-mode ECMA regexes)"), None);
                            items.push(ClassItem::Char(c));
                        }
                    }
                }
                c => {
                    self.at += 1;
                    items.push(ClassItem::Char(c));
                }
            }
            first = false;
            // `a-z`: the last item and the next one form a range.
            if self.peek() == Some('-')
                && self.peek_at(1).is_some_and(|c| c != ']')
                && let Some(ClassItem::Char(low)) = items.last().cloned()
            {
                self.at += 1;
                let high = match self.peek() {
                    Some('\\') => {
                        let before = items.len();
                        // Parse the escape as an item, then take it back as the high end.
                        let saved = self.at;
                        self.at += 1;
                        let escaped = self.peek();
                        self.at += 1;
                        match escaped {
                            Some(c) if SYNTAX.contains(c) || c == '-' => Some(c),
                            Some(letter @ ('x' | 'u')) => {
                                let (decoded, consumed) = self.hex_escape(letter);
                                self.at += consumed;
                                decoded
                            }
                            _ => {
                                self.at = saved;
                                debug_assert_eq!(items.len(), before);
                                None
                            }
                        }
                    }
                    Some(c) => {
                        self.at += 1;
                        Some(c)
                    }
                    None => None,
                };
                match high {
                    Some(high) => {
                        items.pop();
                        items.push(ClassItem::Range(low, high));
                    }
                    None => items.push(ClassItem::Char('-')),
                }
            }
        }
        if flags.insensitive {
            items = self.fold_class(items, start);
        }
        Atom::Class {
            negated,
            items: without_repeats(items),
        }
    }

    fn fold_class(&mut self, items: Vec<ClassItem>, start: usize) -> Vec<ClassItem> {
        let mut folded = Vec::new();
        for item in items {
            match &item {
                ClassItem::Char(c) if has_case(*c) && c.is_ascii() => {
                    folded.push(ClassItem::Char(c.to_ascii_lowercase()));
                    folded.push(ClassItem::Char(c.to_ascii_uppercase()));
                    continue;
                }
                ClassItem::Range(low, high) => {
                    if !low.is_ascii() || !high.is_ascii() {
                        let span = self.offset_of(start)..self.offset();
                        self.problem(
                            span,
                            "case-insensitive non-ASCII range",
                            Some("only ASCII letters can be case-folded exactly"),
                        );
                    }
                    for (from, to) in [('a', 'z'), ('A', 'Z')] {
                        let (a, b) = ((*low).max(from), (*high).min(to));
                        if a <= b {
                            // An ASCII letter differs from its other case in bit 5 alone.
                            let shift =
                                |c: char| u8::try_from(c).map_or(c, |byte| char::from(byte ^ 0x20));
                            folded.push(ClassItem::Range(shift(a), shift(b)));
                        }
                    }
                }
                ClassItem::Char(c) if has_case(*c) => {
                    let span = self.offset_of(start)..self.offset();
                    self.problem(
                        span,
                        format!("case-insensitive `{c}`"),
                        Some("only ASCII letters can be case-folded exactly"),
                    );
                }
                ClassItem::Raw(raw) if raw.starts_with("\\p") || raw.starts_with("\\P") => {
                    let span = self.offset_of(start)..self.offset();
                    self.problem(
                        span,
                        "case-insensitive property class",
                        Some("property classes cannot be case-folded exactly"),
                    );
                }
                _ => {}
            }
            folded.push(item);
        }
        folded
    }
}

/// The items of a class with each repeat dropped: `(?i)[[:alpha:]]` folds `A-Z` and `a-z`
/// into each other, and printed `[a-zA-ZA-Za-z]`.
fn without_repeats(items: Vec<ClassItem>) -> Vec<ClassItem> {
    let mut kept: Vec<ClassItem> = Vec::with_capacity(items.len());
    for item in items {
        if !kept.contains(&item) {
            kept.push(item);
        }
    }
    kept
}

/// A POSIX class (ASCII semantics, as PCRE has them without UCP).
fn posix_class(name: &str) -> Option<Vec<ClassItem>> {
    use ClassItem::{Char, Range, Raw};
    Some(match name {
        "alpha" => vec![Range('A', 'Z'), Range('a', 'z')],
        "digit" => vec![Range('0', '9')],
        "alnum" => vec![Range('A', 'Z'), Range('a', 'z'), Range('0', '9')],
        "upper" => vec![Range('A', 'Z')],
        "lower" => vec![Range('a', 'z')],
        "space" => vec![Raw("\\t\\n\\v\\f\\r".into()), Char(' ')],
        "blank" => vec![Char(' '), Raw("\\t".into())],
        "punct" => vec![
            Range('!', '/'),
            Range(':', '@'),
            Range('[', '`'),
            Range('{', '~'),
        ],
        "xdigit" => vec![Range('0', '9'), Range('A', 'F'), Range('a', 'f')],
        "word" => vec![Raw("\\w".into())],
        "cntrl" => vec![Range('\0', '\u{1f}'), Char('\u{7f}')],
        "print" => vec![Range(' ', '~')],
        "graph" => vec![Range('!', '~')],
        "ascii" => vec![Range('\0', '\u{7f}')],
        _ => return None,
    })
}
