//! The stdio transport's two JSON-RPC parses of one line, against each other: whatever
//! the `tools/call` fast path accepts, rmcp's general parse must accept too and build the
//! same message (the fast path's documented contract), and neither may panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolsmith_server::fuzzing::{parse_call, parse_message};

fuzz_target!(|data: &[u8]| {
    let general = parse_message(data);
    if let Some(fast) = parse_call(data) {
        let Some(general) = general else {
            panic!(
                "the fast path accepted a line rmcp's parse rejects: {}",
                String::from_utf8_lossy(data)
            );
        };
        assert_eq!(
            fast,
            general,
            "the two parses built different messages from {}",
            String::from_utf8_lossy(data)
        );
    }
});
