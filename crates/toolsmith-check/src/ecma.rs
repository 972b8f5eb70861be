//! Regex portability: JSON Schema's `pattern` is an ECMA-262 regular expression, and
//! clients validate it with JavaScript engines (Ajv compiles it with the `u` flag). Patterns
//! written for PCRE, ICU, Python or Java often use constructs ECMA lacks. This module parses
//! such a pattern, names each non-ECMA construct, and prints an equivalent ECMA pattern when
//! every construct has an exact translation:
//!
//! | PCRE / ICU | ECMA-262 |
//! |---|---|
//! | `\A`, `\z` | `^`, `$` (no `m` flag in JSON Schema) |
//! | `\Z` | `(?=\n?$)` |
//! | `(?>X)`, `X*+` | `(?=(X))\1`, `(?=(X*))\1` (lookaheads are atomic in ECMA) |
//! | `(?i)`, `(?s)`, `(?m)`, `(?x)` | letters as `[aA]`, `.` as `[\s\S]`, `^` as `(?<![^\n])`, spacing removed |
//! | `[[:alpha:]]` | `[A-Za-z]` |
//! | `(?P<n>…)`, `(?P=n)`, `\x{41}`, `\e`, `\h`, `\Q…\E` | `(?<n>…)`, `\k<n>`, `A`, `\x1B`, a class, escaped text |
//!
//! The result is then compiled with `regress`, an ECMA-262 engine, in Unicode mode; a
//! translation that does not compile is not offered.

use std::fmt::Write as _;
use std::ops::Range;

/// What [`analyse`] found in a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Analysis {
    /// Constructs that are not ECMA-262, in pattern order.
    pub(crate) problems: Vec<Problem>,
    /// An equivalent ECMA-262 pattern, when every problem has an exact translation.
    pub(crate) translation: Option<String>,
}

/// One construct that is not ECMA-262.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// What it is, e.g. "possessive quantifier `++`".
    pub(crate) what: String,
    /// Byte range in the pattern.
    pub(crate) span: Range<usize>,
    /// Why it cannot be translated, when it cannot.
    pub(crate) untranslatable: Option<String>,
}

/// Checks `pattern` for constructs that are not ECMA-262 and translates it when safe.
pub(crate) fn analyse(pattern: &str) -> Analysis {
    let mut parser = Parser {
        chars: pattern.char_indices().collect(),
        at: 0,
        len: pattern.len(),
        problems: Vec::new(),
        numeric_backrefs: false,
        emulated_atomic: None,
    };
    let parsed = parser.alternatives(Flags::default(), 0);
    if parser.at < parser.chars.len() {
        let offset = parser.offset();
        parser.problem(
            offset..parser.len,
            "unbalanced `)`",
            Some("the pattern does not parse"),
        );
    }
    let mut problems = parser.problems;
    if let (true, Some(span)) = (parser.numeric_backrefs, parser.emulated_atomic.clone()) {
        problems.push(Problem {
            what: "atomic matching with numbered backreferences".into(),
            span,
            untranslatable: Some(
                "emulating atomic matching adds capture groups, which would renumber `\\1`…".into(),
            ),
        });
    }
    if problems.is_empty() {
        if let Err(error) = compiles(pattern) {
            problems.push(Problem {
                what: format!("invalid ECMA-262 syntax ({error})"),
                span: 0..pattern.len(),
                untranslatable: Some("regress, an ECMA-262 engine, rejects it".into()),
            });
        }
        return Analysis {
            problems,
            translation: None,
        };
    }
    let translation = if problems.iter().all(|p| p.untranslatable.is_none()) {
        let mut out = String::new();
        let mut groups = 0;
        print_alternatives(&parsed, &mut out, &mut groups);
        (out != pattern && compiles(&out).is_ok()).then_some(out)
    } else {
        None
    };
    Analysis {
        problems,
        translation,
    }
}

/// Whether `pattern` compiles as an ECMA-262 regex in Unicode mode (as Ajv compiles it).
pub(crate) fn compiles(pattern: &str) -> Result<(), String> {
    regress::Regex::with_flags(pattern, "u")
        .map(|_| ())
        .map_err(|error| error.to_string())
}

#[derive(Debug, Clone, Copy, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "the four regex flags are independent switches"
)]
struct Flags {
    insensitive: bool,
    dot_all: bool,
    multiline: bool,
    extended: bool,
}

#[derive(Debug, Clone)]
struct Node {
    atom: Atom,
    quantifier: Option<Quantifier>,
}

#[derive(Debug, Clone)]
struct Quantifier {
    text: String,
    lazy: bool,
    possessive: bool,
}

#[derive(Debug, Clone)]
enum Atom {
    /// A literal character.
    Char(char),
    /// ECMA text printed as it is (`\d`, `^`, `\k<name>`, `(?=\n?$)`).
    Raw(String),
    Class {
        negated: bool,
        items: Vec<ClassItem>,
    },
    Group {
        kind: GroupKind,
        alternatives: Vec<Vec<Node>>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ClassItem {
    Char(char),
    Range(char, char),
    Raw(String),
}

#[derive(Debug, Clone)]
enum GroupKind {
    Capture(Option<String>),
    NonCapture,
    Look(&'static str),
    Atomic,
}

struct Parser {
    chars: Vec<(usize, char)>,
    at: usize,
    len: usize,
    problems: Vec<Problem>,
    numeric_backrefs: bool,
    emulated_atomic: Option<Range<usize>>,
}

const SYNTAX: &str = "^$\\.*+?()[]{}|/";

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).map(|&(_, c)| c)
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).map(|&(_, c)| c)
    }

    fn offset(&self) -> usize {
        self.chars
            .get(self.at)
            .map_or(self.len, |&(offset, _)| offset)
    }

    fn offset_of(&self, index: usize) -> usize {
        self.chars
            .get(index)
            .map_or(self.len, |&(offset, _)| offset)
    }

    fn rest(&self) -> String {
        self.chars[self.at..].iter().map(|&(_, c)| c).collect()
    }

    fn eat(&mut self, text: &str) -> bool {
        let rest: String = self.chars[self.at..]
            .iter()
            .take(text.chars().count())
            .map(|&(_, c)| c)
            .collect();
        if rest == text {
            self.at += text.chars().count();
            true
        } else {
            false
        }
    }

    fn problem(
        &mut self,
        span: Range<usize>,
        what: impl Into<String>,
        untranslatable: Option<&str>,
    ) {
        self.problems.push(Problem {
            what: what.into(),
            span,
            untranslatable: untranslatable.map(str::to_owned),
        });
    }

    /// Parses `a|b|c` up to a `)` at `depth` > 0, or the end.
    fn alternatives(&mut self, mut flags: Flags, depth: usize) -> Vec<Vec<Node>> {
        let mut alternatives = vec![Vec::new()];
        while let Some(c) = self.peek() {
            let start = self.at;
            match c {
                ')' if depth > 0 => break,
                ')' => break,
                '|' => {
                    self.at += 1;
                    alternatives.push(Vec::new());
                }
                '*' | '+' | '?' => {
                    let quantifier = self
                        .quantifier()
                        .expect("a quantifier character starts one");
                    self.quantify(&mut alternatives, quantifier, start);
                }
                '{' => {
                    if let Some(quantifier) = self.quantifier() {
                        self.quantify(&mut alternatives, quantifier, start);
                    } else {
                        self.at += 1;
                        let span = self.offset_of(start)..self.offset();
                        self.problem(
                            span,
                            "unescaped `{` (an error in Unicode-mode ECMA regexes)",
                            None,
                        );
                        push(&mut alternatives, Atom::Char('{'));
                    }
                }
                '}' | ']' => {
                    self.at += 1;
                    let span = self.offset_of(start)..self.offset();
                    self.problem(
                        span,
                        format!("unescaped `{c}` (an error in Unicode-mode ECMA regexes)"),
                        None,
                    );
                    push(&mut alternatives, Atom::Char(c));
                }
                c if flags.extended && c.is_whitespace() => self.at += 1,
                '#' if flags.extended => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                '(' => {
                    if let Some(atom) = self.group(&mut flags) {
                        push(&mut alternatives, atom);
                    }
                }
                '[' => {
                    let atom = self.class(flags);
                    push(&mut alternatives, atom);
                }
                '\\' => {
                    for atom in self.escape(flags) {
                        push(&mut alternatives, atom);
                    }
                }
                '.' => {
                    self.at += 1;
                    push(
                        &mut alternatives,
                        Atom::Raw(if flags.dot_all { "[\\s\\S]" } else { "." }.into()),
                    );
                }
                '^' => {
                    self.at += 1;
                    push(
                        &mut alternatives,
                        Atom::Raw(if flags.multiline { "(?<![^\\n])" } else { "^" }.into()),
                    );
                }
                '$' => {
                    self.at += 1;
                    push(
                        &mut alternatives,
                        Atom::Raw(if flags.multiline { "(?![^\\n])" } else { "$" }.into()),
                    );
                }
                c => {
                    self.at += 1;
                    let atom = self.fold_char(c, flags, start);
                    push(&mut alternatives, atom);
                }
            }
        }
        alternatives
    }

    fn quantifier(&mut self) -> Option<Quantifier> {
        let start = self.at;
        let text = match self.peek()? {
            c @ ('*' | '+' | '?') => {
                self.at += 1;
                c.to_string()
            }
            '{' => {
                let rest = self.rest();
                let close = rest.find('}')?;
                let inner = &rest[1..close];
                let valid = match inner.split_once(',') {
                    None => !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit()),
                    Some((low, high)) => {
                        !low.is_empty()
                            && low.chars().all(|c| c.is_ascii_digit())
                            && high.chars().all(|c| c.is_ascii_digit())
                    }
                };
                if !valid {
                    return None;
                }
                self.at += rest[..=close].chars().count();
                rest[..=close].to_owned()
            }
            _ => return None,
        };
        let lazy = self.eat("?");
        let possessive = !lazy && self.eat("+");
        if possessive {
            let span = self.offset_of(start)..self.offset();
            self.emulated_atomic.get_or_insert(span.clone());
            self.problem(span, format!("possessive quantifier `{text}+`"), None);
        }
        Some(Quantifier {
            text,
            lazy,
            possessive,
        })
    }

    fn quantify(&mut self, alternatives: &mut [Vec<Node>], quantifier: Quantifier, start: usize) {
        let last = alternatives.last_mut().and_then(|nodes| nodes.last_mut());
        match last {
            Some(node) if node.quantifier.is_none() => node.quantifier = Some(quantifier),
            _ => {
                let span = self.offset_of(start)..self.offset();
                self.problem(
                    span,
                    "quantifier with nothing to repeat",
                    Some("the pattern does not parse"),
                );
            }
        }
    }

    fn fold_char(&mut self, c: char, flags: Flags, start: usize) -> Atom {
        if !flags.insensitive || !has_case(c) {
            return Atom::Char(c);
        }
        if !c.is_ascii() {
            let span = self.offset_of(start)..self.offset();
            self.problem(
                span,
                format!("case-insensitive `{c}`"),
                Some("only ASCII letters can be case-folded exactly"),
            );
            return Atom::Char(c);
        }
        Atom::Class {
            negated: false,
            items: vec![
                ClassItem::Char(c.to_ascii_lowercase()),
                ClassItem::Char(c.to_ascii_uppercase()),
            ],
        }
    }

    /// Parses a group at `(`; `None` for groups that vanish (comments, `(?i)`).
    fn group(&mut self, flags: &mut Flags) -> Option<Atom> {
        let start = self.at;
        self.at += 1;
        let span_to_here = |parser: &Self| parser.offset_of(start)..parser.offset();
        let kind = if self.eat("?:") {
            GroupKind::NonCapture
        } else if self.eat("?=") {
            GroupKind::Look("?=")
        } else if self.eat("?!") {
            GroupKind::Look("?!")
        } else if self.eat("?<=") {
            GroupKind::Look("?<=")
        } else if self.eat("?<!") {
            GroupKind::Look("?<!")
        } else if self.eat("?>") {
            let span = span_to_here(self);
            self.emulated_atomic.get_or_insert(span.clone());
            self.problem(span, "atomic group `(?>…)`", None);
            GroupKind::Atomic
        } else if self.eat("?#") {
            while self.peek().is_some_and(|c| c != ')') {
                self.at += 1;
            }
            self.at += 1;
            let span = span_to_here(self);
            self.problem(span, "comment group `(?#…)`", None);
            return None;
        } else if self.eat("?P=") {
            let name = self.name_until(')');
            let span = span_to_here(self);
            self.problem(span, "Python-style backreference `(?P=name)`", None);
            return Some(Atom::Raw(format!("\\k<{name}>")));
        } else if self.eat("?P<") {
            let name = self.name_until('>');
            let span = span_to_here(self);
            self.problem(span, "Python-style named group `(?P<name>…)`", None);
            GroupKind::Capture(Some(name))
        } else if self.eat("?'") {
            let name = self.name_until('\'');
            let span = span_to_here(self);
            self.problem(span, "named group `(?'name'…)`", None);
            GroupKind::Capture(Some(name))
        } else if self.eat("?<") {
            let name = self.name_until('>');
            GroupKind::Capture(Some(name))
        } else if self.peek() == Some('?') {
            return self.flag_group(start, flags);
        } else if self.peek() == Some('*') {
            let span = span_to_here(self);
            self.problem(
                span,
                "backtracking verb `(*…)`",
                Some("ECMA-262 has no backtracking verbs"),
            );
            GroupKind::NonCapture
        } else {
            GroupKind::Capture(None)
        };
        let alternatives = self.alternatives(*flags, 1);
        self.close(start);
        Some(Atom::Group { kind, alternatives })
    }

    fn close(&mut self, start: usize) {
        if self.peek() == Some(')') {
            self.at += 1;
        } else {
            let span = self.offset_of(start)..self.len;
            self.problem(span, "unclosed group", Some("the pattern does not parse"));
        }
    }

    fn name_until(&mut self, end: char) -> String {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            self.at += 1;
            if c == end {
                break;
            }
            name.push(c);
        }
        name
    }

    /// `(?imsx-imsx)` or `(?imsx-imsx:…)`; anything else after `(?` is not ECMA.
    fn flag_group(&mut self, start: usize, flags: &mut Flags) -> Option<Atom> {
        self.at += 1;
        let mut letters = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_alphabetic() || *c == '-' || *c == '^')
        {
            letters.push(c);
            self.at += 1;
        }
        let scoped = self.peek() == Some(':');
        let closes = self.peek() == Some(')');
        let flag_letters = letters.chars().all(|c| "imsxnUJ-^".contains(c));
        if letters.is_empty() || !flag_letters || !(scoped || closes) {
            let span = self.offset_of(start)..self.offset();
            self.problem(
                span,
                "PCRE group syntax `(?…)` (recursion, conditionals or branch reset)",
                Some("ECMA-262 has no equivalent"),
            );
            let alternatives = self.alternatives(*flags, 1);
            self.close(start);
            return Some(Atom::Group {
                kind: GroupKind::NonCapture,
                alternatives,
            });
        }
        self.at += 1;
        let span = self.offset_of(start)..self.offset();
        let mut updated = *flags;
        let mut on = true;
        let mut unknown = None;
        for letter in letters.chars() {
            match letter {
                '-' => on = false,
                'i' => updated.insensitive = on,
                's' => updated.dot_all = on,
                'm' => updated.multiline = on,
                'x' => updated.extended = on,
                other => unknown = Some(other),
            }
        }
        let shown = if scoped {
            format!("(?{letters}:…)")
        } else {
            format!("(?{letters})")
        };
        let why = unknown.map(|letter| format!("the `{letter}` flag has no ECMA-262 equivalent"));
        self.problem(span, format!("inline flags `{shown}`"), why.as_deref());
        if scoped {
            let alternatives = self.alternatives(updated, 1);
            self.close(start);
            Some(Atom::Group {
                kind: GroupKind::NonCapture,
                alternatives,
            })
        } else {
            *flags = updated;
            None
        }
    }

    /// Parses an escape outside a class (at `\`).
    #[expect(
        clippy::too_many_lines,
        reason = "one short arm per escape; split up, the table would scatter"
    )]
    fn escape(&mut self, flags: Flags) -> Vec<Atom> {
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
    fn name_until_after(&mut self, open: char, close: char) -> String {
        if self.peek() == Some(open) {
            self.at += 1;
        }
        self.name_until(close)
    }

    /// Decodes `\xHH` / `\uHHHH` / `\u{…}` after the letter; returns the character and how
    /// many more characters the escape takes.
    fn hex_escape(&self, letter: char) -> (Option<char>, usize) {
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

    /// Parses a class at `[`.
    #[expect(
        clippy::too_many_lines,
        reason = "one short arm per kind of class item"
    )]
    fn class(&mut self, flags: Flags) -> Atom {
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
/// into each other, and printed `[a-zA-ZA-Za-z]` (issue 14, item 24).
fn without_repeats(items: Vec<ClassItem>) -> Vec<ClassItem> {
    let mut kept: Vec<ClassItem> = Vec::with_capacity(items.len());
    for item in items {
        if !kept.contains(&item) {
            kept.push(item);
        }
    }
    kept
}

fn push(alternatives: &mut [Vec<Node>], atom: Atom) {
    alternatives
        .last_mut()
        .expect("there is always one alternative")
        .push(Node {
            atom,
            quantifier: None,
        });
}

fn has_case(c: char) -> bool {
    c.is_lowercase() || c.is_uppercase()
}

/// PCRE's `\h` and `\v` as class items.
fn space_class(letter: char) -> Vec<ClassItem> {
    let text = if letter == 'h' {
        "\\t\\x20\\xA0\\u1680\\u180E\\u2000-\\u200A\\u202F\\u205F\\u3000"
    } else {
        "\\n-\\r\\x85\\u2028\\u2029"
    };
    vec![ClassItem::Raw(text.into())]
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

fn print_alternatives(alternatives: &[Vec<Node>], out: &mut String, groups: &mut usize) {
    for (index, nodes) in alternatives.iter().enumerate() {
        if index > 0 {
            out.push('|');
        }
        for node in nodes {
            print_node(node, out, groups);
        }
    }
}

fn print_node(node: &Node, out: &mut String, groups: &mut usize) {
    let atomic = matches!(
        node.atom,
        Atom::Group {
            kind: GroupKind::Atomic,
            ..
        }
    );
    let possessive = node.quantifier.as_ref().is_some_and(|q| q.possessive);
    if possessive {
        // X*+ ≡ (?>X*) ≡ (?=(X*))\N: ECMA lookaheads never backtrack into their match.
        *groups += 1;
        let number = *groups;
        out.push_str("(?=(");
        print_atom(&node.atom, out, groups);
        out.push_str(
            &node
                .quantifier
                .as_ref()
                .expect("possessive implies a quantifier")
                .text,
        );
        let _ = write!(out, "))\\{number}");
        return;
    }
    if atomic && node.quantifier.is_some() {
        out.push_str("(?:");
        print_atom(&node.atom, out, groups);
        out.push(')');
    } else {
        print_atom(&node.atom, out, groups);
    }
    if let Some(quantifier) = &node.quantifier {
        out.push_str(&quantifier.text);
        if quantifier.lazy {
            out.push('?');
        }
    }
}

fn print_atom(atom: &Atom, out: &mut String, groups: &mut usize) {
    match atom {
        Atom::Char(c) => print_char(*c, out, false),
        Atom::Raw(text) => out.push_str(text),
        Atom::Class { negated, items } => {
            out.push('[');
            if *negated {
                out.push('^');
            }
            for item in items {
                match item {
                    ClassItem::Char(c) => print_char(*c, out, true),
                    ClassItem::Range(low, high) => {
                        print_char(*low, out, true);
                        out.push('-');
                        print_char(*high, out, true);
                    }
                    ClassItem::Raw(text) => out.push_str(text),
                }
            }
            out.push(']');
        }
        Atom::Group { kind, alternatives } => match kind {
            GroupKind::Atomic => {
                *groups += 1;
                let number = *groups;
                out.push_str("(?=(");
                print_alternatives(alternatives, out, groups);
                let _ = write!(out, "))\\{number}");
            }
            GroupKind::Capture(name) => {
                *groups += 1;
                out.push('(');
                if let Some(name) = name {
                    let _ = write!(out, "?<{name}>");
                }
                print_alternatives(alternatives, out, groups);
                out.push(')');
            }
            GroupKind::NonCapture => {
                out.push_str("(?:");
                print_alternatives(alternatives, out, groups);
                out.push(')');
            }
            GroupKind::Look(opening) => {
                out.push('(');
                out.push_str(opening);
                print_alternatives(alternatives, out, groups);
                out.push(')');
            }
        },
    }
}

fn print_char(c: char, out: &mut String, in_class: bool) {
    let special = if in_class { "\\]-^[" } else { SYNTAX };
    if special.contains(c) {
        out.push('\\');
        out.push(c);
    } else if c.is_control() {
        if (c as u32) < 0x100 {
            let _ = write!(out, "\\x{:02X}", c as u32);
        } else {
            let _ = write!(out, "\\u{:04X}", c as u32);
        }
    } else {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn translate(pattern: &str) -> Option<String> {
        analyse(pattern).translation
    }

    #[test]
    fn portable_patterns_have_no_problems() {
        for pattern in [
            "^[a-z]+$",
            "^\\d{3}-\\d{4}$",
            "(?<year>\\d{4})-\\k<year>",
            "^\\p{L}+$",
            "a{2,}b?",
            "[\\-a-z]",
        ] {
            let analysis = analyse(pattern);
            assert!(
                analysis.problems.is_empty(),
                "{pattern}: {:?}",
                analysis.problems
            );
        }
    }

    #[test]
    fn anchors_translate() {
        assert_eq!(translate("\\A[a-z]+\\z").as_deref(), Some("^[a-z]+$"));
        assert_eq!(translate("\\A\\d+\\Z").as_deref(), Some("^\\d+(?=\\n?$)"));
    }

    #[test]
    fn possessive_and_atomic_become_lookahead_backreferences() {
        assert_eq!(translate("^a++b$").as_deref(), Some("^(?=(a+))\\1b$"));
        assert_eq!(
            translate("^(x)(?>ab|a)c$").as_deref(),
            Some("^(x)(?=(ab|a))\\2c$")
        );
        assert_eq!(
            translate("(?>a(?>b))").as_deref(),
            Some("(?=(a(?=(b))\\2))\\1")
        );
        let analysis = analyse("(a)\\1(?>b)");
        assert!(analysis.translation.is_none());
        assert!(analysis.problems.iter().any(|p| p.untranslatable.is_some()));
    }

    #[test]
    fn inline_flags_translate() {
        assert_eq!(translate("(?i)^ab1$").as_deref(), Some("^[aA][bB]1$"));
        assert_eq!(translate("(?i)[a-c_]").as_deref(), Some("[A-Ca-c_]"));
        assert_eq!(translate("(?s)a.b").as_deref(), Some("a[\\s\\S]b"));
        assert_eq!(translate("(?x) a b # spaced\n c").as_deref(), Some("abc"));
        assert_eq!(translate("x(?i:y)z").as_deref(), Some("x(?:[yY])z"));
        assert!(translate("(?U)a+").is_none());
    }

    #[test]
    fn posix_classes_and_pcre_escapes_translate() {
        assert_eq!(
            translate("^[[:alpha:]_][[:alnum:]_]*$").as_deref(),
            Some("^[A-Za-z_][A-Za-z0-9_]*$")
        );
        assert_eq!(translate("[[:^digit:]]").as_deref(), Some("[^0-9]"));
        assert!(translate("[a[:^digit:]]").is_none());
        assert_eq!(
            translate("(?P<id>\\d+)(?P=id)").as_deref(),
            Some("(?<id>\\d+)\\k<id>")
        );
        assert_eq!(
            translate("\\x{41}\\e\\Q.*\\E").as_deref(),
            Some("A\\x1B\\.\\*")
        );
        assert_eq!(
            translate("^[a-z]+\\-\\d+$").as_deref(),
            Some("^[a-z]+-\\d+$")
        );
        assert_eq!(translate("a{,3}").as_deref(), Some("a\\{,3\\}"));
    }

    #[test]
    fn folded_posix_classes_are_not_repeated() {
        // Regression test for issue 14, item 24: `check --fix` wrote `[a-zA-ZA-Za-z]`.
        assert_eq!(translate("(?i)[[:alpha:]]").as_deref(), Some("[a-zA-Z]"));
        assert_eq!(
            translate("(?i)^[[:alnum:]_]+$").as_deref(),
            Some("^[a-zA-Z0-9_]+$")
        );
        assert_eq!(translate("[a-z[:lower:]]").as_deref(), Some("[a-z]"));
    }

    #[test]
    fn untranslatable_constructs_are_reported() {
        for pattern in ["\\Gabc", "(?R)", "a\\Kb", "(?(1)a|b)"] {
            let analysis = analyse(pattern);
            assert!(!analysis.problems.is_empty(), "{pattern}");
            assert!(analysis.translation.is_none(), "{pattern}");
        }
    }

    #[test]
    fn invalid_ecma_syntax_is_reported() {
        let analysis = analyse("(?<=a");
        assert_eq!(analysis.problems.len(), 1, "{analysis:?}");
    }
}
