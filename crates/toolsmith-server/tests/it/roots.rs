//! Command tools run in the client's root (MCP roots), or in the tools folder when the
//! client has none (docs/tools.md, "Command tools").

use serde_json::json;

use crate::{call, state_for, stdio_client, stdio_client_with_roots, text};

/// A folder with one command tool that prints its working directory.
fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("here.toml"),
        "description = \"Print the working directory.\"\ncommand = [\"pwd\"]\n",
    )
    .unwrap();
    dir
}

#[tokio::test]
async fn command_tools_run_in_the_clients_first_directory_root() {
    let tools = folder();
    let project = tempfile::tempdir().unwrap();
    let project_path = project.path().canonicalize().unwrap();
    let roots = vec![
        "https://example.com/not-a-file".to_owned(),
        "file:///no/such/dir".to_owned(),
        format!("file://{}", project_path.display()),
    ];
    let client = stdio_client_with_roots(state_for(tools.path(), 4), roots).await;
    let result = client.call_tool(call("here", json!({}))).await.unwrap();
    assert_eq!(text(&result), project_path.display().to_string());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn without_roots_they_run_in_the_tools_folder() {
    let tools = folder();
    let client = stdio_client(state_for(tools.path(), 4)).await;
    let result = client.call_tool(call("here", json!({}))).await.unwrap();
    let folder_path = tools.path().canonicalize().unwrap();
    assert_eq!(text(&result), folder_path.display().to_string());
    client.cancel().await.unwrap();
}

/// `examples/notes`, whose tools read `notes/` next to their file.
fn notes() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/notes")
}

#[tokio::test]
async fn a_tools_own_files_are_read_the_same_with_and_without_roots() {
    // Under Claude Code, VS Code and Cursor (clients that send roots) `examples/notes` failed:
    // `notes/` was looked up in the user's project, "outside the tool's `fs.read`
    // permission", and the message suggested granting a folder of the project.
    let project = tempfile::tempdir().unwrap();
    let root = format!(
        "file://{}",
        project.path().canonicalize().unwrap().display()
    );
    for client in [
        stdio_client_with_roots(state_for(&notes(), 4), vec![root]).await,
        stdio_client(state_for(&notes(), 4)).await,
    ] {
        let listed = client
            .call_tool(call("notes_list", json!({})))
            .await
            .unwrap();
        assert_eq!(listed.is_error, Some(false), "{}", text(&listed));
        assert_eq!(
            listed.structured_content,
            Some(json!({"result": ["today.txt", "trip.txt"]}))
        );
        let read = client
            .call_tool(call("notes_read", json!({"name": "trip.txt"})))
            .await
            .unwrap();
        assert_eq!(read.is_error, Some(false), "{}", text(&read));
        assert!(text(&read).contains("Bergen"), "{}", text(&read));
        // A note that does not exist is not found: not "outside the permission".
        let missing = client
            .call_tool(call("notes_read", json!({"name": "nope.txt"})))
            .await
            .unwrap();
        assert_eq!(missing.is_error, Some(true));
        assert!(
            text(&missing).contains("was not found"),
            "{}",
            text(&missing)
        );
        assert!(!text(&missing).contains("outside"), "{}", text(&missing));
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn root_paths_mean_the_clients_root() {
    let tools = tempfile::tempdir().unwrap();
    std::fs::write(
        tools.path().join("todo.star"),
        "def todo_read() -> str:\n    \"\"\"Read the project's TODO file.\"\"\"\n    return mcp.read_file(\"root:TODO.txt\")\n\nmcp.tool(todo_read, permissions = {\"fs.read\": [\"root:\"]})\n",
    )
    .unwrap();
    std::fs::write(tools.path().join("TODO.txt"), "the tools folder's").unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("TODO.txt"), "the project's").unwrap();
    let root = format!(
        "file://{}",
        project.path().canonicalize().unwrap().display()
    );
    let client = stdio_client_with_roots(state_for(tools.path(), 4), vec![root]).await;
    let result = client
        .call_tool(call("todo_read", json!({})))
        .await
        .unwrap();
    assert_eq!(text(&result), "the project's");
    client.cancel().await.unwrap();
    // Without roots, `root:` is the tools folder.
    let client = stdio_client(state_for(tools.path(), 4)).await;
    let result = client
        .call_tool(call("todo_read", json!({})))
        .await
        .unwrap();
    assert_eq!(text(&result), "the tools folder's");
    client.cancel().await.unwrap();
}
