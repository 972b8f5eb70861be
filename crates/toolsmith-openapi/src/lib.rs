//! HTTP APIs described by OpenAPI 3.0 or 3.1 as a source of Toolsmith tools
//! (docs/gateway.md, "OpenAPI"): `[openapi.NAME]` in a folder's `toolsmith.toml` names a
//! spec, and each of its operations is served as one tool under the API's prefix, behind
//! the model's one [`Tool`](toolsmith_model::Tool) trait, so search, profiles, lint,
//! timeouts and argument validation apply to it like to any other tool.
//!
//! - [`OpenApiSpec`]: one `[openapi.NAME]` table, read.
//! - [`Document`]: the OpenAPI document it names (a file, or an `https:` URL fetched once
//!   into the folder's `.toolsmith/openapi/`), kept as JSON.
//! - [`OpenApiTool`]: one operation as a tool; [`tools`] makes all of a spec's.
//!
//! ```no_run
//! use std::path::Path;
//! use toolsmith_model::SourceLocation;
//! use toolsmith_openapi::{Document, OpenApiSpec, tools};
//!
//! let table = serde_json::json!({"spec": "petstore.yaml"});
//! let spec = OpenApiSpec::parse("pets", &table, Path::new(".")).expect("a valid table");
//! let document = Document::read(&spec, Path::new(".")).expect("a readable spec");
//! let (tools, problems) = tools(&spec, &document, &SourceLocation::default()).expect("a base URL");
//! for tool in &tools {
//!     println!("{}", toolsmith_model::Tool::definition(tool).name);
//! }
//! for problem in problems {
//!     println!("left out: {problem}");
//! }
//! ```

mod document;
mod operation;
mod schema;
mod spec;
mod tool;

use std::path::PathBuf;
use std::sync::Arc;

pub use document::{Document, cache_dir, json_from_yaml};
pub use operation::{Location, Operation, Oversized, operations, snake_case};
pub use schema::DOCUMENT_LIMIT;
pub use spec::{KEYS, OpenApiSpec, Selector, SpecLocation};
pub use tool::{Api, OpenApiTool};
use toolsmith_model::SourceLocation;

/// Why an OpenAPI spec gives no tools.
#[derive(Debug, thiserror::Error)]
pub enum OpenApiError {
    /// The spec file (or its cached copy) could not be read or written.
    #[error("cannot read `{}`: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The spec names a FIFO, a device, a socket or a folder: reading one could wait forever.
    #[error(
        "`{}` is {kind}, not a regular file; `spec` must name an OpenAPI document file",
        path.display()
    )]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is (`a FIFO, device or socket`, `a folder`).
        kind: &'static str,
    },
    /// The spec file is larger than Toolsmith reads.
    #[error(
        "`{}` is larger than {} MiB, more than Toolsmith reads from one spec; keep only the operations you serve in it",
        path.display(),
        document::MAX_SPEC_BYTES >> 20
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// The file is not an OpenAPI 3.0 or 3.1 document.
    #[error("`{}` is not a usable OpenAPI spec: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The spec's URL could not be fetched.
    #[error("cannot fetch the spec `{url}`: {message}")]
    Fetch {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The document's schemas expand past [`DOCUMENT_LIMIT`] JSON values (a `$ref` bomb, or
    /// very many operations that each refer to large schemas).
    #[error(
        "`{}`: its schemas expand past {} JSON values (`$ref`s that repeat and nest), more than Toolsmith reads from one spec; serve fewer operations with `include` or `exclude`, or simplify the schemas",
        path.display(),
        DOCUMENT_LIMIT
    )]
    Oversized {
        /// The spec file.
        path: PathBuf,
    },
    /// Neither `base_url` nor the spec's `servers` say where requests go.
    #[error(
        "`[openapi.{name}]` has no `base_url` and `{}` no absolute `servers` URL; set `base_url = \"https://…\"`",
        path.display()
    )]
    NoBaseUrl {
        /// `NAME`.
        name: String,
        /// The spec file.
        path: PathBuf,
    },
}

/// The tools of `document`'s operations that `spec` selects, defined at `source`, and a
/// message for each operation that cannot be a tool.
///
/// # Errors
///
/// [`OpenApiError::NoBaseUrl`] when no base URL is known, [`OpenApiError::Oversized`] when
/// the selected operations' schemas expand past [`DOCUMENT_LIMIT`].
pub fn tools(
    spec: &OpenApiSpec,
    document: &Document,
    source: &SourceLocation,
) -> Result<(Vec<OpenApiTool>, Vec<String>), OpenApiError> {
    let no_base = || OpenApiError::NoBaseUrl {
        name: spec.name.clone(),
        path: document.path.clone(),
    };
    let base_url = spec
        .base_url
        .clone()
        .or_else(|| document.first_server())
        .ok_or_else(no_base)?;
    let parsed = url::Url::parse(&base_url).map_err(|_| no_base())?;
    let host = parsed.host_str().ok_or_else(no_base)?;
    let grant = match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let api = Arc::new(Api {
        name: spec.name.clone(),
        base_url: base_url.trim_end_matches('/').to_owned(),
        headers: spec
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect(),
        grant,
    });
    let (operations, problems) =
        operations(document, spec).map_err(|Oversized| OpenApiError::Oversized {
            path: document.path.clone(),
        })?;
    let tools = operations
        .into_iter()
        .map(|operation| OpenApiTool::new(&api, &spec.prefix, operation, source.clone()))
        .collect();
    Ok((tools, problems))
}
