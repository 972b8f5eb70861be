//! The machine formats and `--fix`, on the `non-ecma-pattern` fixture (it has fixable and
//! unfixable findings).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use toolsmith_check::{Edit, Settings, apply_edits, check, registry, render};

use crate::{fixture, load};

fn findings() -> Vec<toolsmith_check::Finding> {
    let (folder, context) = load(&fixture("non-ecma-pattern"));
    check(
        folder.catalog().definitions(),
        &context,
        &Settings::default(),
    )
}

#[test]
fn json_carries_rule_severity_location_message_and_help() {
    insta::assert_snapshot!(render::json(&findings()));
}

#[test]
fn github_annotations_escape_messages() {
    insta::assert_snapshot!(render::github(&findings()));
}

#[test]
fn sarif_is_a_2_1_0_log() {
    let log: serde_json::Value =
        serde_json::from_str(&render::sarif(&findings(), "0.0.0")).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for result in run["results"].as_array().unwrap() {
        let index = usize::try_from(result["ruleIndex"].as_u64().unwrap()).unwrap();
        assert_eq!(rules[index]["id"], result["ruleId"]);
        assert!(["error", "warning", "note"].contains(&result["level"].as_str().unwrap()));
        assert!(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string());
    }
    insta::assert_json_snapshot!(log["runs"][0]["results"][0]);
}

#[test]
fn fixes_rewrite_translatable_patterns_in_place() {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture("non-ecma-pattern")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    let only = |rule: &'static str| {
        let mut settings = Settings::default();
        settings.set_select([rule]);
        settings
    };
    let (folder, context) = load(dir.path());
    let before = check(
        folder.catalog().definitions(),
        &context,
        &only("non-ecma-pattern"),
    );
    let mut by_file: BTreeMap<PathBuf, Vec<&Edit>> = BTreeMap::new();
    for fix in before.iter().filter_map(|f| f.fix.as_ref()) {
        for edit in &fix.edits {
            by_file.entry(edit.path.clone()).or_default().push(edit);
        }
    }
    assert!(!by_file.is_empty(), "the fixture has fixable patterns");
    let mut rewritten = String::new();
    for (path, edits) in &by_file {
        let (text, applied) = apply_edits(&context.sources[path], edits);
        assert_eq!(applied, edits.len());
        std::fs::write(path, &text).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        let _ = write!(rewritten, "--- {name}\n{text}\n");
    }
    let (folder, context) = load(dir.path());
    assert!(
        folder.catalog().diagnostics().is_empty(),
        "{:?}",
        folder.catalog().diagnostics()
    );
    let after = check(
        folder.catalog().definitions(),
        &context,
        &only("non-ecma-pattern"),
    );
    assert!(
        after.iter().all(|f| f.fix.is_none()),
        "everything fixable was fixed"
    );
    assert_eq!(
        after.len(),
        before.iter().filter(|f| f.fix.is_none()).count()
    );
    insta::assert_snapshot!(rewritten);
}

#[test]
fn explain_prints_the_rule_documentation() {
    let rule = registry::rule("non-ecma-pattern").unwrap();
    let text = rule.explain();
    assert!(text.starts_with("# non-ecma-pattern (NonEcmaPattern)\n\nDefault severity: error."));
    assert!(text.contains("## How to fix"));
}
