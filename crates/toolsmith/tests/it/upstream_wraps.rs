//! Wrapping an upstream tool, and per-tool options sent upstream ("tool
//! transformation" and "per-tool `timeout` and `[options]`"): an outer folder whose
//! `[upstream.inner]` is a second, real `toolsmith serve`, and a manifest with
//! `upstream = "inner"` + `tool = "create_issue"` that publishes it under its own name,
//! description and parameters. The options test uses a small server written with the
//! official TypeScript SDK (from `.ci/upstreams`), which answers with the `_meta` it got.

use serde_json::{Value, json};

use crate::mcp_client::{McpClient, text};
use crate::toolsmith;

const ISSUES: &str = r#"def create_issue(owner: str, repo: str, title: str, labels: list[str] = []) -> dict:
    """Creates an issue in any repository.

    Args:
        owner: Who owns the repository.
        repo: The repository.
        title: The issue's title.
        labels: Labels to put on it.
    """
    return {"owner": owner, "repo": repo, "title": title, "labels": labels}

mcp.tool(create_issue)
"#;

/// Files bugs in one repository only: `owner` and `repo` hidden, `title` renamed, `labels`
/// defaulted.
const FILE_BUG: &str = r#"upstream = "inner"
tool = "create_issue"
description = "Files a bug in the acme/widgets tracker. Use when the user reports something broken in widgets."
read_only = false
options = { tracker = "acme" }

[params.owner]
hide = true
default = "acme"

[params.repo]
hide = true
default = "widgets"

[params.title]
name = "summary"
description = "One line saying what is broken."

[params.labels]
default = ["bug"]
"#;

fn outer_folder(inner_dir: &std::path::Path, files: &[(&str, &str)]) -> tempfile::TempDir {
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    let config = format!(
        "[upstream.inner]\ncommand = [{:?}, \"serve\", {:?}]\n",
        binary.display().to_string(),
        inner_dir.display().to_string()
    );
    let mut all = vec![("toolsmith.toml", config.as_str())];
    all.extend_from_slice(files);
    crate::folder(&all)
}

fn property_names(tool: &rmcp::model::Tool) -> Vec<String> {
    tool.input_schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn a_manifest_wraps_an_upstream_tool_with_its_own_name_and_parameters() {
    let inner = crate::folder(&[("create_issue.star", ISSUES)]);
    let outer = outer_folder(inner.path(), &[("file_bug.toml", FILE_BUG)]);
    let client = McpClient::stdio(&[outer.path().to_str().unwrap()]);
    let tools = client.tools();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        ["file_bug", "inner_create_issue"],
        "the wrapped tool next to the original, which stays listed without `replace`"
    );
    let bug = &tools[0];
    assert_eq!(
        bug.description.as_deref(),
        Some(
            "Files a bug in the acme/widgets tracker. Use when the user reports something broken in widgets."
        )
    );
    assert_eq!(
        property_names(bug),
        ["summary", "labels"],
        "hidden parameters are not published"
    );
    assert_eq!(bug.input_schema["required"], json!(["summary"]));
    assert_eq!(
        bug.input_schema["properties"]["summary"]["description"],
        "One line saying what is broken."
    );
    assert_eq!(
        bug.input_schema["properties"]["labels"]["default"],
        json!(["bug"])
    );
    assert!(
        bug.output_schema.is_some(),
        "the upstream's output schema stays"
    );

    let filed = client.call("file_bug", &json!({"summary": "it broke"}));
    assert_eq!(filed.is_error, Some(false), "{}", text(&filed));
    assert_eq!(
        filed.structured_content,
        Some(json!({"owner": "acme", "repo": "widgets", "title": "it broke", "labels": ["bug"]})),
        "renamed back, defaulted, and the hidden values sent"
    );
    let labelled = client.call("file_bug", &json!({"summary": "again", "labels": ["p1"]}));
    assert_eq!(
        labelled.structured_content,
        Some(json!({"owner": "acme", "repo": "widgets", "title": "again", "labels": ["p1"]})),
        "a given argument wins over the default"
    );
    // The upstream's schema allows no other properties, so a hidden one is refused like
    // any unknown argument, before anything is sent.
    let sneaky = client.call("file_bug", &json!({"summary": "x", "owner": "evil"}));
    assert_eq!(sneaky.is_error, Some(true), "{sneaky:?}");
    assert!(text(&sneaky).contains("owner"), "{}", text(&sneaky));
    // Arguments are checked against the published schema before anything is sent.
    let missing = client.call("file_bug", &json!({"title": "old name"}));
    assert_eq!(missing.is_error, Some(true));
    assert!(text(&missing).contains("summary"), "{}", text(&missing));
}

#[test]
fn replace_serves_the_wrapped_tool_in_place_of_the_original() {
    let inner = crate::folder(&[("create_issue.star", ISSUES)]);
    // A top-level key, so before the manifest's tables.
    let manifest = format!("replace = true\n{FILE_BUG}");
    let outer = outer_folder(inner.path(), &[("file_bug.toml", &manifest)]);
    let client = McpClient::stdio(&[outer.path().to_str().unwrap()]);
    assert_eq!(client.tool_names(), ["file_bug"]);
}

#[test]
fn a_missing_upstream_or_tool_is_a_diagnostic_naming_it_and_the_rest_serves() {
    let inner = crate::folder(&[("create_issue.star", ISSUES)]);
    let outer = outer_folder(
        inner.path(),
        &[
            (
                "typo_tool.toml",
                "upstream = \"inner\"\ntool = \"create_isue\"\ndescription = \"Files an issue.\"\n",
            ),
            (
                "typo_upstream.toml",
                "upstream = \"iner\"\ntool = \"create_issue\"\ndescription = \"Files an issue.\"\n",
            ),
            (
                "bad_param.toml",
                "upstream = \"inner\"\ntool = \"create_issue\"\n\n[params.titel]\nname = \"summary\"\n",
            ),
        ],
    );
    let output = toolsmith()
        .args(["check", "--format", "json", outer.path().to_str().unwrap()])
        .output()
        .unwrap();
    let findings: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&output.stderr)));
    let found = |needle: &str| {
        findings
            .as_array()
            .unwrap()
            .iter()
            .find(|finding| finding["message"].as_str().unwrap().contains(needle))
            .cloned()
            .unwrap_or_else(|| panic!("no finding with {needle:?} in {findings:#}"))
    };
    let tool = found("lists no tool `create_isue`");
    assert_eq!(tool["help"], "did you mean `create_issue`?");
    let upstream = found("no upstream `iner`");
    assert_eq!(upstream["help"], "did you mean `inner`?");
    let param = found("has no parameter `titel`");
    assert_eq!(param["help"], "did you mean `title`?");
    // The folder's other tools still serve.
    let client = McpClient::stdio(&[outer.path().to_str().unwrap()]);
    assert_eq!(client.tool_names(), ["inner_create_issue"]);
}

/// A server made with the official TypeScript SDK whose one tool answers with the
/// arguments and the `_meta` of its request.
const META_SERVER: &str = r#"
const sdk = process.argv[2] + "/node_modules/@modelcontextprotocol/sdk/dist/cjs";
const { Server } = require(sdk + "/server/index.js");
const { StdioServerTransport } = require(sdk + "/server/stdio.js");
const { ListToolsRequestSchema, CallToolRequestSchema } = require(sdk + "/types.js");
const server = new Server({ name: "meta", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{
    name: "show",
    description: "Answers with the arguments and the _meta of the call.",
    inputSchema: { type: "object", properties: { text: { type: "string" } } },
  }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: "text", text: "shown" }],
  structuredContent: { arguments: request.params.arguments, meta: request.params._meta ?? {} },
}));
server.connect(new StdioServerTransport());
"#;

#[test]
#[ignore = "needs the TypeScript SDK: npm ci --prefix .ci/upstreams (CI runs it: cargo test -- --include-ignored)"]
fn per_tool_options_reach_the_upstream_in_the_request_meta() {
    // `.ci/upstreams`, whose `node_modules` holds the SDK.
    let upstreams = crate::typescript_sdk().parent().unwrap().to_path_buf();
    // The program runs in the tools folder; its script sits in a private folder.
    let config = format!(
        "[upstream.meta]\ncommand = [\"node\", \"_upstream/meta_server.cjs\", {:?}]\n\n[options.meta_show]\nunits = \"metric\"\n",
        upstreams.display().to_string()
    );
    let outer = crate::folder(&[
        ("toolsmith.toml", &config),
        ("_upstream/meta_server.cjs", META_SERVER),
        (
            "show_more.toml",
            "upstream = \"meta\"\ntool = \"show\"\ndescription = \"Shows more.\"\noptions = { verbose = true }\n\n[params.text]\ndefault = \"filled\"\n",
        ),
    ]);
    let client = McpClient::stdio(&[outer.path().to_str().unwrap()]);
    let shown = client.call("meta_show", &json!({"text": "hi"}));
    assert_eq!(shown.is_error, Some(false), "{}", text(&shown));
    let shown = shown.structured_content.unwrap();
    assert_eq!(shown["arguments"], json!({"text": "hi"}));
    assert_eq!(
        shown["meta"]["toolsmith/options"],
        json!({"units": "metric"})
    );
    // A wrapping manifest's own options, and its defaults.
    let more = client
        .call("show_more", &json!({}))
        .structured_content
        .unwrap();
    assert_eq!(more["arguments"], json!({"text": "filled"}));
    assert_eq!(more["meta"]["toolsmith/options"], json!({"verbose": true}));
    // No options, no key.
    let outer_plain = crate::folder(&[
        (
            "toolsmith.toml",
            &format!(
                "[upstream.meta]\ncommand = [\"node\", \"_upstream/meta_server.cjs\", {:?}]\n",
                upstreams.display().to_string()
            ),
        ),
        ("_upstream/meta_server.cjs", META_SERVER),
    ]);
    let client = McpClient::stdio(&[outer_plain.path().to_str().unwrap()]);
    let plain = client
        .call("meta_show", &json!({}))
        .structured_content
        .unwrap();
    assert!(plain["meta"].get("toolsmith/options").is_none(), "{plain}");
}
