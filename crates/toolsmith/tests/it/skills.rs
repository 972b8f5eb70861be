//! `toolsmith skills`: Agent Skills written from tool definitions, valid
//! by the Agent Skills format, runnable through their script, and `--check`ed for CI.

use std::path::Path;

use crate::{folder, toolsmith};

const TOOLS: &str = r#"
def greet(name: str) -> str:
    """Greet someone by name.

    Args:
        name: Who to greet.
    """
    return "Hello, " + name + "!"

mcp.tool(greet, title = "Greeting", tags = ["people"], examples = [{"args": {"name": "Ada"}, "expect": {"text": "Hello, Ada!"}}])

def shout(text: str) -> str:
    """Say a text loudly."""
    return text.upper()

mcp.tool(shout, tags = ["people", "noise"])
"#;

/// The front matter of a `SKILL.md` as (name, description), checked against the Agent
/// Skills format: `name` 1-64 characters of lowercase letters, digits and single hyphens,
/// no hyphen at an end, equal to its folder's name; `description` 1-1024 characters.
fn front_matter(skill: &Path) -> (String, String) {
    let text = std::fs::read_to_string(skill.join("SKILL.md")).unwrap();
    let rest = text
        .strip_prefix("---\n")
        .expect("front matter opens the file");
    let (header, _) = rest.split_once("\n---\n").expect("front matter is closed");
    let mut name = None;
    let mut description = None;
    for line in header.lines() {
        if let Some(value) = line.strip_prefix("name: ") {
            name = Some(value.to_owned());
        } else if let Some(value) = line.strip_prefix("description: ") {
            let parsed: String = serde_json::from_str(value).expect("a double-quoted scalar");
            description = Some(parsed);
        }
    }
    let (name, description) = (name.unwrap(), description.unwrap());
    assert!((1..=64).contains(&name.len()), "{name}");
    assert!(
        name.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "{name}"
    );
    assert!(
        !name.starts_with('-') && !name.ends_with('-') && !name.contains("--"),
        "{name}"
    );
    assert_eq!(name, skill.file_name().unwrap().to_str().unwrap());
    assert!(
        (1..=1024).contains(&description.chars().count()),
        "{description}"
    );
    (name, description)
}

fn skills(dir: &Path, out: &Path, more: &[&str]) -> std::process::Output {
    toolsmith()
        .arg("skills")
        .arg(dir)
        .arg("--out")
        .arg(out)
        .args(more)
        .output()
        .unwrap()
}

#[test]
fn skills_follow_the_format_and_their_script_runs_the_tool() {
    let dir = folder(&[("people.star", TOOLS)]);
    let out = tempfile::tempdir().unwrap();
    let written = skills(dir.path(), out.path(), &["--by", "tag"]);
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|entry| front_matter(&entry.unwrap().path()).0)
        .collect();
    names.sort();
    assert_eq!(names, ["noise", "people"]);
    let (_, description) = front_matter(&out.path().join("people"));
    assert!(description.contains("Greeting (greet)"), "{description}");
    let body = std::fs::read_to_string(out.path().join("people/SKILL.md")).unwrap();
    assert!(
        body.contains("| `name` | string | yes | Who to greet. |"),
        "{body}"
    );
    assert!(
        body.contains(r#"scripts/call.sh greet --args '{"name":"Ada"}'"#),
        "{body}"
    );

    // The script is how an agent without MCP runs the tool.
    let ran = std::process::Command::new(out.path().join("people/scripts/call.sh"))
        .args(["greet", "name=Ada"])
        .env("PATH", path_with_toolsmith())
        .env_remove("TOOLSMITH_TOOLS")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout).trim(), "Hello, Ada!");
}

#[test]
fn every_tool_lands_in_a_skill_when_a_profile_leaves_one_out() {
    // One skill per profile silently dropped the tools no profile names (5 of the 10
    // example tools): they go to a skill named after the server.
    let dir = folder(&[
        ("people.star", TOOLS),
        (
            "toolsmith.toml",
            "[server]\nname = \"acme\"\ninstructions = \"Acme's people tools.\"\n\n[profiles.greeting]\ndescription = \"Greetings\"\ntools = [\"greet\"]\n",
        ),
    ]);
    let out = tempfile::tempdir().unwrap();
    let written = skills(dir.path(), out.path(), &["--json"]);
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&written.stdout).unwrap();
    let mut covered: Vec<(String, Vec<String>)> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| {
            (
                skill["name"].as_str().unwrap().to_owned(),
                serde_json::from_value(skill["tools"].clone()).unwrap(),
            )
        })
        .collect();
    covered.sort();
    assert_eq!(
        covered,
        [
            ("acme".to_owned(), vec!["shout".to_owned()]),
            ("greeting".to_owned(), vec!["greet".to_owned()]),
        ]
    );
    let (_, description) = front_matter(&out.path().join("acme"));
    assert!(
        description.starts_with("Acme's people tools."),
        "{description}"
    );
    assert_eq!(
        skills(dir.path(), out.path(), &["--check"]).status.code(),
        Some(0)
    );
}

#[test]
fn check_fails_when_a_description_changes_and_passes_after_regenerating() {
    let dir = folder(&[("people.star", TOOLS)]);
    let out = tempfile::tempdir().unwrap();
    assert!(skills(dir.path(), out.path(), &[]).status.success());
    assert_eq!(
        skills(dir.path(), out.path(), &["--check"]).status.code(),
        Some(0)
    );

    std::fs::write(
        dir.path().join("people.star"),
        TOOLS.replace("Say a text loudly.", "Say a text as loudly as possible."),
    )
    .unwrap();
    let stale = skills(dir.path(), out.path(), &["--check"]);
    assert_eq!(stale.status.code(), Some(1));
    let said = String::from_utf8_lossy(&stale.stderr);
    let name = std::fs::read_dir(out.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    assert!(
        said.contains(&format!("{}/SKILL.md changed", name.to_string_lossy())),
        "{said}"
    );
    assert!(
        said.contains("hint: regenerate them: toolsmith skills"),
        "{said}"
    );

    assert!(skills(dir.path(), out.path(), &[]).status.success());
    assert_eq!(
        skills(dir.path(), out.path(), &["--check"]).status.code(),
        Some(0)
    );
}

#[test]
fn regenerating_removes_its_stale_skills_and_never_touches_others() {
    let dir = folder(&[("people.star", TOOLS)]);
    let out = tempfile::tempdir().unwrap();
    assert!(
        skills(dir.path(), out.path(), &["--by", "tool"])
            .status
            .success()
    );
    std::fs::create_dir(out.path().join("mine")).unwrap();
    std::fs::write(
        out.path().join("mine/SKILL.md"),
        "---\nname: mine\ndescription: Mine.\n---\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("people.star"),
        TOOLS.replace("mcp.tool(shout, tags = [\"people\", \"noise\"])", ""),
    )
    .unwrap();
    assert!(
        skills(dir.path(), out.path(), &["--by", "tool"])
            .status
            .success()
    );
    let mut left: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["greet", "mine"]);

    // A folder of a skill's name that `skills` did not write is refused, not overwritten.
    std::fs::remove_dir_all(out.path().join("greet")).unwrap();
    std::fs::create_dir(out.path().join("greet")).unwrap();
    std::fs::write(out.path().join("greet/SKILL.md"), "mine\n").unwrap();
    let refused = skills(dir.path(), out.path(), &["--by", "tool"]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(out.path().join("greet/SKILL.md")).unwrap(),
        "mine\n"
    );
}

#[test]
fn the_bundled_example_skills_match_the_example_tools() {
    // The skills in examples/skills are generated from examples/tools;
    // this fails when a tool changes and they were not regenerated with
    // `toolsmith skills examples/tools --out examples/skills`.
    let checked = toolsmith()
        .args([
            "skills",
            "examples/tools",
            "--out",
            "examples/skills",
            "--check",
        ])
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    for entry in std::fs::read_dir(crate::workspace().join("examples/skills")).unwrap() {
        front_matter(&entry.unwrap().path());
    }
}

/// `install CLIENT --skills` writes into the client's own skills folder,
/// which other tools folders and people share: only this folder's skills change.
#[test]
fn install_skills_shares_the_clients_folder_with_other_skills() {
    use crate::install::install;

    let home = tempfile::tempdir().unwrap();
    let people = folder(&[("people.star", TOOLS)]);
    let other = folder(&[(
        "echo.star",
        "def echo(text: str) -> str:\n    \"\"\"Repeat a text back.\"\"\"\n    return text\n\nmcp.tool(echo)\n",
    )]);
    let skills_dir = home.path().join(".claude/skills");
    std::fs::create_dir_all(skills_dir.join("mine")).unwrap();
    std::fs::write(
        skills_dir.join("mine/SKILL.md"),
        "---\nname: mine\ndescription: By hand.\n---\n",
    )
    .unwrap();
    let run = |dir: &Path, more: &[&str]| {
        let mut args = vec!["claude-code", dir.to_str().unwrap(), "--skills"];
        args.extend(more);
        if !more.contains(&"--by") {
            args.extend(["--by", "tool"]);
        }
        install(home.path(), &args).output().unwrap()
    };

    let dry = run(people.path(), &["--dry-run"]);
    assert!(dry.status.success(), "{dry:?}");
    assert!(
        String::from_utf8_lossy(&dry.stderr).contains("would write"),
        "{dry:?}"
    );
    assert!(
        !skills_dir.join("greet").exists(),
        "a dry run writes nothing"
    );

    assert!(run(people.path(), &[]).status.success());
    assert!(run(other.path(), &[]).status.success());
    for name in ["greet", "shout", "echo", "mine"] {
        assert!(skills_dir.join(name).join("SKILL.md").exists(), "{name}");
    }
    // The script runs the tool of the folder it was written from.
    let called = std::process::Command::new(skills_dir.join("echo/scripts/call.sh"))
        .args(["echo", "text=hi"])
        .env("PATH", path_with_toolsmith())
        .env_remove("TOOLSMITH_TOOLS")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&called.stdout).trim(),
        "hi",
        "{called:?}"
    );

    // Reinstalling one folder, now grouped otherwise, replaces its skills and no others.
    let regrouped = run(people.path(), &["--by", "tag"]);
    assert!(regrouped.status.success(), "{regrouped:?}");
    assert!(!skills_dir.join("greet").exists() && skills_dir.join("people").exists());
    assert!(skills_dir.join("echo").exists() && skills_dir.join("mine").exists());

    // --remove takes this folder's skills away and leaves the rest.
    let removed = run(people.path(), &["--by", "tag", "--remove"]);
    assert!(removed.status.success(), "{removed:?}");
    assert!(!skills_dir.join("people").exists() && !skills_dir.join("noise").exists());
    assert!(skills_dir.join("echo").exists() && skills_dir.join("mine").exists());

    // A skill of the same name from another folder is never overwritten.
    let clash = folder(&[(
        "echo.star",
        "def echo(text: str) -> str:\n    \"\"\"Echo it.\"\"\"\n    return text\n\nmcp.tool(echo)\n",
    )]);
    let refused = run(clash.path(), &[]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("written from another tools folder"),
        "{refused:?}"
    );
}

/// A client that reads no skills says which ones do.
#[test]
fn install_skills_into_a_client_without_skills_names_those_with() {
    let home = tempfile::tempdir().unwrap();
    let people = folder(&[("people.star", TOOLS)]);
    let output = crate::install::install(
        home.path(),
        &["zed", people.path().to_str().unwrap(), "--skills"],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("Zed reads no Agent Skills"), "{said}");
    assert!(said.contains("claude-code, codex, gemini"), "{said}");
}

/// PATH with the toolsmith binary's folder first, as the skill scripts need it.
fn path_with_toolsmith() -> std::ffi::OsString {
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    std::env::join_paths(
        std::iter::once(binary.parent().unwrap().to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap()
}
