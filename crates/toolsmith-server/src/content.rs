//! Prompts, resources and skills (MCP spec, server/prompts and server/resources; the
//! `io.modelcontextprotocol/skills` extension) and argument completion: thin functions from
//! rmcp's request types to the model's [`Prompts`] and [`Resources`], and back.
//!
//! The `prompts/list`, `resources/list` and `resources/templates/list` entries are converted
//! once per snapshot (through serde, from exactly what the model's `to_mcp` publishes);
//! `prompts/get`, `resources/read` and `completion/complete` render on demand.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ErrorCode, GetPromptResult,
    GetSkillResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListSkillsResult, Prompt, ReadResourceResult, Reference, Resource, ResourceTemplate,
    ResultType, Skill,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolsmith_model::{ClientBridge, JsonObject, PromptError, Prompts, ResourceError, Resources};

/// The most values one `completion/complete` answer holds (MCP spec, utilities/completion).
pub(crate) const MAX_COMPLETIONS: usize = 100;

/// A server's prompts and resources with their list entries converted to rmcp's types,
/// swapped as one unit on reload.
pub(crate) struct Content {
    pub(crate) prompts: Arc<Prompts>,
    pub(crate) resources: Arc<Resources>,
    prompt_list: Vec<Prompt>,
    resource_list: Vec<Resource>,
    template_list: Vec<ResourceTemplate>,
    skill_list: Vec<Skill>,
}

impl Content {
    /// Converts every list entry once.
    pub(crate) fn new(prompts: Arc<Prompts>, resources: Arc<Resources>) -> Self {
        let prompt_list = convert_all(prompts.list().iter().map(|p| (&p.name, p.to_mcp())));
        let resource_list = convert_all(resources.list().iter().map(|r| (&r.uri, r.to_mcp())));
        let template_list = convert_all(
            resources
                .templates()
                .iter()
                .map(|t| (&t.info.name, t.to_mcp())),
        );
        let skill_list = convert_all(resources.skills().iter().map(|s| (&s.name, s.to_mcp())));
        Self {
            prompts,
            resources,
            prompt_list,
            resource_list,
            template_list,
            skill_list,
        }
    }

    /// No prompts and no resources.
    pub(crate) fn empty() -> Self {
        Self::new(Arc::default(), Arc::default())
    }

    /// Every entry of `prompts/list`, `resources/list` and `resources/templates/list`.
    pub(crate) fn lists(&self) -> (&[Prompt], &[Resource], &[ResourceTemplate]) {
        (&self.prompt_list, &self.resource_list, &self.template_list)
    }

    /// One page of `prompts/list`.
    pub(crate) fn list_prompts(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<ListPromptsResult, ErrorData> {
        let (items, next) = page(&self.prompt_list, cursor, size, "prompts")?;
        let mut result = ListPromptsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    /// One page of `resources/list`.
    pub(crate) fn list_resources(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (items, next) = page(&self.resource_list, cursor, size, "resources")?;
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    /// One page of `resources/templates/list`.
    pub(crate) fn list_resource_templates(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let (items, next) = page(&self.template_list, cursor, size, "templates")?;
        let mut result = ListResourceTemplatesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    /// Every entry of `skills/list`.
    pub(crate) fn skills(&self) -> &[Skill] {
        &self.skill_list
    }

    /// One page of `skills/list`.
    pub(crate) fn list_skills(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<ListSkillsResult, ErrorData> {
        let (items, next) = page(&self.skill_list, cursor, size, "skills")?;
        let mut result = ListSkillsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    /// `skills/get`: the skill whose `SKILL.md` is at `uri`; another URI is `-32002`
    /// (resource not found), as the extension answers a skill it does not serve.
    pub(crate) fn get_skill(&self, uri: &str) -> Result<GetSkillResult, ErrorData> {
        self.skill_list
            .iter()
            .find(|skill| skill.uri == uri)
            .map(|skill| GetSkillResult::new(skill.clone()))
            .ok_or_else(|| {
                ErrorData::new(
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("no skill is served at `{uri}`"),
                    Some(serde_json::json!({ "uri": uri })),
                )
            })
    }

    /// `prompts/get`: the prompt rendered with `arguments`; its errors carry
    /// [`PromptError::json_rpc_code`].
    /// An upstream's prompt asks `client` what its server asks meanwhile.
    pub(crate) fn get_prompt(
        &self,
        name: &str,
        arguments: &JsonObject,
        client: Option<&Arc<dyn ClientBridge>>,
    ) -> Result<GetPromptResult, ErrorData> {
        let result = self
            .prompts
            .get_result(name, arguments, &*self.resources, client)
            .map_err(|error| prompt_error(&error))?;
        let mut result: GetPromptResult = from_json(result)?;
        // Required from 2026-07-28 on; rmcp clears it for clients of older versions.
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result)
    }

    /// `resources/read`: an unknown URI is `-32002` (resource not found). An upstream's
    /// resource asks `client` what its server asks meanwhile.
    pub(crate) fn read_resource(
        &self,
        uri: &str,
        client: Option<&Arc<dyn ClientBridge>>,
    ) -> Result<ReadResourceResult, ErrorData> {
        let result = self
            .resources
            .read_result(uri, client)
            .map_err(|error| resource_error(&error))?;
        let mut result: ReadResourceResult = from_json(result)?;
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result)
    }

    /// Whether answering about `name` (a prompt) or `uri` (a resource) asks an upstream,
    /// which blocks the thread until it answers.
    pub(crate) fn forwards(&self, request: Forwarded<'_>) -> bool {
        match request {
            Forwarded::Prompt(name) => self
                .prompts
                .get(name)
                .is_ok_and(|prompt| prompt.remote.is_some()),
            Forwarded::Resource(uri) => self.resources.is_forwarded(uri),
            Forwarded::Completion(reference) => match reference {
                Reference::Prompt(prompt) => self.forwards(Forwarded::Prompt(&prompt.name)),
                Reference::Resource(template) => self
                    .resources
                    .template(&template.uri)
                    .is_some_and(|template| template.info.remote.is_some()),
                _ => false,
            },
        }
    }

    /// Whether `uri` names a resource (for `resources/subscribe`); else the -32002 error.
    pub(crate) fn check_uri(&self, uri: &str) -> Result<(), ErrorData> {
        if self.resources.contains(uri) {
            Ok(())
        } else {
            // The same error (and suggestions) as reading it.
            self.resources
                .read(uri)
                .map(drop)
                .map_err(|error| resource_error(&error))
        }
    }

    /// Forwards a subscription to `uri` (or its end) to the upstream that reads it;
    /// nothing for the folder's own resources.
    pub(crate) fn forward_subscription(&self, uri: &str, subscribe: bool) -> Result<(), ErrorData> {
        self.resources
            .forward_subscription(uri, subscribe)
            .map_err(|error| ErrorData::new(code(error.code), error.message, None))
    }

    /// `completion/complete` for a prompt argument or a resource template variable: at
    /// most [`MAX_COMPLETIONS`] values, with `total` and `hasMore`.
    pub(crate) fn complete(
        &self,
        request: &CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let argument = &request.argument;
        let values = match &request.r#ref {
            Reference::Prompt(prompt) => self
                .prompts
                .complete(&prompt.name, &argument.name, &argument.value)
                .map_err(|error| prompt_error(&error))?,
            Reference::Resource(template) => self
                .resources
                .complete(&template.uri, &argument.name, &argument.value)
                .map_err(|error| resource_error(&error))?,
            _ => {
                return Err(ErrorData::invalid_params(
                    "completion/complete takes a `ref/prompt` or `ref/resource` reference",
                    None,
                ));
            }
        };
        Ok(CompleteResult::new(completion(values)))
    }
}

/// A request [`Content::forwards`] may send to an upstream.
#[derive(Clone, Copy)]
pub(crate) enum Forwarded<'a> {
    /// `prompts/get` of this prompt.
    Prompt(&'a str),
    /// `resources/read` of this URI.
    Resource(&'a str),
    /// `completion/complete` for this reference.
    Completion(&'a Reference),
}

/// Caps `values` at [`MAX_COMPLETIONS`], saying how many there were.
fn completion(mut values: Vec<String>) -> CompletionInfo {
    let total = u32::try_from(values.len()).ok();
    let has_more = values.len() > MAX_COMPLETIONS;
    values.truncate(MAX_COMPLETIONS);
    CompletionInfo::with_pagination(values, total, has_more).unwrap_or_default()
}

fn prompt_error(error: &PromptError) -> ErrorData {
    ErrorData::new(code(error.json_rpc_code()), error.to_string(), None)
}

/// A resource error; a missing resource's error data names its URI (SEP-2164).
fn resource_error(error: &ResourceError) -> ErrorData {
    let data = match error {
        ResourceError::UnknownResource { uri, .. } => Some(serde_json::json!({ "uri": uri })),
        ResourceError::UnknownTemplate { .. } | ResourceError::Remote { .. } => None,
    };
    ErrorData::new(code(error.json_rpc_code()), error.to_string(), data)
}

fn code(code: i64) -> ErrorCode {
    ErrorCode(i32::try_from(code).unwrap_or(ErrorCode::INTERNAL_ERROR.0))
}

/// A model result as an rmcp one; the model builds exactly the MCP shape, so a failure is
/// a bug, reported as an internal error rather than a panic.
fn from_json<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|error| {
        ErrorData::internal_error(format!("cannot convert the result: {error}"), None)
    })
}

/// Converts list entries, leaving out (with a warning) one rmcp cannot represent.
fn convert_all<'a, T: DeserializeOwned>(
    entries: impl Iterator<Item = (&'a String, Value)>,
) -> Vec<T> {
    entries
        .filter_map(|(name, value)| match serde_json::from_value(value) {
            Ok(entry) => Some(entry),
            Err(error) => {
                tracing::warn!(%name, %error, "cannot publish this prompt or resource");
                None
            }
        })
        .collect()
}

/// One page of `items` from `cursor`, and the next cursor. Cursors are opaque
/// (`kind:start`, base64); an invalid one is `-32602`.
fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
    kind: &str,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match cursor {
        None => 0,
        Some(cursor) => decode_cursor(cursor, kind)
            .filter(|&start| start <= items.len())
            .ok_or_else(|| ErrorData::invalid_params(format!("invalid cursor `{cursor}`"), None))?,
    };
    let end = start.saturating_add(size.max(1)).min(items.len());
    let next = (end < items.len()).then(|| URL_SAFE_NO_PAD.encode(format!("{kind}:{end}")));
    Ok((items[start..end].to_vec(), next))
}

fn decode_cursor(cursor: &str, kind: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    std::str::from_utf8(&bytes)
        .ok()?
        .strip_prefix(kind)?
        .strip_prefix(':')?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_are_capped_with_has_more() {
        let values: Vec<String> = (0..150).map(|i| format!("v{i}")).collect();
        let info = completion(values);
        assert_eq!(info.values.len(), MAX_COMPLETIONS);
        assert_eq!(info.total, Some(150));
        assert_eq!(info.has_more, Some(true));
        let info = completion(vec!["a".into()]);
        assert_eq!(info.has_more, Some(false));
    }

    #[test]
    fn pages_and_cursors() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, 2, "prompts").unwrap();
        assert_eq!(first, [0, 1]);
        let (second, next) = page(&items, next.as_deref(), 2, "prompts").unwrap();
        assert_eq!(second, [2, 3]);
        let (last, next) = page(&items, next.as_deref(), 2, "prompts").unwrap();
        assert_eq!((last, next), (vec![4], None));
        assert!(page(&items, Some("nope"), 2, "prompts").is_err());
    }

    #[test]
    fn skills_list_in_pages_and_get_by_uri() {
        let skill = |name: &str| toolsmith_model::Skill {
            name: name.to_owned(),
            description: "d".to_owned(),
            frontmatter: serde_json::from_value(
                serde_json::json!({"name": name, "description": "d"}),
            )
            .unwrap(),
            files: vec![toolsmith_model::SkillFile {
                path: "SKILL.md".to_owned(),
                uri: format!("skill://{name}/SKILL.md"),
                size: 1,
                digest: format!("sha256:{}", "0".repeat(64)),
            }],
            source: toolsmith_model::SourceLocation::file("SKILL.md"),
        };
        let resources =
            Resources::default().with_skills(vec![skill("c"), skill("a"), skill("b")], Vec::new());
        let content = Content::new(Arc::default(), Arc::new(resources));
        let first = content.list_skills(None, 2).unwrap();
        let names: Vec<&str> = first
            .skills
            .iter()
            .map(|s| s.frontmatter.name.as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        let rest = content
            .list_skills(first.next_cursor.as_deref(), 2)
            .unwrap();
        assert_eq!(rest.skills[0].frontmatter.name, "c");
        assert!(rest.next_cursor.is_none());
        assert_eq!(
            content.get_skill("skill://b/SKILL.md").unwrap().skill.uri,
            "skill://b/SKILL.md"
        );
        assert_eq!(
            content.get_skill("skill://z/SKILL.md").unwrap_err().code,
            ErrorCode::RESOURCE_NOT_FOUND
        );
    }

    #[test]
    fn unknown_resource_is_not_found() {
        let content = Content::empty();
        let error = content.read_resource("test://nope", None).unwrap_err();
        assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert!(error.message.contains("test://nope"));
        assert_eq!(
            content.check_uri("test://nope").unwrap_err().code,
            ErrorCode::RESOURCE_NOT_FOUND
        );
    }
}
