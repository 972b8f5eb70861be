//! The `http` module: `http.get`, `http.post` and `http.request`, to the hosts a tool's
//! `net` permission names (docs/tools.md, "The language and the sandbox").
//!
//! A request runs on the call's own thread through the guarded client of [`crate::net`],
//! and stops at the call's deadline. A response of any status is returned (`status` says
//! how it went); a host the permission does not name, a network failure or a body over
//! 16 MiB fail the call.

use starlark::collections::SmallMap;
use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::values::none::NoneOr;
use starlark::values::structs::AllocStruct;
use starlark::values::{Heap, Value};
use toolsmith_model::{PermissionFamily, percent_encode};

use super::convert::{from_json, to_json};
use super::session;
use crate::net::{self, HttpRequest, HttpResponse, NetError};

#[starlark_module]
pub(super) fn register(builder: &mut GlobalsBuilder) {
    /// `GET url`: a struct with `status`, `headers` (lowercase names), `text`, `json` (the
    /// decoded body when it is JSON, else `None`) and `url` (after redirects).
    fn get<'v>(
        #[starlark(require = pos)] url: &str,
        #[starlark(require = named, default = NoneOr::None)] params: NoneOr<Value<'v>>,
        #[starlark(require = named, default = NoneOr::None)] headers: NoneOr<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let request = described("GET", url, params, headers, NoneOr::None, NoneOr::None)?;
        send(eval, "http.get", request)
    }

    /// `POST url` with a `json` value or a `body` string; the response as for `http.get`.
    fn post<'v>(
        #[starlark(require = pos)] url: &str,
        #[starlark(require = named, default = NoneOr::None)] json: NoneOr<Value<'v>>,
        #[starlark(require = named, default = NoneOr::None)] body: NoneOr<&str>,
        #[starlark(require = named, default = NoneOr::None)] params: NoneOr<Value<'v>>,
        #[starlark(require = named, default = NoneOr::None)] headers: NoneOr<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let request = described("POST", url, params, headers, json, body)?;
        send(eval, "http.post", request)
    }

    /// Any method (`"PUT"`, `"PATCH"`, `"DELETE"`, …); the response as for `http.get`.
    fn request<'v>(
        #[starlark(require = pos)] method: &str,
        #[starlark(require = pos)] url: &str,
        #[starlark(require = named, default = NoneOr::None)] json: NoneOr<Value<'v>>,
        #[starlark(require = named, default = NoneOr::None)] body: NoneOr<&str>,
        #[starlark(require = named, default = NoneOr::None)] params: NoneOr<Value<'v>>,
        #[starlark(require = named, default = NoneOr::None)] headers: NoneOr<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let method = method.to_ascii_uppercase();
        let request = described(&method, url, params, headers, json, body)?;
        send(eval, "http.request", request)
    }
}

/// The request the script described.
fn described<'v>(
    method: &str,
    url: &str,
    params: NoneOr<Value<'v>>,
    headers: NoneOr<Value<'v>>,
    json: NoneOr<Value<'v>>,
    body: NoneOr<&str>,
) -> anyhow::Result<HttpRequest> {
    let mut url = url.to_owned();
    if let Some(params) = params.into_option() {
        let mut separator = if url.contains('?') { '&' } else { '?' };
        for (name, value) in strings(params, "params")? {
            url.push(separator);
            url.push_str(&percent_encode(&name));
            url.push('=');
            url.push_str(&percent_encode(&value));
            separator = '&';
        }
    }
    let headers = match headers.into_option() {
        Some(headers) => strings(headers, "headers")?,
        None => Vec::new(),
    };
    let body = match (json.into_option(), body.into_option()) {
        (Some(_), Some(_)) => anyhow::bail!("give `json=` or `body=`, not both"),
        (Some(json), None) => {
            let json = to_json(json).map_err(|error| anyhow::anyhow!("json=: {error}"))?;
            Some((json.to_string().into_bytes(), Some("application/json")))
        }
        (None, Some(body)) => Some((body.as_bytes().to_vec(), None)),
        (None, None) => None,
    };
    Ok(HttpRequest {
        method: method.to_owned(),
        url,
        headers,
        body,
    })
}

/// A dict of names to values, each value a string, number or bool, as strings.
fn strings(value: Value, what: &str) -> anyhow::Result<Vec<(String, String)>> {
    let Ok(serde_json::Value::Object(object)) = to_json(value) else {
        anyhow::bail!("{what}= takes a dict, got `{}`", value.get_type());
    };
    object
        .into_iter()
        .map(|(name, value)| match value {
            serde_json::Value::String(text) => Ok((name, text)),
            serde_json::Value::Number(_) | serde_json::Value::Bool(_) => {
                Ok((name, value.to_string()))
            }
            other => Err(anyhow::anyhow!(
                "{what}=: `{name}` must be a string, number or bool, got {other}"
            )),
        })
        .collect()
}

/// Sends `request` for the running call, following redirects for `GET` and `HEAD`.
fn send<'v>(
    eval: &mut Evaluator<'v, '_, '_>,
    what: &str,
    request: HttpRequest,
) -> anyhow::Result<Value<'v>> {
    let heap = eval.heap();
    let call = session::call(eval, what)?;
    let granted = &call.definition.permissions.net;
    let response = net::send(
        request,
        granted,
        &call.definition.name,
        call.context.deadline,
    )
    .map_err(|error| match error {
        NetError::Denied(message) => {
            let note = super::host::withheld_note(call.definition, PermissionFamily::Net);
            anyhow::anyhow!("`{what}`: {message}{note}")
        }
        NetError::Refused(message) | NetError::BadUrl(message) => {
            anyhow::anyhow!("`{what}`: {message}")
        }
        NetError::Failed { .. } => anyhow::anyhow!("`{what}` {error}"),
    })?;
    response_value(heap, response)
}

fn response_value(heap: Heap<'_>, response: HttpResponse) -> anyhow::Result<Value<'_>> {
    let status = i32::from(response.status);
    let text = String::from_utf8_lossy(&response.body).into_owned();
    let is_json = response
        .header("content-type")
        .is_some_and(|kind| kind.contains("json"));
    let json = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) if is_json => from_json(heap, &value).map_err(|error| anyhow::anyhow!(error))?,
        _ => Value::new_none(),
    };
    let headers: SmallMap<String, String> = response.headers.into_iter().collect();
    let headers = heap.alloc(headers);
    Ok(heap.alloc(AllocStruct([
        ("status", heap.alloc(status)),
        ("headers", headers),
        ("text", heap.alloc(text)),
        ("json", json),
        ("url", heap.alloc(response.url)),
    ])))
}
