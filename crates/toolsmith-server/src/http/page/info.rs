//! The page's data, which `GET /api/info` answers as it is: the server's identity and
//! instructions, the protocol versions it speaks, every tool as `tools/list` serves it over
//! HTTP (per-transport overrides applied) plus the discoverable ones, marked, and the
//! prompts, resources and resource templates, as their lists serve them, and the skills
//! (`skills/list`'s entries: name, description, `SKILL.md` URI, files).

use rmcp::model::{ProtocolVersion, SkillResources};
use serde_json::{Value, json};

use crate::state::ServerState;

/// The page's data for a server whose MCP endpoint is at `mcp_url`; with `unscoped_only`
/// (an OAuth endpoint, whose tokens the page does not take) a tool that needs a scope is
/// left out, as `tools/list` leaves it out for a caller without that scope.
pub(super) fn info(
    state: &ServerState,
    mcp_url: &str,
    auth_required: bool,
    unscoped_only: bool,
) -> Value {
    let server = &state.info().server_info;
    let published = state.published();
    let tools: Vec<Value> = published
        .served()
        .filter(|(_, entry)| !unscoped_only || entry.definition().scopes.is_empty())
        .map(|(tool, entry)| (tool, entry.discoverable()))
        .map(|(tool, discoverable)| {
            let mut tool = serde_json::to_value(tool).unwrap_or_default();
            if let Value::Object(members) = &mut tool {
                members.insert("discoverable".into(), discoverable.into());
            }
            tool
        })
        .collect();
    let content = state.content();
    let (prompts, resources, templates) = content.lists();
    let skills: Vec<Value> = content
        .skills()
        .iter()
        .map(|skill| {
            json!({
                "name": skill.frontmatter.name,
                "description": skill.frontmatter.description,
                "uri": skill.uri,
                "files": match &skill.resources {
                    SkillResources::Files(files) => files.len(),
                    _ => 0,
                },
            })
        })
        .collect();
    json!({
        "name": server.name,
        "title": server.title,
        "version": server.version,
        "instructions": state.info().instructions,
        "protocolVersions": ProtocolVersion::KNOWN_VERSIONS,
        "mcpUrl": mcp_url,
        "authRequired": auth_required,
        "tools": tools,
        "prompts": prompts,
        "resources": resources,
        "resourceTemplates": templates,
        "skills": skills,
    })
}
