//! The server's `tools/call` and `toolsmith call` / `toolsmith test` (toolsmith-folder's
//! `Caller`) follow one call policy: the same tool gets the same answer
//! on both paths when its watchdog fires or it crashes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith_folder::Caller;
use toolsmith_model::{
    CallContext, CallFailure, Catalog, HARD_WATCHDOG_GRACE, JsonObject, Tool, ToolDefinition,
    ToolFailure, ToolReturn,
};
use toolsmith_server::{ServerOptions, ServerState};

use crate::{call, stdio_client, text};

/// The timeout of the tools that run past it.
const TIMEOUT: Duration = Duration::from_millis(200);

/// What a test tool does once called.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Blocks as if in one long native operation, deaf to its interrupt.
    Stuck,
    /// Ignores its deadline, but stops as soon as it is asked to.
    StopsWhenAsked,
    /// Panics.
    Panics,
}

struct TestTool {
    definition: ToolDefinition,
    behaviour: Behaviour,
}

impl Tool for TestTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, _: &JsonObject, context: &CallContext) -> Result<ToolReturn, ToolFailure> {
        match self.behaviour {
            Behaviour::Stuck => {
                std::thread::sleep(Duration::from_secs(5));
                Ok(ToolReturn::Text("woke up".into()))
            }
            Behaviour::StopsWhenAsked => {
                while context.interrupt.reason().is_none() {
                    std::thread::sleep(Duration::from_millis(2));
                }
                let asked = if Instant::now() >= context.deadline + HARD_WATCHDOG_GRACE {
                    "one grace past the deadline"
                } else {
                    "before the grace was over"
                };
                Ok(ToolReturn::Text(format!("asked to stop {asked}")))
            }
            Behaviour::Panics => panic!("a bug in the tool"),
        }
    }
}

fn catalog() -> Arc<Catalog> {
    // The panicking tool's timeout is long: a crash must be told from a timeout however
    // slowly the panic is reported.
    let tools = [
        ("stuck", Behaviour::Stuck, TIMEOUT),
        ("stops_when_asked", Behaviour::StopsWhenAsked, TIMEOUT),
        ("panics", Behaviour::Panics, Duration::from_secs(30)),
    ]
    .map(|(name, behaviour, timeout)| {
        let mut definition = ToolDefinition::new(name, "A test tool.", JsonObject::new());
        definition.timeout = Some(timeout);
        Arc::new(TestTool {
            definition,
            behaviour,
        }) as Arc<dyn Tool>
    });
    Arc::new(Catalog::new(tools.into(), Vec::new()))
}

/// What `toolsmith call` and the server's `tools/call` answer to a call of `tool`.
async fn answers(tool: &str) -> (String, String) {
    let catalog = catalog();
    let caller = Caller::new(Arc::clone(&catalog), std::env::temp_dir());
    let name = tool.to_owned();
    let cli = tokio::task::spawn_blocking(move || {
        let outcome = caller.call(&name, JsonObject::new()).unwrap();
        assert!(
            outcome.is_error || name == "stops_when_asked",
            "{outcome:?}"
        );
        outcome.joined_text()
    })
    .await
    .unwrap();
    let options = ServerOptions::new(std::env::temp_dir());
    let client = stdio_client(ServerState::new(catalog, options)).await;
    let result = tokio::time::timeout(
        Duration::from_secs(15),
        client.call_tool(call(tool, json!({}))),
    )
    .await
    .expect("the server answers")
    .unwrap();
    (cli, text(&result))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_tool_is_abandoned_in_the_same_words_on_both_paths() {
    let (cli, server) = answers("stuck").await;
    assert_eq!(
        cli,
        CallFailure::Abandoned { after: TIMEOUT }.message("stuck")
    );
    assert_eq!(server, cli);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_paths_ask_a_tool_to_stop_one_grace_past_its_deadline() {
    let (cli, server) = answers("stops_when_asked").await;
    assert_eq!(cli, "asked to stop one grace past the deadline");
    assert_eq!(server, cli);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_reads_the_same_on_both_paths() {
    let (cli, server) = answers("panics").await;
    assert_eq!(cli, CallFailure::Crashed.message("panics"));
    assert_eq!(server, cli);
}
