//! Warm command tools through the whole server (issue 21, item 2): `examples/workers/`
//! served over stdio, calls from several client threads at once, and a worker command's
//! load error.

use serde_json::json;

use crate::mcp_client::{McpClient, text};
use crate::{folder, toolsmith, workspace};

#[test]
fn example_workers_answer_concurrent_calls_over_stdio() {
    let examples = workspace().join("examples/workers");
    let client = McpClient::stdio(&[examples.to_str().expect("a UTF-8 path")]);
    let mut names = client.tool_names();
    names.sort();
    assert_eq!(names, ["greet", "shout", "word_count"]);
    let answers: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|thread| {
                let client = &client;
                scope.spawn(move || {
                    (0..25)
                        .map(|call| {
                            let name = format!("{thread}-{call}");
                            client.call_text("greet", &json!({ "name": name }))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("a client thread panicked"))
            .collect()
    });
    for thread in 0..4 {
        for call in 0..25 {
            let expected = format!("Hello, {thread}-{call}!");
            assert_eq!(answers[thread * 25 + call], expected);
        }
    }
    // The same process serves the other tool of `greeter.py`.
    let counted = client.call("word_count", &json!({"text": "one two three"}));
    assert_eq!(
        counted.structured_content,
        Some(json!({"words": 3, "longest": "three"}))
    );
    let shouted = client.try_call("shout", &json!({"text": "hi", "times": 2}));
    match shouted {
        Ok(result) => assert_eq!(text(&result), "HI HI"),
        // Without `node`, the call says the program is missing; CI has it.
        Err(error) => assert!(
            std::env::var("TOOLSMITH_REQUIRE_NODE").is_err() && error.contains("node"),
            "{error}"
        ),
    }
}

#[test]
fn a_worker_command_with_placeholders_is_a_load_error() {
    let dir = folder(&[(
        "greet.toml",
        "description = \"Greet.\"\ncommand = [\"python3\", \"greet.py\", \"{name}\"]\nworker = true\n[[parameters]]\nname = \"name\"\n",
    )]);
    let output = toolsmith().arg("check").arg(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("error[invalid-command]"), "{stdout}");
    assert!(stdout.contains("`worker`"), "{stdout}");
    assert!(
        stdout.contains("reads its arguments from stdin"),
        "{stdout}"
    );
}
