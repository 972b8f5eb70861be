//! What a command's output means (docs/tools.md, "Command tools"; docs/result-contract.md):
//! stdout turned into a [`ToolReturn`], and the excerpt of stderr that explains a failure.

use serde_json::Value;
use toolsmith_model::{CallOutcome, ToolReturn};

/// The keys that mark stdout as a complete MCP `CallToolResult` to pass through.
const RESULT_KEYS: [&str; 3] = ["content", "structuredContent", "isError"];
/// At most this many lines of stderr go into a failure message.
const EXCERPT_LINES: usize = 20;
/// At most this many bytes of stderr go into a failure message.
const EXCERPT_BYTES: usize = 4 * 1024;

/// Reads a successful command's stdout as a tool result.
///
/// A JSON object with any MCP result key is passed through as a [`CallOutcome`]; other JSON
/// is a value (structured content); anything else, empty output included, is text, minus
/// one trailing newline. The error is why an MCP-looking object is not a valid result.
pub(crate) fn interpret(stdout: &[u8]) -> Result<ToolReturn, String> {
    let text = String::from_utf8_lossy(stdout);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(ToolReturn::Text(String::new()));
    }
    let Ok(value) = serde_json::from_str::<Value>(trimmed) else {
        return Ok(ToolReturn::Text(without_trailing_newline(&text).to_owned()));
    };
    interpret_json(value)
}

/// Reads a worker's `result` as a tool result: a string is text, and other JSON is read as
/// [`interpret`] reads it (an object with an MCP result key passes through).
pub(crate) fn interpret_result(result: Value) -> Result<ToolReturn, String> {
    match result {
        Value::String(text) => Ok(ToolReturn::Text(text)),
        value => interpret_json(value),
    }
}

fn interpret_json(value: Value) -> Result<ToolReturn, String> {
    match value {
        Value::Object(object) if RESULT_KEYS.iter().any(|key| object.contains_key(*key)) => {
            serde_json::from_value::<CallOutcome>(Value::Object(object))
                .map(ToolReturn::Outcome)
                .map_err(|error| error.to_string())
        }
        value => Ok(ToolReturn::Value(value)),
    }
}

fn without_trailing_newline(text: &str) -> &str {
    text.strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(text)
}

/// The end of a stream for a failure message: at most 20 lines and 4 KiB.
///
/// Returns `None` for blank output, else the text and whether anything before it was cut
/// (here or, as `already_cut` says, while the output was collected).
pub(crate) fn excerpt(bytes: &[u8], already_cut: bool) -> Option<(String, bool)> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end();
    if text.trim_start().is_empty() {
        return None;
    }
    let mut start = 0;
    let mut cut = already_cut;
    if let Some((newline, _)) = text.rmatch_indices('\n').nth(EXCERPT_LINES - 1) {
        start = newline + 1;
        cut = true;
    }
    if text.len() - start > EXCERPT_BYTES {
        start = text.len() - EXCERPT_BYTES;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        cut = true;
    }
    Some((text[start..].to_owned(), cut))
}

/// `4 MiB`, `64 KiB` or `1000 bytes`, for limits in messages.
pub(crate) fn format_bytes(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plain_text_loses_one_trailing_newline() {
        assert_eq!(
            interpret(b"hello\n\n"),
            Ok(ToolReturn::Text("hello\n".into()))
        );
        assert_eq!(
            interpret(b"hello\r\n"),
            Ok(ToolReturn::Text("hello".into()))
        );
        assert_eq!(interpret(b"  \n"), Ok(ToolReturn::Text(String::new())));
    }

    #[test]
    fn json_other_than_an_mcp_result_is_a_value() {
        assert_eq!(
            interpret(b" {\"a\": 1}\n"),
            Ok(ToolReturn::Value(json!({"a": 1})))
        );
        assert_eq!(interpret(b"[1, 2]"), Ok(ToolReturn::Value(json!([1, 2]))));
        assert_eq!(interpret(b"42\n"), Ok(ToolReturn::Value(json!(42))));
    }

    #[test]
    fn mcp_result_passes_through_and_a_broken_one_says_why() {
        let returned =
            interpret(br#"{"content": [{"type": "text", "text": "no"}], "isError": true}"#);
        assert_eq!(returned, Ok(ToolReturn::Outcome(CallOutcome::error("no"))));
        let error = interpret(br#"{"isError": true}"#).unwrap_err();
        assert!(error.contains("content"), "{error}");
    }

    #[test]
    fn excerpt_keeps_the_last_twenty_lines() {
        let text = (1..=30).fold(String::new(), |text, n| text + &format!("line {n}\n"));
        let (tail, cut) = excerpt(text.as_bytes(), false).unwrap();
        assert!(cut);
        assert!(tail.starts_with("line 11\n"), "{tail}");
        assert!(tail.ends_with("line 30"), "{tail}");
        assert_eq!(
            excerpt(b"one\ntwo\n", false),
            Some(("one\ntwo".into(), false))
        );
        assert_eq!(excerpt(b" \n", false), None);
    }

    #[test]
    fn excerpt_keeps_at_most_four_kibibytes_on_a_char_boundary() {
        let text = "é".repeat(5000);
        let (tail, cut) = excerpt(text.as_bytes(), false).unwrap();
        assert!(cut);
        assert!(tail.len() <= EXCERPT_BYTES);
        assert!(tail.chars().all(|c| c == 'é'));
    }

    #[test]
    fn byte_counts_read_as_units() {
        assert_eq!(format_bytes(4 * 1024 * 1024), "4 MiB");
        assert_eq!(format_bytes(64 * 1024), "64 KiB");
        assert_eq!(format_bytes(1000), "1000 bytes");
    }
}
