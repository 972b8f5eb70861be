//! Reading an OpenAPI document (docs/gateway.md, "OpenAPI"): a file in the folder or an
//! `https:` URL fetched once into the folder's `.toolsmith/openapi/` cache, JSON or YAML,
//! OpenAPI 3.0 or 3.1. It stays a `serde_json::Value`: no maintained crate reads both 3.0
//! (`openapiv3`) and 3.1 (`oas3`), and the tools need only a few of its objects.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use toolsmith_starlark::net::{self, HttpRequest};
use yaml_edit::{ScalarType, YamlValue};

use crate::OpenApiError;
use crate::spec::{OpenApiSpec, SpecLocation};

/// How long fetching a spec from its URL may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// An OpenAPI document, read.
#[derive(Debug, Clone)]
pub struct Document {
    /// The whole document.
    pub root: Value,
    /// Where it was read from (the cached copy for a URL), for diagnostics.
    pub path: PathBuf,
}

impl Document {
    /// Reads the document `spec` names, fetching it first when it is a URL not yet cached
    /// in `root`'s `.toolsmith/openapi/`.
    ///
    /// # Errors
    ///
    /// [`OpenApiError`]: unreadable, not JSON or YAML, not OpenAPI 3.0 or 3.1, or the
    /// fetch failed.
    pub fn read(spec: &OpenApiSpec, root: &Path) -> Result<Self, OpenApiError> {
        let path = match &spec.location {
            SpecLocation::File(path) => path.clone(),
            SpecLocation::Url(url) => cached(url, &spec.name, root)?,
        };
        let text = read_regular(&path)?;
        Self::parse(&text, path)
    }

    /// The document `text` (JSON or YAML), read from `path`.
    ///
    /// # Errors
    ///
    /// [`OpenApiError::Invalid`]: not JSON or YAML, or not OpenAPI 3.0 or 3.1.
    pub fn parse(text: &str, path: PathBuf) -> Result<Self, OpenApiError> {
        let invalid = |message: String| OpenApiError::Invalid {
            path: path.clone(),
            message,
        };
        let root = parse(text).map_err(invalid)?;
        let version = root
            .get("openapi")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                invalid(match root.get("swagger") {
                    Some(_) => "it is a Swagger 2.0 document; convert it to OpenAPI 3 (e.g. with swagger2openapi)".to_owned(),
                    None => "it has no `openapi` version field; is it an OpenAPI document?".to_owned(),
                })
            })?;
        if !(version.starts_with("3.0") || version.starts_with("3.1")) {
            return Err(invalid(format!(
                "it is OpenAPI {version}; Toolsmith reads 3.0 and 3.1"
            )));
        }
        if !root.get("paths").is_none_or(Value::is_object) {
            return Err(invalid("`paths` must be an object".to_owned()));
        }
        Ok(Self { root, path })
    }

    /// The URL of the document's first `servers` entry, its `{variables}` at their defaults.
    pub fn first_server(&self) -> Option<String> {
        let server = self.root.get("servers")?.as_array()?.first()?;
        let mut url = server.get("url")?.as_str()?.to_owned();
        if let Some(Value::Object(variables)) = server.get("variables") {
            for (name, variable) in variables {
                if let Some(default) = variable.get("default").and_then(Value::as_str) {
                    url = url.replace(&format!("{{{name}}}"), default);
                }
            }
        }
        Some(url)
    }
}

/// The most of a spec file Toolsmith reads. A spec fetched from a URL is held to the HTTP
/// client's 16 MiB; a file in the folder may be larger (bundled specs of big APIs are),
/// but not without bound.
pub(crate) const MAX_SPEC_BYTES: u64 = 64 << 20;

/// The text of the spec file `path`, which must be a regular file: a FIFO (or a device)
/// would make the read wait for a writer that may never come, and the server with it.
/// The check is made before the file is opened, and again on the open file, opened
/// without blocking, in case the path changed in between.
fn read_regular(path: &Path) -> Result<String, OpenApiError> {
    use std::io::Read as _;

    let unreadable = |source| OpenApiError::Unreadable {
        path: path.to_owned(),
        source,
    };
    let regular = |metadata: &std::fs::Metadata| {
        if metadata.is_file() {
            Ok(())
        } else {
            Err(OpenApiError::NotAFile {
                path: path.to_owned(),
                kind: if metadata.is_dir() {
                    "a folder"
                } else {
                    "a FIFO, device or socket"
                },
            })
        }
    };
    regular(&std::fs::metadata(path).map_err(unreadable)?)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(unreadable)?;
    let metadata = file.metadata().map_err(unreadable)?;
    regular(&metadata)?;
    let too_large = || OpenApiError::TooLarge {
        path: path.to_owned(),
    };
    if metadata.len() > MAX_SPEC_BYTES {
        return Err(too_large());
    }
    let mut text = String::new();
    file.take(MAX_SPEC_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(unreadable)?;
    if text.len() as u64 > MAX_SPEC_BYTES {
        return Err(too_large());
    }
    Ok(text)
}

/// JSON when the text starts with `{`, else YAML.
fn parse(text: &str) -> Result<Value, String> {
    if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|error| format!("not valid JSON: {error}"))
    } else {
        json_from_yaml(text).map_err(|error| format!("not valid YAML: {error}"))
    }
}

/// YAML text as JSON: mappings with string keys (sorted), sequences, and scalars by their
/// type. The one YAML reader of the workspace: `toolsmith install` reads client files with it.
///
/// # Errors
///
/// The parser's message, or a note that the text uses YAML tags.
pub fn json_from_yaml(text: &str) -> Result<Value, String> {
    let value = YamlValue::parse_raw(text).map_err(|error| error.to_string())?;
    json_of(&value)
}

fn json_of(value: &YamlValue) -> Result<Value, String> {
    Ok(match value {
        YamlValue::Scalar(scalar) => match scalar.scalar_type() {
            ScalarType::Null => Value::Null,
            ScalarType::Boolean => scalar.to_bool().unwrap_or_default().into(),
            ScalarType::Integer => match scalar.to_i64() {
                Some(integer) => integer.into(),
                None => scalar.value().into(),
            },
            ScalarType::Float => scalar
                .to_f64()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| scalar.value().into(), Value::Number),
            _ => scalar.value().into(),
        },
        YamlValue::Sequence(items) => {
            Value::Array(items.iter().map(json_of).collect::<Result<_, _>>()?)
        }
        YamlValue::Mapping(members) => Value::Object(
            members
                .iter()
                .map(|(key, value)| Ok((key.clone(), json_of(value)?)))
                .collect::<Result<Map<_, _>, String>>()?,
        ),
        _ => return Err("the file uses YAML tags Toolsmith does not read".into()),
    })
}

/// The cached copy of the spec at `url`, fetched when there is none yet: fetched once, it
/// is read from the cache until the file is deleted.
fn cached(url: &str, name: &str, root: &Path) -> Result<PathBuf, OpenApiError> {
    let path = cache_path(url, name, root);
    if path.is_file() {
        return Ok(path);
    }
    let failed = |message: String| OpenApiError::Fetch {
        url: url.to_owned(),
        message,
    };
    let host = url::Url::parse(url)
        .ok()
        .and_then(|parsed| parsed.host_str().map(str::to_owned))
        .ok_or_else(|| failed("the URL has no host".to_owned()))?;
    // A grant by host name: the spec's host is reached at its public addresses only.
    let response = net::send(
        HttpRequest {
            method: "GET".to_owned(),
            url: url.to_owned(),
            headers: vec![(
                "accept".to_owned(),
                "application/json, application/yaml;q=0.9, */*;q=0.5".to_owned(),
            )],
            body: None,
        },
        &[host],
        &format!("[openapi.{name}]"),
        Instant::now() + FETCH_TIMEOUT,
    )
    .map_err(|error| failed(error.to_string()))?;
    if !(200..300).contains(&response.status) {
        return Err(failed(format!(
            "the server answered HTTP {}",
            response.status
        )));
    }
    let write = |error: std::io::Error| OpenApiError::Unreadable {
        path: path.clone(),
        source: error,
    };
    std::fs::create_dir_all(cache_dir(root)).map_err(write)?;
    // Written beside, then renamed: a reader never sees half a spec.
    let partial = path.with_extension("partial");
    std::fs::write(&partial, &response.body).map_err(write)?;
    std::fs::rename(&partial, &path).map_err(write)?;
    Ok(path)
}

/// The cached copy of `[openapi.NAME] spec = "URL"`: `NAME-<URL hash>.spec` in [`cache_dir`].
fn cache_path(url: &str, name: &str, root: &Path) -> PathBuf {
    let digest = Sha256::digest(url.as_bytes());
    let mut hash = String::new();
    for byte in &digest[..8] {
        let _ = write!(hash, "{byte:02x}");
    }
    cache_dir(root).join(format!("{name}-{hash}.spec"))
}

/// Where fetched specs are kept: `.toolsmith/openapi/` in the tools folder (hidden, so the
/// folder's loader and `check` skip it).
pub fn cache_dir(root: &Path) -> PathBuf {
    root.join(".toolsmith").join("openapi")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_scalars_keep_their_types() {
        let value = json_from_yaml("openapi: 3.0.3\ncount: 3\nok: true\nnone: null\nname: '200'\n")
            .unwrap();
        assert_eq!(
            value,
            serde_json::json!({"openapi": "3.0.3", "count": 3, "ok": true, "none": null, "name": "200"})
        );
    }

    #[test]
    fn a_url_spec_is_read_from_the_cache_once_fetched() {
        let dir = tempfile::tempdir().unwrap();
        let url = "https://127.0.0.1:9/openapi.json";
        let spec =
            OpenApiSpec::parse("pets", &serde_json::json!({"spec": url}), dir.path()).unwrap();
        // Not fetched yet, and nothing listens there: the error names the URL.
        let error = Document::read(&spec, dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("cannot fetch the spec `https://127.0.0.1:9/"),
            "{error}"
        );
        let cached = cache_path(url, "pets", dir.path());
        std::fs::create_dir_all(cached.parent().unwrap()).unwrap();
        std::fs::write(&cached, r#"{"openapi": "3.1.0", "paths": {}}"#).unwrap();
        let document = Document::read(&spec, dir.path()).unwrap();
        assert_eq!(document.path, cached);
        assert!(cached.starts_with(dir.path().join(".toolsmith")));
    }

    // A FIFO as `spec` made the server wait for a writer forever after `initialize`.
    #[cfg(unix)]
    #[test]
    fn a_fifo_or_folder_spec_is_named_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("spec.yaml");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        for (name, kind) in [("spec.yaml", "a FIFO, device or socket"), (".", "a folder")] {
            let spec =
                OpenApiSpec::parse("s", &serde_json::json!({"spec": name}), dir.path()).unwrap();
            let error = Document::read(&spec, dir.path()).unwrap_err().to_string();
            assert!(
                error.contains(&format!("is {kind}, not a regular file")),
                "{error}"
            );
        }
    }

    #[test]
    fn swagger_2_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.json"), r#"{"swagger": "2.0"}"#).unwrap();
        let spec =
            OpenApiSpec::parse("s", &serde_json::json!({"spec": "s.json"}), dir.path()).unwrap();
        let error = Document::read(&spec, dir.path()).unwrap_err().to_string();
        assert!(error.contains("Swagger 2.0"), "{error}");
    }
}
