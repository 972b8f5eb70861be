//! From `def` + docstring + `mcp.tool` keywords to the published MCP definition.

use serde_json::json;

use crate::{catalog, definition};

#[test]
fn every_annotation_maps_to_its_json_schema_type() {
    let catalog = catalog(
        r#"
def kinds(
    s: str,
    i: int,
    f: float,
    b: bool,
    words: list[str],
    grid: list[list[int]],
    anything_list: list,
    d: dict,
    typed_dict: dict[str, int],
    maybe: str | None,
    any_value: typing.Any,
    bare,
    days: int = 3,
    label: str = "x",
    flags: list[str] = ["a"],
    ratio: float = 0.5,
    loud: bool = False,
    nothing: str | None = None,
):
    """All the kinds."""
    return "ok"

mcp.tool(kinds)
"#,
    );
    let schema = &definition(&catalog, "kinds")["inputSchema"];
    let properties = &schema["properties"];
    assert_eq!(properties["s"], json!({"type": "string"}));
    assert_eq!(properties["i"], json!({"type": "integer"}));
    assert_eq!(properties["f"], json!({"type": "number"}));
    assert_eq!(properties["b"], json!({"type": "boolean"}));
    assert_eq!(
        properties["words"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        properties["grid"],
        json!({"type": "array", "items": {"type": "array", "items": {"type": "integer"}}})
    );
    assert_eq!(properties["anything_list"], json!({"type": "array"}));
    assert_eq!(properties["d"], json!({"type": "object"}));
    assert_eq!(properties["typed_dict"], json!({"type": "object"}));
    assert_eq!(properties["maybe"], json!({"type": "string"}));
    assert_eq!(properties["any_value"], json!({}));
    assert_eq!(properties["bare"], json!({}));
    assert_eq!(properties["days"], json!({"type": "integer", "default": 3}));
    assert_eq!(
        properties["label"],
        json!({"type": "string", "default": "x"})
    );
    assert_eq!(
        properties["flags"],
        json!({"type": "array", "items": {"type": "string"}, "default": ["a"]})
    );
    assert_eq!(
        properties["ratio"],
        json!({"type": "number", "default": 0.5})
    );
    assert_eq!(
        properties["loud"],
        json!({"type": "boolean", "default": false})
    );
    assert_eq!(properties["nothing"], json!({"type": "string"}));
    assert_eq!(
        schema["required"],
        json!([
            "s",
            "i",
            "f",
            "b",
            "words",
            "grid",
            "anything_list",
            "d",
            "typed_dict",
            "any_value",
            "bare"
        ])
    );
    assert_eq!(schema["additionalProperties"], false);
    // Declaration order is kept.
    let order: Vec<&str> = properties
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(order[..3], ["s", "i", "f"]);
}

#[test]
fn optional_parameter_without_default_is_passed_as_none() {
    let catalog = catalog(
        r#"
def greet(name: str, title: str | None) -> str:
    """Greet."""
    if title == None:
        return "Hi " + name
    return "Hi " + title + " " + name

mcp.tool(greet)
"#,
    );
    assert_eq!(
        crate::text(&crate::call(&catalog, "greet", json!({"name": "Ada"}))),
        "Hi Ada"
    );
    assert_eq!(
        crate::text(&crate::call(
            &catalog,
            "greet",
            json!({"name": "Ada", "title": "Dr"})
        )),
        "Hi Dr Ada"
    );
}

#[test]
fn docstring_gives_description_and_parameter_descriptions() {
    let catalog = catalog(
        r#"
def forecast_get(city: str, days: int = 3) -> dict:
    """Get the weather forecast for a city.

    Use this tool to look up the weather for the coming days.

    Use when:
    - The user asks what the weather will be somewhere.

    Example: forecast_get(city="Oslo", days=2)

    Args:
        city: City name, e.g. "Oslo".
        days (int): How many days ahead,
            1 to 7.

    Returns:
        The forecast.
    """
    return {"city": city, "days": days}

def plain(x):
    return x

def tabbed(x):
    """Tabbed summary.
	
	Args:
		x: The x
			value.
	"""
    return x

mcp.tool(forecast_get)
mcp.tool(plain)
mcp.tool(tabbed)
"#,
    );
    let forecast = definition(&catalog, "forecast_get");
    assert_eq!(
        forecast["description"],
        "Get the weather forecast for a city.\n\nUse this tool to look up the weather for the \
         coming days.\n\nUse when:\n- The user asks what the weather will be somewhere.\n\n\
         Example: forecast_get(city=\"Oslo\", days=2)"
    );
    let properties = &forecast["inputSchema"]["properties"];
    assert_eq!(
        properties["city"]["description"],
        "City name, e.g. \"Oslo\"."
    );
    assert_eq!(
        properties["days"]["description"],
        "How many days ahead, 1 to 7."
    );
    assert_eq!(definition(&catalog, "plain")["description"], "");
    let tabbed = definition(&catalog, "tabbed");
    assert_eq!(tabbed["description"], "Tabbed summary.");
    assert_eq!(
        tabbed["inputSchema"]["properties"]["x"]["description"],
        "The x value."
    );
}

#[test]
fn params_overlay_stays_in_the_published_schema() {
    let catalog = catalog(
        r#"
def forecast(city: str, days: int = 3):
    """Forecast."""
    return days

mcp.tool(forecast, params={"days": {"minimum": 1, "maximum": 7}, "city": {"enum": ["Oslo", "Paris"]}})
"#,
    );
    let properties = &definition(&catalog, "forecast")["inputSchema"]["properties"];
    assert_eq!(
        properties["days"],
        json!({"type": "integer", "default": 3, "minimum": 1, "maximum": 7})
    );
    assert_eq!(properties["city"]["enum"], json!(["Oslo", "Paris"]));
    let outcome = crate::call(&catalog, "forecast", json!({"city": "Oslo", "days": 9}));
    assert_eq!(outcome["isError"], true, "{outcome}");
}

#[test]
fn output_schema_from_return_annotation_and_from_output_keyword() {
    let catalog = catalog(
        r#"
def as_dict() -> dict:
    """A dict."""
    return {"a": 1}

def as_list() -> list[int]:
    """A list."""
    return [1, 2]

def as_count() -> int:
    """A count."""
    return 3

def as_text() -> str:
    """Text."""
    return "t"

def overridden() -> dict:
    """Overridden."""
    return {"n": 1}

mcp.tool(as_dict)
mcp.tool(as_list)
mcp.tool(as_count)
mcp.tool(as_text)
mcp.tool(overridden, output={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
"#,
    );
    assert_eq!(
        definition(&catalog, "as_dict")["outputSchema"],
        json!({"type": "object"})
    );
    assert_eq!(
        definition(&catalog, "as_list")["outputSchema"],
        json!({"type": "object", "properties": {"result": {"type": "array", "items": {"type": "integer"}}}, "required": ["result"]})
    );
    assert_eq!(
        definition(&catalog, "as_count")["outputSchema"]["properties"]["result"],
        json!({"type": "integer"})
    );
    assert!(
        definition(&catalog, "as_text")
            .get("outputSchema")
            .is_none()
    );
    assert_eq!(
        definition(&catalog, "overridden")["outputSchema"]["required"],
        json!(["n"])
    );
    let outcome = crate::call(&catalog, "as_list", json!({}));
    assert_eq!(outcome["structuredContent"], json!({"result": [1, 2]}));
}

#[test]
fn every_mcp_tool_keyword_is_stored() {
    let catalog = catalog(
        r#"
def weather(city: str) -> dict:
    """Weather."""
    return {"city": city}

mcp.tool(
    weather,
    name="weather_now",
    title="Weather now",
    description="Current weather for a city.",
    keywords=["weather", "rain"],
    tags=["outdoor"],
    discoverable=True,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=True,
    timeout="500ms",
    options={"units": "metric"},
    overrides={"http": {"timeout": 5}},
    requires={"env": ["WEATHER_KEY"]},
    permissions={"net": ["api.example.com"]},
    ui={"resource_uri": "ui://weather/index.html", "visibility": ["model", "app"]},
    icons=["https://example.com/w.png", {"src": "data:image/png;base64,AA", "sizes": ["48x48"], "mimeType": "image/png"}],
    examples=[{"args": {"city": "Oslo"}, "expect": {"isError": False}}],
    text_format="toon",
    meta={"vendor/tier": "free"},
)
"#,
    );
    let entry = catalog.get("weather_now").expect("renamed tool");
    let tool = entry.definition();
    assert_eq!(tool.description, "Current weather for a city.");
    assert_eq!(tool.keywords, ["weather", "rain"]);
    assert_eq!(tool.tags, ["outdoor"]);
    assert!(tool.discoverable);
    assert_eq!(tool.timeout, Some(std::time::Duration::from_millis(500)));
    assert_eq!(tool.options["units"], "metric");
    assert_eq!(tool.overrides["http"]["timeout"], 5);
    assert_eq!(tool.requires.env, ["WEATHER_KEY"]);
    assert_eq!(tool.permissions.net, ["api.example.com"]);
    assert_eq!(tool.examples.len(), 1);
    assert_eq!(tool.text_format, toolsmith_model::TextFormat::Toon);
    assert_eq!(tool.source.line, 2);
    let published = tool.to_mcp();
    assert_eq!(published["title"], "Weather now");
    assert_eq!(
        published["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
    );
    assert_eq!(
        published["icons"][0],
        json!({"src": "https://example.com/w.png"})
    );
    assert_eq!(published["icons"][1]["sizes"], json!(["48x48"]));
    assert_eq!(
        published["_meta"]["ui"]["resourceUri"],
        "ui://weather/index.html"
    );
    assert_eq!(published["_meta"]["vendor/tier"], "free");
}

#[test]
fn kwargs_function_accepts_extra_arguments() {
    let catalog = catalog(
        r#"
def collect(first: str, **rest):
    """Collect."""
    return {"first": first, "rest": rest}

mcp.tool(collect)
"#,
    );
    assert_eq!(
        definition(&catalog, "collect")["inputSchema"]["additionalProperties"],
        true
    );
    let outcome = crate::call(&catalog, "collect", json!({"first": "a", "b": 2}));
    assert_eq!(
        outcome["structuredContent"],
        json!({"first": "a", "rest": {"b": 2}})
    );
}

#[test]
fn undecorated_functions_are_private_helpers() {
    let catalog = catalog(
        r#"
def _double(x):
    return x * 2

def helper(x):
    return x + 1

def public(x: int) -> int:
    """Public."""
    return helper(_double(x))

mcp.tool(public)
"#,
    );
    let names: Vec<&str> = catalog.definitions().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["public"]);
    assert_eq!(
        crate::call(&catalog, "public", json!({"x": 4}))["structuredContent"],
        json!({"result": 9})
    );
}
