//! One fixture folder and one snapshot per rule: `resources/<rule-id>/` holds cases that
//! fire (any file) and near misses that must not (files whose name starts with `ok`).

use toolsmith_check::{Finding, Settings, check, load_findings, registry, render, sort};

use crate::{fixture, json_tools, load};

/// The findings of one rule on its fixture folder, rendered as people see them.
fn run(rule: &'static str) -> (Vec<Finding>, String) {
    let root = fixture(rule);
    assert!(
        root.is_dir(),
        "`{rule}` has no fixture folder {}",
        root.display()
    );
    let (folder, mut context) = load(&root);
    let unexpected: Vec<_> = folder
        .catalog()
        .diagnostics()
        .iter()
        .filter(|d| d.rule != rule)
        .collect();
    assert!(
        unexpected.is_empty(),
        "`{rule}`: the fixture has load errors of other kinds: {unexpected:#?}"
    );
    let mut settings = Settings::default();
    settings.set_select([rule]);
    let from_json = json_tools(&root);
    for tool in &from_json {
        let path = &tool.source.path;
        context
            .sources
            .insert(path.clone(), std::fs::read_to_string(path).unwrap());
    }
    let mut findings = check(
        folder.catalog().definitions().chain(&from_json),
        &context,
        &settings,
    );
    findings.extend(load_findings(folder.catalog().diagnostics(), &settings));
    sort(&mut findings);
    for finding in &findings {
        let path = &finding.diagnostic.location.path;
        if !context.sources.contains_key(path) && path.is_file() {
            context
                .sources
                .insert(path.clone(), std::fs::read_to_string(path).unwrap());
        }
    }
    let rendered = render::human(&findings, &context.sources, false);
    (findings, rendered)
}

/// Runs `rule` on its fixture folder: it must fire, only on files not named `ok*`, only
/// with its own id, and the rendered findings must match the rule's snapshot.
fn fires_on_its_fixture_and_spares_the_near_misses(rule: &'static str) {
    let (findings, rendered) = run(rule);
    assert!(
        !findings.is_empty(),
        "`{rule}` finds nothing in its fixture"
    );
    let has_near_miss = std::fs::read_dir(fixture(rule)).unwrap().any(|entry| {
        entry
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("ok")
    });
    assert!(
        has_near_miss,
        "`{rule}`: the fixture has no near misses (files named ok*)"
    );
    for finding in &findings {
        let file = finding
            .diagnostic
            .location
            .path
            .file_name()
            .unwrap()
            .to_string_lossy();
        assert!(
            !file.starts_with("ok"),
            "`{rule}` fires on a near miss:\n{rendered}"
        );
        assert_eq!(finding.diagnostic.rule, rule);
    }
    insta::assert_snapshot!(rule, rendered);
}

/// One `#[test]` per rule, named after the rule's file, so a failure names the rule; and
/// [`TESTED`], the ids they cover.
macro_rules! fixture_tests {
    ($($test:ident => $id:literal,)*) => {
        $(
            #[test]
            fn $test() {
                fires_on_its_fixture_and_spares_the_near_misses($id);
            }
        )*

        /// The rules that have a fixture test above, in registry order.
        const TESTED: &[&str] = &[$($id),*];
    };
}

fixture_tests! {
    invalid_tool_name => "invalid-tool-name",
    tool_name_too_long => "tool-name-too-long",
    non_snake_case_name => "non-snake-case-name",
    duplicate_tool_name => "duplicate-tool-name",
    reserved_tool_name => "reserved-tool-name",
    missing_description => "missing-description",
    description_too_long => "description-too-long",
    description_too_short => "description-too-short",
    description_too_wordy => "description-too-wordy",
    missing_summary_line => "missing-summary-line",
    missing_usage_guidance => "missing-usage-guidance",
    tool_name_in_description => "tool-name-in-description",
    undocumented_parameter => "undocumented-parameter",
    unknown_parameter_type => "unknown-parameter-type",
    invalid_default => "invalid-default",
    required_with_default => "required-with-default",
    duplicate_enum_value => "duplicate-enum-value",
    contradictory_constraints => "contradictory-constraints",
    input_schema_not_object => "input-schema-not-object",
    output_schema_not_object => "output-schema-not-object",
    non_portable_schema => "non-portable-schema",
    non_ecma_pattern => "non-ecma-pattern",
    invalid_ui_resource => "invalid-ui-resource",
    invalid_icon => "invalid-icon",
    missing_permission => "missing-permission",
    unused_permission => "unused-permission",
    overbroad_permission => "overbroad-permission",
    package_permission_denied => "package-permission-denied",
    missing_requirement => "missing-requirement",
    program_not_found => "program-not-found",
    read_only_writes => "read-only-writes",
    token_passthrough => "token-passthrough",
    tool_list_too_large => "tool-list-too-large",
    missing_examples => "missing-examples",
}

#[test]
fn every_rule_has_a_fixture_test() {
    let registered: Vec<&str> = registry::RULES.iter().map(|rule| rule.id).collect();
    assert_eq!(
        TESTED, registered,
        "add the rule to `fixture_tests!` (in registry order)"
    );
}

#[test]
fn a_one_token_description_is_counted_in_the_singular() {
    // Regression test: the message said "1 tokens".
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("echo.star"),
        "def echo(text):\n    \"\"\"Echo\"\"\"\n    return text\n\nmcp.tool(echo)\n",
    )
    .unwrap();
    let (folder, context) = load(dir.path());
    let mut settings = Settings::default();
    settings.set_select(["description-too-short"]);
    let findings = check(folder.catalog().definitions(), &context, &settings);
    let messages: Vec<_> = findings
        .iter()
        .map(|finding| finding.diagnostic.message.as_str())
        .collect();
    assert_eq!(
        messages,
        ["description of `echo` is 1 token with its parameters; aim for 100 to 250"]
    );
}

#[test]
fn a_call_written_in_a_docstring_needs_no_permission() {
    // Regression test: the rule searched the source text, so a
    // docstring naming `http.get(` was taken for a call.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("echo.star"),
        "def echo(text):\n    \"\"\"Echo the text; unlike `fetch`, it never calls http.get(url).\n\n    \
         Args:\n        text: The text.\n    \"\"\"\n    # Nor mcp.read_file(path) here.\n    \
         return text\n\nmcp.tool(echo)\n",
    )
    .unwrap();
    let (folder, context) = load(dir.path());
    let mut settings = Settings::default();
    settings.set_select(["missing-permission", "read-only-writes"]);
    let findings = check(folder.catalog().definitions(), &context, &settings);
    assert!(findings.is_empty(), "{findings:#?}");
}
