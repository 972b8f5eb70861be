//! Where spans go: OTLP over HTTP (protobuf), configured by the standard `OTEL_*` variables
//! and `[telemetry]`, the variables winning. Spans wait in the batch processor's bounded
//! queue (`OTEL_BSP_MAX_QUEUE_SIZE`, 2,048) and are exported from its own thread, so a slow
//! or unreachable collector never slows a call: a full queue drops spans, and a failed
//! export is warned about once. The exporter sends through ureq (rustls), the HTTP client
//! the workspace already builds, rather than a client of its own.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use toolsmith_model::telemetry::{TRACER_NAME, TelemetrySettings};

/// How long an export may take when `OTEL_EXPORTER_OTLP_TIMEOUT` says nothing (the
/// specification's default).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long shutting down may wait for the last spans to be exported.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// Traces being exported; flushes and stops the exporter when dropped (or on
/// [`Telemetry::shutdown`]), so the spans of the last calls reach the collector.
pub struct Telemetry {
    provider: SdkTracerProvider,
}

/// Telemetry could not start: a setting is wrong.
#[derive(Debug, thiserror::Error)]
#[error("cannot export traces: {0}")]
pub struct TelemetryError(String);

impl Telemetry {
    /// Starts exporting traces when the environment or `settings` name a collector
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `[telemetry]
    /// endpoint` or `traces_endpoint`, or `OTEL_TRACES_EXPORTER=otlp`); `None` when none
    /// does, or when `OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none` or `[telemetry]
    /// enabled = false` turn traces off. Off, the server's request path checks one static.
    ///
    /// # Errors
    ///
    /// [`TelemetryError`] for an endpoint that is not a URL or a sampler Toolsmith does not
    /// know.
    pub fn start(settings: &TelemetrySettings) -> Result<Option<Self>, TelemetryError> {
        if !wanted(settings) {
            return Ok(None);
        }
        let mut exporter = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(EXPORT_TIMEOUT)
            .with_http_client(Ureq::new(timeout()));
        // The variables win: an endpoint given here would override them.
        if variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none()
            && variable("OTEL_EXPORTER_OTLP_ENDPOINT").is_none()
        {
            if let Some(url) = &settings.traces_endpoint {
                exporter = exporter.with_endpoint(url.clone());
            } else if let Some(base) = &settings.endpoint {
                exporter =
                    exporter.with_endpoint(format!("{}/v1/traces", base.trim_end_matches('/')));
            }
        }
        if !settings.headers.is_empty() {
            // `OTEL_EXPORTER_OTLP_HEADERS` is added over these by the exporter.
            exporter = exporter.with_headers(settings.headers.clone().into_iter().collect());
        }
        for name in [
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        ] {
            if let Some(protocol) = variable(name).filter(|p| p != "http/protobuf") {
                tracing::warn!(
                    "{name}={protocol}: Toolsmith exports traces as http/protobuf only; using that"
                );
            }
        }
        let exporter = exporter
            .build()
            .map_err(|error| TelemetryError(error.to_string()))?;
        let mut provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource(settings));
        if variable("OTEL_TRACES_SAMPLER").is_none()
            && let Some(sampler) = &settings.sampler
        {
            provider = provider.with_sampler(sampler_of(sampler, settings.sampler_arg)?);
        }
        let provider = provider.build();
        opentelemetry::global::set_tracer_provider(provider.clone());
        super::install(opentelemetry::trace::TracerProvider::tracer(
            &provider,
            TRACER_NAME,
        ));
        Ok(Some(Self { provider }))
    }

    /// Exports the spans still queued (waiting at most 5 s) and stops the exporter.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Err(error) = self.provider.shutdown_with_timeout(FLUSH_TIMEOUT) {
            tracing::warn!(%error, "traces not all exported at shutdown");
        }
    }
}

/// Whether traces are on (see [`Telemetry::start`]).
fn wanted(settings: &TelemetrySettings) -> bool {
    if variable("OTEL_SDK_DISABLED").is_some_and(|value| value.eq_ignore_ascii_case("true"))
        || settings.enabled == Some(false)
    {
        return false;
    }
    match variable("OTEL_TRACES_EXPORTER").as_deref() {
        Some("none") => return false,
        Some("otlp") => return true,
        Some(other) => {
            tracing::warn!("OTEL_TRACES_EXPORTER={other}: Toolsmith exports traces with otlp only");
        }
        None => {}
    }
    variable("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
        || variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some()
        || settings.endpoint.is_some()
        || settings.traces_endpoint.is_some()
        || settings.enabled == Some(true)
}

/// An environment variable that is set and not blank.
fn variable(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// The export timeout: `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` or `OTEL_EXPORTER_OTLP_TIMEOUT`
/// (milliseconds), else 10 s.
fn timeout() -> Duration {
    [
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ]
    .into_iter()
    .find_map(|name| variable(name)?.parse().ok())
    .map_or(EXPORT_TIMEOUT, Duration::from_millis)
}

/// The service's resource: `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` (read by the
/// SDK), else `[telemetry] service_name`, else `toolsmith`.
fn resource(settings: &TelemetrySettings) -> Resource {
    let builder = Resource::builder();
    let named_by_environment = variable("OTEL_SERVICE_NAME").is_some()
        || variable("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|attributes| {
            attributes
                .split(',')
                .any(|pair| pair.trim_start().starts_with("service.name="))
        });
    let builder = if named_by_environment {
        builder
    } else {
        builder.with_service_name(
            settings
                .service_name
                .clone()
                .unwrap_or_else(|| "toolsmith".to_owned()),
        )
    };
    builder
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build()
}

/// `[telemetry] sampler` (and `sampler_arg`), named as `OTEL_TRACES_SAMPLER` names them.
fn sampler_of(name: &str, argument: Option<f64>) -> Result<Sampler, TelemetryError> {
    let ratio = argument.unwrap_or(1.0).clamp(0.0, 1.0);
    Ok(match name {
        "always_on" => Sampler::AlwaysOn,
        "always_off" => Sampler::AlwaysOff,
        "traceidratio" => Sampler::TraceIdRatioBased(ratio),
        "parentbased_always_on" => Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
        "parentbased_always_off" => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
        "parentbased_traceidratio" => {
            Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio)))
        }
        other => {
            return Err(TelemetryError(format!(
                "unknown sampler `{other}` in `[telemetry] sampler`; known: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio"
            )));
        }
    })
}

/// The exporter's HTTP client: ureq, on the batch processor's own thread (which waits for
/// each export anyway). The first failed export is warned about; later ones only at debug
/// level, so an unreachable collector does not flood the log.
#[derive(Debug)]
struct Ureq {
    agent: ureq::Agent,
    warned: AtomicBool,
}

impl Ureq {
    fn new(timeout: Duration) -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(concat!("toolsmith/", env!("CARGO_PKG_VERSION")))
            .build();
        Self {
            agent: ureq::Agent::new_with_config(config),
            warned: AtomicBool::new(false),
        }
    }

    fn failed(&self, url: &str, message: &str) {
        if self.warned.swap(true, Ordering::Relaxed) {
            tracing::debug!(url, message, "traces not exported");
        } else {
            tracing::warn!(
                url,
                message,
                "traces not exported (warned once; spans are dropped while the collector cannot be reached)"
            );
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for Ureq {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let url = request.uri().to_string();
        let (parts, body) = request.into_parts();
        let request = Request::from_parts(parts, body.to_vec());
        let mut response = match self.agent.run(request) {
            Ok(response) => response,
            Err(error) => {
                self.failed(&url, &error.to_string());
                return Err(Box::new(error));
            }
        };
        let status = response.status();
        let body = response
            .body_mut()
            .with_config()
            .limit(1024 * 1024)
            .read_to_vec()
            .unwrap_or_default();
        if !status.is_success() {
            self.failed(&url, &format!("the collector answered {status}"));
        }
        let mut answer = Response::new(Bytes::from(body));
        *answer.status_mut() = status;
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samplers_are_named_as_otel_traces_sampler_names_them() {
        assert!(matches!(
            sampler_of("parentbased_traceidratio", Some(0.25)),
            Ok(Sampler::ParentBased(_))
        ));
        assert!(matches!(
            sampler_of("traceidratio", Some(2.0)),
            Ok(Sampler::TraceIdRatioBased(ratio)) if (ratio - 1.0).abs() < f64::EPSILON
        ));
        let unknown = sampler_of("sometimes", None).err().unwrap().to_string();
        assert!(unknown.contains("unknown sampler `sometimes`"), "{unknown}");
        assert!(unknown.contains("parentbased_always_on"), "{unknown}");
    }

    #[test]
    fn enabled_false_wins_over_an_endpoint() {
        let settings = TelemetrySettings {
            enabled: Some(false),
            endpoint: Some("http://collector:4318".to_owned()),
            ..TelemetrySettings::default()
        };
        assert!(!wanted(&settings));
    }
}
