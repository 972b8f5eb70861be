//! MIME types of resource and media files, by extension, and which of them are served as
//! text (the rest are base64 blobs).

use std::path::Path;

/// The MIME type for a file extension (lowercase, without the dot), when it is known.
pub(crate) fn for_extension(extension: &str) -> Option<&'static str> {
    Some(match extension {
        "txt" | "text" | "log" | "ini" | "cfg" | "conf" | "star" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "js" | "mjs" => "text/javascript",
        "py" => "text/x-python",
        "rs" => "text/x-rust",
        "go" => "text/x-go",
        "java" => "text/x-java",
        "c" | "h" => "text/x-c",
        "cpp" | "cc" | "hpp" => "text/x-c++",
        "sh" => "application/x-sh",
        "json" => "application/json",
        "jsonl" | "ndjson" => "application/x-ndjson",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "sql" => "application/sql",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "avif" => "image/avif",
        "bmp" => "image/bmp",
        "ico" => "image/x-icon",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        "ogg" | "oga" => "audio/ogg",
        "flac" => "audio/flac",
        "m4a" => "audio/mp4",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "tar" => "application/x-tar",
        "wasm" => "application/wasm",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        _ => return None,
    })
}

/// The MIME type of `path` by its extension, when it is known.
pub(crate) fn for_path(path: &Path) -> Option<&'static str> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    for_extension(&extension)
}

/// Whether contents of this MIME type are served as text (when they are valid UTF-8).
pub(crate) fn is_text(mime: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence,
            "application/json"
                | "application/x-ndjson"
                | "application/xml"
                | "application/yaml"
                | "application/toml"
                | "application/sql"
                | "application/javascript"
                | "application/x-sh"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_types_and_text_detection() {
        assert_eq!(for_path(Path::new("a/B.PNG")), Some("image/png"));
        assert_eq!(for_path(Path::new("notes")), None);
        assert!(is_text("text/html;profile=mcp-app"));
        assert!(is_text("image/svg+xml"));
        assert!(is_text("application/json"));
        assert!(!is_text("image/png"));
    }
}
