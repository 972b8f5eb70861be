//! The ranking's unit tests: each rule of `SearchIndex` and what it must not break.

use serde_json::json;
use toolsmith_model::ToolDefinition;

use super::*;

fn tool(name: &str, description: &str) -> ToolDefinition {
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    ToolDefinition::new(name, description, schema)
}

/// A small hand-made corpus of look-alike tools.
fn corpus() -> Vec<ToolDefinition> {
    let mut weather = tool("get_weather", "Current conditions for a city.");
    weather.title = Some("Weather".into());
    weather.keywords = vec!["temperature".into(), "rain".into()];
    let mut forecast = tool("forecast", "Weather for the next days in a city.");
    forecast.tags = vec!["weather".into()];
    let mut add = tool("add", "Calculate the sum of two numbers.");
    add.keywords = vec!["math".into(), "sum".into()];
    add.input_schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "First number"},
            "b": {"type": "integer", "description": "Second number"},
        },
    })
    .as_object()
    .cloned()
    .unwrap()
    .into();
    let mut issues = tool("listOpenIssues", "List the open issues of a repository.");
    issues.keywords = vec!["github".into()];
    let mut pulls = tool(
        "create-pull-request",
        "Open a pull request from a branch of a repository.",
    );
    pulls.tags = vec!["github".into()];
    vec![
        weather,
        forecast,
        add,
        issues,
        pulls,
        tool(
            "process_list",
            "Statistics over a list of numbers: sum, average, min, max.",
        ),
        tool("adder_history", "Show what was added before."),
    ]
}

fn names(index: &SearchIndex, query: &str) -> Vec<String> {
    index
        .search(query, 5)
        .into_iter()
        .map(|hit| hit.name)
        .collect()
}

#[test]
fn an_index_read_back_answers_as_the_one_written() {
    // A kept index is written with postcard and read back (its meaning
    // vectors and postings as runs of bytes); searched, it ranks and scores as the
    // index it was written from.
    let index = SearchIndex::new(corpus());
    let read: SearchIndex = postcard::from_bytes(&postcard::to_stdvec(&index).unwrap()).unwrap();
    for query in [
        "add numbers",
        "weather in a city",
        "open a pull request",
        "sum",
    ] {
        assert_eq!(read.search(query, 5), index.search(query, 5), "{query}");
    }
    assert!(!index.search("weather in a city", 5).is_empty());
}

#[test]
fn exact_name_comes_first() {
    let index = SearchIndex::new(corpus());
    assert_eq!(names(&index, "add")[0], "add");
    assert_eq!(names(&index, "process_list")[0], "process_list");
    // Any case style names the same tool.
    assert_eq!(names(&index, "list_open_issues")[0], "listOpenIssues");
    // A name that is also an abbreviation (`env`, spelled out as `environment` for
    // the other words) is still matched as written.
    let mut tools = corpus();
    tools.push(tool("env", "Print the variables a process sees."));
    tools.push(tool(
        "set_environment",
        "Set the environment of a deployment.",
    ));
    let index = SearchIndex::new(&tools);
    assert_eq!(names(&index, "env")[0], "env");
}

#[test]
fn names_are_split_on_camel_snake_and_kebab_case() {
    let index = SearchIndex::new(corpus());
    assert_eq!(names(&index, "open issues")[0], "listOpenIssues");
    assert_eq!(names(&index, "pull request")[0], "create-pull-request");
    assert_eq!(names(&index, "weather")[0], "get_weather");
}

#[test]
fn stemmed_words_match() {
    let index = SearchIndex::new(corpus());
    assert_eq!(names(&index, "forecasting")[0], "forecast");
    assert_eq!(names(&index, "adding numbers")[0], "add");
}

#[test]
fn typos_still_find_the_tool() {
    let index = SearchIndex::new(corpus());
    assert_eq!(names(&index, "wether")[0], "get_weather");
    assert_eq!(names(&index, "repositry issues")[0], "listOpenIssues");
    // Two letters swapped count as one typo.
    assert_eq!(names(&index, "wetaher")[0], "get_weather");
}

#[test]
fn tools_matching_every_word_rank_first() {
    let index = SearchIndex::new(corpus());
    assert_eq!(names(&index, "sum two numbers")[0], "add");
    assert_eq!(names(&index, "weather next days")[0], "forecast");
    assert_eq!(
        names(&index, "github pull request")[0],
        "create-pull-request"
    );
    let hits = index.search("weather in a city", 5);
    assert!(hits.len() >= 2);
    assert!(hits.windows(2).all(|pair| pair[0].score >= pair[1].score));
}

#[test]
fn a_request_sharing_no_word_finds_the_tool_by_meaning() {
    let mut tools = corpus();
    tools.push(tool(
        "maps_elevation",
        "Get the elevation data for locations on the earth.",
    ));
    tools.push(tool("send_email", "Send an email message to a recipient."));
    let index = SearchIndex::new(&tools);
    assert_eq!(names(&index, "altitude of a mountain")[0], "maps_elevation");
    assert_eq!(
        names(&index, "write to my colleague by mail")[0],
        "send_email"
    );
}

#[test]
fn a_mixed_case_word_is_found_written_whole() {
    let mut tools = corpus();
    tools.push(tool(
        "export_citations",
        "Export BibTeX citations for papers.",
    ));
    let index = SearchIndex::new(&tools);
    assert_eq!(names(&index, "bibtex for a paper")[0], "export_citations");
    // Its parts still match as before.
    assert_eq!(names(&index, "Bib Te X")[0], "export_citations");
}

#[test]
fn the_folder_a_tool_is_in_is_searched() {
    let mut tools = corpus();
    let mut record = tool("create_record", "Create a new record in a table.");
    record.folder = vec!["airtable".into()];
    tools.push(record);
    tools.push(tool("append_row", "Append a new row to a table."));
    let index = SearchIndex::new(&tools);
    assert_eq!(names(&index, "new row in airtable")[0], "create_record");
    assert_eq!(names(&index, "new row")[0], "append_row");
}

#[test]
fn a_folder_the_query_names_comes_before_look_alikes_elsewhere() {
    // Two servers' screenshot tools side by side; the query names the folder of one.
    let mut browser = tool(
        "browser_take_screenshot",
        "Take a screenshot of the page on screen, as PNG or JPEG.",
    );
    browser.folder = vec!["playwright".into()];
    let mut phone = tool(
        "mobile_save_screenshot",
        "Save a screenshot of the phone's screen.",
    );
    phone.folder = vec!["mobile".into()];
    let mut tools = corpus();
    tools.extend([browser, phone]);
    let index = SearchIndex::new(&tools);
    // The phone's tool shares more words with the request; the folder decides.
    assert_eq!(
        names(&index, "playwright: save a screenshot as a file")[0],
        "browser_take_screenshot"
    );
    // Named in mixed case, the folder is the same word.
    assert_eq!(
        names(&index, "Playwright: save a screenshot as a file")[0],
        "browser_take_screenshot"
    );
    assert_eq!(
        names(&index, "save a screenshot as a file")[0],
        "mobile_save_screenshot"
    );
}

#[test]
fn a_folder_named_with_a_typo_a_prefix_or_in_two_words_still_counts() {
    // Two servers' note searches; the query names one folder, but not as it is spelt.
    let mut vault = tool("simple_search", "Search for text in the notes.");
    vault.folder = vec!["obsidian".into()];
    let mut notion = tool("search_notes", "Search notes and pages by their text.");
    notion.folder = vec!["notion".into()];
    let mut documents = tool("find_documents", "Find documents that match a filter.");
    documents.folder = vec!["mongodb".into()];
    let mut page = tool("browser_navigate", "Go to a URL in the browser.");
    page.folder = vec!["browsermcp".into()];
    let mut other = tool("navigate_page", "Go to a URL in a browser page.");
    other.folder = vec!["chrome".into()];
    let mut tools = corpus();
    tools.extend([vault, notion, documents, page, other]);
    let index = SearchIndex::new(&tools);
    assert_eq!(names(&index, "search notes")[0], "search_notes");
    // A typo of the folder's name (a word no tool has).
    assert_eq!(
        names(&index, "search notes in my obsidain vault")[0],
        "simple_search"
    );
    // The start of the folder's name.
    let folders = index.folders_named("find documents in mongo");
    assert_eq!(folders, ["mongodb"]);
    // The folder's name written as two words.
    assert_eq!(
        names(&index, "browser mcp: go to the URL in the page")[0],
        "browser_navigate"
    );
    // A word tools use is no typo of a folder's name.
    assert!(index.folders_named("notions of time").is_empty());
}

#[test]
fn a_question_prefers_a_tool_that_looks_to_one_that_changes() {
    let mut tools = corpus();
    tools.push(tool(
        "update-ai-config",
        "Update an AI config: its name, description, tags and model.",
    ));
    tools.push(tool("list-ai-configs", "List the AI configs of a project."));
    let index = SearchIndex::new(&tools);
    // The tool that changes configs shares more words with both questions.
    assert_eq!(
        names(&index, "what model does each AI config use?")[0],
        "list-ai-configs"
    );
    assert_eq!(
        names(&index, "which tags are on the AI configs?")[0],
        "list-ai-configs"
    );
    assert_eq!(
        names(&index, "set the model and tags of the AI config")[0],
        "update-ai-config"
    );
}

#[test]
fn the_closest_in_meaning_is_among_the_first_five() {
    let mut tools = corpus();
    tools.push(tool(
        "maps_elevation",
        "Get the elevation data for locations on the earth.",
    ));
    for (name, description) in [
        ("spot_prices", "Spot prices above a level, high and low."),
        ("volume_up", "Set the volume level high."),
        (
            "level_up",
            "Level up a player whose score is high above the rest.",
        ),
        (
            "spot_instances",
            "Launch spot instances above a price level.",
        ),
        ("high_scores", "High scores above level ten."),
        ("parking_spot", "Whether a parking spot is free."),
    ] {
        tools.push(tool(name, description));
    }
    let index = SearchIndex::new(&tools);
    let query = "how high above sea level is this mountain";
    let found = names(&index, query);
    assert_eq!(found.len(), 5);
    assert!(found.contains(&"maps_elevation".to_owned()), "{found:?}");
    // It takes the last place asked for, not the first.
    let found = index.search(query, 2);
    assert_eq!(found[1].name, "maps_elevation", "{found:?}");
    assert_ne!(found[0].name, "maps_elevation");
}

#[test]
fn a_request_picks_the_sibling_doing_its_operation() {
    // The right product won and the wrong operation of it was picked: the antonym
    // (`disable…` for "turn on"), the siblings sharing every other word.
    let mut tools = corpus();
    tools.push(tool(
        "disable_feature_flag",
        "Disable a feature flag in an environment.",
    ));
    tools.push(tool(
        "enable_feature_flag",
        "Enable a feature flag in an environment.",
    ));
    tools.push(tool(
        "unapprove_merge_request",
        "Remove your approval of a merge request.",
    ));
    tools.push(tool(
        "get_merge_request_approval_state",
        "Get the approval state of a merge request: who approved it.",
    ));
    let index = SearchIndex::new(&tools);
    assert_eq!(
        names(&index, "turn on the flag in the production environment")[0],
        "enable_feature_flag"
    );
    assert_eq!(
        names(&index, "take back my approval on the MR")[0],
        "unapprove_merge_request"
    );
}

#[test]
fn nothing_matching_is_empty() {
    let index = SearchIndex::new(corpus());
    assert!(index.search("zebra", 5).is_empty());
    assert!(index.search("", 5).is_empty());
    assert_eq!(index.search("number", 2).len(), 2);
}

#[test]
fn a_look_request_prefers_the_tool_that_looks_over_one_listing_more_of_its_words() {
    // A create tool's description lists the fields it sets; a request to see those fields
    // names them too, and still wants the tool that reads the task.
    let mut tools = corpus();
    tools.push(tool(
        "create_task",
        "Create a task with a name, an assignee, a due date and notes.",
    ));
    tools.push(tool(
        "get_task",
        "Get one task by its id: its assignee and due date.",
    ));
    let index = SearchIndex::new(&tools);
    assert_eq!(
        names(&index, "show task 1209933: assignee, due date, notes")[0],
        "get_task"
    );
}
