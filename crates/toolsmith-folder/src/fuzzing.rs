//! Entry points for the fuzz targets in `fuzz/`: manifest parsing, which is
//! private. Not an API: hidden from the docs, may change at any time.

use std::path::Path;

use toolsmith_model::{Diagnostic, ToolDefinition};

use crate::manifest::{self, ManifestKind};

/// Parses the text of a manifest as loading does: the tool's definition, and its `command`
/// when it is a command tool.
pub fn parse_manifest(
    path: &Path,
    source: &str,
) -> Result<(ToolDefinition, Option<Vec<String>>), Vec<Diagnostic>> {
    let manifest = manifest::parse(path, source, true)?;
    let command = match manifest.kind {
        ManifestKind::Command(argv) => Some(argv),
        ManifestKind::Script | ManifestKind::Upstream => None,
    };
    Ok((manifest.definition, command))
}
