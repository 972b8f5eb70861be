//! Reading tool descriptions: the summary line and the "Use when:", "Do not use for:" and
//! "Example:" parts the description convention asks for (Klea's guide, seeds/003).

use std::fmt::Write as _;

/// Why the description does not open with a one-sentence summary, if it does not.
pub(crate) fn summary_problem(description: &str) -> Option<String> {
    let paragraph: Vec<&str> = description
        .trim_start()
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect();
    let summary = paragraph.join(" ");
    if summary.is_empty() {
        return None;
    }
    if summary.ends_with(':') || summary.starts_with('-') || summary.starts_with('*') {
        return Some("the description opens with a list, not a summary sentence".into());
    }
    if !summary.ends_with(['.', '!', '?']) {
        return Some("the first line is not a complete sentence (no final period)".into());
    }
    let sentences = sentence_breaks(&summary);
    if sentences > 0 {
        return Some(format!(
            "the opening paragraph has {} sentences; the summary should be one",
            sentences + 1
        ));
    }
    if summary.chars().count() > 200 {
        return Some("the summary sentence is longer than 200 characters".into());
    }
    None
}

/// How many sentence breaks (`. ` followed by a capital letter) a text has, ignoring
/// abbreviations such as "e.g." and "i.e.".
fn sentence_breaks(text: &str) -> usize {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(2)
        .filter(|pair| {
            let (word, next) = (pair[0], pair[1]);
            let abbreviation = ["e.g.", "i.e.", "etc.", "vs.", "approx."]
                .iter()
                .any(|a| word.eq_ignore_ascii_case(a));
            word.ends_with(['.', '!', '?'])
                && !abbreviation
                && next.chars().next().is_some_and(char::is_uppercase)
        })
        .count()
}

/// The parts of the description convention a description lacks, in convention order.
pub(crate) fn missing_guidance(description: &str) -> Vec<&'static str> {
    let lower = description.to_lowercase();
    let mut missing = Vec::new();
    if !lower.contains("use when") && !lower.contains("use this tool when") {
        missing.push("Use when:");
    }
    if !["do not use", "don't use", "not for:"]
        .iter()
        .any(|p| lower.contains(p))
    {
        missing.push("Do not use for:");
    }
    let has_example = lower.lines().any(|line| {
        line.trim_start()
            .trim_start_matches(['-', '*', ' '])
            .starts_with("example")
    });
    if !has_example {
        missing.push("Example:");
    }
    missing
}

/// `GetForecast` → `get_forecast`, `forecast-get` → `forecast_get`.
pub(crate) fn snake_case(name: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if previous_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            previous_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            previous_lower = false;
        }
    }
    out.trim_matches('_').to_owned()
}

/// The hosts of the `http(s)://host/...` URLs a text names, sorted and deduplicated.
pub(crate) fn hosts_named(code: &str) -> Vec<String> {
    let mut hosts: Vec<String> = code
        .match_indices("://")
        .filter(|(at, _)| code[..*at].ends_with("http") || code[..*at].ends_with("https"))
        .map(|(at, _)| {
            code[at + 3..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
                .collect::<String>()
        })
        .filter(|host| host.contains('.'))
        .collect();
    hosts.sort();
    hosts.dedup();
    hosts
}

/// The tokens a model reads to understand a tool: its description plus one
/// `name: description` line per parameter — what a docstring with its `Args:` section holds,
/// the block Klea's 100–250-token guideline is about.
pub(crate) fn description_tokens(definition: &toolsmith_model::ToolDefinition) -> usize {
    let mut text = definition.description.trim().to_owned();
    for property in crate::schema::properties(definition) {
        if let Some(description) = property
            .schema
            .get("description")
            .and_then(serde_json::Value::as_str)
        {
            let _ = write!(text, "\n{}: {description}", property.name);
        }
    }
    crate::tokens::count(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_is_one_sentence() {
        assert_eq!(
            summary_problem("Get the forecast for a city.\n\nUse when: ..."),
            None
        );
        assert_eq!(
            summary_problem("Search models on NeuroML-DB, e.g. cells.\nMore."),
            Some("the opening paragraph has 2 sentences; the summary should be one".into())
        );
        assert!(summary_problem("Greet a person by name").is_some());
        assert_eq!(
            summary_problem("Search and optionally download models\nfrom NeuroML-DB."),
            None
        );
    }

    #[test]
    fn guidance_parts_are_found() {
        let text = "Do a thing.\n\nUse when:\n- x\n\nDo not use for:\n- y\n\nExample: t(a=1)";
        assert!(missing_guidance(text).is_empty());
        assert_eq!(
            missing_guidance("Do a thing."),
            ["Use when:", "Do not use for:", "Example:"]
        );
    }
}
