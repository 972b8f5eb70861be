//! Argv templates: a manifest's `command = [...]` with `{name}` placeholders, checked
//! against the tool's parameters once at load time and filled in per call (docs/tools.md,
//! "Command tools"). Substitution happens element by element into argv, never through a
//! shell, so an argument can never turn into a second command.

use serde_json::Value;
use toolsmith_model::JsonObject;

/// A command line with `{name}` placeholders, checked against the tool's parameters.
///
/// Rendering rules, per argv element:
/// - `{name}` is replaced by the argument: strings verbatim, numbers and booleans as JSON
///   text (`3`, `true`), objects as compact JSON.
/// - An element that is exactly `{name}` is dropped when the argument is absent, and an
///   array argument spreads into one argv element per item. Inside a longer element an
///   array is joined with commas (`--tags={tags}` → `--tags=a,b`), and an absent argument
///   drops the whole element (`--since={since}` does not become `--since=`).
/// - `{{` and `}}` are literal braces.
///
/// ```
/// use serde_json::json;
/// use toolsmith_command::ArgvTemplate;
///
/// let template = ArgvTemplate::parse(&["git", "log", "-n", "{count}", "{paths}"], &["count", "paths"]).unwrap();
/// let arguments = json!({"count": 5, "paths": ["src", "docs"]});
/// assert_eq!(
///     template.render(arguments.as_object().unwrap()),
///     ["git", "log", "-n", "5", "src", "docs"]
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgvTemplate {
    elements: Vec<Element>,
}

/// One argv element of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Element {
    /// Exactly `{name}`: dropped when the argument is absent, arrays spread.
    Whole(String),
    /// Text with any number of placeholders (none for a plain literal).
    Pieces(Vec<Piece>),
}

/// A piece of a [`Element::Pieces`] element.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// Text copied as is (with `{{`/`}}` already unescaped).
    Literal(String),
    /// A parameter name.
    Placeholder(String),
}

/// A `command` that cannot be used as an argv template; the loader reports it as a
/// diagnostic on the manifest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The command has no program.
    #[error(
        "`command` is empty; give the program and its arguments, e.g. `[\"python3\", \"tool.py\"]`"
    )]
    Empty,
    /// A placeholder names no parameter of the tool.
    #[error(
        "placeholder `{{{name}}}` in command element `{element}` names no parameter; valid names: {}; write `{{{{` and `}}}}` for literal braces",
        name_list(.valid)
    )]
    UnknownParameter {
        /// The name inside the braces.
        name: String,
        /// The argv element it appears in.
        element: String,
        /// The tool's parameter names, in schema order.
        valid: Vec<String>,
    },
    /// A `{` without its `}`.
    #[error("unclosed `{{` in command element `{element}`; write `{{{{` for a literal brace")]
    UnclosedBrace {
        /// The argv element.
        element: String,
    },
    /// A `}` without its `{`.
    #[error("unmatched `}}` in command element `{element}`; write `}}}}` for a literal brace")]
    UnmatchedBrace {
        /// The argv element.
        element: String,
    },
}

fn name_list(names: &[String]) -> String {
    if names.is_empty() {
        "none (the tool takes no parameters)".to_owned()
    } else {
        names
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl ArgvTemplate {
    /// Parses `command`, checking every placeholder against `parameters`.
    ///
    /// Errors name the offending element and, for an unknown placeholder, every valid name.
    pub fn parse<S: AsRef<str>>(command: &[S], parameters: &[&str]) -> Result<Self, TemplateError> {
        if command.is_empty() {
            return Err(TemplateError::Empty);
        }
        let elements = command
            .iter()
            .map(|element| parse_element(element.as_ref(), parameters))
            .collect::<Result<_, _>>()?;
        Ok(Self { elements })
    }

    /// The parameter names used in the template, in order of appearance (repeats included).
    pub fn placeholders(&self) -> impl Iterator<Item = &str> {
        self.elements.iter().flat_map(|element| {
            let names: Vec<&str> = match element {
                Element::Whole(name) => vec![name.as_str()],
                Element::Pieces(pieces) => pieces
                    .iter()
                    .filter_map(|piece| match piece {
                        Piece::Placeholder(name) => Some(name.as_str()),
                        Piece::Literal(_) => None,
                    })
                    .collect(),
            };
            names
        })
    }

    /// Fills in the placeholders from `arguments`; `null` counts as absent.
    pub fn render(&self, arguments: &JsonObject) -> Vec<String> {
        let mut argv = Vec::with_capacity(self.elements.len());
        for element in &self.elements {
            match element {
                Element::Whole(name) => match present(arguments, name) {
                    None => {}
                    Some(Value::Array(items)) => argv.extend(items.iter().map(scalar_text)),
                    Some(value) => argv.push(scalar_text(value)),
                },
                Element::Pieces(pieces) => {
                    if let Some(text) = render_pieces(pieces, arguments) {
                        argv.push(text);
                    }
                }
            }
        }
        argv
    }
}

/// The argument called `name`, unless it is absent or `null`.
fn present<'a>(arguments: &'a JsonObject, name: &str) -> Option<&'a Value> {
    arguments.get(name).filter(|value| !value.is_null())
}

/// Joins the pieces of an element; `None` when a placeholder's argument is absent.
fn render_pieces(pieces: &[Piece], arguments: &JsonObject) -> Option<String> {
    let mut text = String::new();
    for piece in pieces {
        match piece {
            Piece::Literal(literal) => text.push_str(literal),
            Piece::Placeholder(name) => match present(arguments, name)? {
                Value::Array(items) => {
                    let items: Vec<String> = items.iter().map(scalar_text).collect();
                    text.push_str(&items.join(","));
                }
                value => text.push_str(&scalar_text(value)),
            },
        }
    }
    Some(text)
}

/// A value as one argv element: strings verbatim, anything else as compact JSON.
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn parse_element(element: &str, parameters: &[&str]) -> Result<Element, TemplateError> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = element;
    while let Some(position) = rest.find(['{', '}']) {
        literal.push_str(&rest[..position]);
        let brace = if rest[position..].starts_with('{') {
            '{'
        } else {
            '}'
        };
        let after = &rest[position + 1..];
        if let Some(escaped) = after.strip_prefix(brace) {
            literal.push(brace);
            rest = escaped;
            continue;
        }
        if brace == '}' {
            return Err(TemplateError::UnmatchedBrace {
                element: element.to_owned(),
            });
        }
        let end = after
            .find(['{', '}'])
            .filter(|&end| after[end..].starts_with('}'))
            .ok_or_else(|| TemplateError::UnclosedBrace {
                element: element.to_owned(),
            })?;
        let name = &after[..end];
        if !parameters.contains(&name) {
            return Err(TemplateError::UnknownParameter {
                name: name.to_owned(),
                element: element.to_owned(),
                valid: parameters.iter().map(|&name| name.to_owned()).collect(),
            });
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(std::mem::take(&mut literal)));
        }
        pieces.push(Piece::Placeholder(name.to_owned()));
        rest = &after[end + 1..];
    }
    literal.push_str(rest);
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    Ok(match pieces.as_slice() {
        [Piece::Placeholder(name)] => Element::Whole(name.clone()),
        _ => Element::Pieces(pieces),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn render(command: &[&str], parameters: &[&str], arguments: &Value) -> Vec<String> {
        ArgvTemplate::parse(command, parameters)
            .unwrap()
            .render(arguments.as_object().unwrap())
    }

    #[test]
    fn scalars_render_as_json_text_and_strings_verbatim() {
        let argv = render(
            &["run", "{text}", "{count}", "{ratio}", "{flag}", "{options}"],
            &["text", "count", "ratio", "flag", "options"],
            &json!({"text": "a b \"c\"", "count": 3, "ratio": 0.5, "flag": true, "options": {"x": [1, 2]}}),
        );
        assert_eq!(
            argv,
            ["run", "a b \"c\"", "3", "0.5", "true", r#"{"x":[1,2]}"#]
        );
    }

    #[test]
    fn whole_element_array_spreads_and_embedded_array_joins() {
        let argv = render(
            &["ls", "{paths}", "--tags={tags}"],
            &["paths", "tags"],
            &json!({"paths": ["a", "b c"], "tags": ["x", 2]}),
        );
        assert_eq!(argv, ["ls", "a", "b c", "--tags=x,2"]);
    }

    #[test]
    fn absent_or_null_argument_drops_its_element() {
        let argv = render(
            &["git", "log", "{path}", "--since={since}", "-n{count}"],
            &["path", "since", "count"],
            &json!({"path": null, "count": 2}),
        );
        assert_eq!(argv, ["git", "log", "-n2"]);
    }

    #[test]
    fn empty_array_spreads_to_nothing() {
        let argv = render(&["ls", "{paths}"], &["paths"], &json!({"paths": []}));
        assert_eq!(argv, ["ls"]);
    }

    #[test]
    fn doubled_braces_are_literal() {
        let argv = render(
            &["awk", "{{print ${column}}}", "}}{{"],
            &["column"],
            &json!({"column": 2}),
        );
        assert_eq!(argv, ["awk", "{print $2}", "}{"]);
    }

    #[test]
    fn unknown_placeholder_lists_valid_names() {
        let error = ArgvTemplate::parse(&["echo", "--n={cuont}"], &["count", "text"]).unwrap_err();
        assert_eq!(
            error,
            TemplateError::UnknownParameter {
                name: "cuont".into(),
                element: "--n={cuont}".into(),
                valid: vec!["count".into(), "text".into()],
            }
        );
        let message = error.to_string();
        assert!(message.contains("`{cuont}`"), "{message}");
        assert!(
            message.contains("valid names: `count`, `text`"),
            "{message}"
        );
    }

    #[test]
    fn placeholder_in_tool_without_parameters_says_so() {
        let error = ArgvTemplate::parse(&["echo", "{x}"], &[]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("none (the tool takes no parameters)")
        );
    }

    #[test]
    fn stray_braces_are_errors() {
        assert_eq!(
            ArgvTemplate::parse(&["echo", "{count"], &["count"]),
            Err(TemplateError::UnclosedBrace {
                element: "{count".into()
            })
        );
        assert_eq!(
            ArgvTemplate::parse(&["echo", "a{b{c}"], &["c"]),
            Err(TemplateError::UnclosedBrace {
                element: "a{b{c}".into()
            })
        );
        assert_eq!(
            ArgvTemplate::parse(&["echo", "a}"], &[]),
            Err(TemplateError::UnmatchedBrace {
                element: "a}".into()
            })
        );
    }

    #[test]
    fn empty_command_is_an_error() {
        let empty: [&str; 0] = [];
        assert_eq!(ArgvTemplate::parse(&empty, &[]), Err(TemplateError::Empty));
    }

    #[test]
    fn placeholders_are_listed_in_order() {
        let template =
            ArgvTemplate::parse(&["{a}", "x{b}y{a}", "{{c}}"], &["a", "b", "c"]).unwrap();
        assert_eq!(template.placeholders().collect::<Vec<_>>(), ["a", "b", "a"]);
    }
}
