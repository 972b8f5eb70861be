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
    return "z" * 1024 * 1024

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

def join_shared() -> int:
    return len("".join([big()] * 200))

def replace_grows() -> int:
    s = "a" * 1024 * 1024
    return len(s.replace("a", "b" * 100))

def format_shared() -> int:
    c = [big()] * 20
    return len("{}{}{}{}".format(c, c, c, c))

def extend_doubles() -> int:
    l = [0] * 1000
    for i in range(30):
        l.extend(l)
    return len(l)

def iadd_doubles() -> int:
    s = "ab"
    for i in range(40):
        s += s
    return len(s)

def methods_still_work() -> str:
    l = [1]
    alias = l
    l += [2]
    l.extend((3,))
    s = "x"
    s += "y"
    n = 1
    n += 2
    return "-".join([str(i) for i in alias]) + " " + s + str(n) + " " + \
        "aXa".replace("a", "bb") + " " + "{}={v}".format("k", v = 1)

def fstring_shared() -> int:
    c = [big()] * 200
    return len(f"{c}")

def fstrings_still_work() -> str:
    a = "x"
    b = [1, "y"]
    return f"{{lit}} {a} {b!r} {a + a} {len(b)}" + f"""
{a}"""

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
mcp.tool(join_shared)
mcp.tool(replace_grows)
mcp.tool(format_shared)
mcp.tool(extend_doubles)
mcp.tool(iadd_doubles)
mcp.tool(methods_still_work)
mcp.tool(fstring_shared)
mcp.tool(fstrings_still_work)
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

// Regression test for issue 14, item 1: `"".join([c] * 5000)`, `s.replace("a", "b" * 100)`,
// `str.format`, `l.extend(l)`, `s += s` and f-strings built their result natively without a
// size check.
#[test]
fn methods_that_multiply_memory_are_checked_before_they_run() {
    for (tool, what) in [
        ("join_shared", "`.join(...)` would create a value of"),
        ("replace_grows", "`.replace(...)` would create a value of"),
        ("format_shared", "`.format(...)` would create"),
        ("extend_doubles", "`.extend(...)` would create"),
        ("iadd_doubles", "`+=` would create"),
        ("fstring_shared", "an f-string would create"),
    ] {
        let message = refusal(tool);
        assert!(message.contains(what), "{tool}: {message}");
    }
}

#[test]
fn guarded_methods_and_augmented_assignment_keep_their_meaning() {
    let outcome = call(&catalog(SHARED), "methods_still_work", json!({}));
    assert_eq!(text(&outcome), "1-2-3 xy3 bbXbb k=1", "{outcome}");
    let outcome = call(&catalog(SHARED), "fstrings_still_work", json!({}));
    assert_eq!(text(&outcome), "{lit} x [1, \"y\"] xx 2\nx", "{outcome}");
}
