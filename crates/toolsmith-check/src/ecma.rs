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

mod classes;
mod escapes;
mod groups;
mod print;

use std::ops::Range;

use print::print_alternatives;

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

#[cfg(test)]
mod tests;
