//! MCP resources (MCP spec, server/resources): static resources with their contents,
//! resource templates whose text is filled in from the variables of the URI read, and
//! [`Resources`], the set a server offers, answering `resources/list`,
//! `resources/templates/list`, `resources/read` and `completion/complete` for templates.
//!
//! Contents are held in memory (text, or a blob already base64-encoded), so reading a
//! resource does no I/O; the folder loader reads the files once.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::definition::{JsonObject, SourceLocation};
use crate::forward::{CompletionRef, ForwardError, Remote};
use crate::names::{did_you_mean, suggestion_suffix};
use crate::outcome::EmbeddedResource;
use crate::skill::Skill;
use crate::template::TextTemplate;
use crate::tool::ClientBridge;
use crate::uri_template::UriTemplate;

/// The MIME type of an MCP Apps HTML document (`resources/ui/**`).
pub const MCP_APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// JSON-RPC error code for `resources/read` of a URI no resource or template serves
/// (MCP spec, server/resources, "Error Handling").
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// The contents of a resource: text, or binary data base64-encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// UTF-8 text.
    Text(String),
    /// Binary data, base64-encoded (MCP `blob`).
    Blob(String),
}

/// One entry of a `resources/read` result (MCP `TextResourceContents` /
/// `BlobResourceContents`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceContents {
    /// The URI read (for a template: the concrete URI, not the template).
    pub uri: String,
    /// MIME type, when known.
    pub mime_type: Option<String>,
    /// Text or blob.
    pub body: ResourceBody,
    /// `_meta` of the contents (MCP Apps hosts read `_meta.ui` here).
    pub meta: JsonObject,
}

impl ResourceContents {
    /// The contents as MCP JSON: `{uri, mimeType?, text | blob, _meta?}`.
    pub fn to_mcp(&self) -> Value {
        let mut contents = JsonObject::new();
        contents.insert("uri".into(), json!(self.uri));
        if let Some(mime) = &self.mime_type {
            contents.insert("mimeType".into(), json!(mime));
        }
        match &self.body {
            ResourceBody::Text(text) => contents.insert("text".into(), json!(text)),
            ResourceBody::Blob(blob) => contents.insert("blob".into(), json!(blob)),
        };
        if !self.meta.is_empty() {
            contents.insert("_meta".into(), Value::Object(self.meta.clone()));
        }
        Value::Object(contents)
    }

    /// One entry of a `resources/read` result as MCP JSON; `None` when it is not one.
    pub fn from_mcp(contents: &Value) -> Option<Self> {
        let body = match (contents.get("text"), contents.get("blob")) {
            (Some(Value::String(text)), _) => ResourceBody::Text(text.clone()),
            (_, Some(Value::String(blob))) => ResourceBody::Blob(blob.clone()),
            _ => return None,
        };
        Some(Self {
            uri: contents.get("uri")?.as_str()?.to_owned(),
            mime_type: contents
                .get("mimeType")
                .and_then(Value::as_str)
                .map(str::to_owned),
            body,
            meta: contents
                .get("_meta")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        })
    }

    /// The `resources/read` result for these contents: `{"contents": [...]}`.
    pub fn to_read_result(&self) -> Value {
        json!({ "contents": [self.to_mcp()] })
    }

    /// The contents as an embedded resource (a `resource` content block).
    pub fn to_embedded(&self) -> EmbeddedResource {
        let (text, blob) = match &self.body {
            ResourceBody::Text(text) => (Some(text.clone()), None),
            ResourceBody::Blob(blob) => (None, Some(blob.clone())),
        };
        EmbeddedResource {
            uri: self.uri.clone(),
            mime_type: self.mime_type.clone(),
            text,
            blob,
            meta: (!self.meta.is_empty()).then(|| Box::new(self.meta.clone())),
        }
    }
}

/// What a `resources/list` entry and a resource template share: names and descriptions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceInfo {
    /// Programmatic name (MCP `name`).
    pub name: String,
    /// Display name.
    pub title: Option<String>,
    /// What the resource is, for the model and the user.
    pub description: Option<String>,
    /// MIME type.
    pub mime_type: Option<String>,
    /// `_meta` (MCP Apps: `{"ui": {"csp": …, "permissions": …, "prefersBorder": …}}`).
    pub meta: JsonObject,
    /// MCP `annotations` (`audience`, `priority`, `lastModified`), as an upstream listed
    /// them.
    pub annotations: Option<Value>,
    /// MCP `icons`, as an upstream listed them.
    pub icons: Option<Value>,
    /// Where it was defined.
    pub source: SourceLocation,
    /// The server that reads it, for an upstream's resource or template (the contents held
    /// here are then empty).
    pub remote: Option<Remote>,
}

impl ResourceInfo {
    fn insert_into(&self, object: &mut JsonObject) {
        object.insert("name".into(), json!(self.name));
        if let Some(title) = &self.title {
            object.insert("title".into(), json!(title));
        }
        if let Some(description) = &self.description {
            object.insert("description".into(), json!(description));
        }
        if let Some(mime) = &self.mime_type {
            object.insert("mimeType".into(), json!(mime));
        }
        if let Some(icons) = &self.icons {
            object.insert("icons".into(), icons.clone());
        }
        if let Some(annotations) = &self.annotations {
            object.insert("annotations".into(), annotations.clone());
        }
    }
}

/// A resource with fixed contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Names, description, MIME type, `_meta`.
    pub info: ResourceInfo,
    /// The contents.
    pub body: ResourceBody,
    /// Size in bytes of the raw contents (before base64), published as `size`.
    pub size: Option<u64>,
}

impl Resource {
    /// The `resources/list` entry: `{uri, name, title?, description?, mimeType?, icons?,
    /// annotations?, size?, _meta?}`.
    pub fn to_mcp(&self) -> Value {
        let mut resource = JsonObject::new();
        resource.insert("uri".into(), json!(self.uri));
        self.info.insert_into(&mut resource);
        if let Some(size) = self.size {
            resource.insert("size".into(), json!(size));
        }
        if !self.info.meta.is_empty() {
            resource.insert("_meta".into(), Value::Object(self.info.meta.clone()));
        }
        Value::Object(resource)
    }

    /// Its contents, as `resources/read` returns them.
    pub fn contents(&self) -> ResourceContents {
        ResourceContents {
            uri: self.uri.clone(),
            mime_type: self.info.mime_type.clone(),
            body: self.body.clone(),
            meta: self.info.meta.clone(),
        }
    }
}

/// How a template's text treats the variable values it is filled with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Escape {
    /// Values are inserted as they are.
    #[default]
    None,
    /// Values are escaped for the inside of a JSON string (`"`, `\`, control characters).
    Json,
    /// Values are escaped for HTML or XML text and attributes (`& < > " '`).
    Html,
}

impl Escape {
    /// The escaping that suits a MIME type: JSON types get [`Escape::Json`], HTML and XML
    /// types [`Escape::Html`], everything else none.
    pub fn for_mime_type(mime: Option<&str>) -> Self {
        let Some(mime) = mime else {
            return Self::None;
        };
        let essence = mime.split(';').next().unwrap_or_default().trim();
        if essence == "application/json" || essence.ends_with("+json") {
            Self::Json
        } else if essence.contains("html") || essence.ends_with("xml") {
            Self::Html
        } else {
            Self::None
        }
    }

    /// Escapes `value`.
    pub fn apply(self, value: &str) -> String {
        match self {
            Self::None => value.to_owned(),
            Self::Json => {
                let quoted = Value::String(value.to_owned()).to_string();
                quoted[1..quoted.len() - 1].to_owned()
            }
            Self::Html => value
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
                .replace('\'', "&#39;"),
        }
    }
}

/// A resource template: a URI template and a text whose `{{variable}}` placeholders are
/// filled from the URI read (MCP `ResourceTemplate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceTemplate {
    /// The URI template, e.g. `test://template/{id}/data`.
    pub uri_template: UriTemplate,
    /// Names, description, MIME type, `_meta`.
    pub info: ResourceInfo,
    /// The contents, with `{{variable}}` placeholders naming the template's variables.
    pub text: TextTemplate,
    /// How variable values are escaped into `text`.
    pub escape: Escape,
    /// Values offered by `completion/complete`, per variable.
    pub values: BTreeMap<String, Vec<String>>,
}

impl ResourceTemplate {
    /// The `resources/templates/list` entry: `{uriTemplate, name, title?, description?,
    /// mimeType?, icons?, annotations?, _meta?}`.
    pub fn to_mcp(&self) -> Value {
        let mut template = JsonObject::new();
        template.insert("uriTemplate".into(), json!(self.uri_template.as_str()));
        self.info.insert_into(&mut template);
        if !self.info.meta.is_empty() {
            template.insert("_meta".into(), Value::Object(self.info.meta.clone()));
        }
        Value::Object(template)
    }

    /// The contents for `uri`, or `None` when `uri` does not match the template.
    pub fn read(&self, uri: &str) -> Option<ResourceContents> {
        let variables = self.uri_template.match_uri(uri)?;
        let text = self.text.render(|name| {
            variables
                .iter()
                .find(|(variable, _)| variable == name)
                .map(|(_, value)| self.escape.apply(value))
                .unwrap_or_default()
        });
        Some(ResourceContents {
            uri: uri.to_owned(),
            mime_type: self.info.mime_type.clone(),
            body: ResourceBody::Text(text),
            meta: self.info.meta.clone(),
        })
    }

    /// Completion values for `variable` that start with `prefix` (ignoring case), in the
    /// order they were declared.
    pub fn complete(&self, variable: &str, prefix: &str) -> Vec<String> {
        self.values
            .get(variable)
            .map(|values| complete_from(values, prefix))
            .unwrap_or_default()
    }
}

/// The values of `values` that start with `prefix`, ignoring case, in order.
pub(crate) fn complete_from(values: &[String], prefix: &str) -> Vec<String> {
    let prefix = prefix.to_lowercase();
    values
        .iter()
        .filter(|value| value.to_lowercase().starts_with(&prefix))
        .cloned()
        .collect()
}

/// Why a resource could not be read or completed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    /// No resource has this URI and no template matches it (JSON-RPC
    /// [`RESOURCE_NOT_FOUND`]).
    #[error("unknown resource `{uri}`{}", suggestion_suffix(.suggestions))]
    UnknownResource {
        /// The URI asked for.
        uri: String,
        /// Close URIs, best first.
        suggestions: Vec<String>,
    },
    /// `completion/complete` named a template this server does not have (JSON-RPC
    /// -32602, invalid params).
    #[error("unknown resource template `{uri_template}`")]
    UnknownTemplate {
        /// The template asked for.
        uri_template: String,
    },
    /// The server that owns the resource (an upstream) answered with an error or could
    /// not be reached.
    #[error("{message}")]
    Remote {
        /// The URI asked for.
        uri: String,
        /// The JSON-RPC code to answer with (the upstream's own, when it answered one).
        code: i64,
        /// What happened, naming the upstream.
        message: String,
    },
}

impl ResourceError {
    /// The JSON-RPC error code the server answers with.
    pub fn json_rpc_code(&self) -> i64 {
        match self {
            Self::UnknownResource { .. } => RESOURCE_NOT_FOUND,
            Self::UnknownTemplate { .. } => -32602,
            Self::Remote { code, .. } => *code,
        }
    }
}

/// Anything that can read resources by URI; prompts use it to embed resources.
pub trait ResourceReader {
    /// Reads the resource at `uri`.
    fn read(&self, uri: &str) -> Result<ResourceContents, ResourceError>;
}

/// A reader with no resources: every read is [`ResourceError::UnknownResource`].
#[derive(Debug, Clone, Copy, Default)]
pub struct NoResources;

impl ResourceReader for NoResources {
    fn read(&self, uri: &str) -> Result<ResourceContents, ResourceError> {
        Err(ResourceError::UnknownResource {
            uri: uri.to_owned(),
            suggestions: Vec::new(),
        })
    }
}

/// The resources and resource templates a server offers.
///
/// Resources are listed sorted by URI, templates by URI template: the stable order of
/// `resources/list` and `resources/templates/list`. A read tries the static resources
/// first, then each template in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[expect(
    clippy::struct_field_names,
    reason = "`resources` is what the type is named for: the static resources"
)]
pub struct Resources {
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    /// The skills whose files are among `resources` (docs/skills.md), sorted by name.
    skills: Vec<Skill>,
}

impl Resources {
    /// A set of resources and templates; of two with the same URI (or URI template) the
    /// first is kept.
    pub fn new(mut resources: Vec<Resource>, mut templates: Vec<ResourceTemplate>) -> Self {
        resources.sort_by(|a, b| a.uri.cmp(&b.uri));
        resources.dedup_by(|later, earlier| later.uri == earlier.uri);
        templates.sort_by(|a, b| a.uri_template.as_str().cmp(b.uri_template.as_str()));
        templates.dedup_by(|later, earlier| later.uri_template == earlier.uri_template);
        Self {
            resources,
            templates,
            skills: Vec::new(),
        }
    }

    /// These resources with `skills` served too: `files` (each skill's files and its
    /// [`SKILL_MANIFEST`](crate::SKILL_MANIFEST) resource) join the static resources, so
    /// every client, whatever its protocol revision, can list and read them. A file whose
    /// URI another resource already has is left out (the first one is kept), as is a
    /// skill of a name already served.
    #[must_use]
    pub fn with_skills(mut self, mut skills: Vec<Skill>, files: Vec<Resource>) -> Self {
        self.resources.extend(files);
        self.resources.sort_by(|a, b| a.uri.cmp(&b.uri));
        self.resources
            .dedup_by(|later, earlier| later.uri == earlier.uri);
        self.skills.append(&mut skills);
        self.skills.sort_by(|a, b| a.name.cmp(&b.name));
        self.skills
            .dedup_by(|later, earlier| later.name == earlier.name);
        self
    }

    /// The skills served (`skills/list`), sorted by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill whose `SKILL.md` is at `uri` (`skills/get`).
    pub fn skill(&self, uri: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.uri() == uri)
    }

    /// Whether the static resource at `uri` is a skill's file or manifest rather than a
    /// resource of its own.
    pub fn is_skill_file(&self, uri: &str) -> bool {
        self.skills.iter().any(|skill| {
            skill.manifest_uri() == uri || skill.files.iter().any(|file| file.uri == uri)
        })
    }

    /// The static resources that are `skill`'s files and manifest.
    pub fn skill_files(&self, skill: &Skill) -> Vec<Resource> {
        skill
            .files
            .iter()
            .map(|file| file.uri.clone())
            .chain([skill.manifest_uri()])
            .filter_map(|uri| self.get(&uri).cloned())
            .collect()
    }

    /// Whether there are neither resources nor templates.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty()
    }

    /// The static resources, sorted by URI (`resources/list`).
    pub fn list(&self) -> &[Resource] {
        &self.resources
    }

    /// The resource templates, sorted by URI template (`resources/templates/list`).
    pub fn templates(&self) -> &[ResourceTemplate] {
        &self.templates
    }

    /// The static resource with this URI.
    pub fn get(&self, uri: &str) -> Option<&Resource> {
        self.resources
            .binary_search_by(|resource| resource.uri.as_str().cmp(uri))
            .ok()
            .map(|index| &self.resources[index])
    }

    /// The template with this URI template (as written).
    pub fn template(&self, uri_template: &str) -> Option<&ResourceTemplate> {
        self.templates
            .iter()
            .find(|template| template.uri_template.as_str() == uri_template)
    }

    /// Whether `uri` can be read: a static resource, or a URI some template matches.
    /// (`resources/subscribe` may use it to refuse unknown URIs.)
    pub fn contains(&self, uri: &str) -> bool {
        self.get(uri).is_some()
            || self
                .templates
                .iter()
                .any(|template| template.uri_template.match_uri(uri).is_some())
    }

    /// Reads `uri` (`resources/read`): for an upstream's resource, the first contents its
    /// server answered.
    pub fn read(&self, uri: &str) -> Result<ResourceContents, ResourceError> {
        if let Some(remote) = self.remote_of(uri) {
            let result = forward_read(remote, uri, None)?;
            return result["contents"]
                .get(0)
                .and_then(ResourceContents::from_mcp)
                .ok_or_else(|| ResourceError::Remote {
                    uri: uri.to_owned(),
                    code: -32603,
                    message: format!(
                        "upstream `{}` answered `resources/read` of `{uri}` without contents",
                        remote.owner
                    ),
                });
        }
        if let Some(resource) = self.get(uri) {
            return Ok(resource.contents());
        }
        self.templates
            .iter()
            .find_map(|template| template.read(uri))
            .ok_or_else(|| self.unknown(uri))
    }

    /// The `resources/read` result for `uri`: an upstream's as its server gave it (every
    /// contents entry, `_meta` and all), the folder's own as [`ResourceContents::to_read_result`].
    /// An upstream's server is asked through `client` for what it asks meanwhile.
    pub fn read_result(
        &self,
        uri: &str,
        client: Option<&Arc<dyn ClientBridge>>,
    ) -> Result<Value, ResourceError> {
        match self.remote_of(uri) {
            Some(remote) => forward_read(remote, uri, client),
            None => self.read(uri).map(|contents| contents.to_read_result()),
        }
    }

    /// Asks the upstream that reads `uri` to report its changes (`subscribe`) or to stop
    /// (`!subscribe`); nothing for a resource held here, whose changes a reload finds.
    ///
    /// # Errors
    ///
    /// The upstream's error, or why it could not be reached.
    pub fn forward_subscription(&self, uri: &str, subscribe: bool) -> Result<(), ForwardError> {
        match self.remote_of(uri) {
            Some(remote) if subscribe => remote.forward().subscribe(uri),
            Some(remote) => remote.forward().unsubscribe(uri),
            None => Ok(()),
        }
    }

    /// Whether `uri` is read from an upstream rather than held here.
    pub fn is_forwarded(&self, uri: &str) -> bool {
        self.remote_of(uri).is_some()
    }

    /// The upstream that reads `uri`: the one of its static resource, else of the first
    /// template that matches it, when that is an upstream's. A static resource of the
    /// folder's own wins over an upstream's template, as it does over the folder's own.
    fn remote_of(&self, uri: &str) -> Option<&Remote> {
        if let Some(resource) = self.get(uri) {
            return resource.info.remote.as_ref();
        }
        self.templates
            .iter()
            .find(|template| template.uri_template.match_uri(uri).is_some())?
            .info
            .remote
            .as_ref()
    }

    fn unknown(&self, uri: &str) -> ResourceError {
        ResourceError::UnknownResource {
            uri: uri.to_owned(),
            suggestions: did_you_mean(
                uri,
                self.resources.iter().map(|resource| resource.uri.as_str()),
            )
            .into_iter()
            .map(str::to_owned)
            .collect(),
        }
    }

    /// Completion values for a template variable (`completion/complete` with a
    /// `ref/resource` reference, whose `uri` is the URI template).
    pub fn complete(
        &self,
        uri_template: &str,
        variable: &str,
        prefix: &str,
    ) -> Result<Vec<String>, ResourceError> {
        match self.template(uri_template) {
            Some(ResourceTemplate {
                info:
                    ResourceInfo {
                        remote: Some(remote),
                        ..
                    },
                ..
            }) => Ok(remote
                .forward()
                .complete(CompletionRef::Resource(&remote.name), variable, prefix)
                .unwrap_or_default()),
            Some(template) => Ok(template.complete(variable, prefix)),
            // A static resource has no variables: nothing to complete, not an error.
            None if self.get(uri_template).is_some() => Ok(Vec::new()),
            None => Err(ResourceError::UnknownTemplate {
                uri_template: uri_template.to_owned(),
            }),
        }
    }
}

/// `resources/read` of `uri` at `remote`'s server.
fn forward_read(
    remote: &Remote,
    uri: &str,
    client: Option<&Arc<dyn ClientBridge>>,
) -> Result<Value, ResourceError> {
    remote
        .forward()
        .read_resource(uri, client)
        .map_err(|error| ResourceError::Remote {
            uri: uri.to_owned(),
            code: error.code,
            message: error.message,
        })
}

impl ResourceReader for Resources {
    fn read(&self, uri: &str) -> Result<ResourceContents, ResourceError> {
        Resources::read(self, uri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::scan;

    fn info(name: &str, mime: &str) -> ResourceInfo {
        ResourceInfo {
            name: name.into(),
            mime_type: Some(mime.into()),
            ..ResourceInfo::default()
        }
    }

    fn resources() -> Resources {
        let text = Resource {
            uri: "test://static-text".into(),
            info: info("static-text", "text/plain"),
            body: ResourceBody::Text("hello".into()),
            size: Some(5),
        };
        let template = ResourceTemplate {
            uri_template: UriTemplate::parse("test://template/{id}/data").unwrap(),
            info: info("template", "application/json"),
            text: TextTemplate::from_tokens(scan(r#"{"id":"{{id}}"}"#).unwrap()),
            escape: Escape::Json,
            values: BTreeMap::from([("id".into(), vec!["123".into(), "124".into(), "9".into()])]),
        };
        Resources::new(vec![text], vec![template])
    }

    #[test]
    fn reads_static_resources_and_fills_templates() {
        let resources = resources();
        assert_eq!(
            resources.read("test://static-text").unwrap().to_mcp(),
            json!({"uri": "test://static-text", "mimeType": "text/plain", "text": "hello"})
        );
        let contents = resources.read("test://template/123/data").unwrap();
        assert_eq!(contents.uri, "test://template/123/data");
        assert_eq!(contents.body, ResourceBody::Text(r#"{"id":"123"}"#.into()));
        let escaped = resources.read("test://template/a%22b/data").unwrap();
        assert_eq!(escaped.body, ResourceBody::Text(r#"{"id":"a\"b"}"#.into()));
    }

    #[test]
    fn unknown_uri_is_not_found_with_a_suggestion() {
        let error = resources().read("test://static-txt").unwrap_err();
        assert_eq!(error.json_rpc_code(), RESOURCE_NOT_FOUND);
        assert_eq!(
            error.to_string(),
            "unknown resource `test://static-txt`; did you mean `test://static-text`?"
        );
    }

    #[test]
    fn lists_in_mcp_shape() {
        let resources = resources();
        assert_eq!(
            resources.list()[0].to_mcp(),
            json!({"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain", "size": 5})
        );
        assert_eq!(
            resources.templates()[0].to_mcp(),
            json!({"uriTemplate": "test://template/{id}/data", "name": "template", "mimeType": "application/json"})
        );
        assert!(resources.contains("test://template/7/data"));
        assert!(!resources.contains("test://template/7"));
    }

    #[test]
    fn completes_template_variables_by_prefix() {
        let resources = resources();
        assert_eq!(
            resources
                .complete("test://template/{id}/data", "id", "12")
                .unwrap(),
            ["123", "124"]
        );
        assert!(
            resources
                .complete("test://static-text", "x", "")
                .unwrap()
                .is_empty()
        );
        assert!(matches!(
            resources.complete("test://nope/{x}", "x", ""),
            Err(ResourceError::UnknownTemplate { .. })
        ));
    }

    #[test]
    fn escaping_follows_the_mime_type() {
        assert_eq!(
            Escape::for_mime_type(Some("application/json")),
            Escape::Json
        );
        assert_eq!(Escape::for_mime_type(Some(MCP_APP_MIME_TYPE)), Escape::Html);
        assert_eq!(Escape::for_mime_type(Some("text/plain")), Escape::None);
        assert_eq!(
            Escape::Html.apply("<a & 'b'>"),
            "&lt;a &amp; &#39;b&#39;&gt;"
        );
    }
}
