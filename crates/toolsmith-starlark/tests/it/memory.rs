//! Memory guards (issue 14, items 1 and 14): native operations that would build a huge
//! value from a small one (a list sharing one large string many times) are refused before
//! they allocate, and so is a result larger than the result-size limit. The values here
//! are a few hundred MiB at most, so a missing guard fails the assertion rather than the
//! test process.

use serde_json::json;
use toolsmith_starlark::{DEFAULT_RESULT_LIMIT, result_limit};

use crate::{call, catalog, text};

const SHARED: &str = r#"
def big():
    return "z" * (1 << 20)

def encode_shared() -> str:
    return json.encode([big()] * 200)

def str_shared() -> int:
    return len(str([big()] * 200))

def repr_shared() -> int:
    return len(repr([big()] * 200))

def percent_shared() -> int:
    c = big()
    return len(("%s" * 200) % tuple([c] * 200))

def print_shared() -> str:
    print([big()] * 200)
    return "printed"

def return_list() -> list:
    return [big()] * 200

def return_dict() -> dict:
    c = big()
    return {str(i): c for i in range(200)}

def return_text() -> str:
    return big() * 20

def return_blocks():
    block = mcp.text(big())
    return [block] * 200

def small() -> str:
    return "%s-%d %s %s" % ("a", 1, str([1, "x"]), repr("q")) + json.encode({"k": [1]})

mcp.tool(encode_shared)
mcp.tool(str_shared)
mcp.tool(repr_shared)
mcp.tool(percent_shared)
mcp.tool(print_shared)
mcp.tool(return_list)
mcp.tool(return_dict)
mcp.tool(return_text)
mcp.tool(return_blocks)
mcp.tool(small)
"#;

/// Calls `tool` and returns its error text, failing when it did not fail.
fn refusal(tool: &str) -> String {
    let outcome = call(&catalog(SHARED), tool, json!({}));
    let shown: String = outcome.to_string().chars().take(300).collect();
    assert_eq!(outcome["isError"], true, "{tool}: {shown}");
    text(&outcome).to_owned()
}

// Regression test for issue 14, item 1: `str`, `repr`, `%`, `print` and `json.encode` of
// `[c] * 200` built 200 MiB in one native step (5 GB for `[c] * 5000`, aborting the server).
#[test]
fn text_of_shared_values_is_measured_before_it_is_built() {
    for (tool, what) in [
        (
            "str_shared",
            "`str` would create a string of more than 64 MiB",
        ),
        (
            "repr_shared",
            "`repr` would create a string of more than 64 MiB",
        ),
        ("percent_shared", "formatting with `%` would create"),
        (
            "print_shared",
            "`print` would create a string of more than 64 MiB",
        ),
        (
            "encode_shared",
            "`json.encode`: the value is larger than 64 MiB as JSON",
        ),
    ] {
        let message = refusal(tool);
        assert!(message.contains(what), "{tool}: {message}");
    }
}

// Regression test for issue 14, items 1 and 14: returning `[c] * 200`, a dict of 200 such
// values or 20 MiB of text was copied whole into the result, whatever its size.
#[test]
fn results_larger_than_the_limit_are_refused() {
    assert_eq!(result_limit(), DEFAULT_RESULT_LIMIT);
    for tool in ["return_list", "return_dict", "return_text", "return_blocks"] {
        let message = refusal(tool);
        assert!(
            message.contains("the result is larger than 16 MiB as JSON")
                && message.contains("`TOOLSMITH_MAX_RESULT_SIZE`"),
            "{tool}: {message}"
        );
    }
}

#[test]
fn ordinary_formatting_still_works() {
    let outcome = call(&catalog(SHARED), "small", json!({}));
    assert_eq!(text(&outcome), r#"a-1 [1, "x"] "q"{"k":[1]}"#, "{outcome}");
}
