//! Every rule, listed once. `--explain`, `--select`, `[check] ignore`, the docs pages and the
//! fixture tests all go through this list.

use std::fmt::Write as _;

use crate::rule::Rule;
use crate::rules;

/// All rules, in the order their docs are listed.
pub static RULES: &[&Rule] = &[
    // Names.
    &rules::invalid_tool_name::INVALID_TOOL_NAME.0,
    &rules::tool_name_too_long::TOOL_NAME_TOO_LONG.0,
    &rules::non_snake_case_name::NON_SNAKE_CASE_NAME.0,
    &rules::duplicate_tool_name::DUPLICATE_TOOL_NAME.0,
    &rules::reserved_tool_name::RESERVED_TOOL_NAME.0,
    // Descriptions.
    &rules::missing_description::MISSING_DESCRIPTION.0,
    &rules::description_too_long::DESCRIPTION_TOO_LONG.0,
    &rules::description_too_short::DESCRIPTION_TOO_SHORT.0,
    &rules::description_too_wordy::DESCRIPTION_TOO_WORDY.0,
    &rules::missing_summary_line::MISSING_SUMMARY_LINE.0,
    &rules::missing_usage_guidance::MISSING_USAGE_GUIDANCE.0,
    &rules::tool_name_in_description::TOOL_NAME_IN_DESCRIPTION.0,
    // Parameters.
    &rules::undocumented_parameter::UNDOCUMENTED_PARAMETER.0,
    &rules::unknown_parameter_type::UNKNOWN_PARAMETER_TYPE.0,
    &rules::invalid_default::INVALID_DEFAULT.0,
    &rules::required_with_default::REQUIRED_WITH_DEFAULT.0,
    &rules::duplicate_enum_value::DUPLICATE_ENUM_VALUE.0,
    &rules::contradictory_constraints::CONTRADICTORY_CONSTRAINTS.0,
    // Schema portability.
    &rules::input_schema_not_object::INPUT_SCHEMA_NOT_OBJECT.0,
    &rules::output_schema_not_object::OUTPUT_SCHEMA_NOT_OBJECT.0,
    &rules::non_portable_schema::NON_PORTABLE_SCHEMA.0,
    &rules::non_ecma_pattern::NON_ECMA_PATTERN.0,
    // MCP Apps and icons.
    &rules::invalid_ui_resource::INVALID_UI_RESOURCE.0,
    &rules::invalid_icon::INVALID_ICON.0,
    // Permissions and requirements.
    &rules::missing_permission::MISSING_PERMISSION.0,
    &rules::unused_permission::UNUSED_PERMISSION.0,
    &rules::overbroad_permission::OVERBROAD_PERMISSION.0,
    &rules::package_permission_denied::PACKAGE_PERMISSION_DENIED.0,
    &rules::missing_requirement::MISSING_REQUIREMENT.0,
    &rules::program_not_found::PROGRAM_NOT_FOUND.0,
    &rules::read_only_writes::READ_ONLY_WRITES.0,
    &rules::token_passthrough::TOKEN_PASSTHROUGH.0,
    // The whole server.
    &rules::tool_list_too_large::TOOL_LIST_TOO_LARGE.0,
    &rules::missing_examples::MISSING_EXAMPLES.0,
];

/// The rule with this id.
#[must_use]
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|rule| rule.id == id)
}

/// The pages of `docs/rules/`: `README.md` (the index) and one `<id>.md` per rule, all
/// generated from the rules' doc comments.
#[must_use]
pub fn pages() -> Vec<(String, String)> {
    let mut index = String::from(
        "<!-- Generated from crates/toolsmith-check/src/rules/; do not edit. -->\n\n\
         # Rules of `toolsmith check`\n\n\
         Each rule is one file in `crates/toolsmith-check/src/rules/`; its doc comment is the \
         page linked here and what `toolsmith check --explain RULE` prints. \
         See [../check.md](../check.md) for running, configuring and suppressing them.\n\n\
         | rule | default severity | finds |\n|---|---|---|\n",
    );
    let mut pages = Vec::new();
    for rule in RULES {
        let _ = writeln!(
            index,
            "| [`{}`]({}.md) | {} | {} |",
            rule.id,
            rule.id,
            rule.severity.as_str(),
            rule.summary
        );
        pages.push((format!("{}.md", rule.id), rule.page()));
    }
    pages.insert(0, ("README.md".to_owned(), index));
    pages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_match_their_type() {
        let mut seen = std::collections::HashSet::new();
        for rule in RULES {
            assert!(seen.insert(rule.id), "{} is listed twice", rule.id);
            assert!(
                rule.id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{} is not kebab-case",
                rule.id
            );
            let camel: String = rule
                .id
                .split('-')
                .map(|word| word[..1].to_uppercase() + &word[1..])
                .collect();
            assert_eq!(
                rule.type_name, camel,
                "the type of {} is named after it",
                rule.id
            );
            assert!(
                rule.missing_sections().is_empty(),
                "{}: missing {:?}",
                rule.id,
                rule.missing_sections()
            );
        }
    }
}
