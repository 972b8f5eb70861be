//! The evaluator's tool options (`[options.run_code]` in `toolsmith.toml`, or
//! `MCP_TOOL_OPTIONS`): its default time constraint and how saved sessions are pruned, with
//! the defaults of Wolfram's `AgentTools` (docs/code-mode.md, "Options").

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use toolsmith_model::JsonObject;

/// How long a run may take unless its call or the options say otherwise (Wolfram's
/// `TimeConstraint`).
pub const DEFAULT_TIME_CONSTRAINT: Duration = Duration::from_mins(1);

/// The longest time constraint a call may ask for, unless the option's default is longer.
pub const MAX_TIME_CONSTRAINT: Duration = Duration::from_mins(10);

/// How many saved sessions are kept (`MaxSessionCount`).
pub const DEFAULT_MAX_SESSION_COUNT: usize = 100;

/// How many bytes of saved sessions are kept (`MaxSessionBytes`, 1 GiB).
pub const DEFAULT_MAX_SESSION_BYTES: u64 = 1 << 30;

/// How long a saved session is kept after its last run (`MaxSessionAge`, one month).
pub const DEFAULT_MAX_SESSION_AGE: Duration = Duration::from_hours(30 * 24);

/// The option names, for messages.
const NAMES: [&str; 5] = [
    "time_constraint",
    "max_session_count",
    "max_session_bytes",
    "max_session_age",
    "sessions_dir",
];

/// The evaluator's options, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodeOptions {
    /// `time_constraint`: a run's default time limit.
    pub(crate) time_constraint: Duration,
    /// `max_session_count`: the most saved sessions kept.
    pub(crate) max_session_count: usize,
    /// `max_session_bytes`: the most bytes of saved sessions kept.
    pub(crate) max_session_bytes: u64,
    /// `max_session_age`: how long after its last save a session is kept.
    pub(crate) max_session_age: Duration,
    /// `sessions_dir`: where sessions are saved; `None` when no data folder is known.
    pub(crate) sessions_dir: Option<PathBuf>,
}

impl CodeOptions {
    /// The options in `options`, defaults for the rest, and a warning for each value that
    /// could not be used (its default applies).
    pub(crate) fn resolve(options: &JsonObject) -> (Self, Vec<String>) {
        let mut problems = Vec::new();
        let mut resolved = Self {
            time_constraint: DEFAULT_TIME_CONSTRAINT,
            max_session_count: DEFAULT_MAX_SESSION_COUNT,
            max_session_bytes: DEFAULT_MAX_SESSION_BYTES,
            max_session_age: DEFAULT_MAX_SESSION_AGE,
            sessions_dir: default_sessions_dir(),
        };
        for (name, value) in options {
            let problem = match name.as_str() {
                "time_constraint" => toolsmith_model::duration::parse(value)
                    .map(|duration| resolved.time_constraint = duration)
                    .err(),
                "max_session_count" => match value.as_u64().and_then(|n| usize::try_from(n).ok()) {
                    Some(count) if count > 0 => {
                        resolved.max_session_count = count;
                        None
                    }
                    _ => Some(format!("must be a positive whole number, got {value}")),
                },
                "max_session_bytes" => match bytes(value) {
                    Some(limit) => {
                        resolved.max_session_bytes = limit;
                        None
                    }
                    None => Some(format!(
                        "must be a size such as 1073741824 or \"1GiB\", got {value}"
                    )),
                },
                "max_session_age" => match age(value) {
                    Ok(age) => {
                        resolved.max_session_age = age;
                        None
                    }
                    Err(message) => Some(message),
                },
                "sessions_dir" => match value.as_str() {
                    Some(dir) if !dir.trim().is_empty() => {
                        resolved.sessions_dir = Some(PathBuf::from(dir));
                        None
                    }
                    _ => Some(format!("must be a folder path, got {value}")),
                },
                _ => {
                    let hint = toolsmith_model::names::suggestion(name, NAMES)
                        .unwrap_or_else(|| format!("known options: {}", NAMES.join(", ")));
                    Some(format!("is not an option of the evaluator; {hint}"))
                }
            };
            if let Some(problem) = problem {
                problems.push(format!("option `{name}` {problem}"));
            }
        }
        (resolved, problems)
    }

    /// The longest time constraint a call may ask for.
    pub(crate) fn max_time_constraint(&self) -> Duration {
        self.time_constraint.max(MAX_TIME_CONSTRAINT)
    }
}

/// `$XDG_DATA_HOME/toolsmith/sessions`, else `~/.local/share/toolsmith/sessions`.
fn default_sessions_dir() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local").join("share"))
        })?;
    Some(data.join("toolsmith").join("sessions"))
}

fn bytes(value: &Value) -> Option<u64> {
    match value {
        Value::Number(number) => number.as_u64().filter(|n| *n > 0),
        Value::String(text) => toolsmith_starlark::parse_size(text)
            .and_then(|n| u64::try_from(n).ok())
            .filter(|n| *n > 0),
        _ => None,
    }
}

/// A duration as `timeout` takes it, or whole days: `"30d"`.
fn age(value: &Value) -> Result<Duration, String> {
    if let Some(days) = value
        .as_str()
        .and_then(|text| text.trim().strip_suffix('d'))
        .and_then(|days| days.trim().parse::<u64>().ok())
    {
        return Ok(Duration::from_secs(days.saturating_mul(24 * 60 * 60)));
    }
    toolsmith_model::duration::parse(value).map_err(|_| {
        format!("must be seconds or a duration such as \"30d\" or \"12h\", got {value}")
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn options_override_the_defaults_and_bad_ones_are_named() {
        let options = json!({
            "time_constraint": "5s",
            "max_session_count": 3,
            "max_session_bytes": "2KiB",
            "max_session_age": "2d",
            "sessions_dir": "/tmp/s",
            "max_sessions": 4,
        });
        let (resolved, problems) = CodeOptions::resolve(options.as_object().unwrap());
        assert_eq!(resolved.time_constraint, Duration::from_secs(5));
        assert_eq!(resolved.max_session_count, 3);
        assert_eq!(resolved.max_session_bytes, 2048);
        assert_eq!(resolved.max_session_age, Duration::from_hours(48));
        assert_eq!(resolved.sessions_dir, Some(PathBuf::from("/tmp/s")));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("option `max_sessions` is not an option"),
            "{problems:?}"
        );
    }
}
