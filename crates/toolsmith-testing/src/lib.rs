//! Tool tests for Toolsmith (`toolsmith test`): the cases a tools folder carries, what they
//! expect, how a result is checked and shown when it does not match, and a parallel run
//! through the server's own call path.
//!
//! The case format is documented in `docs/testing.md`. In short, a case is
//! `{"args": {...}, "expect": {...}}` on a tool (`examples=[...]` on `mcp.tool`, `[[tests]]`
//! in a manifest) or a `[[tests]]` table with a `tool` in `tests/*.toml`.
//!
//! - [`collect`] gathers a folder's cases as [`TestCase`]s; [`parse_case`] and
//!   [`parse_test_file`] parse one case or one test file.
//! - [`Expectation::check`] compares a [`CallOutcome`](toolsmith_model::CallOutcome) with the
//!   `expect` table and explains every mismatch as a [`Failure`] (a unified text diff, the
//!   JSON paths where structured content differs).
//! - [`run_cases`] calls each case through [`toolsmith_folder::Caller`] on a few threads;
//!   [`Report`] totals the results and renders `--json` and `JUnit` XML.
//!
//! Why a crate of its own: the case format and its matching rules change for reasons of
//! their own (a new `expect` key, a new report format), not when loading a folder or
//! serving changes; and keeping them out of the CLI lets the same rules run anywhere a
//! folder is loaded.
//!
//! ```
//! use serde_json::json;
//! use toolsmith_model::CallOutcome;
//! use toolsmith_testing::{CASE_KEYS, Failure, parse_case};
//!
//! let case = parse_case(&json!({"args": {"name": "Ada"}, "expect": {"text": "Hello, Ada!"}}), CASE_KEYS);
//! let body = case.body.expect("a valid case");
//! assert!(body.expect.check(&CallOutcome::text("Hello, Ada!")).is_empty());
//!
//! let failures = body.expect.check(&CallOutcome::text("Hello, Bob!"));
//! assert_eq!(failures[0].to_string(), "`text` differs");
//! assert!(failures[0].detail().unwrap().contains("-Hello, Ada!\n+Hello, Bob!"));
//! assert!(matches!(body.expect.check(&CallOutcome::error("boom"))[..], [Failure::UnexpectedError { .. }]));
//! ```

mod case;
mod collect;
mod expect;
mod failure;
mod report;
mod run;

pub use case::{
    CASE_KEYS, CaseBody, FILE_CASE_KEYS, FILE_KEYS, INVALID_TEST_FILE, ParsedCase, TestCase,
    TestFile, parse_case, parse_test_file,
};
pub use collect::{Collection, TESTS_DIR, collect, collect_from};
pub use expect::{EXPECT_KEYS, Expectation};
pub use failure::{Difference, Failure, structured_differences, text_diff};
pub use report::{Report, Totals};
pub use run::{CaseResult, MAX_WORKERS, Status, default_workers, run_case, run_cases};

/// Keeps the cases whose id (`tool: name`) contains one of `patterns`; all of them when
/// `patterns` is empty.
pub fn filter(cases: Vec<TestCase>, patterns: &[String]) -> Vec<TestCase> {
    if patterns.is_empty() {
        return cases;
    }
    cases
        .into_iter()
        .filter(|case| {
            patterns
                .iter()
                .any(|pattern| case.id().contains(pattern.as_str()))
        })
        .collect()
}
