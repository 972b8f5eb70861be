//! Skills over MCP (the `io.modelcontextprotocol/skills` extension,
//! SEP-2640): the folder's `skills/` served as `skills/list`, `skills/get` and `skill://`
//! resources, read by FastMCP's own client (`fastmcp` in `.ci/sdk/.venv`, pinned in
//! `.ci/sdk/requirements.txt`) over stdio and HTTP, every file checked against its digest;
//! and by a client of the 2025-11-25 era as plain resources. The FastMCP tests are ignored
//! unless run with `cargo test -- --include-ignored`, which needs the venv.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::gateway_clients::python_sdk;
use crate::serve_process::ServeProcess;

const SKILL_MD: &str = "---\nname: pdf-forms\ndescription: Fill PDF forms field by field\nlicense: MIT\n---\n# PDF forms\n\nThe fields are in reference/fields.md.\n";

/// Not UTF-8: served as a blob.
const LOGO: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\xff";

const TOOL: &str = "def hi() -> str:\n    \"\"\"Say hi.\"\"\"\n    return \"hi\"\n\nmcp.tool(hi)\n";

/// A folder with one tool, the skill `pdf-forms` (three files, one binary), the skill
/// `notes`, and a broken skill whose name is not its folder's.
fn folder() -> tempfile::TempDir {
    let dir = crate::folder(&[
        ("hi.star", TOOL),
        ("skills/pdf-forms/SKILL.md", SKILL_MD),
        ("skills/pdf-forms/reference/fields.md", "# Fields\n"),
        (
            "skills/notes/SKILL.md",
            "---\nname: notes\ndescription: Keep notes\n---\nWrite them down.\n",
        ),
        (
            "skills/broken/SKILL.md",
            "---\nname: other\ndescription: Misnamed\n---\n",
        ),
    ]);
    std::fs::write(dir.path().join("skills/pdf-forms/logo.png"), LOGO).unwrap();
    dir
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/skills_clients/fastmcp_skills.py")
}

/// Runs the FastMCP client script with `args`; what it saw.
fn fastmcp(python: &Path, args: &[&str]) -> Value {
    let output = Command::new(python)
        .arg(script())
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the FastMCP client failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn check_read(seen: &Value) {
    assert_eq!(seen["protocol"], "2026-07-28", "{seen}");
    // The broken skill is left out; the others are served, each read whole and verified.
    assert_eq!(seen["skills"], json!(["notes", "pdf-forms"]), "{seen}");
    assert_eq!(
        seen["read"]["pdf-forms"]["files"],
        json!(["SKILL.md", "logo.png", "reference/fields.md"])
    );
    assert_eq!(
        seen["read"]["pdf-forms"]["description"],
        "Fill PDF forms field by field"
    );
    assert_eq!(seen["read"]["notes"]["files"], json!(["SKILL.md"]));
    assert!(
        seen["resources"]
            .as_array()
            .unwrap()
            .contains(&json!("skill://pdf-forms/logo.png")),
        "{seen}"
    );
}

#[test]
#[ignore = "needs FastMCP in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn fastmcp_reads_and_verifies_every_skill_over_stdio() {
    let python = python_sdk();
    let dir = folder();
    let command = format!(
        "{} serve {}",
        insta_cmd::get_cargo_bin("toolsmith").display(),
        dir.path().display()
    );
    check_read(&fastmcp(&python, &["--stdio", &command]));
}

#[test]
#[ignore = "needs FastMCP in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn fastmcp_over_http_catches_a_file_changed_after_listing() {
    let python = python_sdk();
    let dir = folder();
    let path = dir.path().to_str().unwrap();
    let server = ServeProcess::http(&["--watch", path], None);
    let logo = dir.path().join("skills/pdf-forms/logo.png");
    let seen = fastmcp(
        &python,
        &["--url", server.url(), "--tamper", logo.to_str().unwrap()],
    );
    check_read(&seen);
    // The page's data lists the skills.
    let (status, answer) = server.raw(&format!(
        "GET /api/info HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.address()
    ));
    assert_eq!(status, 200, "{answer}");
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    let info: Value = serde_json::from_str(body).unwrap();
    let names: Vec<&str> = info["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("{info}"))
        .iter()
        .map(|skill| skill["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["notes", "pdf-forms"]);
    // The server serves the changed file (--watch); checked against the digests listed
    // before the change, FastMCP's own check refuses it.
    let caught = seen["tamper"].as_str().unwrap_or_default();
    assert!(caught.contains("logo.png"), "{seen}");
    server.stop();
}

#[test]
fn a_broken_skill_is_a_diagnostic_and_the_rest_is_served_to_either_era() {
    let dir = folder();
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    let initialized = server.initialize();
    assert!(
        initialized["capabilities"]["extensions"]["io.modelcontextprotocol/skills"].is_object(),
        "{initialized}"
    );
    assert_eq!(server.tool_names(), ["hi"]);
    // A client of 2025-11-25 sees the files as resources, a binary one as a blob.
    let listed = server.request("resources/list", &json!({}));
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|resource| resource["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"skill://notes/SKILL.md"), "{uris:?}");
    assert!(
        !uris.iter().any(|uri| uri.starts_with("skill://broken")),
        "{uris:?}"
    );
    let logo = server.request(
        "resources/read",
        &json!({"uri": "skill://pdf-forms/logo.png"}),
    );
    assert!(logo["result"]["contents"][0]["blob"].is_string(), "{logo}");
    let skill = server.request("skills/get", &json!({"uri": "skill://pdf-forms/SKILL.md"}));
    let files = skill["result"]["skill"]["resources"].as_array().unwrap();
    assert_eq!(files.len(), 3, "{skill}");
    assert_eq!(files[0]["size"], SKILL_MD.len());
    let missing = server.request("skills/get", &json!({"uri": "skill://broken/SKILL.md"}));
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    let said = server
        .stderr_until(|line| {
            line.contains("the skill name `other` is not its folder's name `broken`")
        })
        .join("\n");
    assert!(said.contains("skills/broken/SKILL.md"), "{said}");
}

#[test]
fn a_profile_selects_skills_as_it_selects_tools() {
    let dir = folder();
    std::fs::write(
        dir.path().join("toolsmith.toml"),
        "[profiles.forms]\ntools = [\"hi\"]\nskills = [\"pdf-*\"]\n",
    )
    .unwrap();
    let mut server = ServeProcess::stdio(&["--profile", "forms", dir.path().to_str().unwrap()]);
    server.initialize();
    let listed = server.request("skills/list", &json!({}));
    let names: Vec<&str> = listed["result"]["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|skill| skill["frontmatter"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["pdf-forms"]);
    let read = server.request("resources/read", &json!({"uri": "skill://notes/SKILL.md"}));
    assert_eq!(read["error"]["code"], -32002, "{read}");
}

#[test]
fn the_skills_written_from_the_tools_are_served_when_asked() {
    let dir = crate::folder(&[
        ("hi.star", TOOL),
        (
            "toolsmith.toml",
            "[server]\nname = \"greeter\"\n\n[skills]\nfrom_tools = true\n",
        ),
    ]);
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    server.initialize();
    let got = server.request("skills/get", &json!({"uri": "skill://greeter/SKILL.md"}));
    let files: Vec<&str> = got["result"]["skill"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{got}"))
        .iter()
        .map(|file| file["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "skill://greeter/SKILL.md",
            "skill://greeter/scripts/call.sh"
        ]
    );
    // The same text `toolsmith skills` writes.
    let out = tempfile::tempdir().unwrap();
    let written = crate::toolsmith()
        .arg("skills")
        .arg(dir.path())
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(written.status.success());
    let read = server.request(
        "resources/read",
        &json!({"uri": "skill://greeter/SKILL.md"}),
    );
    assert_eq!(
        read["result"]["contents"][0]["text"].as_str().unwrap(),
        std::fs::read_to_string(out.path().join("greeter/SKILL.md")).unwrap()
    );
}

#[test]
fn toolsmith_check_reports_a_broken_skill() {
    let dir = folder();
    let checked = crate::toolsmith()
        .arg("check")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(checked.status.code(), Some(1));
    let said = String::from_utf8_lossy(&checked.stdout);
    assert!(
        said.contains(
            "error[invalid-skill]: the skill name `other` is not its folder's name `broken`"
        ),
        "{said}"
    );
}

#[test]
fn watch_announces_a_changed_skill() {
    let dir = folder();
    let mut server = ServeProcess::stdio(&["--watch", dir.path().to_str().unwrap()]);
    server.initialize();
    // Served (and watched) once it lists its tools.
    assert_eq!(server.tool_names(), ["hi"]);
    std::fs::write(
        dir.path().join("skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: Keep notes, and find them again\n---\nWrite them down.\n",
    )
    .unwrap();
    server.until(|message| message["method"] == "notifications/resources/list_changed");
    let listed = server.request("skills/get", &json!({"uri": "skill://notes/SKILL.md"}));
    assert_eq!(
        listed["result"]["skill"]["frontmatter"]["description"],
        "Keep notes, and find them again"
    );
}
