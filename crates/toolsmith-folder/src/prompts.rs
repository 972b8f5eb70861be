//! `prompts/**/*.md` of a tools folder as MCP prompts (docs/serve.md, "Prompts, resources
//! and completion").
//!
//! A prompt file is Markdown with optional front matter:
//!
//! ```markdown
//! ---
//! name: code_review            # default: the file stem
//! title: Code review
//! description: Review a change for bugs and style.
//! arguments:
//!   - name: language
//!     description: The programming language.
//!     required: true
//!     values: [rust, python, go]   # offered by completion/complete (`enum:` also works)
//!   - name: file
//!     description: URI of the file to review.
//! ---
//! {{image:icons/logo.png}}
//! Please review this {{language}} change:
//! {{resource_from:file}}
//! <!-- assistant -->
//! I'll look at correctness first, then style.
//! ```
//!
//! - The body is the prompt's messages. Without role markers it is one `user` message.
//!   A line `<!-- user -->` or `<!-- assistant -->` (also `<!-- role: assistant -->`)
//!   starts a new message with that role; text before the first marker is `user`.
//! - `{{argument}}` inserts an argument's value (a missing optional one inserts nothing;
//!   a missing required one makes `prompts/get` fail, naming it). `\{{` is a literal `{{`.
//! - Embeds become messages of their own, with the role of the text around them, splitting
//!   that text: `{{image:PATH}}` and `{{audio:PATH}}` read a file of the tools folder
//!   (base64, MIME by extension) when the folder loads; `{{resource:URI}}` embeds the
//!   contents of a resource of this folder and `{{resource_from:ARGUMENT}}` the resource
//!   whose URI the argument holds, read when the prompt is rendered.
//! - Text messages are trimmed; one that renders empty is left out.
//!
//! Front matter is a small YAML subset (see `front_matter.rs`). A broken file is a
//! diagnostic with its line and column, and the other prompts still load.

use std::path::Path;

use toolsmith_model::{
    Diagnostic, Prompt, PromptArgument, Prompts, Resources, Severity, SourceLocation, line_column,
    names::suggestion,
};

use crate::front_matter::{self, Node, Value};

mod body;

/// The folder of a tools folder that holds prompts.
pub const PROMPTS_FOLDER: &str = "prompts";

const KEYS: &[&str] = &["name", "title", "description", "arguments"];
const ARGUMENT_KEYS: &[&str] = &["name", "title", "description", "required", "values", "enum"];

/// Loads `root/prompts/**/*.md`; never fails as a whole. `resources` are the folder's
/// resources, used to check `{{resource:URI}}` embeds.
pub(crate) fn load(root: &Path, resources: &Resources) -> (Prompts, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let base = root.join(PROMPTS_FOLDER);
    let mut files = Vec::new();
    if base.is_dir() {
        match crate::Walk::new(&base).files() {
            Ok(found) => files = found,
            Err(error) => diagnostics.push(Diagnostic::error(
                "unreadable-file",
                SourceLocation::file(&base),
                format!("cannot read the prompts folder: {error}"),
            )),
        }
    }
    files.retain(|path| {
        path.extension()
            .is_some_and(|extension| extension.eq_ignore_ascii_case("md"))
    });
    let mut prompts: Vec<Prompt> = Vec::new();
    for path in files {
        let source = match crate::read::read_definition(&path) {
            Ok(source) => source,
            Err(error) => {
                diagnostics.push(error.diagnostic(SourceLocation::file(&path)));
                continue;
            }
        };
        let (prompt, mut problems) = parse(root, &path, &source, resources);
        diagnostics.append(&mut problems);
        let Some(prompt) = prompt else { continue };
        if let Some(first) = prompts.iter().find(|p| p.name == prompt.name) {
            diagnostics.push(
                Diagnostic::error(
                    "duplicate-prompt",
                    SourceLocation::file(&path),
                    format!(
                        "prompt `{}` is already defined in {}; this one is skipped",
                        prompt.name, first.source
                    ),
                )
                .with_help("give one of them a different `name` in its front matter"),
            );
            continue;
        }
        prompts.push(prompt);
    }
    (Prompts::new(prompts), diagnostics)
}

/// Problems of one file, located by byte offset or line.
struct Problems<'a> {
    path: &'a Path,
    source: &'a str,
    diagnostics: Vec<Diagnostic>,
}

impl Problems<'_> {
    fn at_line(&self, rule: &'static str, line: u32, message: String) -> Diagnostic {
        let location = SourceLocation {
            path: self.path.to_owned(),
            line,
            column: 1,
        };
        Diagnostic::error(rule, location, message)
    }

    fn at_offset(
        &self,
        rule: &'static str,
        span: std::ops::Range<usize>,
        message: String,
    ) -> Diagnostic {
        let (line, column) = line_column(self.source, span.start);
        let location = SourceLocation {
            path: self.path.to_owned(),
            line,
            column,
        };
        Diagnostic::error(rule, location, message).with_span(span)
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    fn warn(&mut self, mut diagnostic: Diagnostic) {
        diagnostic.severity = Severity::Warning;
        self.diagnostics.push(diagnostic);
    }

    fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|diagnostic| diagnostic.severity == Severity::Error)
    }
}

/// Parses one prompt file: the prompt (unless there were errors) and every problem found.
pub(crate) fn parse(
    root: &Path,
    path: &Path,
    source: &str,
    resources: &Resources,
) -> (Option<Prompt>, Vec<Diagnostic>) {
    let mut problems = Problems {
        path,
        source,
        diagnostics: Vec::new(),
    };
    let stem = path
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut prompt = Prompt::new(stem);
    prompt.source = SourceLocation::file(path);
    let split = match front_matter::split(source) {
        Ok(split) => split,
        Err(error) => {
            let diagnostic = problems
                .at_line("invalid-prompt", error.line, error.message)
                .with_help("close the front matter with a line `---`");
            problems.push(diagnostic);
            return (None, problems.diagnostics);
        }
    };
    let mut has_description_key = false;
    if let Some((text, first_line)) = split.front {
        match front_matter::parse(text, first_line) {
            Ok(node) => {
                has_description_key = read_front_matter(&node, &mut prompt, &mut problems);
            }
            Err(error) => {
                let diagnostic = problems
                    .at_line("invalid-prompt", error.line, format!("front matter: {}", error.message))
                    .with_help("front matter is `key: value` lines, with `arguments:` as a list of `- name: …` entries");
                problems.push(diagnostic);
            }
        }
    }
    if prompt.name.trim().is_empty() || prompt.name.chars().any(char::is_whitespace) {
        let diagnostic = problems
            .at_line(
                "invalid-prompt",
                1,
                format!("`{}` is not a valid prompt name", prompt.name),
            )
            .with_help("use letters, digits, `_`, `-` and `.`, e.g. `name: code_review`");
        problems.push(diagnostic);
    }
    prompt.messages = body::parse(root, split.body_offset, &prompt, resources, &mut problems);
    if !has_description_key && prompt.description.is_none() {
        let diagnostic = problems
            .at_line(
                "missing-description",
                1,
                format!("prompt `{}` has no `description`", prompt.name),
            )
            .with_help(
                "add `description: ...` to the front matter: clients show it when listing prompts",
            );
        problems.warn(diagnostic);
    }
    if prompt.messages.is_empty() && !problems.has_errors() {
        let diagnostic = problems
            .at_line(
                "empty-prompt",
                1,
                format!("prompt `{}` has no messages", prompt.name),
            )
            .with_help("write the prompt's text after the front matter");
        problems.warn(diagnostic);
    }
    let prompt = (!problems.has_errors()).then_some(prompt);
    (prompt, problems.diagnostics)
}

/// Applies the front matter to `prompt`; returns whether a `description` key was present.
fn read_front_matter(node: &Node, prompt: &mut Prompt, problems: &mut Problems) -> bool {
    let entries = match &node.value {
        Value::Null => return false,
        Value::Map(entries) => entries,
        Value::Scalar(_) | Value::List(_) => {
            let diagnostic = problems.at_line(
                "invalid-prompt",
                node.line,
                "front matter must be `key: value` lines".into(),
            );
            problems.push(diagnostic);
            return false;
        }
    };
    let mut has_description = false;
    for (key, value) in entries {
        let result = match key.as_str() {
            "name" => text(value).map(|name| prompt.name = name),
            "title" => text(value).map(|title| prompt.title = Some(title)),
            "description" => {
                has_description = true;
                text(value)
                    .map(|description| prompt.description = Some(description.trim().to_owned()))
            }
            "arguments" => {
                read_arguments(value, prompt, problems);
                Ok(())
            }
            other => {
                let help = suggestion(other, KEYS.iter().copied())
                    .unwrap_or_else(|| format!("front matter keys: {}", KEYS.join(", ")));
                let diagnostic = problems
                    .at_line(
                        "unknown-prompt-key",
                        value.line,
                        format!("unknown front matter key `{other}`"),
                    )
                    .with_help(help);
                problems.warn(diagnostic);
                Ok(())
            }
        };
        if let Err(message) = result {
            let diagnostic =
                problems.at_line("invalid-prompt", value.line, format!("`{key}` {message}"));
            problems.push(diagnostic);
        }
    }
    has_description
}

fn read_arguments(node: &Node, prompt: &mut Prompt, problems: &mut Problems) {
    let items = match &node.value {
        Value::Null => return,
        Value::List(items) => items,
        Value::Scalar(_) | Value::Map(_) => {
            let diagnostic = problems
                .at_line(
                    "invalid-prompt",
                    node.line,
                    "`arguments` must be a list".into(),
                )
                .with_help("write each argument as `- name: …` on its own line under `arguments:`");
            problems.push(diagnostic);
            return;
        }
    };
    for item in items {
        let entries = match &item.value {
            Value::Map(entries) => entries.as_slice(),
            // `- city` is shorthand for an optional argument with only a name.
            Value::Scalar(name) => {
                push_argument(
                    PromptArgument::new(name.clone()),
                    item.line,
                    prompt,
                    problems,
                );
                continue;
            }
            Value::Null | Value::List(_) => {
                let diagnostic = problems.at_line(
                    "invalid-prompt",
                    item.line,
                    "an argument must be `- name: …` with its keys below it".into(),
                );
                problems.push(diagnostic);
                continue;
            }
        };
        let mut argument = PromptArgument::default();
        for (key, value) in entries {
            let result = match key.as_str() {
                "name" => text(value).map(|name| argument.name = name),
                "title" => text(value).map(|title| argument.title = Some(title)),
                "description" => {
                    text(value).map(|text| argument.description = Some(text.trim().to_owned()))
                }
                "required" => boolean(value).map(|required| argument.required = required),
                "values" | "enum" => texts(value).map(|values| argument.values = values),
                other => {
                    let help = suggestion(other, ARGUMENT_KEYS.iter().copied())
                        .unwrap_or_else(|| format!("argument keys: {}", ARGUMENT_KEYS.join(", ")));
                    let diagnostic = problems
                        .at_line(
                            "unknown-prompt-key",
                            value.line,
                            format!("unknown argument key `{other}`"),
                        )
                        .with_help(help);
                    problems.warn(diagnostic);
                    Ok(())
                }
            };
            if let Err(message) = result {
                let diagnostic = problems.at_line(
                    "invalid-prompt",
                    value.line,
                    format!("argument `{key}` {message}"),
                );
                problems.push(diagnostic);
            }
        }
        push_argument(argument, item.line, prompt, problems);
    }
}

fn push_argument(
    argument: PromptArgument,
    line: u32,
    prompt: &mut Prompt,
    problems: &mut Problems,
) {
    let valid = !argument.name.is_empty()
        && argument
            .name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if !valid {
        let message = if argument.name.is_empty() {
            "an argument has no `name`".to_owned()
        } else {
            format!(
                "argument name `{}` may only use letters, digits, `_` and `-`",
                argument.name
            )
        };
        let diagnostic = problems.at_line("invalid-prompt", line, message);
        problems.push(diagnostic);
        return;
    }
    if prompt.argument(&argument.name).is_some() {
        let diagnostic = problems.at_line(
            "invalid-prompt",
            line,
            format!("argument `{}` is declared twice", argument.name),
        );
        problems.push(diagnostic);
        return;
    }
    prompt.arguments.push(argument);
}

fn text(node: &Node) -> Result<String, String> {
    match &node.value {
        Value::Scalar(text) => Ok(text.clone()),
        Value::Null => Err("is empty".into()),
        Value::List(_) | Value::Map(_) => Err("must be text".into()),
    }
}

fn boolean(node: &Node) -> Result<bool, String> {
    match &node.value {
        Value::Scalar(text) => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" => Ok(true),
            "false" | "no" => Ok(false),
            _ => Err(format!("must be true or false, got `{text}`")),
        },
        _ => Err("must be true or false".into()),
    }
}

fn texts(node: &Node) -> Result<Vec<String>, String> {
    match &node.value {
        Value::List(items) => items.iter().map(text).collect(),
        _ => Err("must be a list, e.g. `[a, b]`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolsmith_model::{ContentTemplate, UriSource};
    use toolsmith_model::{JsonObject, NoResources};

    fn parse_text(source: &str) -> (Option<Prompt>, Vec<Diagnostic>) {
        parse(
            Path::new("/nonexistent"),
            Path::new("prompts/review.md"),
            source,
            &Resources::default(),
        )
    }

    fn render(prompt: &Prompt, arguments: &serde_json::Value) -> serde_json::Value {
        let arguments: JsonObject = arguments.as_object().cloned().unwrap();
        serde_json::to_value(prompt.render(&arguments, &NoResources).unwrap()).unwrap()
    }

    #[test]
    fn body_without_markers_is_one_user_message() {
        let (prompt, diagnostics) =
            parse_text("---\ndescription: Simple.\n---\nThis is a simple prompt for testing.\n");
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let prompt = prompt.unwrap();
        assert_eq!(prompt.name, "review");
        assert_eq!(
            render(&prompt, &json!({})),
            json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
        );
    }

    #[test]
    fn role_markers_split_messages() {
        let (prompt, diagnostics) = parse_text(
            "---\ndescription: Chat.\narguments:\n  - name: topic\n    required: yes\n---\nTell me about {{topic}}.\n<!-- assistant -->\nSure: {{ topic }} is\n\n<!-- role: user -->\nGo on.\n",
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(
            render(&prompt.unwrap(), &json!({"topic": "Rust"})),
            json!([
                {"role": "user", "content": {"type": "text", "text": "Tell me about Rust."}},
                {"role": "assistant", "content": {"type": "text", "text": "Sure: Rust is"}},
                {"role": "user", "content": {"type": "text", "text": "Go on."}}
            ])
        );
    }

    #[test]
    fn unknown_placeholder_is_located_with_a_suggestion() {
        let (prompt, diagnostics) = parse_text(
            "---\ndescription: x\narguments:\n  - name: language\n---\nReview this\n{{langauge}} code.\n",
        );
        assert!(prompt.is_none());
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        let diagnostic = &diagnostics[0];
        assert_eq!(diagnostic.rule, "unknown-placeholder");
        assert_eq!(
            (diagnostic.location.line, diagnostic.location.column),
            (7, 1)
        );
        assert_eq!(
            diagnostic.message,
            "`{{langauge}}` names no argument of prompt `review`"
        );
        assert_eq!(
            diagnostic.help.as_deref(),
            Some("did you mean `{{language}}`?")
        );
    }

    #[test]
    fn front_matter_errors_and_warnings_point_at_lines() {
        let (prompt, diagnostics) = parse_text("---\nname: x\n  oops: 1\n---\nHi\n");
        assert!(prompt.is_none());
        assert_eq!(diagnostics[0].location.line, 3);
        assert_eq!(
            diagnostics[0].message,
            "front matter: unexpected indentation"
        );

        let (prompt, diagnostics) = parse_text("---\ndescripton: typo\n---\nHi\n");
        assert!(
            prompt.is_some(),
            "warnings do not stop a prompt from loading"
        );
        assert_eq!(diagnostics[0].rule, "unknown-prompt-key");
        assert_eq!(diagnostics[0].location.line, 2);
        assert_eq!(
            diagnostics[0].help.as_deref(),
            Some("did you mean `description`?")
        );
        assert_eq!(diagnostics[1].rule, "missing-description");
    }

    #[test]
    fn arguments_keep_values_for_completion() {
        let (prompt, _) = parse_text(
            "---\ndescription: x\narguments:\n  - name: city\n    enum: [paris, park, rome]\n  - extra\n---\n{{city}} {{extra}}\n",
        );
        let prompt = prompt.unwrap();
        assert_eq!(prompt.complete("city", "pa"), ["paris", "park"]);
        assert!(!prompt.arguments[1].required);
    }

    #[test]
    fn embeds_split_text_and_check_their_targets() {
        let (prompt, diagnostics) = parse_text(
            "---\ndescription: x\narguments:\n  - name: uri\n---\nBefore {{resource_from:uri}} after\n{{resource:test://missing}}\n",
        );
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert_eq!(diagnostics[0].rule, "unknown-resource");
        assert_eq!(diagnostics[0].severity, Severity::Warning);
        let messages = prompt.unwrap().messages;
        assert_eq!(messages.len(), 4);
        assert_eq!(
            messages[1].content,
            ContentTemplate::Resource(UriSource::Argument("uri".into()))
        );

        let (prompt, diagnostics) =
            parse_text("---\ndescription: x\n---\n{{image:../secret.png}}\n{{imag:x.png}}\n");
        assert!(prompt.is_none());
        assert!(
            diagnostics[0]
                .message
                .contains("relative path inside the tools folder"),
            "{diagnostics:?}"
        );
        assert_eq!(
            diagnostics[1].help.as_deref(),
            Some("did you mean `{{image:…}}`?")
        );
    }

    #[test]
    fn unclosed_front_matter_is_an_error() {
        let (prompt, diagnostics) = parse_text("---\nname: x\nHello\n");
        assert!(prompt.is_none());
        assert_eq!(
            diagnostics[0].message,
            "the front matter opened with `---` is never closed"
        );
    }
}
