//! `[telemetry]` of `toolsmith.toml`: where the server's OpenTelemetry traces go
//! (docs/http.md, "Telemetry"). The standard `OTEL_*` variables win over it; header values
//! may be written as `${VAR}`, read from the environment, so the file can be committed.

use serde_json::Value;
use toolsmith_model::telemetry::TelemetrySettings;
use toolsmith_model::{JsonObject, kind};

const KEYS: [&str; 7] = [
    "enabled",
    "endpoint",
    "traces_endpoint",
    "headers",
    "service_name",
    "sampler",
    "sampler_arg",
];

/// The samplers `OTEL_TRACES_SAMPLER` names, which `sampler` takes.
const SAMPLERS: [&str; 6] = [
    "always_on",
    "always_off",
    "traceidratio",
    "parentbased_always_on",
    "parentbased_always_off",
    "parentbased_traceidratio",
];

/// Reads `[telemetry]`; a key with a wrong value is left out with a warning through
/// `problem` (its path from the top of the file, the message and the help).
pub(crate) fn settings(
    table: &JsonObject,
    problem: &mut dyn FnMut(&[&str], String, String),
) -> TelemetrySettings {
    let mut settings = TelemetrySettings::default();
    for (key, value) in table {
        let at: &[&str] = &["telemetry", key];
        match (key.as_str(), value) {
            ("enabled", Value::Bool(enabled)) => settings.enabled = Some(*enabled),
            ("endpoint" | "traces_endpoint", Value::String(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    problem(
                        at,
                        format!(
                            "`[telemetry] {key}` must be an http:// or https:// URL, got `{url}`"
                        ),
                        "e.g. endpoint = \"http://localhost:4318\"".to_owned(),
                    );
                } else if key == "endpoint" {
                    settings.endpoint = Some(url.clone());
                } else {
                    settings.traces_endpoint = Some(url.clone());
                }
            }
            ("service_name", Value::String(name)) => settings.service_name = Some(name.clone()),
            ("sampler", Value::String(name)) if SAMPLERS.contains(&name.as_str()) => {
                settings.sampler = Some(name.clone());
            }
            ("sampler", other) => problem(
                at,
                format!("unknown sampler {other} in `[telemetry]`"),
                toolsmith_model::names::suggestion(other.as_str().unwrap_or_default(), SAMPLERS)
                    .unwrap_or_else(|| format!("known samplers: {}", SAMPLERS.join(", "))),
            ),
            ("sampler_arg", Value::Number(number)) => match number.as_f64() {
                Some(ratio) if (0.0..=1.0).contains(&ratio) => settings.sampler_arg = Some(ratio),
                _ => problem(
                    at,
                    format!("`[telemetry] sampler_arg` must be between 0 and 1, got {number}"),
                    "e.g. sampler_arg = 0.25 keeps a quarter of the traces".to_owned(),
                ),
            },
            ("headers", Value::Object(headers)) => {
                for (name, value) in headers {
                    let header_at: &[&str] = &["telemetry", "headers", name];
                    let Some(text) = value.as_str() else {
                        problem(
                            header_at,
                            format!(
                                "`[telemetry] headers.{name}` must be a string, got {}",
                                kind(value)
                            ),
                            "e.g. headers = { authorization = \"Bearer ${OTLP_TOKEN}\" }"
                                .to_owned(),
                        );
                        continue;
                    };
                    match toolsmith_model::sources::expand(text, |variable| {
                        std::env::var(variable).ok()
                    }) {
                        Ok(text) => {
                            settings.headers.insert(name.clone(), text);
                        }
                        Err(message) => problem(
                            header_at,
                            format!("`[telemetry] headers.{name}`: {message}"),
                            "set it in the server's environment".to_owned(),
                        ),
                    }
                }
            }
            _ if KEYS.contains(&key.as_str()) => problem(
                at,
                format!("`[telemetry] {key}` has the wrong type: {}", kind(value)),
                match key.as_str() {
                    "enabled" => "e.g. enabled = true",
                    "headers" => "e.g. headers = { authorization = \"Bearer ${OTLP_TOKEN}\" }",
                    "sampler_arg" => "e.g. sampler_arg = 0.25",
                    _ => "write it as a string",
                }
                .to_owned(),
            ),
            _ => problem(
                at,
                format!("unknown key `{key}` in `[telemetry]`"),
                toolsmith_model::names::suggestion(key, KEYS)
                    .unwrap_or_else(|| format!("known keys: {}", KEYS.join(", "))),
            ),
        }
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(toml: &str) -> (TelemetrySettings, Vec<String>) {
        let table: JsonObject = toml::from_str(toml).unwrap();
        let mut problems = Vec::new();
        let settings = settings(&table, &mut |_, message, help| {
            problems.push(format!("{message} ({help})"));
        });
        (settings, problems)
    }

    #[test]
    fn reads_the_collector_and_the_sampler() {
        let (settings, problems) = read(
            "endpoint = \"http://collector:4318\"\nservice_name = \"tools\"\nsampler = \"parentbased_traceidratio\"\nsampler_arg = 0.5\nheaders = { x-team = \"tools\" }\n",
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(settings.endpoint.as_deref(), Some("http://collector:4318"));
        assert_eq!(settings.service_name.as_deref(), Some("tools"));
        assert_eq!(
            settings.sampler.as_deref(),
            Some("parentbased_traceidratio")
        );
        assert_eq!(settings.sampler_arg, Some(0.5));
        assert_eq!(settings.headers["x-team"], "tools");
    }

    #[test]
    fn a_typo_gets_did_you_mean() {
        let (_, problems) = read("endpont = \"http://collector:4318\"\nsampler = \"always_onn\"\n");
        assert_eq!(
            problems,
            [
                "unknown key `endpont` in `[telemetry]` (did you mean `endpoint`?)",
                "unknown sampler \"always_onn\" in `[telemetry]` (did you mean `always_on`?)",
            ]
        );
    }
}
