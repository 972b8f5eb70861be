//! Memory guards: native operations that would build a huge
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

// Regression test: `str`, `repr`, `%`, `print` and `json.encode` of
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

// Regression test: returning `[c] * 200`, a dict of 200 such
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

// Regression test: `"".join([c] * 5000)`, `s.replace("a", "b" * 100)`,
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

const REPEATED: &str = r#"
def mib(n):
    return "z" * 1024 * 1024 * n

def repeat_string_in_place() -> int:
    s = mib(1)
    s *= 100
    return len(s)

def repeat_list_in_place() -> int:
    l = [0] * 1000 * 1000
    l *= 10
    return len(l)

def join_in_f_string() -> int:
    e = ""
    l = ["z" * 1024] * 100 * 1000
    return len(f"<{e.join(l)}>")

def grow_an_item() -> int:
    d = {"k": ""}
    s = mib(16)
    for i in range(5):
        d["k"] += s
    return len(d["k"])

def grow_a_nested_item() -> int:
    d = {"a": [""]}
    s = mib(16)
    for i in range(5):
        d["a"][0] += s
    return len(d["a"][0])

def repeat_an_item() -> int:
    d = {"k": mib(1)}
    d["k"] *= 100
    return len(d["k"])

def format_in_place() -> int:
    f = "%s" * 100
    f %= tuple([mib(1)] * 100)
    return len(f)

def comprehension_of_copies() -> int:
    s = mib(1)
    return len([s + str(i) for i in range(1000)])

def parenthesised_receivers() -> str:
    n = len(("a" * 5).replace("a", "b"))
    return ("-").join(["x", str(n), (("y"))])

def augmented_items_keep_their_meaning() -> str:
    d = {"s": "a", "l": [1], "n": 2}
    alias = d["l"]
    d["s"] += "b"
    d["s"] *= 2
    d["l"] += [2]
    d["n"] *= 3
    d["n"] += 1
    fmt = {"f": "%s-%s"}
    fmt["f"] %= ("x", "y")
    pairs = [[1], "q"]
    pairs[0] += pairs[0]
    pairs[-1] += f"{('-').join(['r', 's'])}"
    return "{} {} {} {} {} {}".format(d["s"], alias, d["n"], fmt["f"], pairs[0], pairs[1])

mcp.tool(repeat_string_in_place)
mcp.tool(repeat_list_in_place)
mcp.tool(join_in_f_string)
mcp.tool(grow_an_item)
mcp.tool(grow_a_nested_item)
mcp.tool(repeat_an_item)
mcp.tool(format_in_place)
mcp.tool(comprehension_of_copies)
mcp.tool(parenthesised_receivers)
mcp.tool(augmented_items_keep_their_meaning)
"#;

/// Calls `tool` of [`REPEATED`] and returns its error text, failing when it did not fail.
fn refused(tool: &str) -> String {
    let outcome = call(&catalog(REPEATED), tool, json!({}));
    let shown: String = outcome.to_string().chars().take(300).collect();
    assert_eq!(outcome["isError"], true, "{tool}: {shown}");
    text(&outcome).to_owned()
}

// Regression test: `s *= 3000` on a 1 MiB string, `l *= 3000` on a 1M-item list and
// `f"{e.join(l)}"` aborted the server ("memory allocation of … failed"), and `d["k"] += s` in
// a loop grew to 2.3 GB against a 737 MB budget: augmented assignment other than `+=` to a
// plain variable, and the expressions inside an f-string's braces, were not guarded. The
// sizes here are a hundred MiB, past the 64 MiB value limit, so that a missing guard fails
// the assertion rather than the test process.
#[test]
fn augmented_assignments_and_f_string_expressions_are_checked_before_they_run() {
    for (tool, what) in [
        (
            "repeat_string_in_place",
            "repetition with `*` would create a value of 100 MiB",
        ),
        (
            "repeat_list_in_place",
            "repetition with `*` would create a value of 76 MiB",
        ),
        ("join_in_f_string", "`.join(...)` would create a value of"),
        ("grow_an_item", "`+=` would create a value of 80 MiB"),
        ("grow_a_nested_item", "`+=` would create a value of 80 MiB"),
        (
            "repeat_an_item",
            "repetition with `*` would create a value of 100 MiB",
        ),
        ("format_in_place", "formatting with `%` would create"),
        ("comprehension_of_copies", "heap limit exceeded"),
    ] {
        let message = refused(tool);
        assert!(message.contains(what), "{tool}: {message}");
    }
}

// Regression test: the parser's span of `("a" * 5)` leaves out the parentheses, so the
// rewrite of `("-").join(x)` did not parse and the file's tools did not load.
#[test]
fn guarded_operations_keep_their_meaning_with_parentheses_and_items() {
    let catalog = catalog(REPEATED);
    let outcome = call(&catalog, "parenthesised_receivers", json!({}));
    assert_eq!(text(&outcome), "x-5-y", "{outcome}");
    let outcome = call(&catalog, "augmented_items_keep_their_meaning", json!({}));
    assert_eq!(text(&outcome), "abab [1, 2] 7 x-y [1, 1] qr-s", "{outcome}");
}
