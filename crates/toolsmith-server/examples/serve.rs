//! A minimal server over a tools folder, without the CLI:
//!
//! ```text
//! cargo run -p toolsmith-server --example serve -- examples/tools            # stdio
//! cargo run -p toolsmith-server --example serve -- examples/tools 127.0.0.1:8080
//! ```

use std::path::Path;
use std::sync::Arc;

use toolsmith_folder::ToolFolder;
use toolsmith_server::{HttpOptions, ServerOptions, ServerState};

#[expect(
    clippy::print_stderr,
    reason = "the example tells its user where it listens"
)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "examples/tools".to_owned());
    let folder = ToolFolder::load(Path::new(&dir))?;
    let state = ServerState::with_content(
        Arc::clone(folder.catalog()),
        Arc::clone(folder.prompts()),
        Arc::clone(folder.resources()),
        ServerOptions::new(folder.root().to_owned()),
    );
    match args.next() {
        None => toolsmith_server::serve_stdio(state)?,
        Some(address) => toolsmith_server::serve_http(
            state,
            &HttpOptions::default(),
            address.parse()?,
            |bound| {
                eprintln!("http://{bound}/mcp");
            },
        )?,
    }
    Ok(())
}
