//! An upstream's prompts, resources and resource templates as Toolsmith publishes them
//! (docs/gateway.md, "Prompts and resources"): prompts under the upstream's prefix like its
//! tools, resources and templates under their own URIs; `prompts/get`, `resources/read` and
//! `completion/complete` forwarded to the upstream through the model's
//! [`Forward`](toolsmith_model::Forward), the answer returned as it came; `resources/subscribe`
//! forwarded once per URI however many sessions subscribe.

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, GetPromptResponse, NumberOrString,
    ProgressToken, ReadResourceRequestParams, ReadResourceResponse, Reference,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, ServiceError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolsmith_model::{
    ClientBridge, CompletionRef, Forward, ForwardError, JsonObject, Prompt, PromptArgument, Remote,
    Resource, ResourceBody, ResourceInfo, ResourceTemplate, SourceLocation, UriTemplate,
};

use crate::connection::{Upstream, offers_subscriptions, wait};

/// What an upstream lists besides its tools, as the JSON it sent (`prompts/list`,
/// `resources/list`, `resources/templates/list`); empty for what it does not offer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    /// Its prompts.
    #[serde(default)]
    pub prompts: Vec<Value>,
    /// Its static resources.
    #[serde(default)]
    pub resources: Vec<Value>,
    /// Its resource templates.
    #[serde(default)]
    pub templates: Vec<Value>,
}

/// Lists what `peer` declared it serves. A list that fails is left empty with a warning:
/// the upstream's tools serve all the same.
pub(crate) async fn list(name: &str, peer: &Peer<RoleClient>) -> Listing {
    let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
    let prompts = capabilities.as_ref().is_some_and(|c| c.prompts.is_some());
    let resources = capabilities.as_ref().is_some_and(|c| c.resources.is_some());
    let mut listing = Listing::default();
    if prompts {
        listing.prompts = json_list(name, "prompts/list", peer.list_all_prompts().await);
    }
    if resources {
        listing.resources = json_list(name, "resources/list", peer.list_all_resources().await);
        listing.templates = json_list(
            name,
            "resources/templates/list",
            peer.list_all_resource_templates().await,
        );
    }
    listing
}

fn json_list<T: Serialize>(
    name: &str,
    method: &str,
    listed: Result<Vec<T>, ServiceError>,
) -> Vec<Value> {
    match listed {
        Ok(items) => items
            .iter()
            .filter_map(|item| serde_json::to_value(item).ok())
            .collect(),
        Err(error) => {
            tracing::warn!(upstream = %name, %error, "`{method}` failed; nothing of it is served");
            Vec::new()
        }
    }
}

/// The forwarding side of one upstream.
struct Forwarder(Arc<Upstream>);

impl Forwarder {
    /// Sends one request on the running connection (started first if need be), trying a
    /// new connection once when the old one turns out to be gone. What the upstream asks
    /// meanwhile (sampling, elicitation, roots) is asked of `client`.
    fn send<T, F, Fut>(
        &self,
        method: &str,
        client: Option<&Arc<dyn ClientBridge>>,
        request: F,
    ) -> Result<T, ForwardError>
    where
        F: Fn(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>> + Send + 'static,
        T: Send + 'static,
    {
        let upstream = &self.0;
        for attempt in 0..2 {
            let connection = upstream.connection().map_err(|error| ForwardError {
                code: -32603,
                message: error.to_string(),
            })?;
            // The upstream's requests of the 2025 protocol do not say which request they
            // belong to: they go to the newest one registered (relay.rs).
            let _asking = client.map(|client| {
                let token = NumberOrString::String(format!("toolsmith:{method}").into());
                connection
                    .relay
                    .register(Arc::clone(client), ProgressToken(token))
            });
            let sent = request(connection.service.peer().clone());
            let answer = wait(async move {
                tokio::time::timeout(toolsmith_model::DEFAULT_TIMEOUT, sent).await
            });
            match answer {
                Ok(Ok(result)) => return Ok(result),
                Ok(Err(ServiceError::McpError(error))) => {
                    return Err(ForwardError {
                        code: i64::from(error.code.0),
                        message: error.message.into_owned(),
                    });
                }
                Ok(Err(error)) => {
                    if connection.service.is_closed() {
                        upstream.discard(&connection);
                        if attempt == 0 {
                            continue;
                        }
                    }
                    return Err(ForwardError {
                        code: -32603,
                        message: upstream
                            .error(format!("could not answer `{method}`: {error}"))
                            .to_string(),
                    });
                }
                Err(_) => {
                    return Err(ForwardError {
                        code: -32603,
                        message: upstream
                            .error(format!(
                                "did not answer `{method}` within {}",
                                toolsmith_model::duration::format(toolsmith_model::DEFAULT_TIMEOUT)
                            ))
                            .to_string(),
                    });
                }
            }
        }
        unreachable!("the second attempt returns")
    }

    fn asked_for_input(&self, method: &str) -> ForwardError {
        ForwardError {
            code: -32603,
            message: self
                .0
                .error(format!(
                    "answered `{method}` by asking for input, which Toolsmith does not forward"
                ))
                .to_string(),
        }
    }
}

impl Forward for Forwarder {
    fn get_prompt(
        &self,
        name: &str,
        arguments: &JsonObject,
        client: Option<&Arc<dyn ClientBridge>>,
    ) -> Result<Value, ForwardError> {
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = Some(arguments.clone());
        let answer = self.send("prompts/get", client, move |peer| {
            let params = params.clone();
            async move { peer.get_prompt_once(params).await }
        })?;
        match answer {
            GetPromptResponse::Complete(result) => json_result(&result),
            _ => Err(self.asked_for_input("prompts/get")),
        }
    }

    fn read_resource(
        &self,
        uri: &str,
        client: Option<&Arc<dyn ClientBridge>>,
    ) -> Result<Value, ForwardError> {
        let params = ReadResourceRequestParams::new(uri);
        let answer = self.send("resources/read", client, move |peer| {
            let params = params.clone();
            async move { peer.read_resource_once(params).await }
        })?;
        match answer {
            ReadResourceResponse::Complete(result) => json_result(&result),
            _ => Err(self.asked_for_input("resources/read")),
        }
    }

    fn complete(
        &self,
        reference: CompletionRef<'_>,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, ForwardError> {
        let reference = match reference {
            CompletionRef::Prompt(name) => Reference::for_prompt(name),
            CompletionRef::Resource(uri_template) => Reference::for_resource(uri_template),
        };
        let params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
        let result = self.send("completion/complete", None, move |peer| {
            let params = params.clone();
            async move { peer.complete(params).await }
        })?;
        Ok(result.completion.values)
    }

    #[expect(
        deprecated,
        reason = "rmcp 3.11 marks resources/subscribe legacy (2026-07-28 has subscriptions/listen); upstreams of the 2025 era use it"
    )]
    fn subscribe(&self, uri: &str) -> Result<(), ForwardError> {
        if !self.0.add_subscription(uri) {
            return Ok(());
        }
        let params = SubscribeRequestParams::new(uri);
        let sent = self.send("resources/subscribe", None, move |peer| {
            let params = params.clone();
            async move {
                if !offers_subscriptions(&peer) {
                    return Ok(());
                }
                peer.subscribe(params).await
            }
        });
        if sent.is_err() {
            self.0.remove_subscription(uri);
        }
        sent
    }

    #[expect(deprecated, reason = "as for subscribe")]
    fn unsubscribe(&self, uri: &str) -> Result<(), ForwardError> {
        if !self.0.remove_subscription(uri) {
            return Ok(());
        }
        let params = UnsubscribeRequestParams::new(uri);
        self.send("resources/unsubscribe", None, move |peer| {
            let params = params.clone();
            async move {
                if !offers_subscriptions(&peer) {
                    return Ok(());
                }
                peer.unsubscribe(params).await
            }
        })
    }
}

/// A result as the JSON the upstream sent, without rmcp's 2026-07-28 discriminator (the
/// server adds its own for its client's protocol version).
fn json_result<T: Serialize>(result: &T) -> Result<Value, ForwardError> {
    let mut json = serde_json::to_value(result).map_err(|error| ForwardError {
        code: -32603,
        message: format!("the upstream's answer cannot be read: {error}"),
    })?;
    if let Some(object) = json.as_object_mut() {
        object.remove("resultType");
    }
    Ok(json)
}

/// What an upstream's listing publishes: its prompts (prefixed), resources and templates,
/// and a message for each entry that cannot be served.
#[derive(Debug, Default)]
pub struct UpstreamContent {
    /// Its prompts, named with its prefix.
    pub prompts: Vec<Prompt>,
    /// Its static resources, under their own URIs.
    pub resources: Vec<Resource>,
    /// Its resource templates, under their own URI templates.
    pub templates: Vec<ResourceTemplate>,
    /// Entries left out, each with why.
    pub problems: Vec<String>,
}

impl UpstreamContent {
    /// What `upstream`'s `listing` publishes, defined at `source` (its `[upstream.NAME]`
    /// table).
    pub fn new(upstream: &Arc<Upstream>, listing: &Listing, source: &SourceLocation) -> Self {
        let spec = upstream.spec();
        let forward: Arc<dyn Forward> = Arc::new(Forwarder(Arc::clone(upstream)));
        let remote = |name: &str| Some(Remote::new(name, &spec.name, Arc::clone(&forward)));
        let mut published = Self::default();
        for entry in &listing.prompts {
            let Some(name) = text(entry, "name") else {
                published
                    .problems
                    .push(format!("a prompt without a name: {entry}"));
                continue;
            };
            let mut prompt = Prompt::new(format!("{}{name}", spec.prefix));
            prompt.title = text(entry, "title");
            prompt.description = text(entry, "description");
            prompt.arguments = entry["arguments"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|argument| {
                    Some(PromptArgument {
                        name: text(argument, "name")?,
                        title: text(argument, "title"),
                        description: text(argument, "description"),
                        required: argument["required"].as_bool().unwrap_or(false),
                        values: Vec::new(),
                    })
                })
                .collect();
            prompt.meta = meta(entry);
            prompt.icons = entry.get("icons").cloned();
            prompt.source = source.clone();
            prompt.remote = remote(&name);
            published.prompts.push(prompt);
        }
        let info = |entry: &Value, key: &str| ResourceInfo {
            name: text(entry, "name").unwrap_or_default(),
            title: text(entry, "title"),
            description: text(entry, "description"),
            mime_type: text(entry, "mimeType"),
            meta: meta(entry),
            annotations: entry.get("annotations").cloned(),
            icons: entry.get("icons").cloned(),
            source: source.clone(),
            remote: text(entry, key).and_then(|name| remote(&name)),
        };
        for entry in &listing.resources {
            let Some(uri) = text(entry, "uri") else {
                published
                    .problems
                    .push(format!("a resource without a URI: {entry}"));
                continue;
            };
            published.resources.push(Resource {
                uri,
                info: info(entry, "uri"),
                body: ResourceBody::Text(String::new()),
                size: entry["size"].as_u64(),
            });
        }
        for entry in &listing.templates {
            let Some(uri_template) = text(entry, "uriTemplate") else {
                published.problems.push(format!(
                    "a resource template without a URI template: {entry}"
                ));
                continue;
            };
            match UriTemplate::parse(&uri_template) {
                Ok(parsed) => published.templates.push(ResourceTemplate {
                    uri_template: parsed,
                    info: info(entry, "uriTemplate"),
                    text: toolsmith_model::template::TextTemplate::default(),
                    escape: toolsmith_model::Escape::None,
                    values: std::collections::BTreeMap::new(),
                }),
                Err(error) => published
                    .problems
                    .push(format!("{error}; its resources are not served")),
            }
        }
        published
    }
}

fn text(entry: &Value, key: &str) -> Option<String> {
    entry.get(key)?.as_str().map(str::to_owned)
}

fn meta(entry: &Value) -> JsonObject {
    entry
        .get("_meta")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn upstream() -> Arc<Upstream> {
        Arc::new(Upstream::new(crate::UpstreamSpec {
            name: "docs".into(),
            prefix: "docs_".into(),
            transport: crate::UpstreamTransport::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: std::collections::BTreeMap::new(),
                oauth: None,
                forward_caller_token: false,
            },
            startup_timeout: std::time::Duration::from_secs(1),
            lazy: true,
        }))
    }

    /// A listed resource's, template's and prompt's `annotations` and `icons` reach
    /// the client as the upstream listed them, through rmcp's types too.
    #[test]
    fn listed_annotations_and_icons_pass_through() {
        let icons = json!([{"src": "https://example.com/doc.png", "mimeType": "image/png", "sizes": ["48x48"]}]);
        let annotations =
            json!({"audience": ["user"], "priority": 0.25, "lastModified": "2026-12-01T00:00:00Z"});
        let listing = Listing {
            prompts: vec![json!({"name": "summary", "icons": icons})],
            resources: vec![json!({
                "uri": "docs://guide", "name": "guide", "mimeType": "text/markdown",
                "annotations": annotations, "icons": icons, "size": 12
            })],
            templates: vec![json!({
                "uriTemplate": "docs://page/{n}", "name": "page",
                "annotations": annotations, "icons": icons
            })],
        };
        let content = UpstreamContent::new(&upstream(), &listing, &SourceLocation::default());
        assert!(content.problems.is_empty(), "{:?}", content.problems);

        let resource = content.resources[0].to_mcp();
        assert_eq!(resource["annotations"], annotations, "{resource}");
        assert_eq!(resource["icons"], icons, "{resource}");
        let through_rmcp: rmcp::model::Resource = serde_json::from_value(resource.clone()).unwrap();
        assert_eq!(serde_json::to_value(through_rmcp).unwrap(), resource);

        let template = content.templates[0].to_mcp();
        assert_eq!(template["annotations"], annotations, "{template}");
        assert_eq!(template["icons"], icons, "{template}");
        let through_rmcp: rmcp::model::ResourceTemplate =
            serde_json::from_value(template.clone()).unwrap();
        assert_eq!(serde_json::to_value(through_rmcp).unwrap(), template);

        let prompt = content.prompts[0].to_mcp();
        assert_eq!(prompt["name"], "docs_summary");
        assert_eq!(prompt["icons"], icons, "{prompt}");
    }
}
