//! What a rule is: its id, summary, default severity, its documentation (the doc comment
//! of its file, captured by [`declare_rule!`]) and its check function. `--explain` and
//! `docs/rules/<id>.md` are both rendered from that one doc comment.

use toolsmith_model::Severity;

use crate::checker::{Report, Server};

/// One lint rule.
#[derive(Debug)]
pub struct Rule {
    /// Stable kebab-case id naming the problem (`missing-description`).
    pub id: &'static str,
    /// The Rust type that carries the rule's documentation (`MissingDescription`).
    pub type_name: &'static str,
    /// One line: what the rule finds.
    pub summary: &'static str,
    /// Severity of its findings unless configured otherwise.
    pub severity: Severity,
    /// The documentation, as Markdown (`## What it does`, `## Why is this bad?`, …).
    pub doc: &'static str,
    pub(crate) check: fn(&Server<'_>, &mut Report<'_>),
}

/// The headings every rule's documentation has, in this order.
pub const DOC_SECTIONS: &[&str] = &[
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## How to fix",
];

impl Rule {
    /// The documentation as Markdown, without the one-space indent doc comments carry.
    #[must_use]
    pub fn documentation(&self) -> String {
        let mut text = String::new();
        for line in self.doc.lines() {
            text.push_str(line.strip_prefix(' ').unwrap_or(line));
            text.push('\n');
        }
        text.trim().to_owned() + "\n"
    }

    /// The headings from [`DOC_SECTIONS`] the documentation lacks (or has out of order).
    #[must_use]
    pub fn missing_sections(&self) -> Vec<&'static str> {
        let documentation = self.documentation();
        let mut from = 0;
        let mut missing = Vec::new();
        for heading in DOC_SECTIONS {
            let found = documentation[from..]
                .lines()
                .scan(from, |offset, line| {
                    let at = *offset;
                    *offset += line.len() + 1;
                    Some((at, line))
                })
                .find(|(_, line)| line.trim_end() == *heading);
            match found {
                Some((at, _)) => from = at + heading.len(),
                None => missing.push(*heading),
            }
        }
        missing
    }

    /// What `toolsmith check --explain ID` prints.
    #[must_use]
    pub fn explain(&self) -> String {
        format!(
            "# {} ({})\n\nDefault severity: {}. {}\n\n{}",
            self.id,
            self.type_name,
            self.severity.as_str(),
            self.summary,
            self.documentation()
        )
    }

    /// The page `docs/rules/<id>.md`.
    #[must_use]
    pub fn page(&self) -> String {
        format!(
            "<!-- Generated from crates/toolsmith-check/src/rules/{}.rs; do not edit. -->\n\n\
             # `{}`\n\n{}\n\n**Default severity:** {} · **Suppress:** `[check] ignore = [\"{}\"]` \
             in `toolsmith.toml`, or `--ignore {}`\n\n{}",
            self.id.replace('-', "_"),
            self.id,
            self.summary,
            self.severity.as_str(),
            self.id,
            self.id,
            self.documentation()
        )
    }
}

/// Declares a rule: its doc comment (the rule's documentation), a type named after the id
/// and a static with the id, summary, default severity and check function.
///
/// ```ignore
/// declare_rule! {
///     /// ## What it does
///     /// ...
///     pub(crate) static MISSING_DESCRIPTION: MissingDescription = {
///         id: "missing-description",
///         summary: "A tool has no description",
///         severity: Error,
///         check: check,
///     }
/// }
/// ```
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])+
        $vis:vis static $static_name:ident: $type_name:ident = {
            id: $id:literal,
            summary: $summary:literal,
            severity: $severity:ident,
            check: $check:path $(,)?
        }
    ) => {
        $(#[doc = $doc])+
        #[derive(Debug)]
        $vis struct $type_name(pub(crate) $crate::rule::Rule);

        #[doc = concat!("The `", $id, "` rule.")]
        $vis static $static_name: $type_name = $type_name($crate::rule::Rule {
            id: $id,
            type_name: stringify!($type_name),
            summary: $summary,
            severity: toolsmith_model::Severity::$severity,
            doc: concat!($($doc, "\n"),+),
            check: $check,
        });
    };
}

pub(crate) use declare_rule;
