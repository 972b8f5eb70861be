//! Name helpers: "did you mean" suggestions for unknown tools, rules and commands.

/// The candidates closest to `name` (edit distance at most a third of its length, at
/// least 2), best first, at most three.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let limit = (name.chars().count() / 3).max(2);
    let lowered = name.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let distance = edit_distance(&lowered, &candidate.to_lowercase());
            let contains = candidate.contains(name) || name.contains(candidate);
            (distance <= limit || (contains && !name.is_empty())).then_some((distance, candidate))
        })
        .collect();
    scored.sort_unstable();
    scored
        .into_iter()
        .take(3)
        .map(|(_, candidate)| candidate)
        .collect()
}

/// "did you mean `x`?" for the candidate closest to `name`, or `None` when none is close:
/// the one way a diagnostic's help or a hint suggests a name.
pub fn suggestion<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    suggestion_as(name, candidates, str::to_owned)
}

/// [`suggestion`] with the candidate written by `spell`: `[server]` for a TOML table,
/// `{{name}}` for a template variable.
pub fn suggestion_as<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    spell: impl Fn(&str) -> String,
) -> Option<String> {
    did_you_mean(name, candidates)
        .first()
        .map(|best| format!("did you mean `{}`?", spell(best)))
}

/// `; did you mean `a`?` or `; did you mean one of `a`, `b`?` to end an "unknown …"
/// message with its suggestions (best first); empty when there are none.
pub fn suggestion_suffix(suggestions: &[impl AsRef<str>]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!("; did you mean `{}`?", one.as_ref()),
        many => {
            let names: Vec<String> = many
                .iter()
                .map(|name| format!("`{}`", name.as_ref()))
                .collect();
            format!("; did you mean one of {}?", names.join(", "))
        }
    }
}

/// How to fix a name [`tool_name_problem`] refuses.
pub const TOOL_NAME_HELP: &str =
    "use 1–64 ASCII letters, digits and `_`, e.g. `weather_forecast_get`";

/// What is wrong with `name` as an MCP tool name, or `None` when it is one: 1 to 128
/// characters from `[A-Za-z0-9_.-]` (MCP specification, "Tool names"). Some clients reject
/// a whole server that lists a tool named otherwise, so the catalog leaves such a tool out
/// and `toolsmith check` reports it, both with this message (rule `invalid-tool-name`).
#[must_use]
pub fn tool_name_problem(name: &str) -> Option<String> {
    let bad: Vec<String> = name
        .chars()
        .filter(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .map(|c| format!("{c:?}"))
        .collect();
    if name.is_empty() {
        Some("the tool name is empty".to_owned())
    } else if !bad.is_empty() {
        Some(format!("tool name `{name}` contains {}", bad.join(", ")))
    } else if name.len() > 128 {
        Some(format!("tool name `{name}` is longer than 128 characters"))
    } else {
        None
    }
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_first() {
        let names = ["forecast_get", "forecast_history", "hello"];
        assert_eq!(did_you_mean("forcast_get", names), vec!["forecast_get"]);
        assert_eq!(did_you_mean("helo", names), vec!["hello"]);
        assert!(did_you_mean("zzzzzz", names).is_empty());
    }

    #[test]
    fn suggestions_are_written_one_way() {
        let names = ["server", "search"];
        assert_eq!(
            suggestion("serer", names).as_deref(),
            Some("did you mean `server`?")
        );
        assert_eq!(
            suggestion_as("serer", names, |name| format!("[{name}]")).as_deref(),
            Some("did you mean `[server]`?")
        );
        assert_eq!(suggestion("zzzzzz", names), None);
        assert_eq!(suggestion_suffix(&["a"]), "; did you mean `a`?");
        assert_eq!(
            suggestion_suffix(&["a".to_owned(), "b".to_owned()]),
            "; did you mean one of `a`, `b`?"
        );
        assert_eq!(suggestion_suffix(&[] as &[&str]), "");
    }
}
