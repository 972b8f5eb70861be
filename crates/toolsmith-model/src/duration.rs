//! Timeouts as tool authors write them: seconds as a number (`2`, `0.5`) or a duration
//! string (`"500ms"`, `"2s"`, `"1m"`).

use std::time::Duration;

use serde_json::Value;

/// Parses a timeout value; the error says which forms are accepted.
pub fn parse(value: &Value) -> Result<Duration, String> {
    match value {
        Value::Number(number) => number
            .as_f64()
            .and_then(seconds)
            .ok_or_else(|| format!("timeout must be a positive number of seconds, got {number}")),
        Value::String(text) => parse_text(text),
        other => Err(format!(
            "timeout must be seconds (`2`) or a duration string (`\"500ms\"`), got {other}"
        )),
    }
}

/// Parses `"500ms"`, `"2s"`, `"1.5m"`, `"1h"` or a bare number of seconds.
pub fn parse_text(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" => 0.001,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "unknown duration unit in `{text}`; use ms, s, m or h (e.g. \"500ms\", \"2s\")"
            ));
        }
    };
    number
        .parse::<f64>()
        .ok()
        .and_then(|n| seconds(n * scale))
        .ok_or_else(|| {
            format!("`{text}` is not a duration; write e.g. \"500ms\", \"2s\" or \"1m\"")
        })
}

/// A positive, finite number of seconds that a `Duration` can hold (`from_secs_f64` would
/// panic on more).
fn seconds(value: f64) -> Option<Duration> {
    if value.is_finite() && value > 0.0 {
        Duration::try_from_secs_f64(value).ok()
    } else {
        None
    }
}

/// Formats a duration the way authors write it (`500ms`, `2s`, `1.5s`).
pub fn format(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis}ms")
    } else if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{}s", duration.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_and_strings() {
        assert_eq!(parse(&json!(2)), Ok(Duration::from_secs(2)));
        assert_eq!(parse(&json!(0.5)), Ok(Duration::from_millis(500)));
        assert_eq!(parse(&json!("500ms")), Ok(Duration::from_millis(500)));
        assert_eq!(parse(&json!("2s")), Ok(Duration::from_secs(2)));
        assert_eq!(parse(&json!("1m")), Ok(Duration::from_mins(1)));
        assert!(
            parse(&json!("2 weeks"))
                .unwrap_err()
                .contains("unknown duration unit")
        );
        assert!(parse(&json!(0)).is_err());
        assert!(parse(&json!(true)).is_err());
    }

    // Regression test, found by fuzzing (`folder_config`): a timeout too long for a
    // `Duration` (`[defaults] timeout = 1e300`, `"99999999999999999999999h"`) panicked in
    // `Duration::from_secs_f64` and took the loading server down.
    #[test]
    fn a_timeout_too_long_for_a_duration_is_an_error() {
        for value in [
            json!(1e300),
            json!(f64::MAX),
            json!("99999999999999999999999h"),
        ] {
            assert!(parse(&value).is_err(), "{value}");
        }
        assert!(parse(&json!(1e9)).is_ok());
    }

    #[test]
    fn formatting() {
        assert_eq!(format(Duration::from_millis(500)), "500ms");
        assert_eq!(format(Duration::from_secs(30)), "30s");
        assert_eq!(format(Duration::from_millis(1500)), "1.5s");
    }
}
