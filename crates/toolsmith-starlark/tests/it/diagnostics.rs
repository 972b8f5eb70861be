//! Load problems: each is a diagnostic with file, line, column and help, and never takes
//! other files or other tools of the same file down.

use std::path::Path;

use toolsmith_model::Diagnostic;
use toolsmith_starlark::load_module;

use crate::{diagnostics, load, settings};

fn only(diagnostics: &[Diagnostic]) -> &Diagnostic {
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    &diagnostics[0]
}

fn position(diagnostic: &Diagnostic) -> (u32, u32) {
    (diagnostic.location.line, diagnostic.location.column)
}

#[test]
fn syntax_error_is_that_files_diagnostic_only() {
    let broken = load_module(
        Path::new("tools/broken.star"),
        "def f(x):\n    return x +\n",
        &settings(),
    );
    let diagnostic = only(&broken.diagnostics);
    assert!(broken.tools.is_empty());
    assert_eq!(diagnostic.rule, "syntax-error");
    assert_eq!(diagnostic.location.path, Path::new("tools/broken.star"));
    assert_eq!(position(diagnostic), (2, 15));
    assert!(diagnostic.message.contains("Parse error"), "{diagnostic}");

    let fine = load_module(
        Path::new("tools/fine.star"),
        "def ok():\n    \"\"\"Fine.\"\"\"\n    return 1\nmcp.tool(ok)\n",
        &settings(),
    );
    assert!(fine.diagnostics.is_empty());
    assert_eq!(fine.tools.len(), 1);
}

#[test]
fn python_constructs_get_a_hint() {
    for (source, word, line) in [
        ("x = 1\nwhile x:\n    x = 0\n", "while", 2),
        ("class Foo:\n    pass\n", "class", 1),
        (
            "def f():\n    try:\n        pass\n    except:\n        pass\n",
            "try",
            2,
        ),
        ("import os\n", "import", 1),
    ] {
        let diagnostic = only(&diagnostics(source)).clone();
        assert_eq!(diagnostic.rule, "syntax-error");
        assert_eq!(diagnostic.message, format!("`{word}` is not Starlark"));
        assert_eq!(diagnostic.location.line, line, "{word}");
        assert!(diagnostic.help.is_some(), "{word}");
    }
}

#[test]
fn load_statement_is_refused() {
    let diagnostic = only(&diagnostics("load(\"other.star\", \"helper\")\n")).clone();
    assert_eq!(diagnostic.rule, "load-not-supported");
    assert_eq!(position(&diagnostic), (1, 6));
}

#[test]
fn unknown_keyword_names_the_mcp_tool_call() {
    let loaded = load(
        r#"
def good():
    """Good."""
    return 1

def bad():
    """Bad."""
    return 2

mcp.tool(good)
mcp.tool(bad, titel="Bad")
"#,
    );
    assert_eq!(loaded.tools.len(), 1, "the good tool still loads");
    let diagnostic = only(&loaded.diagnostics);
    assert_eq!(diagnostic.rule, "unknown-tool-property");
    assert_eq!(diagnostic.message, "unknown keyword `titel` in `mcp.tool`");
    assert_eq!(position(diagnostic), (11, 1));
    assert_eq!(diagnostic.help.as_deref(), Some("did you mean `title`?"));
}

#[test]
fn wrong_keyword_shape_says_what_is_expected() {
    let diagnostic = only(&diagnostics(
        "def f():\n    \"\"\"F.\"\"\"\n    return 1\n\nmcp.tool(f, keywords=\"weather\")\n",
    ))
    .clone();
    assert_eq!(diagnostic.rule, "invalid-tool-property");
    assert_eq!(
        diagnostic.message,
        "`keywords`: expected a list of strings, got a string"
    );
    assert_eq!(position(&diagnostic), (5, 1));
    assert!(diagnostic.help.as_deref().unwrap().contains("keywords=["));
}

#[test]
fn duplicate_keyword_is_a_syntax_error_with_position() {
    let diagnostic = only(&diagnostics(
        "def f():\n    return 1\n\nmcp.tool(f, title=\"a\", title=\"b\")\n",
    ))
    .clone();
    assert_eq!(position(&diagnostic), (4, 24));
    assert_eq!(
        diagnostic.message,
        "keyword argument `title` is given twice"
    );
}

#[test]
fn duplicate_registration_is_reported() {
    let loaded = load("def f():\n    return 1\n\nmcp.tool(f)\nmcp.tool(f)\n");
    assert_eq!(loaded.tools.len(), 1);
    let diagnostic = only(&loaded.diagnostics);
    assert_eq!(diagnostic.rule, "duplicate-tool-name");
    assert_eq!(diagnostic.location.line, 5);
}

#[test]
fn unknown_annotation_is_named() {
    let diagnostic = only(&diagnostics(
        "def f(w: Widget, n: int) -> str:\n    return \"\"\n\nmcp.tool(f)\n",
    ))
    .clone();
    assert_eq!(diagnostic.rule, "unknown-annotation");
    assert_eq!(
        diagnostic.message,
        "unknown type annotation `Widget` on parameter `w`"
    );
    assert_eq!(position(&diagnostic), (1, 10));
    assert!(diagnostic.help.as_deref().unwrap().contains("list[T]"));
}

#[test]
fn unknown_annotations_lose_only_their_own_tools() {
    // Regression test: `def f(w: Widget)` made the whole file fail,
    // taking every other tool with it.
    let loaded = load(
        "def good(text: str) -> str:\n    \"\"\"Echo.\"\"\"\n    return text\n\n\
         def bad(w: Widget,\n        n: int) -> str:\n    return \"\"\n\n\
         def worse(n: int) -> Gadget:\n    return n\n\n\
         def helper(x: Thing):\n    return x\n\n\
         mcp.tool(good)\nmcp.tool(bad)\nmcp.tool(worse)\n",
    );
    let names: Vec<_> = loaded
        .tools
        .iter()
        .map(|tool| tool.definition().name.as_str())
        .collect();
    assert_eq!(names, ["good"]);
    let found: Vec<_> = loaded
        .diagnostics
        .iter()
        .map(|d| (d.rule, d.message.as_str(), position(d)))
        .collect();
    assert_eq!(
        found,
        [
            (
                "unknown-annotation",
                "unknown type annotation `Widget` on parameter `w`",
                (5, 12)
            ),
            (
                "unknown-annotation",
                "unknown return annotation `Gadget`",
                (9, 22)
            ),
        ]
    );
}

#[test]
fn params_naming_an_unknown_parameter() {
    let diagnostic = only(&diagnostics(
        "def f(days: int):\n    return days\n\nmcp.tool(f, params={\"dayz\": {\"minimum\": 1}})\n",
    ))
    .clone();
    assert_eq!(diagnostic.rule, "unknown-parameter");
    assert_eq!(
        diagnostic.message,
        "`params` names unknown parameter `dayz`"
    );
    assert_eq!(diagnostic.help.as_deref(), Some("did you mean `days`?"));
}

#[test]
fn registering_something_else_than_a_def() {
    let loaded = load("mcp.tool(lambda x: x, name=\"double\")\nmcp.tool(len)\n");
    assert!(loaded.tools.is_empty());
    assert_eq!(loaded.diagnostics.len(), 2, "{:#?}", loaded.diagnostics);
    assert!(loaded.diagnostics.iter().all(|d| d.rule == "invalid-tool"));
    assert_eq!(loaded.diagnostics[1].location.line, 2);
}

#[test]
fn top_level_error_is_a_load_diagnostic() {
    let diagnostic = only(&diagnostics("x = 1\ny = x // 0\n")).clone();
    assert_eq!(diagnostic.rule, "load-error");
    assert_eq!(position(&diagnostic), (2, 5));
    assert!(
        diagnostic.message.contains("division by zero"),
        "{diagnostic}"
    );
}

#[test]
fn mcp_tool_inside_a_tool_call_is_an_error() {
    let catalog = crate::catalog(
        "def late():\n    \"\"\"Late.\"\"\"\n    mcp.tool(late)\n    return 1\n\nmcp.tool(late)\n",
    );
    let outcome = crate::call(&catalog, "late", serde_json::json!({}));
    assert_eq!(outcome["isError"], true);
    assert!(crate::text(&outcome).contains("top level"), "{outcome}");
}

/// What a user reads for each kind of load problem.
#[test]
fn rendered_diagnostics() {
    let cases = [
        ("syntax.star", "def f(x):\n    return x +\n"),
        ("python.star", "class Point:\n    pass\n"),
        ("load.star", "load(\"lib.star\", \"helper\")\n"),
        ("runtime.star", "LIMIT = 10 // 0\n"),
        (
            "keywords.star",
            "def f(days: int):\n    \"\"\"F.\"\"\"\n    return days\n\n\
             mcp.tool(f, titel=\"F\", read_only=\"yes\", params={\"dayz\": {\"minimum\": 1}})\n",
        ),
        (
            "annotation.star",
            "def f(w: Widget) -> str:\n    return \"\"\n\nmcp.tool(f)\n",
        ),
        ("not_a_def.star", "mcp.tool(lambda x: x)\n"),
    ];
    let mut rendered = String::new();
    for (name, source) in cases {
        let path = format!("tools/{name}");
        for diagnostic in load_module(Path::new(&path), source, &settings()).diagnostics {
            rendered.push_str(&diagnostic.to_string());
            rendered.push('\n');
        }
    }
    insta::assert_snapshot!(rendered);
}
