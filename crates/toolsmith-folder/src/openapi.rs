//! `[openapi.NAME]` of a folder's `toolsmith.toml` (docs/gateway.md, "OpenAPI"): HTTP APIs
//! whose operations the folder serves as tools under the API's prefix. A table that is
//! wrong, a spec that cannot be read, or an operation that cannot be a tool is a warning
//! naming the file and the problem; the folder's other tools (and the spec's other
//! operations) still load.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use toolsmith_model::{Diagnostic, Severity, SourceLocation, Tool};
use toolsmith_openapi::{Document, OpenApiSpec};

use crate::config::{CONFIG_FILE, FolderConfig};

/// Reads each API `config` names, and makes its operations tools.
pub(crate) fn load(root: &Path, config: &FolderConfig) -> (Vec<Arc<dyn Tool>>, Vec<Diagnostic>) {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut diagnostics = Vec::new();
    let Some(tables) = config.raw.get("openapi") else {
        return (tools, diagnostics);
    };
    let path = root.join(CONFIG_FILE);
    let source = crate::read::read_definition(&path).unwrap_or_default();
    let keys = crate::keys::toml_keys(&source);
    let Value::Object(tables) = tables else {
        diagnostics.push(warning(
            "invalid-config",
            SourceLocation::file(&path),
            "`openapi` must be a table of `[openapi.NAME]` tables".to_owned(),
            "write `[openapi.pets]` with `spec = \"petstore.yaml\"`; see docs/gateway.md",
        ));
        return (tools, diagnostics);
    };
    for (name, table) in tables {
        let location = crate::keys::key_location(&path, &source, &keys, &["openapi", name]);
        let spec = match OpenApiSpec::parse(name, table, root) {
            Ok(spec) => spec,
            Err(message) => {
                diagnostics.push(warning(
                    "invalid-config",
                    location,
                    message,
                    "see docs/gateway.md for the keys of `[openapi.NAME]`",
                ));
                continue;
            }
        };
        let loaded = Document::read(&spec, root).and_then(|document| {
            toolsmith_openapi::tools(&spec, &document, &location).map(|found| (document, found))
        });
        match loaded {
            Ok((document, (found, problems))) => {
                tools.extend(found.into_iter().map(|tool| Arc::new(tool) as Arc<dyn Tool>));
                for problem in problems {
                    diagnostics.push(warning(
                        "invalid-openapi",
                        SourceLocation::file(&document.path),
                        format!("`[openapi.{name}]`: {problem}"),
                        "the API's other operations are served; see docs/gateway.md, \"OpenAPI\"",
                    ));
                }
            }
            Err(error) => diagnostics.push(warning(
                "invalid-openapi",
                location,
                error.to_string(),
                "its operations are not served until the spec loads; see docs/gateway.md, \"OpenAPI\"",
            )),
        }
    }
    (tools, diagnostics)
}

fn warning(
    rule: &'static str,
    location: SourceLocation,
    message: String,
    help: &str,
) -> Diagnostic {
    let mut diagnostic = Diagnostic::error(rule, location, message).with_help(help);
    diagnostic.severity = Severity::Warning;
    diagnostic
}
