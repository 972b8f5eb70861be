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
