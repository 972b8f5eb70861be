//! The `mcp` module: `mcp.tool(...)` to register tools while a file loads, the result
//! helpers (`mcp.error`, `mcp.result`, `mcp.text`, `mcp.image`, …) and what a running tool
//! may ask of its call (`mcp.option`, `mcp.progress`, `mcp.log`, `mcp.sample`, `mcp.elicit`,
//! `mcp.roots`), which delegate to the call's [`toolsmith_model::ClientBridge`], and the
//! files and environment variables its `permissions` grant (`mcp.read_file`,
//! `mcp.write_file`, `mcp.list_dir`, `mcp.getenv`; see `host.rs`).

use std::collections::HashMap;
use std::io::{Read as _, Write as _};

use serde_json::json;
use starlark::collections::SmallMap;
use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::typing::Ty;
use starlark::values::list::ListRef;
use starlark::values::none::{NoneOr, NoneType};
use starlark::values::tuple::TupleRef;
use starlark::values::{Heap, Value, ValueLike};
use toolsmith_model::{CallOutcome, Content, EmbeddedResource, JsonObject, LogLevel};

use super::TOOL_SLOT_PREFIX;
use super::convert::{from_json, to_json};
use super::host::{self, Access};
use super::session::{self, InitRegistration, ParamKind, Registration, RuntimeParam, Stage};
use super::values::{McpPayload, McpValue};

/// An int or float as `f64`.
fn number(value: Value) -> anyhow::Result<f64> {
    match to_json(value) {
        Ok(serde_json::Value::Number(number)) => number
            .as_f64()
            .ok_or_else(|| anyhow::anyhow!("{number} is out of range")),
        _ => Err(anyhow::anyhow!(
            "expected a number, got a value of type `{}`",
            value.get_type()
        )),
    }
}

fn content(payload: Content) -> McpValue {
    McpValue(McpPayload::Content(payload))
}

fn json_object(keywords: SmallMap<String, Value>, what: &str) -> anyhow::Result<JsonObject> {
    keywords
        .into_iter()
        .map(|(key, value)| {
            let json = to_json(value)
                .map_err(|error| anyhow::anyhow!("{what}: `{key}` cannot be JSON: {error}"))?;
            Ok((key, json))
        })
        .collect()
}

/// The content blocks of `mcp.result(content=...)`: content helpers or plain strings.
fn content_blocks(value: Value) -> anyhow::Result<Vec<Content>> {
    let items: Vec<Value> = if let Some(list) = ListRef::from_value(value) {
        list.iter().collect()
    } else if let Some(tuple) = TupleRef::from_value(value) {
        tuple.iter().collect()
    } else {
        vec![value]
    };
    items
        .into_iter()
        .map(|item| {
            if let Some(text) = item.unpack_str() {
                return Ok(Content::text(text));
            }
            match item.downcast_ref::<McpValue>() {
                Some(McpValue(McpPayload::Content(block))) => Ok(block.clone()),
                _ => Err(anyhow::anyhow!(
                    "`mcp.result(content=...)` takes content blocks (`mcp.text(...)`, \
                     `mcp.image(...)`, …) or strings, got `{}`",
                    item.get_type()
                )),
            }
        })
        .collect()
}

/// The parameters of a `def`, with defaults converted to JSON while they are still live.
fn runtime_params(function: Value) -> Vec<RuntimeParam> {
    let Some(spec) = function.parameters_spec() else {
        return Vec::new();
    };
    // The default-value formatter is the one public way to reach default values; a leading
    // NUL marks a default that is not JSON-like.
    let docs = spec.documentation_with_default_value_formatter(
        vec![Ty::any(); spec.len()],
        HashMap::new(),
        |value: &Value| match to_json(*value) {
            Ok(json) => json.to_string(),
            Err(error) => format!("\0{error}"),
        },
    );
    let param = |doc: &starlark::docs::DocParam, kind| RuntimeParam {
        name: doc.name.clone(),
        kind,
        default: doc
            .default_value
            .as_deref()
            .map(|text| match text.strip_prefix('\0') {
                Some(error) => Err(error.to_owned()),
                None => serde_json::from_str(text).map_err(|error| error.to_string()),
            }),
    };
    let mut params: Vec<RuntimeParam> = docs
        .pos_only
        .iter()
        .chain(&docs.pos_or_named)
        .map(|doc| param(doc, ParamKind::Named))
        .collect();
    params.extend(docs.args.iter().map(|doc| param(doc, ParamKind::Args)));
    params.extend(
        docs.named_only
            .iter()
            .map(|doc| param(doc, ParamKind::Named)),
    );
    params.extend(docs.kwargs.iter().map(|doc| param(doc, ParamKind::Kwargs)));
    params
}

#[starlark_module]
pub(super) fn register(builder: &mut GlobalsBuilder) {
    /// Registers `function` as an MCP tool; the keywords set its properties.
    fn tool<'v>(
        #[starlark(require = pos)] function: Value<'v>,
        #[starlark(kwargs)] keywords: SmallMap<String, Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let Stage::Load(registrations) = &session::session(eval)?.stage else {
            anyhow::bail!(
                "`mcp.tool(...)` registers tools while the file loads; call it at the top level"
            );
        };
        let (line, column, span) = match eval.call_stack_top_location() {
            Some(at) => {
                let begin = at.resolve_span().begin;
                (
                    u32::try_from(begin.line + 1).unwrap_or(u32::MAX),
                    u32::try_from(begin.column + 1).unwrap_or(u32::MAX),
                    Some(at.span.begin().get() as usize..at.span.end().get() as usize),
                )
            }
            None => (0, 0, None),
        };
        let (function_name, top_level) = top_level_def(function, eval);
        let (slot, problem) = if top_level {
            let slot = format!("{TOOL_SLOT_PREFIX}{}", registrations.borrow().len());
            eval.module().set(&slot, function);
            (Some(slot), None)
        } else if function.parameters_spec().is_some() {
            let problem = format!(
                "`mcp.tool` needs a function defined with `def` at the top level of the file; \
                 `{function_name}` is not"
            );
            (None, Some(problem))
        } else {
            let problem = format!(
                "`mcp.tool` expects a function defined with `def`, got a value of type `{}`",
                function.get_type()
            );
            (None, Some(problem))
        };
        let mut init = None;
        let keywords = keywords
            .into_iter()
            .filter_map(|(key, value)| {
                if key == "init" {
                    init = Some(init_registration(value, eval));
                    return None;
                }
                Some((key, to_json(value)))
            })
            .collect();
        registrations.borrow_mut().push(Registration {
            slot,
            problem,
            function_name,
            params: runtime_params(function),
            keywords,
            init,
            line,
            column,
            span,
        });
        Ok(function)
    }

    /// What the tool's init returned (`mcp.tool(f, init = setup)`): `None` until it has run,
    /// and for a tool without one.
    fn init_value<'v>(eval: &mut Evaluator<'v, '_, '_>) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let call = session::call(eval, "mcp.init_value")?;
        match call.init_value {
            Some(value) => from_json(heap, value).map_err(|error| anyhow::anyhow!(error)),
            None => Ok(Value::new_none()),
        }
    }

    /// An error result the model can repair: `isError`, the message as text, and the
    /// details (plus `error`) as structured content.
    fn error(
        #[starlark(require = pos)] message: &str,
        #[starlark(kwargs)] details: SmallMap<String, Value>,
    ) -> anyhow::Result<McpValue> {
        Ok(McpValue(McpPayload::Error {
            message: message.to_owned(),
            details: json_object(details, "mcp.error")?,
        }))
    }

    /// An explicit result: content blocks, optional structured content, error flag.
    fn result<'v>(
        #[starlark(default = NoneOr::None)] content: NoneOr<Value<'v>>,
        #[starlark(default = NoneOr::None)] structured: NoneOr<Value<'v>>,
        #[starlark(default = false)] is_error: bool,
    ) -> anyhow::Result<McpValue> {
        let content = match content.into_option() {
            Some(value) => content_blocks(value)?,
            None => Vec::new(),
        };
        let structured_content = match structured.into_option() {
            None => None,
            Some(value) => match to_json(value).map_err(|error| anyhow::anyhow!(error))? {
                object @ serde_json::Value::Object(_) => Some(object),
                other => anyhow::bail!(
                    "`mcp.result(structured=...)` must be a dict (MCP structured content is an \
                     object), got {}",
                    toolsmith_model::kind(&other)
                ),
            },
        };
        Ok(McpValue(McpPayload::Result(CallOutcome {
            content,
            structured_content,
            is_error,
            meta: None,
        })))
    }

    /// A text content block.
    #[expect(
        clippy::unnecessary_wraps,
        reason = "`#[starlark_module]` functions return a Result"
    )]
    fn text(#[starlark(require = pos)] text: &str) -> anyhow::Result<McpValue> {
        Ok(content(Content::text(text)))
    }

    /// An image content block from base64 data.
    #[expect(
        clippy::unnecessary_wraps,
        reason = "`#[starlark_module]` functions return a Result"
    )]
    fn image(
        #[starlark(require = pos)] data: &str,
        #[starlark(default = "image/png")] mime_type: &str,
    ) -> anyhow::Result<McpValue> {
        Ok(content(Content::image(data, mime_type)))
    }

    /// An audio content block from base64 data.
    #[expect(
        clippy::unnecessary_wraps,
        reason = "`#[starlark_module]` functions return a Result"
    )]
    fn audio(
        #[starlark(require = pos)] data: &str,
        #[starlark(default = "audio/wav")] mime_type: &str,
    ) -> anyhow::Result<McpValue> {
        Ok(content(Content::audio(data, mime_type)))
    }

    /// An embedded resource: text or a base64 blob.
    fn resource(
        #[starlark(require = pos)] uri: &str,
        #[starlark(default = NoneOr::None)] text: NoneOr<&str>,
        #[starlark(default = NoneOr::None)] blob: NoneOr<&str>,
        #[starlark(default = NoneOr::None)] mime_type: NoneOr<&str>,
    ) -> anyhow::Result<McpValue> {
        let (text, blob) = (text.into_option(), blob.into_option());
        if text.is_none() == blob.is_none() {
            anyhow::bail!("`mcp.resource` needs exactly one of `text=` or `blob=`");
        }
        Ok(content(Content::resource(EmbeddedResource {
            uri: uri.to_owned(),
            mime_type: mime_type.into_option().map(str::to_owned),
            text: text.map(str::to_owned),
            blob: blob.map(str::to_owned),
            meta: None,
        })))
    }

    /// A link to a resource the client may read.
    #[expect(
        clippy::unnecessary_wraps,
        reason = "`#[starlark_module]` functions return a Result"
    )]
    fn resource_link(
        #[starlark(require = pos)] uri: &str,
        #[starlark(require = pos)] name: &str,
        #[starlark(default = NoneOr::None)] description: NoneOr<&str>,
        #[starlark(default = NoneOr::None)] mime_type: NoneOr<&str>,
    ) -> anyhow::Result<McpValue> {
        Ok(content(Content::resource_link(
            uri,
            name,
            description.into_option().map(str::to_owned),
            mime_type.into_option().map(str::to_owned),
        )))
    }

    /// A tool option (`toolsmith.toml`, `MCP_TOOL_OPTIONS`, then the tool's own default).
    fn option<'v>(
        #[starlark(require = pos)] name: &str,
        #[starlark(default = NoneOr::None)] default: NoneOr<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let found = match &session::session(eval)?.stage {
            Stage::Call(call) => call
                .context
                .options
                .get(name)
                .or_else(|| call.definition.options.get(name)),
            Stage::Load(_) => None,
        };
        match found {
            Some(value) => from_json(heap, value).map_err(|error| anyhow::anyhow!(error)),
            None => Ok(default.into_option().unwrap_or_else(Value::new_none)),
        }
    }

    /// Who the call acts for: `{"subject", "scopes", "client_id"}` from the OAuth access
    /// token (docs/auth.md), or `None` (stdio, no OAuth, or while the file loads).
    fn caller<'v>(eval: &mut Evaluator<'v, '_, '_>) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let caller = match &session::session(eval)?.stage {
            Stage::Call(call) => call.context.caller.as_ref().map(|caller| caller.to_json()),
            Stage::Load(_) => None,
        };
        match caller {
            Some(value) => from_json(heap, &value).map_err(|error| anyhow::anyhow!(error)),
            None => Ok(Value::new_none()),
        }
    }

    /// Reports progress to the client (`notifications/progress`).
    fn progress<'v>(
        #[starlark(require = pos)] done: Value<'v>,
        #[starlark(default = NoneOr::None)] total: NoneOr<Value<'v>>,
        #[starlark(default = NoneOr::None)] message: NoneOr<&str>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<NoneType> {
        let call = session::call(eval, "mcp.progress")?;
        let total = total.into_option().map(number).transpose()?;
        call.context
            .client
            .progress(number(done)?, total, message.into_option());
        Ok(NoneType)
    }

    /// Sends a log message to the client (`notifications/message`).
    fn log(
        #[starlark(require = pos)] level: &str,
        #[starlark(require = pos)] message: &str,
        eval: &mut Evaluator,
    ) -> anyhow::Result<NoneType> {
        let call = session::call(eval, "mcp.log")?;
        let Some(level) = LogLevel::parse(level) else {
            anyhow::bail!(
                "unknown log level `{level}`; use debug, info, notice, warning, error, critical, \
                 alert or emergency"
            );
        };
        call.context
            .client
            .log(level, &call.definition.name, message);
        Ok(NoneType)
    }

    /// Asks the client's model for a completion; returns its text.
    ///
    /// `key` names the request in a 2026-07-28 `InputRequiredResult`; with `defer = True`
    /// the tool goes on with `None` when the answer is not to be had now (see
    /// `docs/serve.md`, "input required"); `before_task = True` asks it before the call
    /// becomes an MCP task (docs/tasks.md).
    fn sample<'v>(
        #[starlark(require = pos)] prompt: &str,
        #[starlark(default = NoneOr::None)] system: NoneOr<&str>,
        #[starlark(default = 1000)] max_tokens: i32,
        #[starlark(require = named, default = NoneOr::None)] key: NoneOr<&str>,
        #[starlark(require = named, default = false)] defer: bool,
        #[starlark(require = named, default = false)] before_task: bool,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap: Heap<'v> = eval.heap();
        let call = session::call(eval, "mcp.sample")?;
        call.context.client.next_request(key.into_option(), defer);
        if before_task {
            call.context.client.before_task();
        }
        let mut request = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": max_tokens,
        });
        if let Some(system) = system.into_option() {
            request["systemPrompt"] = json!(system);
        }
        let response = call
            .context
            .client
            .sample(request)
            .map_err(|error| anyhow::anyhow!("`mcp.sample` failed: {error}"))?;
        match response
            .pointer("/content/text")
            .and_then(|text| text.as_str())
        {
            Some(text) => Ok(heap.alloc(text)),
            None => from_json(heap, &response).map_err(|error| anyhow::anyhow!(error)),
        }
    }

    /// Asks the user for input matching `schema`; returns the client's answer
    /// (`{"action": "accept", "content": {...}}`).
    ///
    /// `key`, `defer` and `before_task` work as for `mcp.sample`.
    fn elicit<'v>(
        #[starlark(require = pos)] message: &str,
        #[starlark(require = pos)] schema: Value<'v>,
        #[starlark(require = named, default = NoneOr::None)] key: NoneOr<&str>,
        #[starlark(require = named, default = false)] defer: bool,
        #[starlark(require = named, default = false)] before_task: bool,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let call = session::call(eval, "mcp.elicit")?;
        let schema = to_json(schema).map_err(|error| anyhow::anyhow!(error))?;
        call.context.client.next_request(key.into_option(), defer);
        if before_task {
            call.context.client.before_task();
        }
        let answer = call
            .context
            .client
            .elicit(message, schema)
            .map_err(|error| anyhow::anyhow!("`mcp.elicit` failed: {error}"))?;
        from_json(heap, &answer).map_err(|error| anyhow::anyhow!(error))
    }

    /// The client's roots (`roots/list`), as a list of dicts.
    ///
    /// `key`, `defer` and `before_task` work as for `mcp.sample` (a deferred answer is no roots).
    fn roots<'v>(
        #[starlark(require = named, default = NoneOr::None)] key: NoneOr<&str>,
        #[starlark(require = named, default = false)] defer: bool,
        #[starlark(require = named, default = false)] before_task: bool,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let call = session::call(eval, "mcp.roots")?;
        call.context.client.next_request(key.into_option(), defer);
        if before_task {
            call.context.client.before_task();
        }
        let roots = call
            .context
            .client
            .roots()
            .map_err(|error| anyhow::anyhow!("`mcp.roots` failed: {error}"))?;
        from_json(heap, &serde_json::Value::Array(roots)).map_err(|error| anyhow::anyhow!(error))
    }

    /// The text of a file the tool's `fs.read` permission covers (UTF-8, at most 16 MiB).
    fn read_file<'v>(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let call = session::call(eval, "mcp.read_file")?;
        let file = checked(call, "mcp.read_file", path, Access::Read)?;
        let failed = |error: String| anyhow::anyhow!("`mcp.read_file`: {error}");
        let file = host::open(&file, Access::Read, path).map_err(failed)?;
        let size = file
            .metadata()
            .map_err(|error| failed(format!("`{path}`: {error}")))?
            .len();
        if size > host::READ_LIMIT {
            anyhow::bail!(
                "`mcp.read_file`: `{path}` is {size} bytes; a tool reads at most 16 MiB at once"
            );
        }
        // A file growing while it is read stops at the limit all the same.
        let mut text = String::new();
        file.take(host::READ_LIMIT)
            .read_to_string(&mut text)
            .map_err(|error| failed(format!("`{path}`: {error}")))?;
        Ok(heap.alloc(text))
    }

    /// Writes `text` to a file the tool's `fs.write` permission covers, replacing it; the
    /// folder must exist.
    fn write_file(
        #[starlark(require = pos)] path: &str,
        #[starlark(require = pos)] text: &str,
        eval: &mut Evaluator,
    ) -> anyhow::Result<NoneType> {
        let call = session::call(eval, "mcp.write_file")?;
        let file = checked(call, "mcp.write_file", path, Access::Write)?;
        let failed = |error: String| anyhow::anyhow!("`mcp.write_file`: {error}");
        host::open(&file, Access::Write, path)
            .map_err(failed)?
            .write_all(text.as_bytes())
            .map_err(|error| failed(format!("`{path}`: {error}")))?;
        Ok(NoneType)
    }

    /// The names in a folder the tool's `fs.read` permission covers, sorted; folders end
    /// with `/`.
    fn list_dir<'v>(
        #[starlark(require = pos, default = ".")] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let call = session::call(eval, "mcp.list_dir")?;
        let folder = checked(call, "mcp.list_dir", path, Access::Read)?;
        let failed = |error: std::io::Error| anyhow::anyhow!("`mcp.list_dir`: `{path}`: {error}");
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&folder).map_err(failed)? {
            let entry = entry.map_err(failed)?;
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        Ok(heap.alloc(names))
    }

    /// An environment variable the tool's `env` permission names, or `default` when it is
    /// not set.
    fn getenv<'v>(
        #[starlark(require = pos)] name: &str,
        #[starlark(default = NoneOr::None)] default: NoneOr<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let call = session::call(eval, "mcp.getenv")?;
        host::env_permitted(call.definition, name)
            .map_err(|error| anyhow::anyhow!("`mcp.getenv`: {error}"))?;
        Ok(match std::env::var(name) {
            Ok(value) => heap.alloc(value),
            Err(_) => default.into_option().unwrap_or_else(Value::new_none),
        })
    }
}

/// The function's name, and whether it is a `def` bound to that name at the top level of the
/// file (the only functions a frozen module keeps callable).
fn top_level_def<'v>(value: Value<'v>, eval: &Evaluator<'v, '_, '_>) -> (String, bool) {
    let name = value.function_name().unwrap_or("lambda").to_owned();
    let top_level = value.parameters_spec().is_some()
        && eval
            .module()
            .get(&name)
            .is_some_and(|bound| bound.ptr_eq(value));
    (name, top_level)
}

/// The `init = ...` keyword of `mcp.tool`: a top-level `def` taking no arguments, kept
/// alive through freezing in a slot named after it (tools naming the same function share
/// it), or why the value cannot be one.
fn init_registration<'v>(value: Value<'v>, eval: &mut Evaluator<'v, '_, '_>) -> InitRegistration {
    let (function_name, top_level) = top_level_def(value, eval);
    let problem = if !top_level && value.parameters_spec().is_some() {
        Some(format!(
            "`init` needs a function defined with `def` at the top level of the file; `{function_name}` is not"
        ))
    } else if !top_level {
        Some(format!(
            "`init` expects a function defined with `def` (`init = setup`), got a value of type `{}`",
            value.get_type()
        ))
    } else if runtime_params(value)
        .iter()
        .any(|param| param.kind == ParamKind::Named && param.default.is_none())
    {
        Some(format!(
            "init function `{function_name}` must take no arguments; it is called as `{function_name}()`"
        ))
    } else {
        None
    };
    let slot = problem.is_none().then(|| {
        let slot = format!("{TOOL_SLOT_PREFIX}init_{function_name}");
        eval.module().set(&slot, value);
        slot
    });
    InitRegistration {
        function_name,
        slot,
        problem,
    }
}

/// `path` for `access` by the running call, or the error naming the function and what to
/// grant.
fn checked(
    call: &session::CallState<'_>,
    what: &str,
    path: &str,
    access: Access,
) -> anyhow::Result<std::path::PathBuf> {
    let root = match &call.context.working_dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    };
    let places = host::Places::new(call.folder.map_or(&root, |folder| &**folder), &root);
    host::permitted(call.definition, &places, path, access)
        .map_err(|error| anyhow::anyhow!("`{what}`: {error}"))
}
