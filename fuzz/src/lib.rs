//! What the fuzz targets share: the tools folder the server targets serve, and a runtime
//! per input (see docs/fuzzing.md).

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use toolsmith_folder::ToolFolder;
use toolsmith_server::{ServerOptions, ServerState};

/// `fuzz/tools`: quick tools, a prompt and resources.
pub fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools")
}

/// One server for every input: its call pool's threads are reused, and each input's
/// connection or HTTP sessions end with that input's runtime.
pub fn server_state() -> ServerState {
    static STATE: LazyLock<ServerState> = LazyLock::new(|| {
        let folder = ToolFolder::load(&tools_dir()).expect("fuzz/tools loads");
        assert!(!folder.has_errors(), "fuzz/tools has load errors");
        let options = ServerOptions {
            // Fewer threads than the default: a fuzz run is one process on a small machine.
            max_concurrent_calls: 8,
            ..ServerOptions::new(folder.root().to_owned())
        };
        ServerState::with_content(
            Arc::clone(folder.catalog()),
            Arc::clone(folder.prompts()),
            Arc::clone(folder.resources()),
            options,
        )
    });
    STATE.clone()
}

/// A fresh single-threaded runtime: dropping it at the end of an input ends every task
/// that input started (sessions, streams, calls' waiters).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime starts")
}

/// Parses `data` as UTF-8 JSON, for the targets whose input is a JSON document.
pub fn json(data: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(data).ok()
}
