//! Google-style docstrings: the description (everything before `Args:`/`Returns:`…,
//! dedented, with internal blank lines kept) and one description per parameter from the
//! `Args:` section (`name: text` or `name (type): text`, continuation lines indented
//! further are joined).

use std::collections::HashMap;

/// A parsed docstring.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Docstring {
    /// The text before the first section.
    pub(crate) description: String,
    /// Parameter descriptions from `Args:`.
    pub(crate) args: HashMap<String, String>,
}

/// Section headers that end the description. `Args`-like ones introduce parameter entries.
const ARG_SECTIONS: &[&str] = &["Args", "Arguments", "Parameters", "Params"];
const OTHER_SECTIONS: &[&str] = &["Returns", "Return", "Raises", "Yields"];

/// Parses a docstring.
pub(crate) fn parse(raw: &str) -> Docstring {
    let lines = clean_lines(raw);
    let mut description = Vec::new();
    let mut args = HashMap::new();
    let mut in_description = true;
    let mut index = 0;
    while index < lines.len() {
        let line = &lines[index];
        match section(line) {
            Some(Section::Args) => {
                in_description = false;
                index = parse_args(&lines, index + 1, indent(line), &mut args);
            }
            Some(Section::Other) => {
                in_description = false;
                index = skip_section(&lines, index + 1, indent(line));
            }
            None => {
                if in_description {
                    description.push(line.as_str());
                }
                index += 1;
            }
        }
    }
    Docstring {
        description: trim_blank_lines(&description).join("\n"),
        args,
    }
}

enum Section {
    Args,
    Other,
}

fn section(line: &str) -> Option<Section> {
    let text = line.trim();
    let (name, rest) = text.split_once(':')?;
    if ARG_SECTIONS.contains(&name) && rest.trim().is_empty() {
        Some(Section::Args)
    } else if OTHER_SECTIONS.contains(&name) {
        Some(Section::Other)
    } else {
        None
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Reads `name: text` entries indented under an `Args:` header at `header_indent`; returns
/// the index of the first line after the section.
fn parse_args(
    lines: &[String],
    mut index: usize,
    header_indent: usize,
    args: &mut HashMap<String, String>,
) -> usize {
    let mut entry_indent = None;
    let mut current: Option<(String, String)> = None;
    while index < lines.len() {
        let line = &lines[index];
        if line.trim().is_empty() {
            index += 1;
            continue;
        }
        let depth = indent(line);
        if depth <= header_indent {
            break;
        }
        let entry_depth = *entry_indent.get_or_insert(depth);
        if depth <= entry_depth {
            if let Some((name, text)) = current.take() {
                args.insert(name, text);
            }
            current = entry(line.trim());
        } else if let Some((_, text)) = &mut current {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(line.trim());
        }
        index += 1;
    }
    if let Some((name, text)) = current {
        args.insert(name, text);
    }
    index
}

/// `name: text`, `name (type): text`, `*args: text`.
fn entry(text: &str) -> Option<(String, String)> {
    let (head, description) = text.split_once(':')?;
    let name = head
        .split_once('(')
        .map_or(head, |(name, _)| name)
        .trim()
        .trim_start_matches('*');
    let valid = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    valid.then(|| (name.to_owned(), description.trim().to_owned()))
}

/// Skips the lines indented under a section header.
fn skip_section(lines: &[String], mut index: usize, header_indent: usize) -> usize {
    while index < lines.len() {
        let line = &lines[index];
        if !line.trim().is_empty() && indent(line) <= header_indent {
            break;
        }
        index += 1;
    }
    index
}

/// Splits into lines, expands tabs, and removes the common indentation of all lines but
/// the first (which follows the opening quotes), like Python's `inspect.cleandoc`.
fn clean_lines(raw: &str) -> Vec<String> {
    let lines: Vec<String> = raw.lines().map(expand_tabs).collect();
    let common = lines
        .iter()
        .skip(1)
        .filter(|line| !line.trim().is_empty())
        .map(|line| indent(line))
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .enumerate()
        .map(|(index, line)| {
            if index == 0 {
                line.trim().to_owned()
            } else if line.trim().is_empty() {
                String::new()
            } else {
                line[common.min(line.len())..].trim_end().to_owned()
            }
        })
        .collect()
}

fn expand_tabs(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for ch in line.chars() {
        if ch == '\t' {
            let next_stop = (out.chars().count() / 8 + 1) * 8;
            while out.chars().count() < next_stop {
                out.push(' ');
            }
        } else {
            out.push(ch);
        }
    }
    out
}

fn trim_blank_lines<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let start = lines.iter().position(|line| !line.trim().is_empty());
    let end = lines.iter().rposition(|line| !line.trim().is_empty());
    match (start, end) {
        (Some(start), Some(end)) => lines[start..=end].to_vec(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn description_stops_at_args_and_keeps_blank_lines() {
        let doc = parse(
            "Get the weather forecast for a city.

    Use this tool to look up the weather.

    Use when:
    - The user asks.

    Example: forecast_get(city=\"Oslo\", days=2)

    Args:
        city: City name, e.g. \"Oslo\".
        days: How many days ahead,
            1 to 7.
    ",
        );
        assert_eq!(
            doc.description,
            "Get the weather forecast for a city.\n\nUse this tool to look up the weather.\n\n\
             Use when:\n- The user asks.\n\nExample: forecast_get(city=\"Oslo\", days=2)"
        );
        assert_eq!(doc.args["city"], "City name, e.g. \"Oslo\".");
        assert_eq!(doc.args["days"], "How many days ahead, 1 to 7.");
    }

    #[test]
    fn typed_entries_and_returns_section() {
        let doc = parse(
            "Add numbers.

    Returns:
        The sum.

    Args:
        a (int): First.
        b (int): Second.
        *rest: More.
    ",
        );
        assert_eq!(doc.description, "Add numbers.");
        assert_eq!(doc.args["a"], "First.");
        assert_eq!(doc.args["b"], "Second.");
        assert_eq!(doc.args["rest"], "More.");
    }

    #[test]
    fn no_sections_and_one_liners() {
        assert_eq!(parse("Echo text back.").description, "Echo text back.");
        assert_eq!(parse("").description, "");
        let doc = parse("\n    Starts on the next line.\n    Second line.\n    ");
        assert_eq!(doc.description, "Starts on the next line.\nSecond line.");
        assert!(doc.args.is_empty());
    }

    #[test]
    fn tabs_are_expanded_before_dedenting() {
        let doc = parse("Summary.\n\n\tDetail.\n\n\tArgs:\n\t\tx: The x.\n\t\t\tcontinued\n");
        assert_eq!(doc.description, "Summary.\n\nDetail.");
        assert_eq!(doc.args["x"], "The x. continued");
    }

    #[test]
    fn returns_on_one_line_ends_the_description() {
        let doc = parse("Count things.\n\nReturns: the count.\n");
        assert_eq!(doc.description, "Count things.");
    }
}
