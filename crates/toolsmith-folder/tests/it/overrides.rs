//! Per-transport `overrides` (docs/serve.md, "Per-transport overrides"): the same folder
//! publishes different tool properties over stdio and HTTP.

use toolsmith_folder::ToolFolder;
use toolsmith_model::Transport;

const STAR: &str = r#"
def notebook_write(text: str) -> str:
    """Write text into the open notebook.

    Args:
        text: What to write.
    """
    return text

mcp.tool(
    notebook_write,
    overrides = {
        "http": {"description": "Write text into a cloud notebook.", "read_only": False, "timeout": "5s"},
    },
)
"#;

fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("written");
    }
    dir
}

#[test]
fn the_transport_picks_its_overrides() {
    let dir = folder(&[("notebook.star", STAR)]);
    let description = |transport: Option<Transport>| {
        let loaded = ToolFolder::load_for(dir.path(), transport).expect("loads");
        let tool = loaded.catalog().get("notebook_write").expect("the tool");
        (
            tool.definition().description.clone(),
            tool.definition().timeout,
        )
    };
    assert_eq!(
        description(Some(Transport::Http)),
        (
            "Write text into a cloud notebook.".to_owned(),
            Some(std::time::Duration::from_secs(5))
        )
    );
    assert_eq!(
        description(Some(Transport::Stdio)).0,
        "Write text into the open notebook."
    );
    assert_eq!(description(None).0, "Write text into the open notebook.");
}

#[test]
fn an_invalid_override_leaves_the_tool_out_with_a_reason() {
    let manifest = "description = \"Echo the text back.\"\ncommand = [\"cat\"]\n\n[overrides.http]\ndescripton = \"typo\"\n";
    let dir = folder(&[("echo.toml", manifest)]);
    let loaded = ToolFolder::load_for(dir.path(), Some(Transport::Http)).expect("loads");
    assert!(loaded.catalog().get("echo").is_none());
    let diagnostic = &loaded.catalog().diagnostics()[0];
    assert_eq!(diagnostic.rule, "invalid-override");
    assert_eq!(
        diagnostic.message,
        "tool `echo`: `overrides.http` has unknown property `descripton`"
    );
    assert_eq!(
        diagnostic.help.as_deref(),
        Some("did you mean `description`?")
    );
    // Over stdio the tool has no override and loads.
    let stdio = ToolFolder::load_for(dir.path(), Some(Transport::Stdio)).expect("loads");
    assert!(stdio.catalog().get("echo").is_some());
}
