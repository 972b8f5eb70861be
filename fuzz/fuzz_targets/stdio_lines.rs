//! The stdio transport end to end: line framing (BOM, CRLF, blank and over-long lines),
//! both JSON-RPC parses (the `tools/call` fast path and rmcp's), the handshake and every
//! handler, over in-memory pipes. The input is what the client writes to stdin; unless its
//! first line is an `initialize`, a standard handshake goes first. Checks that the server
//! returns and that everything it wrote to stdout is JSON-RPC, one message per line.

#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

const HANDSHAKE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

fuzz_target!(|data: &[u8]| {
    let first_line = data.split(|&byte| byte == b'\n').next().unwrap_or_default();
    let initializes = first_line
        .windows(b"\"initialize\"".len())
        .any(|window| window == b"\"initialize\"");
    let mut input = Vec::with_capacity(HANDSHAKE.len() + data.len());
    if !initializes {
        input.extend_from_slice(HANDSHAKE);
    }
    input.extend_from_slice(data);

    let runtime = toolsmith_fuzz::runtime();
    let output = runtime.block_on(async {
        let (writer, mut reader) = tokio::io::duplex(64 * 1024);
        let collect = tokio::spawn(async move {
            let mut output = Vec::new();
            reader.read_to_end(&mut output).await.map(|_| output)
        });
        // A handshake the server refuses is an `Err`: an answer, not a crash.
        let _ = toolsmith_server::serve_stream(
            toolsmith_fuzz::server_state(),
            Cursor::new(input),
            writer,
            CancellationToken::new(),
        )
        .await;
        collect
            .await
            .expect("the output reader does not panic")
            .expect("in-memory pipes do not fail")
    });
    for line in output.split(|&byte| byte == b'\n') {
        if line.is_empty() {
            continue;
        }
        let message: serde_json::Value = serde_json::from_slice(line).unwrap_or_else(|error| {
            panic!(
                "stdout carried a line that is not JSON ({error}): {}",
                String::from_utf8_lossy(line)
            )
        });
        assert_eq!(
            message.get("jsonrpc").and_then(serde_json::Value::as_str),
            Some("2.0"),
            "stdout carried a message that is not JSON-RPC 2.0: {message}"
        );
    }
});
