//! `[openapi.NAME]` of `toolsmith.toml` (docs/gateway.md, "OpenAPI"): where the spec is, the
//! server to call, the headers to send (values may hold `${VAR}`), the tools' prefix, and
//! which operations to serve.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};
use serde_json::Value;

/// The keys an `[openapi.NAME]` table may have.
pub const KEYS: &[&str] = &[
    "spec", "base_url", "headers", "prefix", "include", "exclude",
];

/// One `[openapi.NAME]`.
#[derive(Debug, Clone)]
pub struct OpenApiSpec {
    /// `NAME`.
    pub name: String,
    /// What its tools' names start with, `_` included (`prefix`, else `NAME_`).
    pub prefix: String,
    /// Where the OpenAPI document is.
    pub location: SpecLocation,
    /// `base_url`: where requests go; `None` takes the document's first `servers` entry.
    pub base_url: Option<String>,
    /// `headers` sent with every request (values may hold `${VAR}`).
    pub headers: BTreeMap<String, String>,
    /// `include`: only the operations one of these selects; empty selects all.
    pub include: Vec<Selector>,
    /// `exclude`: operations left out even when included.
    pub exclude: Vec<Selector>,
}

/// Where an OpenAPI document is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecLocation {
    /// A file (relative paths are in the tools folder).
    File(PathBuf),
    /// An `https:` URL, fetched once and cached (docs/gateway.md).
    Url(String),
}

impl std::fmt::Display for SpecLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Url(url) => f.write_str(url),
        }
    }
}

/// One entry of `include` or `exclude`.
#[derive(Debug, Clone)]
pub enum Selector {
    /// `tag:NAME`: the operations with that tag.
    Tag(String),
    /// A glob starting with `/` (`/pets/*`): the operations on matching paths.
    Path(GlobMatcher),
    /// Anything else: an `operationId` (a glob: `list*`).
    OperationId(GlobMatcher),
}

impl Selector {
    fn parse(text: &str) -> Result<Self, String> {
        if let Some(tag) = text.strip_prefix("tag:") {
            return Ok(Self::Tag(tag.to_owned()));
        }
        let is_path = text.starts_with('/');
        // A path's `{petId}` is the template's, not a glob's `{a,b}` alternation.
        let pattern = if is_path {
            text.replace('{', "[{]").replace('}', "[}]")
        } else {
            text.to_owned()
        };
        let glob = Glob::new(&pattern)
            .map_err(|error| format!("`{text}` is not a valid glob: {error}"))?
            .compile_matcher();
        Ok(if is_path {
            Self::Path(glob)
        } else {
            Self::OperationId(glob)
        })
    }

    /// Whether the operation `operation_id` (if it has one) on `path` with `tags` is selected.
    pub fn matches(&self, operation_id: Option<&str>, path: &str, tags: &[String]) -> bool {
        match self {
            Self::Tag(tag) => tags.iter().any(|t| t == tag),
            Self::Path(glob) => glob.is_match(path),
            Self::OperationId(glob) => operation_id.is_some_and(|id| glob.is_match(id)),
        }
    }
}

impl OpenApiSpec {
    /// Reads `[openapi.NAME]` (`table`, as JSON) of the folder `root`.
    ///
    /// # Errors
    ///
    /// What is wrong with the table, naming the key, as one sentence.
    pub fn parse(name: &str, table: &Value, root: &Path) -> Result<Self, String> {
        let table = toolsmith_model::sources::source_table("openapi", name, table, KEYS)?;
        let location = match table.get("spec") {
            None => {
                return Err(format!(
                    "`[openapi.{name}]` needs `spec = \"openapi.yaml\"` (a file in the folder) or `spec = \"https://…/openapi.json\"`"
                ));
            }
            Some(Value::String(spec)) if spec.starts_with("https://") => {
                SpecLocation::Url(spec.clone())
            }
            Some(Value::String(spec)) if spec.starts_with("http://") => {
                return Err(format!(
                    "`[openapi.{name}] spec` must be an `https:` URL or a file, got `{spec}`; download it into the folder, or use https"
                ));
            }
            Some(Value::String(spec)) => SpecLocation::File(root.join(spec)),
            Some(_) => return Err(format!("`[openapi.{name}] spec` must be a string")),
        };
        let base_url = match table.get("base_url") {
            None => None,
            Some(Value::String(url))
                if url.starts_with("http://") || url.starts_with("https://") =>
            {
                Some(url.clone())
            }
            Some(Value::String(url)) => {
                return Err(format!(
                    "`[openapi.{name}] base_url` must be an `http://` or `https://` URL, got `{url}`"
                ));
            }
            Some(_) => return Err(format!("`[openapi.{name}] base_url` must be a string")),
        };
        let headers = toolsmith_model::sources::string_table(
            "openapi",
            name,
            "headers",
            table.get("headers"),
        )?;
        let selectors = |key: &str| -> Result<Vec<Selector>, String> {
            match table.get(key) {
                None => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| match item {
                        Value::String(text) => Selector::parse(text)
                            .map_err(|message| format!("`[openapi.{name}] {key}`: {message}")),
                        _ => Err(format!(
                            "`[openapi.{name}] {key}` must be a list of strings"
                        )),
                    })
                    .collect(),
                Some(_) => Err(format!(
                    "`[openapi.{name}] {key}` must be a list of operationIds, `tag:NAME`s or path globs"
                )),
            }
        };
        Ok(Self {
            name: name.to_owned(),
            prefix: toolsmith_model::sources::tool_prefix("openapi", name, table.get("prefix"))?,
            location,
            base_url,
            headers,
            include: selectors("include")?,
            exclude: selectors("exclude")?,
        })
    }

    /// Whether the operation is served: selected by `include` (or `include` is empty) and
    /// by no `exclude`.
    pub fn selects(&self, operation_id: Option<&str>, path: &str, tags: &[String]) -> bool {
        let hit = |selector: &Selector| selector.matches(operation_id, path, tags);
        (self.include.is_empty() || self.include.iter().any(hit)) && !self.exclude.iter().any(hit)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(table: &Value) -> Result<OpenApiSpec, String> {
        OpenApiSpec::parse("pets", table, Path::new("/t"))
    }

    #[test]
    fn a_file_spec_is_in_the_folder_and_the_prefix_is_the_name() {
        let spec = parse(&json!({"spec": "petstore.yaml"})).unwrap();
        assert_eq!(spec.location, SpecLocation::File("/t/petstore.yaml".into()));
        assert_eq!(spec.prefix, "pets_");
        assert!(spec.selects(Some("listPets"), "/pets", &[]));
    }

    #[test]
    fn include_and_exclude_select_by_id_tag_and_path() {
        let spec = parse(&json!({
            "spec": "p.json",
            "include": ["tag:pets", "getStatus"],
            "exclude": ["/pets/{petId}", "delete*"],
        }))
        .unwrap();
        let pets = ["pets".to_owned()];
        assert!(spec.selects(Some("listPets"), "/pets", &pets));
        assert!(spec.selects(Some("getStatus"), "/status", &[]));
        assert!(!spec.selects(Some("showPet"), "/pets/{petId}", &pets));
        assert!(!spec.selects(Some("deletePets"), "/pets", &pets));
        assert!(!spec.selects(Some("other"), "/other", &[]));
    }

    #[test]
    fn a_missing_spec_or_unknown_key_says_what_to_write() {
        assert!(parse(&json!({})).unwrap_err().contains("needs `spec = "));
        let error = parse(&json!({"spec": "a.yaml", "base": "x"})).unwrap_err();
        assert!(error.contains("unknown key `base`"), "{error}");
        let error = parse(&json!({"spec": "http://h/a.yaml"})).unwrap_err();
        assert!(error.contains("https"), "{error}");
    }
}
