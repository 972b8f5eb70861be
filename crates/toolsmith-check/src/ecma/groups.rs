//! Groups: `(…)`, named and non-capturing groups, lookarounds, atomic groups, comments and
//! inline flags (`(?i)`, `(?x:…)`), with the ECMA-262 form of each.

use super::{Atom, Flags, GroupKind, Parser};

impl Parser {
    /// Parses a group at `(`; `None` for groups that vanish (comments, `(?i)`).
    pub(super) fn group(&mut self, flags: &mut Flags) -> Option<Atom> {
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

    pub(super) fn name_until(&mut self, end: char) -> String {
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
}
