//! Printing the parsed pattern back as ECMA-262 source.

use std::fmt::Write as _;

use super::{Atom, ClassItem, GroupKind, Node, SYNTAX};

pub(super) fn print_alternatives(alternatives: &[Vec<Node>], out: &mut String, groups: &mut usize) {
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
