//! The translations and diagnostics of `ecma`, pattern by pattern.

use super::*;

fn translate(pattern: &str) -> Option<String> {
    analyse(pattern).translation
}

#[test]
fn portable_patterns_have_no_problems() {
    for pattern in [
        "^[a-z]+$",
        "^\\d{3}-\\d{4}$",
        "(?<year>\\d{4})-\\k<year>",
        "^\\p{L}+$",
        "a{2,}b?",
        "[\\-a-z]",
    ] {
        let analysis = analyse(pattern);
        assert!(
            analysis.problems.is_empty(),
            "{pattern}: {:?}",
            analysis.problems
        );
    }
}

#[test]
fn anchors_translate() {
    assert_eq!(translate("\\A[a-z]+\\z").as_deref(), Some("^[a-z]+$"));
    assert_eq!(translate("\\A\\d+\\Z").as_deref(), Some("^\\d+(?=\\n?$)"));
}

#[test]
fn possessive_and_atomic_become_lookahead_backreferences() {
    assert_eq!(translate("^a++b$").as_deref(), Some("^(?=(a+))\\1b$"));
    assert_eq!(
        translate("^(x)(?>ab|a)c$").as_deref(),
        Some("^(x)(?=(ab|a))\\2c$")
    );
    assert_eq!(
        translate("(?>a(?>b))").as_deref(),
        Some("(?=(a(?=(b))\\2))\\1")
    );
    let analysis = analyse("(a)\\1(?>b)");
    assert!(analysis.translation.is_none());
    assert!(analysis.problems.iter().any(|p| p.untranslatable.is_some()));
}

#[test]
fn inline_flags_translate() {
    assert_eq!(translate("(?i)^ab1$").as_deref(), Some("^[aA][bB]1$"));
    assert_eq!(translate("(?i)[a-c_]").as_deref(), Some("[A-Ca-c_]"));
    assert_eq!(translate("(?s)a.b").as_deref(), Some("a[\\s\\S]b"));
    assert_eq!(translate("(?x) a b # spaced\n c").as_deref(), Some("abc"));
    assert_eq!(translate("x(?i:y)z").as_deref(), Some("x(?:[yY])z"));
    assert!(translate("(?U)a+").is_none());
}

#[test]
fn posix_classes_and_pcre_escapes_translate() {
    assert_eq!(
        translate("^[[:alpha:]_][[:alnum:]_]*$").as_deref(),
        Some("^[A-Za-z_][A-Za-z0-9_]*$")
    );
    assert_eq!(translate("[[:^digit:]]").as_deref(), Some("[^0-9]"));
    assert!(translate("[a[:^digit:]]").is_none());
    assert_eq!(
        translate("(?P<id>\\d+)(?P=id)").as_deref(),
        Some("(?<id>\\d+)\\k<id>")
    );
    assert_eq!(
        translate("\\x{41}\\e\\Q.*\\E").as_deref(),
        Some("A\\x1B\\.\\*")
    );
    assert_eq!(
        translate("^[a-z]+\\-\\d+$").as_deref(),
        Some("^[a-z]+-\\d+$")
    );
    assert_eq!(translate("a{,3}").as_deref(), Some("a\\{,3\\}"));
}

#[test]
fn folded_posix_classes_are_not_repeated() {
    // Regression test: `check --fix` wrote `[a-zA-ZA-Za-z]`.
    assert_eq!(translate("(?i)[[:alpha:]]").as_deref(), Some("[a-zA-Z]"));
    assert_eq!(
        translate("(?i)^[[:alnum:]_]+$").as_deref(),
        Some("^[a-zA-Z0-9_]+$")
    );
    assert_eq!(translate("[a-z[:lower:]]").as_deref(), Some("[a-z]"));
}

#[test]
fn untranslatable_constructs_are_reported() {
    for pattern in ["\\Gabc", "(?R)", "a\\Kb", "(?(1)a|b)"] {
        let analysis = analyse(pattern);
        assert!(!analysis.problems.is_empty(), "{pattern}");
        assert!(analysis.translation.is_none(), "{pattern}");
    }
}

#[test]
fn invalid_ecma_syntax_is_reported() {
    let analysis = analyse("(?<=a");
    assert_eq!(analysis.problems.len(), 1, "{analysis:?}");
}
