//! CLI tests: the real binary on real folders, output under insta snapshots.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail loudly, like the tests that use them"
)]

mod architecture;
mod audit;
mod big_folder;
mod bundle;
mod call;
mod check;
mod client_clis;
mod code_mode;
mod dev_command;
mod dev_profile;
mod gateway_clients;
mod help;
mod http_guards;
mod http_server;
mod icon;
mod install;
mod install_safety;
mod limits;
mod list;
mod mcp_client;
mod memory;
mod metrics;
mod new;
mod oauth;
mod openapi;
mod package_commands;
mod packages;
mod packaging;
mod page;
mod page_browser;
mod profiles;
mod replicas;
mod sandbox;
mod search;
mod serve;
mod serve_process;
mod server_card;
mod services;
mod skills;
mod skills_serving;
mod tasks;
mod telemetry;
mod test_command;
mod upstream_asking;
mod upstream_everything;
mod upstream_fastmcp;
mod upstream_faults;
mod upstream_hostile;
mod upstream_oauth;
mod upstream_proxy;
mod upstream_wraps;
mod upstreams;
mod watch;
mod workers;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `toolsmith` run from the workspace root, with colour and logs off.
pub(crate) fn toolsmith() -> Command {
    let mut command = Command::new(insta_cmd::get_cargo_bin("toolsmith"));
    command
        .current_dir(workspace())
        .env("NO_COLOR", "1")
        .env_remove("TOOLSMITH_LOG")
        .env_remove("MCP_TOOL_OPTIONS");
    command
}

/// Runs `command`, which must succeed (its stderr is the failure message), and parses
/// what it printed as JSON.
pub(crate) fn json_output(command: &mut Command) -> serde_json::Value {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Fails the calling test unless `present`, saying what it needs and how to install it.
///
/// A test that needs a service or package the machine may lack (Redis, a browser, an SDK)
/// is `#[ignore = "needs ..."]`: a plain `cargo test` counts it as ignored and says why,
/// and `cargo test -- --include-ignored` (what `.ci/run` runs, after installing them all)
/// runs it, where a missing service is this failure rather than a silent pass.
pub(crate) fn require(present: bool, what: &str) {
    assert!(
        present,
        "this test needs {what}; .ci/run installs it (or leave out --include-ignored to skip the tests that need it)"
    );
}

/// The `node_modules` of `.ci/upstreams`, which holds the official TypeScript SDK; the
/// test fails without it.
pub(crate) fn typescript_sdk() -> PathBuf {
    let modules = workspace().join(".ci/upstreams/node_modules");
    require(
        modules.join("@modelcontextprotocol/sdk").is_dir(),
        "the TypeScript SDK (npm ci --prefix .ci/upstreams)",
    );
    modules
}

/// A temporary tools folder with the given files.
pub(crate) fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Snapshot filters that hide a temporary folder's path.
pub(crate) fn filters(dir: &Path) -> Vec<(String, String)> {
    path_filters(&[(dir, "[DIR]")])
}

/// Snapshot filters that put each label in place of its path (as given and canonical);
/// a path inside another comes first.
pub(crate) fn path_filters(paths: &[(&Path, &str)]) -> Vec<(String, String)> {
    let mut filters = Vec::new();
    for (path, label) in paths {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        for form in [canonical.as_path(), path] {
            let filter = (
                regex_escape(&form.display().to_string()),
                (*label).to_owned(),
            );
            if !filters.contains(&filter) {
                filters.push(filter);
            }
        }
    }
    filters
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '-' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

/// Asserts a command's snapshot with a temporary folder's path filtered.
#[macro_export]
macro_rules! snapshot {
    ($dir:expr, $command:expr) => {
        $crate::snapshot_filtered!($crate::filters($dir), $command)
    };
}

/// Asserts a command's snapshot with `filters` (regex, replacement) applied.
#[macro_export]
macro_rules! snapshot_filtered {
    ($filters:expr, $command:expr) => {{
        let filters: Vec<(String, String)> = $filters;
        let filters: Vec<(&str, &str)> = filters.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        insta::with_settings!({ filters => filters }, {
            insta_cmd::assert_cmd_snapshot!($command);
        });
    }};
}
