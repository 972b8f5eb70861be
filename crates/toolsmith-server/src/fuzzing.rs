//! Entry points for the fuzz targets in `fuzz/`: the stdio transport's two
//! JSON-RPC parses, which are private. Not an API: hidden from the docs, may change at any
//! time.

use rmcp::model::ClientJsonRpcMessage;
use serde_json::Value;

/// The stdio fast path's parse of one line (a plain `tools/call`), as the JSON of the
/// message it builds; `None` when the line takes rmcp's parse instead.
pub fn parse_call(line: &[u8]) -> Option<Value> {
    crate::jsonrpc::parse_call(line).and_then(|message| serde_json::to_value(message).ok())
}

/// rmcp's parse of one line, as the JSON of the message it builds; `None` when rmcp
/// rejects the line.
pub fn parse_message(line: &[u8]) -> Option<Value> {
    serde_json::from_slice::<ClientJsonRpcMessage>(line)
        .ok()
        .and_then(|message| serde_json::to_value(message).ok())
}
