//! OpenAPI documents and arguments that attack the server: a `$ref` bomb, a
//! document over the size bound, a FIFO as the spec, and path parameters that are
//! dot-segments, each against a real `toolsmith serve` and, for the calls, a real HTTP
//! server in the test that records what goes on the wire.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::serve_process::ServeProcess;

const OWN: &str = r#"def own() -> str:
    """Answers from the folder itself."""
    return "own"

mcp.tool(own)
"#;

/// A spec whose schema `L24` refers twice to `L23`, which refers twice to `L22`, down to
/// `L0`: 2^24 copies of `L0` when expanded in place.
fn doubling_spec() -> Value {
    let mut schemas = Map::new();
    schemas.insert("L0".into(), json!({"type": "string"}));
    for level in 1..=24 {
        let below = format!("#/components/schemas/L{}", level - 1);
        schemas.insert(
            format!("L{level}"),
            json!({"type": "object", "properties": {"a": {"$ref": below}, "b": {"$ref": below}}}),
        );
    }
    let tree = json!({"$ref": "#/components/schemas/L24"});
    json!({
        "openapi": "3.0.3",
        "info": {"title": "bomb", "version": "1"},
        "paths": {"/trees": {"post": {
            "operationId": "plantTree",
            "requestBody": {"required": true, "content": {"application/json": {"schema": tree}}},
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": tree}}}},
        }}},
        "components": {"schemas": schemas},
    })
}

/// A spec of many operations that each refer to a schema of thousands of properties: kept
/// once per tool, more than one spec may expand to.
fn oversized_spec() -> Value {
    let properties: Map<String, Value> = (0..6000)
        .map(|index| (format!("p{index}"), json!({"type": "string"})))
        .collect();
    let paths: Map<String, Value> = (0..400)
        .map(|index| {
            let operation = json!({"get": {
                "operationId": format!("get{index}"),
                "responses": {"200": {"description": "ok", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Big"}}}}},
            }});
            (format!("/things{index}"), operation)
        })
        .collect();
    json!({
        "openapi": "3.1.0",
        "info": {"title": "big", "version": "1"},
        "paths": paths,
        "components": {"schemas": {"Big": {"type": "object", "properties": properties}}},
    })
}

// A 3.4 KB document whose `$ref`s doubled 24 times was expanded in full and aborted `serve`
// (20 levels took 2.75 GB), and a FIFO as `spec` made the server wait for ever after
// `initialize`. Under `ulimit -v 4000000`, the bomb loads with its shared schemas in `$defs`,
// the over-large spec and the FIFO are warnings, and the folder's own tool serves.
#[cfg(unix)]
#[test]
fn a_ref_bomb_an_oversized_spec_and_a_fifo_leave_the_folder_serving() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path();
    std::fs::write(tools.join("own.star"), OWN).unwrap();
    std::fs::write(tools.join("bomb.json"), doubling_spec().to_string()).unwrap();
    std::fs::write(tools.join("big.json"), oversized_spec().to_string()).unwrap();
    let fifo = tools.join("pipe.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(
        tools.join("toolsmith.toml"),
        r#"[openapi.bomb]
spec = "bomb.json"
base_url = "http://127.0.0.1:9/"

[openapi.big]
spec = "big.json"
base_url = "http://127.0.0.1:9/"

[openapi.pipe]
spec = "pipe.yaml"
base_url = "http://127.0.0.1:9/"
"#,
    )
    .unwrap();
    let mut command = std::process::Command::new("sh");
    command
        .args(["-c", "ulimit -v 4000000 && exec \"$0\" serve \"$1\""])
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg(tools);
    let mut server = ServeProcess::spawn(command);
    server.initialize();
    let listed = server.request("tools/list", &json!({}));
    let tools_listed = listed["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools_listed
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["bomb_plant_tree", "own"]);
    let plant = &tools_listed
        .iter()
        .find(|tool| tool["name"] == "bomb_plant_tree")
        .unwrap();
    assert_eq!(
        plant["inputSchema"]["properties"]["body"]["properties"]["a"],
        json!({"$ref": "#/$defs/L23"})
    );
    assert_eq!(plant["inputSchema"]["$defs"].as_object().unwrap().len(), 24);
    assert_eq!(
        plant["outputSchema"]["$defs"].as_object().unwrap().len(),
        24
    );
    let mut big = false;
    let mut pipe = false;
    server.stderr_until(|line| {
        big |= line.contains("big.json") && line.contains("expand past");
        pipe |= line.contains("pipe.yaml") && line.contains("not a regular file");
        big && pipe
    });
    assert_eq!(server.call_text("own", &json!({})), "own");
}

/// A loopback HTTP server that answers `{}` to every request and records each request line
/// and `Authorization` header it was sent.
struct Recorder {
    port: u16,
    seen: Arc<Mutex<Vec<(String, String)>>>,
}

impl Recorder {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                let mut authorization = String::new();
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|read| read > 0) {
                    if request_line.is_empty() {
                        line.trim_end().clone_into(&mut request_line);
                    } else if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("authorization")
                    {
                        value.trim().clone_into(&mut authorization);
                    }
                    if line == "\r\n" {
                        break;
                    }
                    line.clear();
                }
                record.lock().unwrap().push((request_line, authorization));
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
                );
            }
        });
        Self { port, seen }
    }

    fn take(&self) -> Vec<(String, String)> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

// A path parameter of `..` or `.` was sent as it was (`GET /api/v1/users/../profile`,
// `DELETE /api/v1/users/..`), with the configured `Authorization` header, to a path the
// operation does not name.
#[test]
fn dot_segment_path_parameters_never_reach_the_wire_as_dot_segments() {
    let api = Recorder::start();
    let dir = tempfile::tempdir().unwrap();
    let id = json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string"}});
    let spec = json!({
        "openapi": "3.0.3",
        "info": {"title": "users", "version": "1"},
        "paths": {
            "/users/{id}/profile": {"get": {"operationId": "getProfile", "parameters": [id]}},
            "/users/{id}": {"delete": {"operationId": "deleteUser", "parameters": [id]}},
        },
    });
    std::fs::write(dir.path().join("users.json"), spec.to_string()).unwrap();
    std::fs::write(
        dir.path().join("toolsmith.toml"),
        format!(
            r#"[openapi.users]
spec = "users.json"
base_url = "http://127.0.0.1:{}/api/v1"
headers = {{ Authorization = "Bearer s3cret" }}
"#,
            api.port
        ),
    )
    .unwrap();
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    server.initialize();
    for (tool, id) in [
        ("users_get_profile", ".."),
        ("users_get_profile", "."),
        ("users_delete_user", ".."),
        ("users_delete_user", "."),
        ("users_get_profile", "../../admin?x=1#f"),
        ("users_get_profile", "a.b"),
    ] {
        let result = server.call(tool, &json!({"id": id}));
        assert_eq!(result["isError"], false, "{tool} {id}: {result}");
    }
    let seen = api.take();
    let lines: Vec<&str> = seen.iter().map(|(line, _)| line.as_str()).collect();
    assert_eq!(
        lines,
        [
            "GET /api/v1/users/%2E%2E/profile HTTP/1.1",
            "GET /api/v1/users/%2E/profile HTTP/1.1",
            "DELETE /api/v1/users/%2E%2E HTTP/1.1",
            "DELETE /api/v1/users/%2E HTTP/1.1",
            "GET /api/v1/users/..%2F..%2Fadmin%3Fx%3D1%23f/profile HTTP/1.1",
            "GET /api/v1/users/a.b/profile HTTP/1.1",
        ]
    );
    for (line, authorization) in &seen {
        let target = line.split(' ').nth(1).unwrap();
        assert!(
            target
                .split('/')
                .all(|segment| segment != "." && segment != ".."),
            "{line}"
        );
        assert_eq!(authorization, "Bearer s3cret");
    }
}
