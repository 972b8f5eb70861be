//! A folder of 5,000 command tools behaves like a small one (docs/performance.md):
//! every tool listed and called, each answering as itself, a never-called tool's first call
//! validates its arguments, search finds a tool, and `--watch` republishes only the tool
//! whose file changed, with one `list_changed`; behind `tool_search`, where each tool is read
//! from its file when first needed, they answer the same. Timings live in
//! `bench/bigfolder/`, not here.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve_process::ServeProcess;
use crate::toolsmith;

const TOOLS: usize = 5_000;

/// How many calls the test keeps in flight over its one connection: well under the
/// server's 64 call slots, so no call waits for a slot long enough to be answered busy.
const IN_FLIGHT: usize = 32;

/// The manifest of tool `n`: a command whose result is its own name and the arguments it
/// got (`["record_0007", {"code": …, "count": 7}]`), with a schema that must be compiled to
/// be checked (a pattern, a minimum).
fn manifest(n: usize, description: &str) -> String {
    format!(
        r#"description = "{description}"
command = ["sh", "-c", "read -r arguments; printf '[\"%s\", %s]' \"$0\" \"$arguments\"", "record_{n:04}"]

[[parameters]]
name = "code"
type = "string"
description = "A code of three capital letters, e.g. ABC."
required = true
pattern = "^[A-Z]{{3}}$"

[[parameters]]
name = "count"
type = "integer"
description = "How many, at least {n}."
minimum = {n}
"#
    )
}

fn description(n: usize) -> String {
    if n == 4_321 {
        "Measure the altitude of a volcano from its survey records.".to_owned()
    } else {
        format!("Return the record number {n} of the ledger, with its entries.")
    }
}

/// Arguments valid for tool `n` and unlike any other tool's (the code spells `n` in base
/// 26), so an answer shows which call it was.
fn arguments(n: usize) -> Value {
    let letter = |k: usize| char::from(b'A' + u8::try_from(k % 26).unwrap());
    let code: String = [letter(n / 676), letter(n / 26), letter(n)]
        .iter()
        .collect();
    json!({"code": code, "count": n})
}

/// A temporary folder of [`TOOLS`] manifests, 100 to a subfolder.
fn big_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..TOOLS {
        let sub = dir.path().join(format!("group_{:02}", n / 100));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join(format!("record_{n:04}.toml")),
            manifest(n, &description(n)),
        )
        .unwrap();
    }
    dir
}

/// Every tool `tools/list` shows, page by page.
fn all_tools(server: &mut ServeProcess) -> Vec<Value> {
    let mut tools = Vec::new();
    let mut params = json!({});
    loop {
        let page = server.request("tools/list", &params);
        tools.extend(page["result"]["tools"].as_array().unwrap().iter().cloned());
        match page["result"]["nextCursor"].as_str() {
            Some(cursor) => params = json!({"cursor": cursor}),
            None => return tools,
        }
    }
}

fn serve(dir: &Path, extra: &[&str]) -> ServeProcess {
    let mut args = vec![dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    let mut server = ServeProcess::stdio(&args).with_patience(Duration::from_mins(2));
    server.initialize();
    server
}

/// Calls every tool of the folder with its own [`arguments`], [`IN_FLIGHT`] at a time
/// over the one connection, and checks that each answer is that tool's, to that call.
fn call_every_tool(server: &mut ServeProcess) {
    let mut pending: HashMap<u64, usize> = HashMap::new();
    let (mut next, mut answered) = (0, 0);
    while answered < TOOLS {
        while next < TOOLS && pending.len() < IN_FLIGHT {
            let id = server.send_request(
                "tools/call",
                &json!({"name": format!("record_{next:04}"), "arguments": arguments(next)}),
            );
            pending.insert(id, next);
            next += 1;
        }
        let answer = server.until(|message| {
            message["id"]
                .as_u64()
                .is_some_and(|id| pending.contains_key(&id))
        });
        let n = pending.remove(&answer["id"].as_u64().unwrap()).unwrap();
        assert_ne!(answer["result"]["isError"], true, "record_{n:04}: {answer}");
        assert_eq!(
            answer["result"]["structuredContent"],
            json!({"result": [format!("record_{n:04}"), arguments(n)]}),
            "the answer to the call of record_{n:04}: {answer}"
        );
        answered += 1;
    }
}

#[test]
fn five_thousand_tools_are_listed_callable_and_validated() {
    let dir = big_folder();
    let mut server = serve(dir.path(), &["--search", "never"]);
    let tools = all_tools(&mut server);
    assert_eq!(tools.len(), TOOLS);
    assert_eq!(tools[4_321]["name"], "record_4321");

    // Never called before: its validator is ready on its first call, and checks both
    // the pattern and this tool's own minimum.
    let wrong = server.call("record_4999", &json!({"code": "abc", "count": 1}));
    assert_eq!(wrong["isError"], true, "{wrong}");
    let text = wrong["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("/code") && text.contains("/count"), "{text}");
    // Another tool of the same schema shape, first call, with its own minimum.
    let below = server.call("record_0007", &json!({"code": "XYZ", "count": 6}));
    assert_eq!(
        below["isError"], true,
        "below record_0007's minimum: {below}"
    );

    call_every_tool(&mut server);
    server.stop();
}

#[test]
fn five_thousand_tools_behind_search_answer_as_tools_held_do() {
    // Behind `tool_search`, a tool's file is read again when it is first called, not held
    // meanwhile (docs/performance.md, "Tools not held"): it validates and answers the same.
    let dir = big_folder();
    let mut server = serve(dir.path(), &[]);
    let wrong = server.call(
        "execute_tool",
        &json!({"name": "record_4999", "arguments": {"code": "abc", "count": 1}}),
    );
    assert_eq!(wrong["isError"], true, "{wrong}");
    let text = wrong["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("/code") && text.contains("/count"), "{text}");
    call_every_tool(&mut server);
    server.stop();
}

#[test]
fn five_thousand_tools_are_found_by_search() {
    let dir = big_folder();
    // Over the token budget, `auto` puts every tool behind `tool_search`.
    let mut server = serve(dir.path(), &[]);
    let mut names = server.tool_names();
    names.sort();
    assert_eq!(names, ["execute_tool", "tool_search"]);
    let found = server.call(
        "tool_search",
        &json!({"query": "how high is a volcano", "max_results": 3}),
    );
    let text = found.to_string();
    assert!(text.contains("record_4321"), "{text}");
    let called = server.call(
        "execute_tool",
        &json!({"name": "record_4321", "arguments": {"code": "ABC", "count": 1}}),
    );
    assert_eq!(
        called["isError"], true,
        "below this tool's minimum: {called}"
    );
    server.stop();

    let output = toolsmith()
        .args([
            "search",
            dir.path().to_str().unwrap(),
            "altitude of a volcano",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let first = stdout.lines().nth(1).unwrap_or_default();
    assert!(first.starts_with("record_4321"), "{stdout}");
}

/// `toolsmith serve DIR EXTRA` over stdio with its own cache folder, initialized.
fn serve_with_cache(dir: &Path, cache: &Path, extra: &[&str]) -> ServeProcess {
    let mut command = toolsmith();
    command
        .env("TOOLSMITH_CACHE_DIR", cache)
        .arg("serve")
        .arg(dir)
        .args(extra);
    let mut server = ServeProcess::spawn(command).with_patience(Duration::from_mins(2));
    server.initialize();
    server
}

// A server started again on a folder it indexed before answers
// `tool_search` from the index it kept (docs/search.md, "The kept index") before the folder
// has loaded, the same answer the loaded folder gives, and what waits for the folder is
// still answered once.
#[test]
fn a_restarted_server_searches_its_kept_index_while_the_folder_loads() {
    let dir = big_folder();
    let cache = tempfile::tempdir().unwrap();
    let search = json!({
        "name": "tool_search",
        "arguments": {"query": "how high is a volcano", "max_results": 3},
    });

    let mut first = serve_with_cache(dir.path(), cache.path(), &[]);
    let built = first.request("tools/call", &search);
    assert!(built.to_string().contains("record_4321"), "{built}");
    let kept = cache.path().join("search");
    let deadline = std::time::Instant::now() + Duration::from_mins(2);
    let is_kept = |entry: std::io::Result<std::fs::DirEntry>| {
        entry.is_ok_and(|entry| entry.path().extension().is_some_and(|ext| ext == "index"))
    };
    while !std::fs::read_dir(&kept).is_ok_and(|mut entries| entries.any(is_kept)) {
        assert!(
            std::time::Instant::now() < deadline,
            "no index kept in {kept:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    first.stop();

    let mut again = serve_with_cache(dir.path(), cache.path(), &[]);
    // Sent first, `tools/list` waits for the folder; the search does not.
    let listing = again.send_request("tools/list", &json!({}));
    let searching = again.send_request("tools/call", &search);
    let first_answer = again.until(|message| {
        message["id"].as_u64() == Some(listing) || message["id"].as_u64() == Some(searching)
    });
    assert_eq!(
        first_answer["id"].as_u64(),
        Some(searching),
        "the search is answered before the folder loads: {first_answer}"
    );
    assert_eq!(first_answer["result"], built["result"]);
    let listed = again.until(|message| message["id"].as_u64() == Some(listing));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["execute_tool", "tool_search"], "{listed}");
    // Loaded, the folder's `tool_search` searches the kept index and answers the same.
    let loaded = again.request("tools/call", &search);
    assert_eq!(loaded["result"], built["result"]);
    let called = again.call(
        "execute_tool",
        &json!({"name": "record_4321", "arguments": arguments(4_321)}),
    );
    assert_eq!(
        called["structuredContent"],
        json!({"result": ["record_4321", arguments(4_321)]}),
        "{called}"
    );
    again.stop();

    // Served otherwise (every tool listed, no `tool_search`), the kept index is not used.
    let mut listing_all = serve_with_cache(dir.path(), cache.path(), &["--search", "never"]);
    let refused = listing_all.request("tools/call", &search);
    assert!(
        refused["error"].is_object() || refused["result"]["isError"] == true,
        "no tool_search is served: {refused}"
    );
    listing_all.stop();
}

#[test]
fn watching_five_thousand_tools_republishes_only_the_changed_one() {
    let dir = big_folder();
    let mut server = serve(dir.path(), &["--search", "never", "--watch"]);
    let before = all_tools(&mut server);

    let file = dir.path().join("group_12/record_1234.toml");
    std::fs::write(&file, manifest(1_234, "Return the edited record 1234.")).unwrap();
    server.until(|message| message["method"] == "notifications/tools/list_changed");
    server.stderr_until(|line| line.contains("watch: reloaded"));

    // Every message up to this request's answer: no second `list_changed` among them.
    let id = server.send_request("tools/list", &json!({}));
    let mut again = 0;
    server.until(|message| {
        again += usize::from(message["method"] == "notifications/tools/list_changed");
        message["id"] == id
    });
    assert_eq!(again, 0, "list_changed is sent once for one change");

    let after = all_tools(&mut server);
    assert_eq!(after.len(), before.len());
    let changed: Vec<&str> = before
        .iter()
        .zip(&after)
        .filter(|(old, new)| old != new)
        .map(|(_, new)| new["name"].as_str().unwrap())
        .collect();
    assert_eq!(changed, ["record_1234"]);
    assert_eq!(
        after[1_234]["description"],
        "Return the edited record 1234."
    );
    server.stop();
}

#[test]
fn watching_five_thousand_tools_behind_search_announces_and_finds_the_changed_one() {
    // Behind `tool_search` a tool's file is read when needed (docs/performance.md, "Tools
    // not held"): an edited file is announced once, and searched as it is now.
    let dir = big_folder();
    let mut server = serve(dir.path(), &["--watch"]);
    // Listed once the folder is served; a change from then on is seen.
    assert_eq!(server.tool_names().len(), 2);
    let file = dir.path().join("group_12/record_1234.toml");
    std::fs::write(
        &file,
        manifest(1_234, "Measure the depth of an ocean trench."),
    )
    .unwrap();
    server.until(|message| message["method"] == "notifications/tools/list_changed");
    server.stderr_until(|line| line.contains("watch: reloaded"));
    let id = server.send_request("ping", &json!({}));
    let mut again = 0;
    server.until(|message| {
        again += usize::from(message["method"] == "notifications/tools/list_changed");
        message["id"] == id
    });
    assert_eq!(again, 0, "list_changed is sent once for one change");
    let found = server.call(
        "tool_search",
        &json!({"query": "depth of an ocean trench", "max_results": 1}),
    );
    assert_eq!(
        found["structuredContent"]["results"][0]["name"], "record_1234",
        "{found}"
    );
    assert_eq!(
        found["structuredContent"]["results"][0]["description"],
        "Measure the depth of an ocean trench."
    );
    server.stop();
}

#[test]
fn initialize_is_answered_while_the_folder_loads_and_the_rest_waits_for_it() {
    // Regression test: `initialize` waited for the whole folder (695 ms
    // for 5,548 manifests). Here the folder cannot finish loading until the test opens a
    // gate: its upstream starts only then, and a folder waits for its upstreams.
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    let inner = crate::workspace().join("examples/tools");
    let toolsmith = insta_cmd::get_cargo_bin("toolsmith");
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.02; done; exec '{}' serve '{}'",
        gate.display(),
        toolsmith.display(),
        inner.display()
    );
    let folder = dir.path().join("tools");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("toolsmith.toml"),
        format!(
            "[server]\nname = \"gated\"\n\n[upstream.inner]\ncommand = [\"sh\", \"-c\", {}]\n",
            serde_json::to_string(&script).unwrap()
        ),
    )
    .unwrap();
    let mut server = ServeProcess::stdio(&[folder.to_str().unwrap()]);
    let result = server.initialize();
    assert!(!gate.exists(), "the folder cannot have loaded yet");
    assert_eq!(result["serverInfo"]["name"], "gated", "{result}");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    let listing = server.send_request("tools/list", &json!({}));
    std::fs::write(&gate, "").unwrap();
    let listed = server.until(|message| message["id"] == listing);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert!(
        names.contains(&"inner_hello"),
        "tools/list answered from the loaded folder, not before it: {names:?}"
    );
}
