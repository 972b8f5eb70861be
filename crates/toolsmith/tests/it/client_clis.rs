//! The clients themselves read what `toolsmith install` wrote. The real
//! CLIs of Claude Code, Gemini CLI, Codex and opencode (pinned in .ci/clients/package.json,
//! installed by `.ci/run`) run their `mcp list` on a temporary HOME, offline and without a
//! login, and must show the entry; Claude Code, Gemini CLI and opencode start the server
//! to check it, and must report it connected.
//!
//! The tests are ignored unless run with `cargo test -- --include-ignored` (as `.ci/run`
//! does); there, a CLI that is not installed fails its test, saying how to install it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::install::{PATH_VARIABLES, install};
use crate::serve_process::ServeProcess;
use crate::{folder, require, workspace};

const GREET: &str = r#"
def greet(name: str) -> str:
    """Greet someone by name."""
    return "Hello, " + name

mcp.tool(greet)
"#;

/// The CLI `name` from `TOOLSMITH_CLIENT_CLIS` (a folder of executables), else from
/// `.ci/clients/node_modules/.bin`; the test fails when it is not there.
fn client_cli(name: &str) -> PathBuf {
    let folder = std::env::var_os("TOOLSMITH_CLIENT_CLIS").map_or_else(
        || workspace().join(".ci/clients/node_modules/.bin"),
        PathBuf::from,
    );
    let path = folder.join(name);
    require(
        path.exists(),
        &format!(
            "`{name}` at {} (the clients' CLIs: npm install --prefix .ci/clients)",
            path.display()
        ),
    );
    path
}

/// A temporary HOME with a project folder in it, where the CLIs run, and a tools folder.
struct Home {
    home: tempfile::TempDir,
    tools: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("project")).unwrap();
        let tools = folder(&[
            ("greet.star", GREET),
            (
                "toolsmith.toml",
                "[profiles.readonly]\ntools = [\"greet\"]\n",
            ),
        ]);
        Self { home, tools }
    }

    fn path(&self) -> &Path {
        self.home.path()
    }

    /// The tools folder's path.
    fn tools(&self) -> &str {
        self.tools.path().to_str().unwrap()
    }

    /// Installs the tools folder into `client` as `greetings`, with `extra` flags.
    fn install_tools(&self, client: &str, extra: &[&str]) {
        let mut args = vec![client, self.tools(), "--name", "greetings"];
        args.extend(extra);
        self.install(&args);
    }

    /// `toolsmith install ARGS` into this HOME, which must succeed.
    fn install(&self, args: &[&str]) {
        let output = install(self.path(), args).output().unwrap();
        assert!(output.status.success(), "{output:?}");
    }

    /// `cli ARGS` run in the project folder with HOME (and the XDG folders) here, the
    /// CLIs' own Node first on PATH and no standard input: what it printed, stdout then
    /// stderr.
    fn ask(&self, cli: &Path, args: &[&str]) -> String {
        let (stdout, stderr) = self.ask_apart(cli, args);
        stdout + &stderr
    }

    /// [`Self::ask`], with stdout and stderr apart.
    fn ask_apart(&self, cli: &Path, args: &[&str]) -> (String, String) {
        let home = self.path();
        let bin = cli.parent().unwrap();
        let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        let mut command = Command::new("timeout");
        // A CLI that hangs fails the test instead of holding it forever.
        command
            .args(["-k", "10", "180"])
            .arg(cli)
            .args(args)
            .current_dir(home.join("project"))
            .stdin(Stdio::null())
            .env("PATH", path)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("NO_COLOR", "1")
            .env("CI", "1")
            // Claude Code: no update checks or telemetry (nothing leaves the machine).
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            // opencode: no update check, no model list download.
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1");
        for variable in PATH_VARIABLES {
            command.env_remove(variable);
        }
        for variable in ["ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY"] {
            command.env_remove(variable);
        }
        let output = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            output.status.success(),
            "{} {args:?} failed ({}):\n{stdout}{stderr}",
            cli.display(),
            output.status
        );
        (stdout, stderr)
    }
}

/// The line of `listing` that names `name`.
fn line_of<'a>(listing: &'a str, name: &str) -> &'a str {
    listing
        .lines()
        .find(|line| line.contains(name))
        .unwrap_or_else(|| panic!("no `{name}` in:\n{listing}"))
}

#[test]
#[ignore = "needs the client CLIs: npm install --prefix .ci/clients (CI runs it: cargo test -- --include-ignored)"]
fn claude_code_lists_the_entry_and_connects_to_it() {
    let claude = client_cli("claude");
    let home = Home::new();
    home.install_tools("claude-code", &[]);
    let listing = home.ask(&claude, &["mcp", "list"]);
    let line = line_of(&listing, "greetings:");
    assert!(line.contains("Connected"), "{listing}");
}

/// The URL form, with the bearer header, is one Claude Code connects
/// with to a running `toolsmith serve --http --auth-token`.
#[test]
#[ignore = "needs the client CLIs: npm install --prefix .ci/clients (CI runs it: cargo test -- --include-ignored)"]
fn claude_code_connects_to_a_url_server_with_its_token() {
    let claude = client_cli("claude");
    let home = Home::new();
    let server = ServeProcess::http(&[home.tools()], Some("s3cret"));
    let url = server.url().to_owned();
    home.install(&[
        "claude-code",
        "--http",
        &url,
        "--name",
        "remote",
        "--auth-token",
        "s3cret",
    ]);
    home.install(&["claude-code", "--http", &url, "--name", "no-token"]);
    let listing = home.ask(&claude, &["mcp", "list"]);
    assert!(
        line_of(&listing, "remote:").contains("Connected"),
        "{listing}"
    );
    assert!(
        !line_of(&listing, "no-token:").contains("Connected"),
        "{listing}"
    );
    drop(server);
}

#[test]
#[ignore = "needs the client CLIs: npm install --prefix .ci/clients (CI runs it: cargo test -- --include-ignored)"]
fn gemini_cli_lists_the_entry_and_connects_to_it() {
    let gemini = client_cli("gemini");
    let home = Home::new();
    home.install_tools("gemini", &[]);
    // Gemini CLI starts no server of an untrusted folder: the user trusts this one.
    let trusted = home.path().join(".gemini/trustedFolders.json");
    let project = home.path().join("project");
    let trust = serde_json::json!({ project.to_str().unwrap(): "TRUST_FOLDER" });
    std::fs::write(&trusted, trust.to_string()).unwrap();
    let listing = home.ask(&gemini, &["mcp", "list"]);
    let line = line_of(&listing, "greetings");
    assert!(
        line.contains("✓ greetings") && line.contains("Connected"),
        "{listing}"
    );
}

#[test]
#[ignore = "needs the client CLIs: npm install --prefix .ci/clients (CI runs it: cargo test -- --include-ignored)"]
fn codex_lists_the_entry_with_its_command() {
    let codex = client_cli("codex");
    let home = Home::new();
    home.install_tools("codex", &["--profile", "readonly"]);
    let listing = home.ask(&codex, &["mcp", "list"]);
    assert!(
        line_of(&listing, "greetings").contains("enabled"),
        "{listing}"
    );
    // Codex does not start servers to list them; `mcp get --json` shows what it would run.
    let entry: serde_json::Value = serde_json::from_str(
        &home
            .ask_apart(&codex, &["mcp", "get", "greetings", "--json"])
            .0,
    )
    .unwrap();
    let text = entry.to_string();
    assert!(
        text.contains("--profile") && text.contains(home.tools()),
        "{entry}"
    );
}

#[test]
#[ignore = "needs the client CLIs: npm install --prefix .ci/clients (CI runs it: cargo test -- --include-ignored)"]
fn opencode_lists_the_entry_and_connects_to_it() {
    let opencode = client_cli("opencode");
    let home = Home::new();
    home.install_tools("opencode", &[]);
    let listing = home.ask(&opencode, &["mcp", "list"]);
    let line = line_of(&listing, "greetings");
    assert!(
        line.contains("✓ greetings") && line.contains("connected"),
        "{listing}"
    );
}

#[test]
#[ignore = "needs the client CLIs: npm install --prefix .ci/clients (CI runs it: cargo test -- --include-ignored)"]
fn gemini_cli_lists_the_installed_skills() {
    // `install --skills` puts the skills where the client reads them.
    let gemini = client_cli("gemini");
    let home = Home::new();
    home.install(&["gemini", home.tools(), "--skills"]);
    let listing = home.ask(&gemini, &["skills", "list"]);
    assert!(
        line_of(&listing, "readonly").contains("[Enabled]"),
        "{listing}"
    );
    assert!(
        listing.contains(&format!(
            "{}/.gemini/skills/readonly/SKILL.md",
            home.path().display()
        )),
        "{listing}"
    );
}

#[test]
#[ignore = "needs the client CLIs: npm install --prefix .ci/clients (CI runs it: cargo test -- --include-ignored)"]
fn opencode_lists_the_installed_skills() {
    // docs/install.md, "Checked by the clients themselves".
    let opencode = client_cli("opencode");
    let home = Home::new();
    home.install(&["opencode", home.tools(), "--skills"]);
    let (listing, stderr) = home.ask_apart(&opencode, &["debug", "skill"]);
    let skills: serde_json::Value =
        serde_json::from_str(&listing).unwrap_or_else(|error| panic!("{error}: {listing}{stderr}"));
    let ours = skills
        .as_array()
        .unwrap()
        .iter()
        .find(|skill| skill["name"] == "readonly")
        .unwrap_or_else(|| panic!("no `readonly` skill in {listing}"));
    let location = ours["location"].as_str().unwrap();
    assert!(
        location.ends_with(".config/opencode/skills/readonly/SKILL.md"),
        "{location}"
    );
    assert!(
        ours["content"].as_str().unwrap().contains("## `greet`"),
        "{ours}"
    );
}
