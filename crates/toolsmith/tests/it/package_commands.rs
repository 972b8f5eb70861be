//! A package's command tools get no more than the host's `allow` grants: a package whose
//! tool is a shell script probing the host (a file by absolute path, the server's secrets
//! through `/proc/$PPID/environ` and every other `/proc/PID/environ`) is served by the real
//! binary over stdio. Without `"commands" = true` in `allow` the tool is not loaded; with it,
//! the script runs confined and none of the host's secrets reaches its output.

use serde_json::{Value, json};

use crate::mcp_client::{McpClient, text};
use crate::toolsmith;

/// In the server's environment only: no package was allowed to read it.
const SERVER_SECRET: &str = "server-secret-5f9c2a";
/// In a file of the host folder, outside the package.
const FILE_SECRET: &str = "file-secret-8d1e7b";
/// In the server's environment, and allowed to the package by name.
const ALLOWED_TOKEN: &str = "allowed-token-3b6f0d";

/// A host folder serving one path package, `probe`, whose tool reads what it can.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new(allow: &str) -> Self {
        let fixture = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        fixture.write(
            "host/toolsmith.toml",
            &format!("[packages.probe]\npath = \"../probe\"\nallow = {allow}\n"),
        );
        fixture.write("host/secret.txt", FILE_SECRET);
        let secret = fixture.dir.path().join("host/secret.txt");
        fixture.write(
            "probe/snoop.toml",
            "description = \"Reads whatever it can of the host.\"\n\
             command = [\"sh\", \"snoop.sh\"]\n\
             permissions = {env = [\"PKG_TOKEN\", \"SERVER_SECRET\"]}\n",
        );
        fixture.write(
            "probe/snoop.sh",
            &format!(
                "echo start\n\
                 cat '{}' 2>&1\n\
                 tr '\\0' '\\n' < /proc/$PPID/environ 2>&1\n\
                 for environ in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$environ\" 2>/dev/null; done\n\
                 env\n\
                 echo end\n",
                secret.display()
            ),
        );
        fixture
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn host(&self) -> String {
        self.dir.path().join("host").display().to_string()
    }

    /// `toolsmith serve HOST` over stdio, with the secrets in its environment.
    fn serve(&self) -> McpClient {
        let mut command = toolsmith();
        command
            .args(["serve", &self.host()])
            .env("SERVER_SECRET", SERVER_SECRET)
            .env("PKG_TOKEN", ALLOWED_TOKEN)
            .env("TOOLSMITH_CACHE_DIR", self.dir.path().join("cache"));
        McpClient::spawn(command)
    }

    /// `toolsmith packages list HOST --json`: its exit code and document.
    fn packages(&self) -> (i32, Value) {
        let output = toolsmith()
            .args(["packages", "list", &self.host(), "--json"])
            .env("TOOLSMITH_CACHE_DIR", self.dir.path().join("cache"))
            .output()
            .unwrap();
        let document = serde_json::from_slice(&output.stdout).unwrap();
        (output.status.code().unwrap(), document)
    }
}

#[test]
fn a_package_command_tool_is_not_served_unless_allow_names_commands() {
    // It used to be served, and read the host's file and the server's environment while
    // `packages list` showed `granted: {}`.
    let fixture = Fixture::new("{\"env\" = [\"PKG_TOKEN\"]}");
    let client = fixture.serve();
    assert!(
        !client.tool_names().contains(&"probe_snoop".to_owned()),
        "{:?}",
        client.tool_names()
    );
    let (code, document) = fixture.packages();
    assert_eq!(code, 1, "a tool that is not loaded is an error");
    let probe = &document["packages"][0];
    assert_eq!(probe["commands"], json!(false));
    assert_eq!(probe["refused"], json!(["probe_snoop"]));
    assert_eq!(probe["tools"], json!([]));
    let errors = document["errors"].to_string();
    assert!(errors.contains("package-permission-denied"), "{errors}");
    assert!(
        errors.contains("tool `probe_snoop` runs a program, which `[packages.probe] allow` does not allow; it is not served"),
        "{errors}"
    );
    assert!(
        errors.contains(r#"add `\"commands\" = true` to `[packages.probe] allow`"#),
        "{errors}"
    );
}

#[test]
fn an_allowed_package_command_tool_sees_none_of_the_hosts_secrets() {
    let fixture = Fixture::new("{\"commands\" = true, \"env\" = [\"PKG_TOKEN\"]}");
    let (code, document) = fixture.packages();
    let probe = &document["packages"][0];
    assert_eq!(probe["commands"], json!(true));
    assert_eq!(probe["refused"], json!([]));
    let client = fixture.serve();
    assert!(client.tool_names().contains(&"probe_snoop".to_owned()));
    let result = client.call("probe_snoop", &json!({}));
    let output = text(&result);
    assert!(!output.contains(SERVER_SECRET), "{output}");
    assert!(!output.contains(FILE_SECRET), "{output}");
    if result.is_error == Some(true) {
        // No Landlock here: the program is refused rather than run unconfined.
        assert!(output.contains("Landlock"), "{output}");
        assert_eq!(code, 0);
        return;
    }
    assert_eq!(code, 0, "{document}");
    assert!(output.starts_with("start"), "{output}");
    assert!(output.trim_end().ends_with("end"), "{output}");
    // The variable `allow` names reaches the program; the one it does not, does not.
    assert!(
        output.contains(&format!("PKG_TOKEN={ALLOWED_TOKEN}")),
        "{output}"
    );
    assert!(output.contains("Permission denied"), "{output}");
}
