//! Getting Toolsmith without a source build (docs/install-toolsmith.md): the version names
//! its build, completion scripts load, and the Python wheel (`toolsmith-mcp`, built by
//! maturin) and the npm packages (`toolsmith-mcp` and its platform package, from
//! `npm/stage.mjs`) install into a fresh environment and serve a folder over stdio.
//!
//! The only way to get Toolsmith was a ten-minute source build.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::serve_process::ServeProcess;
use crate::{folder, require, toolsmith, workspace};

/// A folder with one tool, for the installed commands to serve.
fn greeting_folder() -> tempfile::TempDir {
    folder(&[(
        "greet.star",
        "def greet(name: str) -> str:\n    \"\"\"Greet someone by name.\"\"\"\n    return \"hello \" + name\n\nmcp.tool(greet)\n",
    )])
}

/// `command` (an installed `toolsmith`, with `serve DIR` appended) answers `tools/list` and
/// a call over stdio.
fn serves_over_stdio(mut command: Command, dir: &Path) {
    command.arg("serve").arg(dir);
    let mut server = ServeProcess::spawn(command);
    server.initialize();
    assert_eq!(server.tool_names(), ["greet"]);
    let result = server.request(
        "tools/call",
        &json!({"name": "greet", "arguments": {"name": "Ada"}}),
    );
    assert_eq!(
        result["result"]["content"][0]["text"], "hello Ada",
        "{result:#}"
    );
}

/// `toolsmith 0.2.0 (abc1234 2026-12-08)`, or `(unknown commit, built DATE)` without git.
fn check_version_line(line: &str) {
    let rest = line
        .strip_prefix("toolsmith ")
        .unwrap_or_else(|| panic!("{line}"));
    let (version, build) = rest.split_once(' ').unwrap_or_else(|| panic!("{line}"));
    assert_eq!(version, env!("CARGO_PKG_VERSION"), "{line}");
    let build = build
        .strip_prefix('(')
        .and_then(|build| build.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{line}"));
    let (commit, date) = build.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
    assert!(
        commit == "unknown commit, built"
            || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{line}"
    );
    let parts: Vec<&str> = date.split('-').collect();
    assert!(
        parts.len() == 3 && parts.iter().all(|part| part.parse::<u32>().is_ok()),
        "{line}"
    );
}

/// `--version` names the commit and the date of the build, so a bug report says which
/// build it is about.
#[test]
fn the_version_names_the_commit_and_the_build_date() {
    let output = toolsmith().arg("--version").output().unwrap();
    assert!(output.status.success());
    check_version_line(String::from_utf8(output.stdout).unwrap().trim());
}

/// Each shell's script is generated, and bash loads its own without an error.
#[test]
fn completion_scripts_load() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let output = toolsmith().args(["completions", shell]).output().unwrap();
        assert!(output.status.success(), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        assert!(script.contains("toolsmith"), "{shell}: {script}");
        assert!(
            script.contains("bundle"),
            "{shell}: no subcommand in {script}"
        );
    }
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    let loaded = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -e; source <('{}' completions bash); complete -p toolsmith",
            binary.display()
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&loaded.stderr);
    assert!(loaded.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&loaded.stdout).contains("toolsmith"),
        "bash registered no completion"
    );
}

/// The npm way: the launcher and this platform's package staged by `npm/stage.mjs`, packed
/// with `npm pack`, installed offline into an empty project, and run through `npx`.
#[test]
#[ignore = "needs npm (CI runs it: cargo test -- --include-ignored)"]
fn the_npm_packages_install_and_serve() {
    let npm = program("npm", "npm (it comes with Node.js)");
    let Some(platform) = npm_platform() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let binary = stripped_binary(work.path());
    let staged = work.path().join("staged");
    let output = Command::new("node")
        .arg(workspace().join("npm/stage.mjs"))
        .args(["--version", env!("CARGO_PKG_VERSION"), "--out"])
        .arg(&staged)
        .arg("--binary")
        .arg(format!("{platform}={}", binary.display()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tarballs = work.path().join("tarballs");
    std::fs::create_dir(&tarballs).unwrap();
    run(Command::new(&npm)
        .args(["pack", "--silent", "--pack-destination"])
        .arg(&tarballs)
        .arg(staged.join("toolsmith-mcp"))
        .arg(staged.join(format!("toolsmith-mcp-{platform}"))));
    let project = work.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("package.json"), "{\"private\": true}\n").unwrap();
    let mut install = Command::new(&npm);
    // Offline: the other platforms' packages are optional and left out, never fetched.
    install
        .args([
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .current_dir(&project);
    for entry in std::fs::read_dir(&tarballs).unwrap() {
        install.arg(entry.unwrap().path());
    }
    run(&mut install);

    let npx = npm.with_file_name("npx");
    let output = run(Command::new(&npx)
        .args(["--offline", "toolsmith", "--version"])
        .current_dir(&project));
    check_version_line(output.trim());
    let mut command = Command::new(&npx);
    command
        .args(["--offline", "toolsmith"])
        .current_dir(&project);
    serves_over_stdio(command, greeting_folder().path());
}

/// Where maturin builds the wheel's binary, relative to the workspace.
const WHEEL_TARGET: &str = "target/wheel";

/// The Python way: the wheel maturin builds from `pyproject.toml` (dev profile), installed
/// into a fresh virtual environment, where both `toolsmith` and `toolsmith-mcp` (what `uvx
/// toolsmith-mcp` runs) work.
///
/// maturin builds in a target directory of its own, [`WHEEL_TARGET`] (which `.ci/run` fills
/// before the tests, so this only packages): its `cargo rustc -p toolsmith` resolves features
/// for `toolsmith` alone, and in the shared `target/` it would link a second
/// `target/debug/toolsmith` over the one every other test is running, which then fails to
/// start while the file is replaced.
#[test]
#[ignore = "needs maturin in .ci/packaging/.venv (CI runs it: cargo test -- --include-ignored)"]
fn the_wheel_installs_and_serves() {
    let maturin = workspace().join(".ci/packaging/.venv/bin/maturin");
    let maturin = if maturin.is_file() {
        maturin
    } else {
        program(
            "maturin",
            "maturin (python3 -m venv .ci/packaging/.venv && .ci/packaging/.venv/bin/pip install -r .ci/packaging/requirements.txt)",
        )
    };
    let work = tempfile::tempdir().unwrap();
    let wheels = work.path().join("wheels");
    run(Command::new(&maturin)
        .args(["build", "--profile", "dev", "--quiet", "--out"])
        .arg(&wheels)
        .env("CARGO_TARGET_DIR", workspace().join(WHEEL_TARGET))
        .current_dir(workspace()));
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .expect("maturin wrote no wheel");
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("toolsmith_mcp-"), "{name}");

    let venv = work.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run(Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg(&wheel));
    let installed = venv.join("bin/toolsmith");
    check_version_line(run(Command::new(&installed).arg("--version")).trim());
    // `toolsmith-mcp`, the command `uvx toolsmith-mcp` runs, hands over to `toolsmith`.
    let named_after_package = venv.join("bin/toolsmith-mcp");
    check_version_line(run(Command::new(&named_after_package).arg("--version")).trim());
    serves_over_stdio(Command::new(&named_after_package), greeting_folder().path());
}

/// Runs a command that must succeed; its stdout.
fn run(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `program`'s path on `PATH`; the test fails without it, saying it needs `what`.
fn program(program: &str, what: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file());
    require(found.is_some(), what);
    found.unwrap()
}

/// This machine's npm platform (`linux-x64`), or `None` where no package is staged.
fn npm_platform() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("linux-x64"),
        ("linux", "aarch64") => Some("linux-arm64"),
        ("macos", "aarch64") => Some("darwin-arm64"),
        ("macos", "x86_64") => Some("darwin-x64"),
        _ => None,
    }
}

/// The built `toolsmith` without its symbols, as the `dist` profile ships it: half the
/// bytes for `npm pack` to compress. The binary itself where `strip` is missing.
fn stripped_binary(dir: &Path) -> PathBuf {
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    let stripped = dir.join("toolsmith");
    let done = Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&binary)
        .status()
        .is_ok_and(|status| status.success());
    if done { stripped } else { binary }
}
