//! JSON-RPC 2.0 framing for one line of the stdio transport: the parse of a line into a
//! message, an answer or nothing (JSON-RPC 2.0 §5.1 codes for what is not a message), the
//! `tools/call` fast parse that the stdio and HTTP session fast paths share, and the
//! encoding of a reply (`"id": null` where JSON-RPC requires it).

use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ErrorCode,
    ErrorData, JsonRpcMessage, JsonRpcVersion2_0, Request, RequestId, ServerJsonRpcMessage,
};

pub(crate) enum Parsed {
    Message(ClientJsonRpcMessage),
    Ignore,
    Reply(ServerJsonRpcMessage),
}

/// Parses one line (JSON-RPC 2.0 §5.1 error codes for what is not a message).
pub(crate) fn parse(line: &[u8]) -> Parsed {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Ignore;
    }
    if let Some(call) = parse_call(line) {
        return Parsed::Message(call);
    }
    let error = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        // rmcp reads a request with an id it cannot use (a float, an object, null...) as a
        // notification that ignores its `id`; such a request still gets an answer.
        Ok(JsonRpcMessage::Notification(_)) if has_id(line) => {
            return Parsed::Reply(invalid_id());
        }
        Ok(message) => return Parsed::Message(message),
        Err(error) => error,
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
        return Parsed::Reply(error_message(
            None,
            ErrorCode::PARSE_ERROR,
            format!("Parse error: {error}"),
        ));
    };
    let id = match value.get("id") {
        None => None,
        Some(id) => match serde_json::from_value::<RequestId>(id.clone()) {
            Ok(id) => Some(id),
            Err(_) => return Parsed::Reply(invalid_id()),
        },
    };
    if value.is_array() {
        return Parsed::Reply(error_message(
            None,
            ErrorCode::INVALID_REQUEST,
            "Invalid request: JSON-RPC batches are not supported (only protocol revision \
             2025-03-26 has them); send one message per line"
                .to_owned(),
        ));
    }
    let method = value.get("method").and_then(serde_json::Value::as_str);
    if id.is_none() && method.is_some() {
        // A notification rmcp does not model (another protocol's, or a newer MCP one):
        // notifications get no answer, so ignore it as other MCP SDKs do.
        tracing::debug!(method, "ignoring an unknown notification");
        return Parsed::Ignore;
    }
    Parsed::Reply(error_message(
        id,
        ErrorCode::INVALID_REQUEST,
        format!("Invalid request: {error}"),
    ))
}

/// The messages of a JSON-RPC batch (a JSON array), each as its own line, for a session
/// of protocol revision 2025-03-26, the only one that has batches;
/// `None` when `line` is not an array. An empty array is answered as JSON-RPC 2.0 §6
/// says: one `-32600` error.
pub(crate) fn batch(line: &[u8]) -> Option<Result<Vec<Vec<u8>>, ServerJsonRpcMessage>> {
    if line.iter().find(|byte| !byte.is_ascii_whitespace()) != Some(&b'[') {
        return None;
    }
    let Ok(serde_json::Value::Array(items)) = serde_json::from_slice(line) else {
        // Not JSON: the line's own parse answers it.
        return None;
    };
    if items.is_empty() {
        return Some(Err(error_message(
            None,
            ErrorCode::INVALID_REQUEST,
            "Invalid request: an empty batch; send at least one message".to_owned(),
        )));
    }
    Some(Ok(items
        .iter()
        .map(|item| {
            let mut line = item.to_string().into_bytes();
            line.push(b'\n');
            line
        })
        .collect()))
}

/// Whether a JSON object has an `id` key, whatever its value.
fn has_id(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|value| value.get("id").is_some())
}

/// The answer to a request whose id is not a string or an integer that fits in 64 bits
/// (JSON-RPC 2.0 §4: such an id cannot be echoed, so the error carries `"id": null`).
pub(crate) fn invalid_id() -> ServerJsonRpcMessage {
    error_message(
        None,
        ErrorCode::INVALID_REQUEST,
        "Invalid request: `id` must be a string or an integer between -2^63 and 2^63-1".to_owned(),
    )
}

/// The answer to a request whose id is already used by one still running: the running
/// one keeps the id and still gets its own answer.
pub(crate) fn duplicate_id(id: &RequestId) -> ServerJsonRpcMessage {
    error_message(
        Some(id.clone()),
        ErrorCode::INVALID_REQUEST,
        format!(
            "Invalid request: id `{id}` is already used by a request that is still running; give each request a new id"
        ),
    )
}

/// A `tools/call` in its plain shape — the hot path — read straight into rmcp's types.
///
/// rmcp's own parse buffers the whole message, checks its shape, buffers it again for the
/// request's flattened fields and then tries every client request type in turn. This reads
/// the fields once. Anything else — another method, `_meta` (progress tokens), an extra or
/// duplicate key, an array — returns `None` and takes rmcp's parse, so both accept the same
/// messages and build the same request.
pub(crate) fn parse_call(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Call {
        #[allow(dead_code, reason = "checked by deserializing")]
        jsonrpc: JsonRpcVersion2_0,
        id: RequestId,
        #[allow(dead_code, reason = "checked by deserializing")]
        method: CallToolRequestMethod,
        params: ObjectOnly<CallToolRequestParams>,
    }
    if line.iter().find(|byte| !byte.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    // `from_str`, not `from_slice`: serde_json skips ignored strings without checking their
    // UTF-8, so a line the general parse refuses would pass here (found by fuzzing).
    let call: Call = serde_json::from_str(std::str::from_utf8(line).ok()?).ok()?;
    let params = call.params.0;
    if params.meta.is_some() {
        return None;
    }
    Some(JsonRpcMessage::request(
        ClientRequest::CallToolRequest(Request::new(params)),
        call.id,
    ))
}

/// `T` read from a JSON object only: serde would also read a struct from an array.
struct ObjectOnly<T>(T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = T;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_map(Visit(std::marker::PhantomData))
            .map(ObjectOnly)
    }
}

pub(crate) fn error_message(
    id: Option<RequestId>,
    code: ErrorCode,
    message: String,
) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::error(ErrorData::new(code, message, None), id)
}

pub(crate) fn encode(message: &ServerJsonRpcMessage) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(256);
    let written = match message {
        // rmcp leaves the id out when there is none (as the 2026-07-28 draft allows);
        // JSON-RPC 2.0 §5, which every client reads, requires `"id": null`.
        JsonRpcMessage::Error(rmcp::model::JsonRpcError {
            id: None, error, ..
        }) => serde_json::to_writer(
            &mut bytes,
            &serde_json::json!({"jsonrpc": "2.0", "id": null, "error": error}),
        ),
        message => serde_json::to_writer(&mut bytes, message),
    };
    if let Err(error) = written {
        // rmcp's message types only hold JSON values and strings.
        tracing::error!(%error, "cannot serialize a message");
        bytes.clear();
        return bytes;
    }
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reply to `line`, as it is written out.
    fn reply(line: &str) -> serde_json::Value {
        match parse(line.as_bytes()) {
            Parsed::Reply(message) => serde_json::from_slice(&encode(&message)).unwrap(),
            Parsed::Message(_) => panic!("`{line}` parsed as a message"),
            Parsed::Ignore => panic!("`{line}` was ignored"),
        }
    }

    #[test]
    fn malformed_json_is_a_parse_error() {
        let error = reply("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ");
        assert_eq!(error["error"]["code"], -32700);
        // Regression test: JSON-RPC 2.0 requires `"id": null`.
        assert_eq!(error.get("id"), Some(&serde_json::Value::Null), "{error}");
    }

    // Regression test (found by fuzzing, target `jsonrpc_parse`): the fast path took a
    // call whose ignored `task` object had a key that is not UTF-8, a line the general parse
    // refuses.
    #[test]
    fn the_fast_path_leaves_a_line_that_is_not_utf8_to_the_general_parse() {
        let mut line = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"task":{"t"#.to_vec();
        line.push(0xd9);
        line.extend_from_slice(br#"tl":1000}}}"#);
        assert!(parse_call(&line).is_none());
        assert!(serde_json::from_slice::<ClientJsonRpcMessage>(&line).is_err());
    }

    // Regression test: a request whose id cannot be echoed was
    // taken for a notification and got no answer.
    #[test]
    fn requests_with_unusable_ids_are_invalid_requests_with_a_null_id() {
        let ids = [
            "{}",
            "[1]",
            "1.5",
            "true",
            "null",
            "18446744073709551616",
            "-9223372036854775809",
        ];
        for id in ids {
            for method in ["ping", "tools/call", "tools/list", "no/such/method"] {
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"name":"x"}}}}"#
                );
                let error = reply(&line);
                assert_eq!(error["error"]["code"], -32600, "{line}: {error}");
                assert_eq!(
                    error.get("id"),
                    Some(&serde_json::Value::Null),
                    "{line}: {error}"
                );
            }
        }
        // Integers (also in float form, as rmcp reads them) and strings are ids.
        for id in ["1", "\"a\"", "-5", "9223372036854775807"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert!(
                matches!(
                    parse(line.as_bytes()),
                    Parsed::Message(JsonRpcMessage::Request(_))
                ),
                "{line}"
            );
        }
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request() {
        assert_eq!(reply("{\"foo\": 1}")["error"]["code"], -32600);
        assert_eq!(reply("[1, 2]")["error"]["code"], -32600);
    }

    #[test]
    fn blank_lines_and_unknown_notifications_get_no_answer() {
        assert!(matches!(parse(b"\r\n"), Parsed::Ignore));
        let unknown = br#"{"jsonrpc":"2.0","method":"$/lsp/thing","params":{}}"#;
        assert!(!matches!(parse(unknown), Parsed::Reply(_)));
    }

    #[test]
    fn a_request_parses_with_bom_and_crlf() {
        let line = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n";
        assert!(matches!(
            parse(line),
            Parsed::Message(JsonRpcMessage::Request(_))
        ));
    }

    #[test]
    fn plain_tool_calls_parse_as_rmcp_parses_them() {
        let lines: [&[u8]; 4] = [
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","n":[1,{"a":null}]}}}"#,
            br#"{"method":"tools/call","params":{"name":"x"},"id":"abc","jsonrpc":"2.0"}"#,
            br#" {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null,"extra":1}}"#,
            br#"{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"x","requestState":"s"}}"#,
        ];
        for line in lines {
            let fast = parse_call(line).expect("the fast path takes a plain call");
            let general = serde_json::from_slice::<ClientJsonRpcMessage>(line).unwrap();
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&general).unwrap()
            );
            assert!(matches!(
                parse(line),
                Parsed::Message(JsonRpcMessage::Request(_))
            ));
        }
    }

    #[test]
    fn unusual_tool_calls_take_the_general_parse() {
        let lines: [&[u8]; 7] = [
            // a progress token lives in `_meta`, which rmcp moves into the request's extensions
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"x"}}"#,
            br#"["2.0",1,"tools/call",{"name":"x"}]"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[null,"x"]}"#,
            br#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
        ];
        for line in lines {
            assert!(
                parse_call(line).is_none(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        assert_eq!(
            reply(r#"["2.0",1,"tools/call",{"name":"x"}]"#)["error"]["code"],
            -32600
        );
    }
}
