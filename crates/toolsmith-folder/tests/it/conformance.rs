//! `examples/conformance`: the conformance suite's fixture loads cleanly and has the exact
//! names and contents the suite checks (harness/CONFORMANCE.md).

use std::path::PathBuf;

use serde_json::json;
use toolsmith_folder::ToolFolder;
use toolsmith_model::{JsonObject, NoResources};

use crate::arguments;

fn fixture() -> ToolFolder {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/conformance");
    ToolFolder::load(&root).expect("examples/conformance is a folder")
}

#[test]
fn loads_without_diagnostics() {
    let folder = fixture();
    assert!(
        folder.catalog().diagnostics().is_empty(),
        "{:#?}",
        folder.catalog().diagnostics()
    );
    assert_eq!(
        folder.config().name.as_deref(),
        Some("toolsmith-conformance")
    );
}

#[test]
fn has_every_tool_the_suite_calls() {
    let folder = fixture();
    let names: Vec<&str> = folder
        .catalog()
        .definitions()
        .map(|d| d.name.as_str())
        .collect();
    for expected in [
        "json_schema_2020_12_tool",
        "test_audio_content",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "test_embedded_resource",
        "test_error_handling",
        "test_image_content",
        "test_multiple_content_types",
        "test_sampling",
        "test_simple_text",
        "test_tool_with_logging",
        "test_tool_with_progress",
    ] {
        assert!(
            names.contains(&expected),
            "missing tool `{expected}` in {names:?}"
        );
    }
    for definition in folder.catalog().definitions() {
        assert!(
            !definition.description.is_empty(),
            "`{}` has no description",
            definition.name
        );
    }
}

#[test]
fn content_tools_return_what_the_suite_checks() {
    let caller = fixture().caller();
    let call = |name: &str| caller.call(name, JsonObject::new()).unwrap().to_json();
    assert_eq!(
        call("test_simple_text")["content"],
        json!([{"type": "text", "text": "This is a simple text response for testing."}])
    );
    let image = call("test_image_content");
    assert_eq!(image["content"][0]["type"], "image");
    assert_eq!(image["content"][0]["mimeType"], "image/png");
    let audio = call("test_audio_content");
    assert_eq!(audio["content"][0]["mimeType"], "audio/wav");
    assert!(
        audio["content"][0]["data"]
            .as_str()
            .unwrap()
            .starts_with("UklGR"),
        "a RIFF header"
    );
    assert_eq!(
        call("test_embedded_resource")["content"][0],
        json!({"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}})
    );
    let mixed = call("test_multiple_content_types");
    let types: Vec<&str> = mixed["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["text", "image", "resource"]);
    assert_eq!(
        mixed["content"][2]["resource"]["text"],
        "{\"test\":\"data\",\"value\":123}"
    );
    let error = call("test_error_handling");
    assert_eq!(error["isError"], true);
    assert_eq!(
        error["content"][0]["text"],
        "This tool intentionally returns an error for testing"
    );
}

#[test]
fn prompts_render_what_the_suite_checks() {
    let folder = fixture();
    let prompts = folder.prompts();
    let resources = folder.resources().as_ref();
    let names: Vec<&str> = prompts.list().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "test_input_required_result_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_simple_prompt",
        ]
    );
    for prompt in prompts.list() {
        assert!(
            prompt.description.is_some(),
            "`{}` has no description",
            prompt.name
        );
    }
    assert_eq!(
        prompts
            .get_result("test_simple_prompt", &JsonObject::new(), &NoResources, None)
            .unwrap()["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
    );
    assert_eq!(
        prompts
            .get_result(
                "test_prompt_with_arguments",
                &arguments(json!({"arg1": "hello", "arg2": "world"})),
                resources,
                None
            )
            .unwrap()["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='hello', arg2='world'"
    );
    assert_eq!(
        prompts
            .get_result(
                "test_prompt_with_embedded_resource",
                &arguments(json!({"resourceUri": "test://example-resource"})),
                resources,
                None
            )
            .unwrap()["messages"],
        json!([
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "test://example-resource", "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
            {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}
        ])
    );
    let image = prompts
        .get_result(
            "test_prompt_with_image",
            &JsonObject::new(),
            resources,
            None,
        )
        .unwrap();
    assert_eq!(image["messages"][0]["content"]["type"], "image");
    assert_eq!(image["messages"][0]["content"]["mimeType"], "image/png");
    assert_eq!(
        image["messages"][1]["content"]["text"],
        "Please analyze the image above."
    );
    // completion/complete for ref/prompt `test_prompt_with_arguments`, argument `arg1`.
    assert_eq!(
        prompts
            .complete("test_prompt_with_arguments", "arg1", "par")
            .unwrap(),
        ["paris", "park", "party"]
    );
}

#[test]
fn resources_read_what_the_suite_checks() {
    let folder = fixture();
    let resources = folder.resources();
    for listed in resources.list() {
        let entry = listed.to_mcp();
        assert!(
            entry["name"].is_string() && entry["description"].is_string(),
            "{entry}"
        );
    }
    assert_eq!(
        resources.read("test://static-text").unwrap().to_mcp(),
        json!({"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."})
    );
    let binary = resources.read("test://static-binary").unwrap().to_mcp();
    assert_eq!(binary["mimeType"], "image/png");
    assert!(binary["blob"].as_str().unwrap().starts_with("iVBORw0KGgo"));
    assert_eq!(
        resources.read("test://template/123/data").unwrap().to_mcp(),
        json!({"uri": "test://template/123/data", "mimeType": "application/json", "text": "{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"})
    );
    assert_eq!(
        resources.templates()[0].to_mcp()["uriTemplate"],
        "test://template/{id}/data"
    );
    assert!(resources.contains("test://watched-resource"));
}
