//! `toolsmith call`: one tool call through the same path the server uses.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolsmith_model::{Content, JsonObject};

use crate::ExitStatus;
use crate::args::CallArgs;
use crate::error::Hinted;
use crate::folder;
use crate::printer::Printer;

pub(crate) fn run(args: &CallArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let CallArgs {
        words,
        args: json_args,
        json,
    } = args;
    let (dir, tool, pairs) = split_words(words)?;
    let arguments = arguments(json_args.as_deref(), pairs)?;
    let loaded = folder::load(dir.as_deref())?;
    let outcome = loaded.caller().call(tool, arguments).map_err(|unknown| {
        // The tool may be missing because its file failed to load: say what failed.
        folder::report(printer, loaded.catalog().diagnostics());
        let mut error = Hinted::new(unknown.to_string());
        if unknown.suggestions.is_empty() && unknown.reason.is_none() {
            error = error.hint(format!(
                "`toolsmith list {}` shows the tools there are",
                loaded.root().display()
            ));
        }
        anyhow::Error::new(error)
    })?;
    if *json {
        printer.data(&serde_json::to_string_pretty(&outcome.to_json())?)?;
    } else {
        for block in &outcome.content {
            match block {
                Content::Text { text, .. } => printer.data(text)?,
                Content::Image {
                    data, mime_type, ..
                }
                | Content::Audio {
                    data, mime_type, ..
                } => {
                    printer.message(&format!(
                        "[{mime_type}, {} bytes base64; use --json to see it]",
                        data.len()
                    ));
                }
                Content::Resource { resource, .. } => {
                    if let Some(text) = &resource.text {
                        printer.data(text)?;
                    } else {
                        printer.message(&format!(
                            "[resource {}; use --json to see it]",
                            resource.uri
                        ));
                    }
                }
                Content::ResourceLink { uri, name, .. } => {
                    printer.data(&format!("{name}: {uri}"))?;
                }
            }
        }
    }
    Ok(if outcome.is_error {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    })
}

/// Splits `[DIR] TOOL [KEY=VALUE ...]`: the folder is given when the second word is not an
/// argument pair.
fn split_words(words: &[String]) -> anyhow::Result<(Option<PathBuf>, &str, &[String])> {
    match words {
        [first, second, rest @ ..] if !second.contains('=') => {
            Ok((Some(PathBuf::from(first)), second, rest))
        }
        [first, rest @ ..] if !first.contains('=') => {
            if rest.is_empty() && Path::new(first).is_dir() {
                return Err(Hinted::new(format!("no tool given; `{first}` is a folder"))
                    .hint(format!("name the tool after the folder: toolsmith call {first} TOOL [KEY=VALUE ...]"))
                    .hint(format!("`toolsmith list {first}` shows the tools there are"))
                    .into());
            }
            Ok((None, first, rest))
        }
        _ => Err(Hinted::new("no tool given")
            .hint("usage: toolsmith call [DIR] TOOL [KEY=VALUE ...]")
            .into()),
    }
}

/// Builds the arguments object: `--args` JSON, then `KEY=VALUE` pairs (JSON when they
/// parse, else strings).
fn arguments(json: Option<&str>, pairs: &[String]) -> anyhow::Result<JsonObject> {
    let mut arguments = match json {
        Some(text) => {
            let value: Value = serde_json::from_str(text).map_err(|error| {
                Hinted::new("`--args` is not valid JSON")
                    .caused_by(error)
                    .hint("quote it for the shell: --args '{\"city\": \"Oslo\"}'")
            })?;
            toolsmith_folder::arguments_object(value).map_err(|message| {
                Hinted::new(format!("`--args`: {message}"))
                    .hint("pass an object: --args '{\"key\": 1}'")
            })?
        }
        None => JsonObject::new(),
    };
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(Hinted::new(format!("`{pair}` is not a KEY=VALUE argument"))
                .hint("write arguments as name=value, e.g. city=Oslo days=3")
                .into());
        };
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
        arguments.insert(key.to_owned(), value);
    }
    Ok(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pairs_are_json_when_they_parse() {
        let pairs = [
            "n=5".to_owned(),
            "name=Ada".to_owned(),
            "list=[1,2]".to_owned(),
            "quoted=\"5\"".to_owned(),
        ];
        let args = arguments(Some(r#"{"n": 1, "keep": true}"#), &pairs).unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"n": 5, "keep": true, "name": "Ada", "list": [1, 2], "quoted": "5"})
        );
    }

    #[test]
    fn folder_is_optional() {
        let words = ["hello".to_owned(), "name=Ada".to_owned()];
        let (dir, tool, rest) = split_words(&words).unwrap();
        assert_eq!((dir, tool, rest.len()), (None, "hello", 1));
        let words = ["tools".to_owned(), "hello".to_owned()];
        let (dir, tool, _) = split_words(&words).unwrap();
        assert_eq!((dir, tool), (Some(PathBuf::from("tools")), "hello"));
    }
}
