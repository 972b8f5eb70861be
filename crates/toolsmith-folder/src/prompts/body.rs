//! The body of a prompt file: role markers split it into sections, `{{…}}` placeholders
//! become argument values or embeds (images, audio, resources), and the result is the
//! prompt's message templates (format in the `prompts` module docs).

use std::path::Path;

use base64::Engine as _;
use toolsmith_model::template::{Token, scan};
use toolsmith_model::{
    ContentTemplate, Diagnostic, MessageTemplate, Prompt, Resources, Role, UriSource,
    names::suggestion_as,
};

use super::Problems;
use crate::mime;

const EMBEDS: &[&str] = &["image", "audio", "resource", "resource_from"];

/// Media files embedded in prompts larger than this are refused.
const MAX_MEDIA_BYTES: u64 = 8 << 20;

/// `<!-- user -->`, `<!-- assistant -->` or `<!-- role: NAME -->` on a line of its own.
fn role_marker(line: &str) -> Option<Result<Role, String>> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    if let Some(name) = inner.strip_prefix("role:") {
        let name = name.trim();
        return Some(Role::parse(name).ok_or_else(|| {
            format!("unknown role `{name}`; MCP prompt messages are `user` or `assistant`")
        }));
    }
    Role::parse(inner).map(Ok)
}

/// What the prompt body is parsed against.
struct BodyContext<'a> {
    root: &'a Path,
    prompt: &'a Prompt,
    resources: &'a Resources,
}

pub(super) fn parse(
    root: &Path,
    body_offset: usize,
    prompt: &Prompt,
    resources: &Resources,
    problems: &mut Problems,
) -> Vec<MessageTemplate> {
    let context = BodyContext {
        root,
        prompt,
        resources,
    };
    let source = problems.source;
    let mut messages = Vec::new();
    for (role, range) in sections(body_offset, problems) {
        let tokens = match scan(&source[range.clone()]) {
            Ok(tokens) => tokens,
            Err(error) => {
                let span = range.start + error.span.start..range.start + error.span.end;
                let diagnostic = problems
                    .at_offset("invalid-prompt", span, error.message)
                    .with_help("close it with `}}`, or write `\\{{` for literal braces");
                problems.push(diagnostic);
                continue;
            }
        };
        let mut text = Vec::new();
        for token in tokens {
            let Token::Placeholder { name, span } = &token else {
                text.push(token);
                continue;
            };
            let span = range.start + span.start..range.start + span.end;
            let Some((kind, value)) = name.split_once(':') else {
                if prompt.argument(name).is_none() {
                    let diagnostic = unknown_argument(problems, prompt, name, span);
                    problems.push(diagnostic);
                }
                text.push(token);
                continue;
            };
            if let Some(content) = embed(&context, kind.trim(), value.trim(), span, problems) {
                flush_text(role, &mut text, &mut messages);
                messages.push(MessageTemplate { role, content });
            }
        }
        flush_text(role, &mut text, &mut messages);
    }
    messages
}

/// Splits the body at role markers: each role with the byte range of its text.
fn sections(body_offset: usize, problems: &mut Problems) -> Vec<(Role, std::ops::Range<usize>)> {
    let source = problems.source;
    let mut sections = Vec::new();
    let mut role = Role::User;
    let mut start = body_offset;
    let mut offset = body_offset;
    for line in source[body_offset..].split_inclusive('\n') {
        match role_marker(line) {
            Some(Ok(next)) => {
                sections.push((role, start..offset));
                role = next;
                start = offset + line.len();
            }
            Some(Err(message)) => {
                let span = offset..offset + line.trim_end().len();
                let diagnostic = problems
                    .at_offset("invalid-prompt", span, message)
                    .with_help("write `<!-- user -->` or `<!-- assistant -->`");
                problems.push(diagnostic);
            }
            None => {}
        }
        offset += line.len();
    }
    sections.push((role, start..source.len()));
    sections
}

/// The content of an embed placeholder `{{KIND:VALUE}}`, or `None` after reporting why
/// there is none.
fn embed(
    context: &BodyContext,
    kind: &str,
    value: &str,
    span: std::ops::Range<usize>,
    problems: &mut Problems,
) -> Option<ContentTemplate> {
    match kind {
        "image" | "audio" => match media(context.root, kind, value) {
            Ok((data, mime_type)) if kind == "image" => {
                Some(ContentTemplate::Image { data, mime_type })
            }
            Ok((data, mime_type)) => Some(ContentTemplate::Audio { data, mime_type }),
            Err((message, help)) => {
                let diagnostic = problems
                    .at_offset("invalid-prompt", span, message)
                    .with_help(help);
                problems.push(diagnostic);
                None
            }
        },
        "resource" => {
            if !context.resources.contains(value) {
                let diagnostic = problems
                    .at_offset(
                        "unknown-resource",
                        span,
                        format!("`{value}` is not a resource of this folder"),
                    )
                    .with_help(
                        "rendering this prompt will fail until a file under resources/ has this URI",
                    );
                problems.warn(diagnostic);
            }
            Some(ContentTemplate::Resource(UriSource::Fixed(
                value.to_owned(),
            )))
        }
        "resource_from" => {
            if context.prompt.argument(value).is_none() {
                let diagnostic = unknown_argument(problems, context.prompt, value, span);
                problems.push(diagnostic);
                return None;
            }
            Some(ContentTemplate::Resource(UriSource::Argument(
                value.to_owned(),
            )))
        }
        other => {
            let help = match suggestion_as(other, EMBEDS.iter().copied(), |close| {
                format!("{{{{{close}:…}}}}")
            }) {
                Some(suggestion) => suggestion,
                None => "embeds are `{{image:PATH}}`, `{{audio:PATH}}`, `{{resource:URI}}` and \
                         `{{resource_from:ARGUMENT}}`"
                    .into(),
            };
            let diagnostic = problems
                .at_offset(
                    "invalid-prompt",
                    span,
                    format!("unknown embed `{other}:` in `{{{{{other}:{value}}}}}`"),
                )
                .with_help(help);
            problems.push(diagnostic);
            None
        }
    }
}

fn unknown_argument(
    problems: &Problems,
    prompt: &Prompt,
    name: &str,
    span: std::ops::Range<usize>,
) -> Diagnostic {
    let names: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
    let help = match suggestion_as(name, names.iter().copied(), |close| {
        format!("{{{{{close}}}}}")
    }) {
        Some(suggestion) => suggestion,
        None if names.is_empty() => {
            format!("declare it under `arguments:` in the front matter (`- name: {name}`)")
        }
        None => format!(
            "declared arguments: {}; or declare `{name}` under `arguments:`",
            names.join(", ")
        ),
    };
    problems
        .at_offset(
            "unknown-placeholder",
            span,
            format!(
                "`{{{{{name}}}}}` names no argument of prompt `{}`",
                prompt.name
            ),
        )
        .with_help(help)
}

/// Ends the current text message, if it has anything in it.
fn flush_text(role: Role, tokens: &mut Vec<Token>, messages: &mut Vec<MessageTemplate>) {
    let template =
        toolsmith_model::template::TextTemplate::from_tokens(std::mem::take(tokens)).trimmed();
    if !template.is_empty() {
        messages.push(MessageTemplate {
            role,
            content: ContentTemplate::Text(template),
        });
    }
}

/// Reads an image or audio file of the tools folder: base64 data and MIME type.
fn media(root: &Path, kind: &str, reference: &str) -> Result<(String, String), (String, String)> {
    let relative = Path::new(reference);
    let inside = !reference.is_empty()
        && relative.components().all(|part| {
            matches!(
                part,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
    if !inside {
        return Err((
            format!("{kind} `{reference}` must be a relative path inside the tools folder"),
            format!("for example `{{{{{kind}:icons/picture.png}}}}`"),
        ));
    }
    let path = root.join(relative);
    let mime_type = mime::for_path(&path).filter(|mime| mime.starts_with(&format!("{kind}/")));
    let Some(mime_type) = mime_type else {
        let valid = if kind == "image" {
            "PNG, JPEG, GIF, WebP, AVIF, BMP, ICO or SVG"
        } else {
            "WAV, MP3, OGG, FLAC or M4A"
        };
        return Err((
            format!("`{reference}` is not an {kind} file"),
            format!("use a {valid} file"),
        ));
    };
    let bytes = crate::read::read_bytes(&path, MAX_MEDIA_BYTES).map_err(|error| match error {
        crate::read::ReadError::TooLarge { size, .. } => (
            format!(
                "{kind} `{reference}` is {} MiB; prompt media is limited to {} MiB",
                size >> 20,
                MAX_MEDIA_BYTES >> 20
            ),
            "use a smaller file, or link to it instead".into(),
        ),
        crate::read::ReadError::Io(error) => (
            format!("cannot read {kind} `{reference}`: {error}"),
            format!(
                "paths are relative to the tools folder `{}`",
                root.display()
            ),
        ),
        not_regular @ crate::read::ReadError::NotRegular { .. } => (
            format!("{kind} `{reference}` was {not_regular}"),
            "use a regular file".into(),
        ),
    })?;
    Ok((
        base64::engine::general_purpose::STANDARD.encode(bytes),
        mime_type.to_owned(),
    ))
}
