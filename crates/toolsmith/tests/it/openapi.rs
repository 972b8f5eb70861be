//! OpenAPI services as tool sources: a folder whose `[openapi.pets]` is a
//! 3.0 YAML spec and `[openapi.store]` a 3.1 JSON one, both served by a real HTTP server on
//! loopback (`openapi/server.py`), and `[openapi.broken]` a spec that does not parse. Every
//! operation is called through `toolsmith serve` with rmcp's client, over stdio and over
//! HTTP; the server counts requests, so a call the schema rejects is seen to send none.

mod hostile;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::mcp_client::{McpClient, text};
use crate::serve_process::ServeProcess;
use crate::toolsmith;

const SERVER: &str = include_str!("openapi/server.py");
const PETSTORE: &str = include_str!("openapi/petstore.yaml");
const STORE: &str = include_str!("openapi/store.json");

const OWN: &str = r#"def own() -> str:
    """Answers from the folder itself."""
    return "own"

mcp.tool(own)
"#;

/// The API server, killed when dropped.
struct Api {
    child: Child,
    port: u16,
}

impl Api {
    fn start(dir: &std::path::Path) -> Self {
        let script = dir.join("server.py");
        std::fs::write(&script, SERVER).unwrap();
        let mut child = Command::new("python3")
            .arg(&script)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs the test's API server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the server printed `{line}`"));
        Self { child, port }
    }

    /// How many requests reached the server so far.
    fn requests(&self) -> u64 {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .write_all(b"GET /__requests HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (_, body) = response.split_once("\r\n\r\n").unwrap();
        let body: Value = serde_json::from_str(body).unwrap();
        body["count"].as_u64().unwrap()
    }
}

impl Drop for Api {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The tools folder (outside the folder: the server script) and its API server.
struct Fixture {
    dir: tempfile::TempDir,
    api: Api,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let api = Api::start(dir.path());
        let tools = dir.path().join("tools");
        std::fs::create_dir(&tools).unwrap();
        let write = |name: &str, text: &str| std::fs::write(tools.join(name), text).unwrap();
        write("own.star", OWN);
        write("petstore.yaml", PETSTORE);
        write("store.json", &STORE.replace("PORT", &api.port.to_string()));
        write("broken.json", r#"{"openapi": "3.0.0", "paths": {"#);
        write(
            "toolsmith.toml",
            &format!(
                r#"[openapi.pets]
spec = "petstore.yaml"
base_url = "http://127.0.0.1:{port}/"
headers = {{ "X-Api-Key" = "${{PETS_KEY}}" }}

[openapi.store]
spec = "store.json"
prefix = "shop"
include = ["tag:orders", "getHealth"]
exclude = ["/orders/purge*"]

[openapi.broken]
spec = "broken.json"

[profiles.orders]
tools = ["tag:orders"]
"#,
                port = api.port
            ),
        );
        Self { dir, api }
    }

    fn tools(&self) -> String {
        self.dir.path().join("tools").display().to_string()
    }

    fn serve(&self, extra: &[&str]) -> McpClient {
        let mut command = toolsmith();
        command
            .arg("serve")
            .arg(self.tools())
            .args(extra)
            .env("PETS_KEY", "secret");
        McpClient::spawn(command)
    }
}

const SERVED: &[&str] = &[
    "own",
    "pets_create_pet",
    "pets_delete_pet",
    "pets_get_echo_text",
    "pets_list_pets",
    "pets_show_pet_by_id",
    "pets_update_pet",
    "shop_get_health",
    "shop_get_order",
    "shop_place_order",
];

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

#[test]
fn every_operation_is_called_over_stdio() {
    let fixture = Fixture::new();
    let client = fixture.serve(&[]);
    // `[openapi.broken]` does not parse; the folder's other tools and APIs serve.
    assert_eq!(sorted(client.tool_names()), SERVED);

    definitions_follow_the_spec(&client);

    let listed = client.call("pets_list_pets", &json!({"limit": 1}));
    assert_eq!(listed.is_error, Some(false), "{listed:?}");
    assert_eq!(
        listed.structured_content,
        Some(json!({"pets": [{"id": 1, "name": "Rex", "tag": "dog"}]}))
    );
    let by_tag = client.call("pets_list_pets", &json!({"tag": ["dog", "cat"]}));
    assert_eq!(by_tag.structured_content.unwrap()["pets"][0]["name"], "Rex");

    let created = client.call(
        "pets_create_pet",
        &json!({"body": {"name": "Kit", "tag": null}}),
    );
    assert_eq!(created.is_error, Some(false), "{created:?}");
    assert_eq!(
        created.structured_content,
        Some(json!({"id": 3, "name": "Kit", "tag": null}))
    );
    let shown = client.call("pets_show_pet_by_id", &json!({"petId": 3}));
    assert_eq!(shown.structured_content.unwrap()["name"], "Kit");
    let updated = client.call(
        "pets_update_pet",
        &json!({"petId": 3, "body": {"name": "Kat", "tag": "cat"}}),
    );
    assert_eq!(
        updated.structured_content,
        Some(json!({"id": 3, "name": "Kat", "tag": "cat"}))
    );
    let deleted = client.call("pets_delete_pet", &json!({"petId": 3}));
    assert_eq!(deleted.is_error, Some(false), "{deleted:?}");
    assert!(text(&deleted).contains("204"), "{}", text(&deleted));

    // A 404 is an isError with the status and the body the API sent.
    let missing = client.call("pets_show_pet_by_id", &json!({"petId": 3}));
    assert_eq!(missing.is_error, Some(true), "{missing:?}");
    assert!(
        text(&missing).contains("HTTP 404 Not Found"),
        "{}",
        text(&missing)
    );
    assert!(text(&missing).contains("no pet 3"), "{}", text(&missing));
    let details = missing.structured_content.unwrap();
    assert_eq!(details["status"], 404);
    assert_eq!(details["body"], json!({"message": "no pet 3"}));

    // Path parameters are percent-encoded; header parameters are sent.
    let echoed = client.call(
        "pets_get_echo_text",
        &json!({"text": "a b/c?d", "X-Trace": "t-1"}),
    );
    assert_eq!(
        echoed.structured_content,
        Some(json!({"text": "a b/c?d", "trace": "t-1"}))
    );

    // The 3.1 spec: its base URL is its `servers` entry.
    let placed = client.call(
        "shop_place_order",
        &json!({"body": {"petId": 1, "quantity": 2}}),
    );
    assert_eq!(placed.is_error, Some(false), "{placed:?}");
    assert_eq!(
        placed.structured_content,
        Some(json!({"petId": 1, "quantity": 2, "id": "o1", "note": null}))
    );
    let order = client.call("shop_get_order", &json!({"orderId": "o1"}));
    assert_eq!(order.structured_content.unwrap()["quantity"], 2);
    let health = client.call("shop_get_health", &json!({}));
    assert_eq!(health.structured_content, Some(json!({"ok": true})));
}

/// The published definitions: descriptions, annotations by method, output schemas, and
/// 3.0's `nullable` in 2020-12 form.
fn definitions_follow_the_spec(client: &McpClient) {
    let tools = client.tools();
    let show = tools
        .iter()
        .find(|tool| tool.name == "pets_show_pet_by_id")
        .unwrap();
    assert_eq!(show.description.as_deref(), Some("Get one pet by its id."));
    let annotations = show.annotations.as_ref().unwrap();
    assert_eq!(annotations.read_only_hint, Some(true));
    assert!(
        show.output_schema.is_some(),
        "the 200 response is an object"
    );
    let delete = tools
        .iter()
        .find(|tool| tool.name == "pets_delete_pet")
        .unwrap();
    assert_eq!(
        delete.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
    let update = tools
        .iter()
        .find(|tool| tool.name == "pets_update_pet")
        .unwrap();
    assert_eq!(
        update.annotations.as_ref().unwrap().idempotent_hint,
        Some(true)
    );
    // `nullable: true` of 3.0 is 2020-12's `"null"` type.
    let create = tools
        .iter()
        .find(|tool| tool.name == "pets_create_pet")
        .unwrap();
    assert_eq!(
        create.input_schema["properties"]["body"]["properties"]["tag"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn arguments_the_schema_rejects_send_no_request() {
    let fixture = Fixture::new();
    let client = fixture.serve(&[]);
    let before = fixture.api.requests();
    for (tool, arguments) in [
        ("pets_show_pet_by_id", json!({"petId": "seven"})),
        ("pets_show_pet_by_id", json!({})),
        ("pets_list_pets", json!({"limit": 0})),
        ("pets_create_pet", json!({"body": {"name": ""}})),
        ("pets_create_pet", json!({"body": {"tag": "dog"}})),
        (
            "shop_place_order",
            json!({"body": {"petId": 1, "quantity": 0}}),
        ),
        ("pets_list_pets", json!({"color": "red"})),
    ] {
        let result = client.call(tool, &arguments);
        assert_eq!(
            result.is_error,
            Some(true),
            "{tool} {arguments}: {result:?}"
        );
    }
    assert_eq!(
        fixture.api.requests(),
        before,
        "a rejected call reached the API"
    );
    // The server is reachable: a valid call is counted.
    let listed = client.call("pets_list_pets", &json!({}));
    assert_eq!(listed.is_error, Some(false), "{listed:?}");
    assert_eq!(fixture.api.requests(), before + 1);
}

#[test]
fn an_operation_is_called_over_http() {
    let fixture = Fixture::new();
    let mut command = ServeProcess::http_command(&[&fixture.tools()], None);
    command.env("PETS_KEY", "secret");
    let server = ServeProcess::spawn_http(command);
    let client = McpClient::http(server.url());
    let shown = client.call("pets_show_pet_by_id", &json!({"petId": 2}));
    assert_eq!(
        shown.structured_content,
        Some(json!({"id": 2, "name": "Tom", "tag": null}))
    );
}

#[test]
fn an_unset_header_variable_fails_the_call_naming_it() {
    let fixture = Fixture::new();
    let mut command = toolsmith();
    command
        .arg("serve")
        .arg(fixture.tools())
        .env_remove("PETS_KEY");
    let client = McpClient::spawn(command);
    let before = fixture.api.requests();
    let result = client.call("pets_list_pets", &json!({}));
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(
        text(&result).contains("environment variable `PETS_KEY` is not set"),
        "{}",
        text(&result)
    );
    assert_eq!(fixture.api.requests(), before);
}

#[test]
fn list_search_and_check_see_the_operations_and_the_broken_spec() {
    let fixture = Fixture::new();
    let listed = crate::json_output(toolsmith().args(["list", "--json", &fixture.tools()]));
    let listed = listed.to_string();
    for name in SERVED {
        assert!(listed.contains(name), "{name} not in {listed}");
    }
    assert!(!listed.contains("shop_purge_orders"), "excluded by path");
    assert!(!listed.contains("shop_get_metrics"), "not included");

    let found = crate::json_output(toolsmith().args([
        "search",
        &fixture.tools(),
        "get a pet by its id",
        "--json",
    ]));
    assert!(found.to_string().contains("pets_show_pet_by_id"), "{found}");

    let output = toolsmith()
        .args(["check", &fixture.tools(), "--format", "json"])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("invalid-openapi"), "{report}");
    assert!(report.contains("broken.json"), "{report}");
    assert!(report.contains("not valid JSON"), "{report}");
}

#[test]
fn a_profile_selects_operations_by_tag() {
    let fixture = Fixture::new();
    let client = fixture.serve(&["--profile", "orders"]);
    assert_eq!(
        sorted(client.tool_names()),
        ["shop_get_order", "shop_place_order"]
    );
}
