//! `toolsmith new`.

use std::path::Path;

use crate::{folder, snapshot, toolsmith};

/// Runs `toolsmith check` and `toolsmith test` on `dir`: no finding, every case passed.
fn assert_check_and_tests_pass(dir: &Path, cases: usize) {
    let output = toolsmith()
        .arg("check")
        .arg(dir)
        .output()
        .expect("toolsmith runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && text.contains("no problems in"),
        "{text}"
    );
    let output = toolsmith()
        .arg("test")
        .arg(dir)
        .output()
        .expect("toolsmith runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.ends_with(&format!("{cases} passed, 0 failed\n")),
        "{stdout}"
    );
}

/// The command `toolsmith new tool ARGS... DIR`.
fn new_tool_command(args: &[&str], dir: &Path) -> std::process::Command {
    let mut command = toolsmith();
    command.args(["new", "tool"]).args(args).arg(dir);
    command
}

/// `toolsmith new tool ARGS... DIR` in an empty temp folder; returns the folder.
fn new_tool(args: &[&str]) -> tempfile::TempDir {
    let dir = folder(&[]);
    new_tool_in(args, dir.path());
    dir
}

/// `toolsmith new tool ARGS... DIR`, which must succeed.
fn new_tool_in(args: &[&str], dir: &Path) {
    let output = new_tool_command(args, dir)
        .output()
        .expect("toolsmith runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn star_tool_passes_its_own_test() {
    let dir = folder(&[]);
    let mut command = toolsmith();
    command.args(["new", "tool", "weather_get"]).arg(dir.path());
    snapshot!(dir.path(), command);
    insta::assert_snapshot!(std::fs::read_to_string(dir.path().join("weather_get.star")).unwrap());
    assert_check_and_tests_pass(dir.path(), 1);
}

#[test]
fn manifest_tool_passes_its_own_test() {
    let dir = new_tool(&["weather_get", "--form", "manifest"]);
    assert!(dir.path().join("weather_get.toml").is_file());
    assert!(dir.path().join("weather_get.star").is_file());
    assert_check_and_tests_pass(dir.path(), 1);
}

#[test]
fn python_command_tool_passes_its_own_test() {
    let dir = folder(&[]);
    let mut command = toolsmith();
    command
        .args([
            "new",
            "tool",
            "text_shout",
            "--form",
            "command",
            "--lang",
            "python",
        ])
        .arg(dir.path());
    snapshot!(dir.path(), command);
    insta::assert_snapshot!(std::fs::read_to_string(dir.path().join("text_shout.toml")).unwrap());
    assert_check_and_tests_pass(dir.path(), 1);
}

#[test]
fn node_command_tool_passes_its_own_test() {
    let dir = new_tool(&["text_shout", "--lang", "node"]);
    assert!(dir.path().join("text_shout.js").is_file());
    assert_check_and_tests_pass(dir.path(), 1);
}

// `--form worker` scaffolds a warm worker with its helper library.
#[test]
fn python_worker_tool_passes_its_own_test() {
    let dir = folder(&[]);
    let args = ["text_shout", "--form", "worker", "--lang", "python"];
    snapshot!(dir.path(), new_tool_command(&args, dir.path()));
    for file in ["text_shout.toml", "text_shout.py"] {
        insta::assert_snapshot!(std::fs::read_to_string(dir.path().join(file)).unwrap());
    }
    assert_check_and_tests_pass(dir.path(), 1);
}

// A second worker of the folder keeps the helper library already there.
#[test]
fn node_workers_share_the_helper_library() {
    let dir = new_tool(&["text_shout", "--form", "worker", "--lang", "node"]);
    assert!(dir.path().join("text_shout.js").is_file());
    let helper = dir.path().join("toolsmith_worker.js");
    std::fs::write(
        &helper,
        "// edited\n".to_owned() + &std::fs::read_to_string(&helper).unwrap(),
    )
    .unwrap();
    new_tool_in(
        &["text_echo", "--form", "worker", "--lang", "node"],
        dir.path(),
    );
    assert!(
        std::fs::read_to_string(&helper)
            .unwrap()
            .starts_with("// edited")
    );
    assert_check_and_tests_pass(dir.path(), 2);
}

#[test]
fn a_bash_worker_says_which_languages_have_a_helper() {
    let dir = folder(&[]);
    let args = ["text_shout", "--form", "worker", "--lang", "bash"];
    snapshot!(dir.path(), new_tool_command(&args, dir.path()));
}

#[test]
fn bash_command_tool_passes_its_own_test() {
    let dir = new_tool(&["text_shout", "--lang", "bash"]);
    assert!(dir.path().join("text_shout.sh").is_file());
    assert_check_and_tests_pass(dir.path(), 1);
}

#[test]
fn every_form_in_one_folder() {
    let dir = new_tool(&["one_star"]);
    for (name, flags) in [
        ("two_manifest", &["--form", "manifest"][..]),
        ("three_node", &["--lang", "node"]),
    ] {
        let output = toolsmith()
            .args(["new", "tool", name])
            .args(flags)
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert_check_and_tests_pass(dir.path(), 3);
}

#[test]
fn new_folder_starts_with_a_tested_tool() {
    let parent = folder(&[]);
    let dir = parent.path().join("my-tools");
    let mut command = toolsmith();
    command.args(["new", "folder"]).arg(&dir);
    snapshot!(parent.path(), command);
    let config = std::fs::read_to_string(dir.join("toolsmith.toml")).unwrap();
    assert!(config.contains("name = \"my-tools\""), "{config}");
    assert!(
        std::fs::read_to_string(dir.join("README.md"))
            .unwrap()
            .contains("toolsmith test")
    );
    assert_check_and_tests_pass(&dir, 1);
}

#[test]
fn refuses_to_overwrite() {
    let dir = folder(&[("README.md", "mine\n")]);
    let mut command = toolsmith();
    command.args(["new", "folder"]).arg(dir.path());
    snapshot!(dir.path(), command);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("README.md")).unwrap(),
        "mine\n"
    );
    assert!(
        !dir.path().join("toolsmith.toml").exists(),
        "nothing is written when one file exists"
    );
}

#[test]
fn refuses_a_name_the_folder_already_has() {
    let dir = new_tool(&["weather_get"]);
    let mut command = toolsmith();
    command
        .args(["new", "tool", "weather_get", "--lang", "bash"])
        .arg(dir.path());
    snapshot!(dir.path(), command);
}

#[test]
fn invalid_name_suggests_a_valid_one() {
    let dir = folder(&[]);
    let mut command = toolsmith();
    command.args(["new", "tool", "Weather-Get"]).arg(dir.path());
    snapshot!(dir.path(), command);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn lang_needs_a_command_tool() {
    let dir = folder(&[]);
    let mut command = toolsmith();
    command
        .args([
            "new",
            "tool",
            "weather_get",
            "--form",
            "star",
            "--lang",
            "node",
        ])
        .arg(dir.path());
    snapshot!(dir.path(), command);
}
