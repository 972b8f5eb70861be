//! Prompts and resources of a folder written to a temporary directory.

use std::path::Path;

use serde_json::{Value, json};
use toolsmith_folder::ToolFolder;
use toolsmith_model::{
    JsonObject, MCP_APP_MIME_TYPE, ResourceBody, ResourceError, ResourceTemplate,
};

use crate::arguments;

/// A 1x1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x78, 0x91, 0x25, 0xfe,
    0x1f, 0x00, 0x06, 0x10, 0x02, 0x69, 0xad, 0x8f, 0x85, 0x9c, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

fn write(root: &Path, path: &str, contents: impl AsRef<[u8]>) {
    let path = root.join(path);
    let parent = path.parent().expect("a file in the folder has a parent");
    std::fs::create_dir_all(parent).expect("the temporary folder is writable");
    std::fs::write(path, contents).expect("the temporary folder is writable");
}

/// A folder with prompts and resources of every kind, one broken prompt and one broken
/// sidecar.
fn folder() -> (tempfile::TempDir, ToolFolder) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path();
    write(
        root,
        "toolsmith.toml",
        "[server]\nname = \"Demo Server\"\n\n[resources.\"notes.md\"]\ndescription = \"Team notes\"\n",
    );
    write(root, "icons/pixel.png", PNG);
    write(root, "resources/notes.md", "# Notes\n");
    write(root, "resources/pixel.png", PNG);
    write(root, "resources/greeting.txt", "Hello from a resource.");
    write(
        root,
        "resources/greeting.txt.toml",
        "uri = \"demo://greeting\"\nname = \"greeting\"\ntitle = \"Greeting\"\ndescription = \"A greeting\"\n",
    );
    write(root, "resources/users/{id}.json", "{\"id\": \"{{id}}\"}");
    write(
        root,
        "resources/users/{id}.json.toml",
        "description = \"One user\"\nvalues = { id = [\"alice\", \"albert\", \"bob\"] }\n",
    );
    write(
        root,
        "resources/ui/dashboard.html",
        "<html><body>Dashboard</body></html>",
    );
    write(
        root,
        "resources/ui/dashboard.html.toml",
        "description = \"The dashboard app\"\n\n[ui]\nprefers_border = true\npermissions = [\"clipboard_write\"]\n\n[ui.csp]\nconnect_domains = [\"https://api.example.com\"]\n",
    );
    write(root, "resources/broken.txt", "never served");
    write(root, "resources/broken.txt.toml", "uri = \"demo://broken\n");
    write(
        root,
        "prompts/greet.md",
        "---\ndescription: Greet someone.\narguments:\n  - name: who\n    required: true\n    values: [Ada, Alan, Grace]\n---\nSay hello to {{who}}.\n",
    );
    write(
        root,
        "prompts/show.md",
        "---\nname: show_and_tell\ndescription: Show an image and a resource.\n---\n{{image:icons/pixel.png}}\nWhat is this?\n{{resource:demo://greeting}}\n<!-- assistant -->\nA pixel and a greeting.\n",
    );
    write(
        root,
        "prompts/broken.md",
        "---\ndescription: Broken on purpose.\narguments:\n  - name: topic\n---\nWrite about {{topic}}\nand about {{subject}}.\n",
    );
    write(
        root,
        "prompts/_draft.md",
        "ignored: starts with an underscore",
    );
    let folder = ToolFolder::load(root).expect("the temporary folder loads");
    (dir, folder)
}

#[test]
fn prompts_load_and_a_broken_one_is_a_located_diagnostic() {
    let (_dir, folder) = folder();
    let names: Vec<&str> = folder
        .prompts()
        .list()
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(names, ["greet", "show_and_tell"]);

    let broken: Vec<_> = folder
        .catalog()
        .diagnostics()
        .iter()
        .filter(|d| d.location.path.ends_with("prompts/broken.md"))
        .collect();
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert_eq!(broken[0].rule, "unknown-placeholder");
    assert_eq!(
        (broken[0].location.line, broken[0].location.column),
        (7, 11)
    );
    assert!(folder.has_errors());
}

#[test]
fn prompts_render_with_arguments_media_and_resources() {
    let (_dir, folder) = folder();
    let prompts = folder.prompts();
    let resources = folder.resources().as_ref();

    let greet = prompts
        .get_result("greet", &arguments(json!({"who": "Ada"})), resources, None)
        .unwrap();
    assert_eq!(
        greet,
        json!({
            "description": "Greet someone.",
            "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello to Ada."}}]
        })
    );
    let missing = prompts
        .get_result("greet", &JsonObject::new(), resources, None)
        .unwrap_err();
    assert_eq!(missing.to_string(), "prompt `greet` needs argument `who`");

    let show = prompts
        .get_result("show_and_tell", &JsonObject::new(), resources, None)
        .unwrap();
    let messages = show["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[0]["content"]["type"], "image");
    assert_eq!(messages[0]["content"]["mimeType"], "image/png");
    assert_eq!(
        messages[0]["content"]["data"],
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mN4kSX+HwAGEAJprY+FnAAAAABJRU5ErkJggg=="
    );
    assert_eq!(
        messages[1]["content"],
        json!({"type": "text", "text": "What is this?"})
    );
    assert_eq!(
        messages[2]["content"],
        json!({"type": "resource", "resource": {"uri": "demo://greeting", "mimeType": "text/plain", "text": "Hello from a resource."}})
    );
    assert_eq!(messages[3]["role"], "assistant");

    assert_eq!(
        prompts.complete("greet", "who", "a").unwrap(),
        ["Ada", "Alan"]
    );
    assert!(prompts.complete("gret", "who", "").is_err());
}

#[test]
fn resources_get_uris_mime_types_and_contents() {
    let (_dir, folder) = folder();
    let resources = folder.resources();
    let uris: Vec<&str> = resources.list().iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "demo://greeting",
            "resource://demo-server/notes.md",
            "resource://demo-server/pixel.png",
            "ui://demo-server/dashboard.html",
        ]
    );

    let notes = resources.get("resource://demo-server/notes.md").unwrap();
    assert_eq!(
        notes.to_mcp(),
        json!({"uri": "resource://demo-server/notes.md", "name": "notes.md", "description": "Team notes", "mimeType": "text/markdown", "size": 8})
    );

    let pixel = resources.read("resource://demo-server/pixel.png").unwrap();
    assert_eq!(pixel.mime_type.as_deref(), Some("image/png"));
    assert!(matches!(&pixel.body, ResourceBody::Blob(blob) if blob.starts_with("iVBORw0KGgo")));

    let dashboard = resources
        .read("ui://demo-server/dashboard.html")
        .unwrap()
        .to_mcp();
    assert_eq!(dashboard["mimeType"], MCP_APP_MIME_TYPE);
    assert_eq!(
        dashboard["_meta"]["ui"],
        json!({"prefersBorder": true, "permissions": {"clipboardWrite": {}}, "csp": {"connectDomains": ["https://api.example.com"]}})
    );

    let unknown = resources.read("demo://greetings").unwrap_err();
    assert!(matches!(unknown, ResourceError::UnknownResource { .. }));
    assert_eq!(
        unknown.to_string(),
        "unknown resource `demo://greetings`; did you mean `demo://greeting`?"
    );
}

#[test]
fn templates_fill_variables_and_complete_them() {
    let (_dir, folder) = folder();
    let resources = folder.resources();
    let templates: Vec<Value> = resources
        .templates()
        .iter()
        .map(ResourceTemplate::to_mcp)
        .collect();
    assert_eq!(
        templates,
        [
            json!({"uriTemplate": "resource://demo-server/users/{id}.json", "name": "users/{id}.json", "description": "One user", "mimeType": "application/json"})
        ]
    );
    let user = resources
        .read("resource://demo-server/users/alice.json")
        .unwrap();
    assert_eq!(user.body, ResourceBody::Text("{\"id\": \"alice\"}".into()));
    assert_eq!(
        resources
            .complete("resource://demo-server/users/{id}.json", "id", "al")
            .unwrap(),
        ["alice", "albert"]
    );
}

#[test]
fn a_broken_sidecar_skips_only_its_resource() {
    let (_dir, folder) = folder();
    let broken: Vec<_> = folder
        .catalog()
        .diagnostics()
        .iter()
        .filter(|d| d.location.path.ends_with("broken.txt.toml"))
        .collect();
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert_eq!(broken[0].rule, "invalid-resource");
    assert_eq!(broken[0].location.line, 1);
    assert!(
        !folder
            .resources()
            .list()
            .iter()
            .any(|r| r.uri.contains("broken"))
    );
}
