//! `docs/rules/` is generated from the rules' doc comments; these tests fail when a page is
//! stale or missing. Regenerate with `cargo run -p toolsmith-check --example gen-docs` (or
//! run this test with `TOOLSMITH_UPDATE_DOCS=1`).

use std::path::Path;

use toolsmith_check::{DOC_SECTIONS, registry};

#[test]
fn every_rule_documents_every_section() {
    for rule in registry::RULES {
        let missing = rule.missing_sections();
        assert!(
            missing.is_empty(),
            "`{}` lacks {missing:?} (need {DOC_SECTIONS:?}, in order)",
            rule.id
        );
        assert!(rule.explain().contains(rule.summary));
    }
}

#[test]
fn rule_pages_are_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules");
    let update = std::env::var_os("TOOLSMITH_UPDATE_DOCS").is_some();
    let pages = registry::pages();
    let mut stale = Vec::new();
    for (name, text) in &pages {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, text).unwrap();
            } else {
                stale.push(name.clone());
            }
        }
    }
    let expected: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
    for entry in std::fs::read_dir(&dir).into_iter().flatten() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let markdown = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("md"));
        if markdown && !expected.contains(&name.as_str()) {
            stale.push(format!("{name} (no such rule)"));
        }
    }
    assert!(
        stale.is_empty(),
        "docs/rules/ is stale: {stale:?}\nregenerate it: cargo run -p toolsmith-check --example gen-docs"
    );
}
