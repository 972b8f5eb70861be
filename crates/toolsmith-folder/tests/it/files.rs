//! Reading a folder's files: only regular files, never more than the cap, and nothing that
//! blocks the load.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use toolsmith_folder::ToolFolder;
use toolsmith_model::Diagnostic;

fn tool(name: &str) -> String {
    format!(
        "def {name}(text: str) -> str:\n    \"\"\"Echo.\"\"\"\n    return text\n\nmcp.tool({name})\n"
    )
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// `root` loaded on a thread of its own, or a failure when the load does not end: a load
/// blocked on a FIFO never would.
fn load_within(root: &Path, limit: Duration) -> ToolFolder {
    let (sender, receiver) = mpsc::channel();
    let root = root.to_owned();
    std::thread::spawn(move || {
        let _ = sender.send(ToolFolder::load(&root));
    });
    receiver
        .recv_timeout(limit)
        .expect("the folder loads without waiting on a FIFO")
        .expect("the folder is a readable folder")
}

fn names(folder: &ToolFolder) -> Vec<String> {
    folder
        .catalog()
        .definitions()
        .map(|definition| definition.name.clone())
        .collect()
}

fn about<'a>(folder: &'a ToolFolder, file: &str) -> &'a Diagnostic {
    folder
        .catalog()
        .diagnostics()
        .iter()
        .find(|diagnostic| diagnostic.location.path.ends_with(file))
        .unwrap_or_else(|| {
            panic!(
                "no diagnostic for {file}: {:?}",
                folder.catalog().diagnostics()
            )
        })
}

#[test]
fn an_oversized_tool_file_is_a_diagnostic_and_the_others_load() {
    // A 2 GB `.star` file was read whole and stayed resident after its load timed out.
    // Sparse, and small enough that reading it whole (as before) stays bounded.
    let dir = tempfile::tempdir().unwrap();
    let big = std::fs::File::create(dir.path().join("big.star")).unwrap();
    big.set_len(16 << 20).unwrap();
    std::fs::write(dir.path().join("echo.star"), tool("echo")).unwrap();
    let folder = load_within(dir.path(), Duration::from_secs(30));
    assert_eq!(names(&folder), ["echo"]);
    let diagnostic = about(&folder, "big.star");
    assert_eq!(diagnostic.rule, "file-too-large", "{diagnostic}");
    assert!(
        diagnostic.message.contains("16777216 bytes"),
        "{diagnostic}"
    );
    assert!(diagnostic.message.contains("1048576 bytes"), "{diagnostic}");
    let help = diagnostic.help.as_deref().unwrap_or_default();
    assert!(help.contains("TOOLSMITH_MAX_FILE_SIZE"), "{help}");
}

#[test]
fn fifos_where_files_are_expected_are_skipped_at_once() {
    // A FIFO named `x.star` (or `toolsmith.toml`, a prompt, a resource, a link to one)
    // hung the load on its open, waiting for a writer that never came.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tools");
    std::fs::create_dir_all(root.join("prompts")).unwrap();
    std::fs::create_dir_all(root.join("resources")).unwrap();
    std::fs::write(root.join("echo.star"), tool("echo")).unwrap();
    mkfifo(&root.join("x.star"));
    mkfifo(&root.join("toolsmith.toml"));
    mkfifo(&root.join("prompts/ask.md"));
    mkfifo(&root.join("resources/notes.txt"));
    // A link to a FIFO outside the folder: the target is what counts.
    mkfifo(&dir.path().join("outside"));
    std::os::unix::fs::symlink(dir.path().join("outside"), root.join("linked.star")).unwrap();

    let folder = load_within(&root, Duration::from_secs(30));
    assert_eq!(names(&folder), ["echo"]);
    for file in [
        "x.star",
        "toolsmith.toml",
        "prompts/ask.md",
        "resources/notes.txt",
        "linked.star",
    ] {
        let diagnostic = about(&folder, file);
        assert_eq!(diagnostic.rule, "unreadable-file", "{diagnostic}");
        assert!(
            diagnostic
                .message
                .contains("it is a FIFO, not a regular file"),
            "{diagnostic}"
        );
    }
}
