//! Escapes outside character classes: `\A`, `\z`, `\Z`, `\Q…\E`, `\x{…}`, `\e`, `\h`,
//! named back-references and the needless escapes ECMA-262's Unicode mode refuses.

use super::{Atom, Flags, Parser, SYNTAX, space_class};

impl Parser {
    /// Parses an escape outside a class (at `\`).
    #[expect(
        clippy::too_many_lines,
        reason = "one short arm per escape; split up, the table would scatter"
    )]
    pub(super) fn escape(&mut self, flags: Flags) -> Vec<Atom> {
        let start = self.at;
        self.at += 1;
        let Some(c) = self.peek() else {
            let span = self.offset_of(start)..self.len;
            self.problem(span, "trailing `\\`", Some("the pattern does not parse"));
            return Vec::new();
        };
        self.at += 1;
        let span = self.offset_of(start)..self.offset();
        let raw = |text: &str| vec![Atom::Raw(text.to_owned())];
        match c {
            'A' => {
                self.problem(span, "`\\A` (start of input)", None);
                raw("^")
            }
            'z' => {
                self.problem(span, "`\\z` (end of input)", None);
                raw("$")
            }
            'Z' => {
                self.problem(span, "`\\Z` (end of input or before a final newline)", None);
                raw("(?=\\n?$)")
            }
            'G' | 'K' | 'R' | 'X' | 'C' => {
                self.problem(span, format!("`\\{c}`"), Some("ECMA-262 has no equivalent"));
                raw("")
            }
            'Q' => {
                let mut atoms = Vec::new();
                while self.peek().is_some() && !self.eat("\\E") {
                    let here = self.at;
                    let literal = self.peek().expect("checked above");
                    self.at += 1;
                    atoms.push(self.fold_char(literal, flags, here));
                }
                let span = self.offset_of(start)..self.offset();
                self.problem(span, "quoted text `\\Q…\\E`", None);
                atoms
            }
            'e' => {
                self.problem(span, "`\\e` (escape character)", None);
                vec![Atom::Char('\u{1b}')]
            }
            'a' => {
                self.problem(span, "`\\a` (bell character)", None);
                vec![Atom::Char('\u{7}')]
            }
            'h' | 'H' | 'v' | 'V' => {
                let what = if c.eq_ignore_ascii_case(&'h') {
                    "horizontal"
                } else {
                    "vertical"
                };
                self.problem(span, format!("`\\{c}` ({what} whitespace in PCRE)"), None);
                vec![Atom::Class {
                    negated: c.is_ascii_uppercase(),
                    items: space_class(c.to_ascii_lowercase()),
                }]
            }
            'x' if self.peek() == Some('{') => {
                let digits = self.name_until_after('{', '}');
                let span = self.offset_of(start)..self.offset();
                if let Some(decoded) = u32::from_str_radix(&digits, 16)
                    .ok()
                    .and_then(char::from_u32)
                {
                    self.problem(span, format!("`\\x{{{digits}}}`"), None);
                    vec![self.fold_char(decoded, flags, start)]
                } else {
                    self.problem(span, format!("`\\x{{{digits}}}`"), Some("not a character"));
                    Vec::new()
                }
            }
            'x' | 'u' => {
                let (decoded, consumed) = self.hex_escape(c);
                if let Some(decoded) = decoded {
                    self.at += consumed;
                    vec![self.fold_char(decoded, flags, start)]
                } else {
                    self.problem(
                        span,
                        format!("incomplete `\\{c}` escape"),
                        Some("the pattern does not parse"),
                    );
                    Vec::new()
                }
            }
            'p' | 'P' => {
                if flags.insensitive {
                    self.problem(
                        span.clone(),
                        format!("case-insensitive `\\{c}`"),
                        Some("property classes cannot be case-folded exactly"),
                    );
                }
                if self.peek() == Some('{') {
                    let name = self.name_until_after('{', '}');
                    vec![Atom::Raw(format!("\\{c}{{{name}}}"))]
                } else if let Some(letter) = self.peek() {
                    self.at += 1;
                    let span = self.offset_of(start)..self.offset();
                    self.problem(span, format!("`\\{c}{letter}` without braces"), None);
                    vec![Atom::Raw(format!("\\{c}{{{letter}}}"))]
                } else {
                    self.problem(
                        span,
                        format!("incomplete `\\{c}`"),
                        Some("the pattern does not parse"),
                    );
                    Vec::new()
                }
            }
            'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'b' | 'B' | 'n' | 'r' | 't' | 'f' => {
                raw(&format!("\\{c}"))
            }
            'c' => {
                if let Some(letter) = self.peek().filter(char::is_ascii_alphabetic) {
                    self.at += 1;
                    raw(&format!("\\c{letter}"))
                } else {
                    self.problem(span, "incomplete `\\c`", Some("the pattern does not parse"));
                    Vec::new()
                }
            }
            '0' => vec![Atom::Char('\0')],
            '1'..='9' => {
                let mut number = c.to_string();
                while let Some(digit) = self.peek().filter(char::is_ascii_digit) {
                    number.push(digit);
                    self.at += 1;
                }
                self.numeric_backrefs = true;
                if flags.insensitive {
                    self.problem(
                        span,
                        "case-insensitive backreference",
                        Some("backreferences cannot be case-folded"),
                    );
                }
                raw(&format!("\\{number}"))
            }
            'k' => match self.peek() {
                Some('<') => {
                    let name = self.name_until_after('<', '>');
                    raw(&format!("\\k<{name}>"))
                }
                Some(open @ ('{' | '\'')) => {
                    let close = if open == '{' { '}' } else { '\'' };
                    let name = self.name_until_after(open, close);
                    let span = self.offset_of(start)..self.offset();
                    self.problem(
                        span,
                        format!("named backreference `\\k{open}…{close}`"),
                        None,
                    );
                    raw(&format!("\\k<{name}>"))
                }
                _ => {
                    self.problem(span, "incomplete `\\k`", Some("the pattern does not parse"));
                    Vec::new()
                }
            },
            'g' => {
                self.problem(
                    span,
                    "`\\g` backreference or subroutine",
                    Some("rewrite it as `\\1` or `\\k<name>` by hand"),
                );
                Vec::new()
            }
            c if SYNTAX.contains(c) => vec![Atom::Char(c)],
            c if c.is_ascii_alphanumeric() => {
                self.problem(
                    span,
                    format!("unknown escape `\\{c}`"),
                    Some("PCRE rejects it too; say what you meant"),
                );
                Vec::new()
            }
            c => {
                self.problem(
                    span,
                    format!("needless escape `\\{c}` (an error in Unicode-mode ECMA regexes)"),
                    None,
                );
                vec![self.fold_char(c, flags, start)]
            }
        }
    }

    /// Reads `open…close` (at `open`) and returns the text between.
    pub(super) fn name_until_after(&mut self, open: char, close: char) -> String {
        if self.peek() == Some(open) {
            self.at += 1;
        }
        self.name_until(close)
    }

    /// Decodes `\xHH` / `\uHHHH` / `\u{…}` after the letter; returns the character and how
    /// many more characters the escape takes.
    pub(super) fn hex_escape(&self, letter: char) -> (Option<char>, usize) {
        let rest = self.rest();
        if letter == 'u' && rest.starts_with('{') {
            let Some(close) = rest.find('}') else {
                return (None, 0);
            };
            let decoded = u32::from_str_radix(&rest[1..close], 16)
                .ok()
                .and_then(char::from_u32);
            return (decoded, close + 1);
        }
        let width = if letter == 'x' { 2 } else { 4 };
        let digits: String = rest.chars().take(width).collect();
        if digits.len() < width || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return (None, 0);
        }
        (
            u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32),
            width,
        )
    }
}
