//! Icons given as files (`icons/forecast.png`) become `data:` URIs, so clients need no
//! access to the folder; `https:` and `data:` URIs are published as they are.

use std::path::Path;

use base64::Engine as _;
use toolsmith_model::{Diagnostic, ToolDefinition};

/// The largest icon file read: an icon is sent inline with every tool listing.
const MAX_ICON_BYTES: u64 = 1 << 20;

/// Turns icon file references into `data:` URIs.
pub(crate) fn resolve(root: &Path, definition: &mut ToolDefinition) -> Result<(), Diagnostic> {
    for icon in &mut definition.icons {
        if ["https:", "http:", "data:"]
            .iter()
            .any(|scheme| icon.src.starts_with(scheme))
        {
            continue;
        }
        let path = root.join(&icon.src);
        let Some(mime) = mime_for(&path) else {
            return Err(Diagnostic::error(
                "invalid-icon",
                definition.source.clone(),
                format!(
                    "icon `{}` of tool `{}` is not a PNG, JPEG, GIF, WebP, SVG or ICO file",
                    icon.src, definition.name
                ),
            )
            .with_help("use an image file in icons/, or an https: or data: URI"));
        };
        let bytes = crate::read::read_bytes(&path, MAX_ICON_BYTES).map_err(|error| {
            Diagnostic::error(
                "invalid-icon",
                definition.source.clone(),
                match error {
                    crate::read::ReadError::Io(error) => format!(
                        "icon `{}` of tool `{}` cannot be read: {error}",
                        icon.src, definition.name
                    ),
                    other => format!("icon `{}` of tool `{}`: {other}", icon.src, definition.name),
                },
            )
            .with_help(format!(
                "icon paths are relative to the tools folder `{}`",
                root.display()
            ))
        })?;
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        icon.src = format!("data:{mime};base64,{data}");
        icon.mime_type.get_or_insert_with(|| mime.to_owned());
    }
    Ok(())
}

fn mime_for(path: &Path) -> Option<&'static str> {
    Some(
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "png" => "image/png",
            "jpg" | "jpeg" => "image/jpeg",
            "gif" => "image/gif",
            "webp" => "image/webp",
            "svg" => "image/svg+xml",
            "ico" => "image/x-icon",
            _ => return None,
        },
    )
}
