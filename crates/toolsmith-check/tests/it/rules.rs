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

#[test]
fn every_rule_fires_on_its_fixture_and_spares_the_near_misses() {
    for rule in registry::RULES {
        let (findings, rendered) = run(rule.id);
        assert!(
            !findings.is_empty(),
            "`{}` finds nothing in its fixture",
            rule.id
        );
        let has_near_miss = std::fs::read_dir(fixture(rule.id)).unwrap().any(|entry| {
            entry
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("ok")
        });
        assert!(
            has_near_miss,
            "`{}`: the fixture has no near misses (files named ok*)",
            rule.id
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
                "`{}` fires on a near miss:\n{rendered}",
                rule.id
            );
            assert_eq!(finding.diagnostic.rule, rule.id);
        }
        insta::assert_snapshot!(rule.id, rendered);
    }
}

#[test]
fn a_one_token_description_is_counted_in_the_singular() {
    // Regression test for issue 14, item 24: the message said "1 tokens".
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
