//! `toolsmith install` never damages or exposes the user's file: in a temporary HOME, the
//! real binary keeps a private file private and a read-only one untouched, loses no entry
//! to a concurrent install, never overwrites a backup, edits a symlink's target, refuses
//! invalid YAML and a FIFO. The writer is one for every format, so JSON stands for all of
//! them except where a format's own parser is the point.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::folder;
use crate::install::install;

const HELLO: &str = r#"
def hello() -> str:
    """Say hello."""
    return "hello"

mcp.tool(hello)
"#;

/// The claude-code entries in `path`, by name.
fn servers(path: &Path) -> serde_json::Map<String, Value> {
    let document: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    document["mcpServers"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Waits for `child` at most 20 seconds (a hang fails the test instead of wedging it).
fn finish(mut child: Child) -> Output {
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let output = child.wait_with_output().unwrap();
            panic!("install hung: {}", stderr(&output));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A 0600 `~/.claude.json` (it holds Claude Code's OAuth credentials) was rewritten as
/// 0644, readable by every user of the machine.
#[test]
fn a_private_file_keeps_its_mode_and_owner() {
    let home = tempfile::tempdir().unwrap();
    let tools = folder(&[("hello.star", HELLO)]);
    let config = home.path().join(".claude.json");
    std::fs::write(&config, r#"{"oauthAccount": {"token": "secret"}}"#).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    // As root, the file can belong to someone else, as a user's file does when root runs
    // the install; then its owner must stay that user.
    let foreign = std::os::unix::fs::chown(&config, Some(65534), Some(65534)).is_ok();
    let owner = std::fs::metadata(&config).unwrap().uid();

    let output = install(
        home.path(),
        &["claude-code", tools.path().to_str().unwrap()],
    )
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));

    assert_eq!(mode(&config), 0o600);
    assert_eq!(std::fs::metadata(&config).unwrap().uid(), owner);
    if foreign {
        assert_eq!(std::fs::metadata(&config).unwrap().gid(), 65534);
    }
    let backup = home.path().join(".claude.json.toolsmith.bak");
    assert_eq!(mode(&backup), 0o600);
    assert!(servers(&config).contains_key(tools.path().file_name().unwrap().to_str().unwrap()));
}

/// A 0444 file was replaced by a rename all the same, undoing the user's protection.
#[test]
fn a_read_only_file_is_refused_with_a_hint_and_left_as_it_is() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".claude.json");
    let before = r#"{"mcpServers": {}}"#;
    std::fs::write(&config, before).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o444)).unwrap();

    let output = install(home.path(), &["claude-code", "examples/tools"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("is read-only (mode 0444)"), "{message}");
    assert!(
        message.contains("hint: to let toolsmith edit it"),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    assert_eq!(mode(&config), 0o444);
    assert!(!home.path().join(".claude.json.toolsmith.bak").exists());
}

/// 20 concurrent installs all exited 0 but left 11 of the 20 entries: each renamed its
/// edit of the file as it had read it over the others'.
#[test]
fn twenty_concurrent_installs_keep_all_twenty_entries() {
    let home = tempfile::tempdir().unwrap();
    let tools = folder(&[("hello.star", HELLO)]);
    let dir = tools.path().to_str().unwrap();
    let config = home.path().join(".claude.json");
    std::fs::write(&config, "{}").unwrap();

    let names: Vec<String> = (0..20).map(|index| format!("tools-{index}")).collect();
    let children: Vec<Child> = names
        .iter()
        .map(|name| {
            install(home.path(), &["claude-code", dir, "--name", name])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = finish(child);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let installed = servers(&config);
    for name in &names {
        assert!(installed.contains_key(name), "`{name}` lost: {installed:?}");
    }
}

/// The user's own `FILE.bak` was overwritten, and after two installs the backup no
/// longer held the file as it was before the first.
#[test]
fn the_users_backup_is_untouched_and_the_first_backup_stays() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".claude.json");
    let original = r#"{"theme": "dark"}"#;
    std::fs::write(&config, original).unwrap();
    let users = home.path().join(".claude.json.bak");
    std::fs::write(&users, "my own backup").unwrap();

    for name in ["first", "second"] {
        let output = install(
            home.path(),
            &["claude-code", "examples/tools", "--name", name],
        )
        .output()
        .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let message = stderr(&output);
        assert!(
            message.contains("before toolsmith first changed it is kept in")
                && message.contains(".claude.json.toolsmith.bak"),
            "{message}"
        );
    }
    assert_eq!(std::fs::read_to_string(&users).unwrap(), "my own backup");
    let backup = home.path().join(".claude.json.toolsmith.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
    let installed = servers(&config);
    assert!(installed.contains_key("first") && installed.contains_key("second"));
}

/// A symlinked config (kept in a dotfiles folder) was replaced by a regular file, and the
/// file it linked to was left without the entry.
#[test]
fn a_symlinked_file_stays_a_link_and_its_target_is_edited() {
    let home = tempfile::tempdir().unwrap();
    let dotfiles = home.path().join("dotfiles");
    std::fs::create_dir(&dotfiles).unwrap();
    let target = dotfiles.join("claude.json");
    std::fs::write(&target, r#"{"theme": "dark"}"#).unwrap();
    let link = home.path().join(".claude.json");
    std::os::unix::fs::symlink("dotfiles/claude.json", &link).unwrap();

    let output = install(
        home.path(),
        &["claude-code", "examples/tools", "--name", "tools"],
    )
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));

    let metadata = std::fs::symlink_metadata(&link).unwrap();
    assert!(metadata.file_type().is_symlink());
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("dotfiles/claude.json")
    );
    assert!(servers(&target).contains_key("tools"));
    assert!(dotfiles.join("claude.json.toolsmith.bak").is_file());
}

/// A YAML file with a key indented off its siblings was read as something, and edited.
#[test]
fn invalid_yaml_is_refused_and_left_as_it_is() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".config/goose/config.yaml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let before = "GOOSE_PROVIDER: openai\n GOOSE_MODEL: gpt-4o\nextensions:\n";
    std::fs::write(&config, before).unwrap();

    let output = install(home.path(), &["goose", "examples/tools"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("cannot edit"), "{message}");
    assert!(message.contains("indentation"), "{message}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}

/// A FIFO at a client's path hung `install` (and `install --list`) on its open.
#[test]
fn a_fifo_at_the_clients_path_is_refused_without_hanging() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".claude.json");
    nix::unistd::mkfifo(&config, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();

    let child = install(home.path(), &["claude-code", "examples/tools"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = finish(child);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("is a named pipe (FIFO), not a regular file"),
        "{message}"
    );

    let child = install(home.path(), &["--list", "examples/tools", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = finish(child);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let claude = report["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|client| client["client"] == "claude-code" && client["scope"] == "user")
        .unwrap();
    assert!(
        claude["problem"]
            .as_str()
            .is_some_and(|problem| problem.contains("named pipe")),
        "{claude}"
    );
}
