//! Reading a file of a tools folder (a tool file, a manifest's script, `toolsmith.toml`, a
//! prompt, a resource, a package's files): only a regular file, opened without blocking,
//! and never more than a cap. A FIFO named `x.star` hung a load on its open, and a 2 GB
//! `.star` file was read whole and stayed resident after its load timed out; so the size
//! and kind are checked from the metadata (of a link's target) before the file is opened,
//! again on the open file, and the read itself stops past the cap.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;
use std::sync::OnceLock;

use toolsmith_model::{Diagnostic, SourceLocation};

/// The largest tool file, manifest, script, `toolsmith.toml` or prompt read, unless
/// configured: far more than any hand-written or generated definition needs (the largest
/// example is a few kilobytes), and small enough that parsing it costs little memory.
pub const DEFAULT_FILE_LIMIT: u64 = 1 << 20;

/// The environment variable that sets [`file_limit`] (`4MiB`, bytes).
pub const FILE_LIMIT_VAR: &str = "TOOLSMITH_MAX_FILE_SIZE";

static FILE_LIMIT: OnceLock<u64> = OnceLock::new();

/// The largest definition file a folder reads, in bytes: `TOOLSMITH_MAX_FILE_SIZE` or
/// [`DEFAULT_FILE_LIMIT`].
pub fn file_limit() -> u64 {
    *FILE_LIMIT.get_or_init(|| {
        let Ok(text) = std::env::var(FILE_LIMIT_VAR) else {
            return DEFAULT_FILE_LIMIT;
        };
        match toolsmith_starlark::parse_size(&text).and_then(|n| u64::try_from(n).ok()) {
            Some(limit) if limit > 0 => limit,
            _ => {
                tracing::warn!(
                    "ignoring `{FILE_LIMIT_VAR}={text}`: expected a size such as `4MiB` or a number of bytes"
                );
                DEFAULT_FILE_LIMIT
            }
        }
    })
}

/// Why a file of the folder was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read (missing, no permission, ...).
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    /// The path (or the target of the link at it) is a FIFO, a socket, a device or a
    /// folder: reading it could block for ever or never end.
    #[error("skipped: it is {kind}, not a regular file")]
    NotRegular {
        /// What it is, with its article: `a FIFO`, `a folder`.
        kind: &'static str,
    },
    /// The file is larger than the cap.
    #[error("skipped: the file is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// Its size in bytes (at least this many when it grew while being read).
        size: u64,
        /// The cap it went over.
        limit: u64,
    },
}

/// Why a file's text is not UTF-8: where its first invalid byte is. Carried inside a
/// [`ReadError::Io`] of kind `InvalidData`, so that matches on [`ReadError`] stay as they are.
#[derive(Debug, thiserror::Error)]
#[error(
    "it is not UTF-8 text: the byte at offset {offset} (line {line}, column {column}) is not valid UTF-8"
)]
pub struct NotUtf8 {
    /// The offset of the first invalid byte, from 0.
    pub offset: usize,
    /// Its line, from 1.
    pub line: u32,
    /// Its column (in characters), from 1.
    pub column: u32,
}

impl NotUtf8 {
    /// Where the first invalid byte of `bytes` is (`valid_up_to` bytes are valid).
    fn at(bytes: &[u8], valid_up_to: usize) -> Self {
        // The bytes before it are valid UTF-8, by `valid_up_to`'s definition.
        let before = std::str::from_utf8(&bytes[..valid_up_to]).unwrap_or_default();
        let (line, column) = toolsmith_model::line_column(before, before.len());
        Self {
            offset: valid_up_to,
            line,
            column,
        }
    }
}

impl ReadError {
    /// Whether the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Io(error) if error.kind() == std::io::ErrorKind::NotFound)
    }

    /// The load diagnostic for the file at `location`: `unreadable-file` or
    /// `file-too-large`, with a help line saying what to do.
    pub fn diagnostic(&self, location: SourceLocation) -> Diagnostic {
        let not_utf8 = match self {
            Self::Io(error) => error
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<NotUtf8>()),
            _ => None,
        };
        if let Some(not_utf8) = not_utf8 {
            let location = SourceLocation {
                line: not_utf8.line,
                column: not_utf8.column,
                ..location
            };
            return Diagnostic::error("unreadable-file", location, self.to_string()).with_help(
                "save it as UTF-8 (in most editors: \"Save with encoding\", or `iconv -f latin1 -t utf-8`)",
            );
        }
        match self {
            Self::Io(_) => Diagnostic::error("unreadable-file", location, self.to_string()),
            Self::NotRegular { .. } => {
                Diagnostic::error("unreadable-file", location, self.to_string()).with_help(
                    "only regular files (or links to them) are read; remove it or rename it to start with `_`",
                )
            }
            Self::TooLarge { limit, .. } => {
                Diagnostic::error("file-too-large", location, self.to_string()).with_help(format!(
                    "split it into smaller files; `{FILE_LIMIT_VAR}` raises the limit of {} for tool files",
                    size_text(*limit)
                ))
            }
        }
    }
}

/// `bytes` as `1 MiB` when a whole number of MiB, else as bytes.
fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// What `metadata` describes, when it is not a regular file.
fn not_regular(metadata: &std::fs::Metadata) -> Option<ReadError> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = metadata.file_type();
    let kind = if kind.is_file() {
        return None;
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a file"
    };
    Some(ReadError::NotRegular { kind })
}

/// Opens the regular file at `path` (a link is followed to its target), without blocking
/// and without reading it, and returns it with its size.
///
/// # Errors
///
/// [`ReadError::NotRegular`] for anything but a regular file, [`ReadError::Io`] when it
/// cannot be opened.
pub fn open_regular(path: &Path) -> Result<(File, u64), ReadError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    // The kind is known before the open: opening a FIFO for reading waits for a writer,
    // and opening some devices acts on them.
    let metadata = std::fs::metadata(path)?;
    if let Some(error) = not_regular(&metadata) {
        return Err(error);
    }
    // Replaced by a FIFO since: the open does not wait, and the open file says what it is.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    if let Some(error) = not_regular(&metadata) {
        return Err(error);
    }
    Ok((file, metadata.len()))
}

/// The bytes of the regular file at `path`, at most `limit` of them.
///
/// # Errors
///
/// As [`open_regular`], and [`ReadError::TooLarge`] when the file is larger than `limit`
/// (told from its size before a byte is read, or when it grew past it while read).
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let (file, size) = open_regular(path)?;
    if size > limit {
        return Err(ReadError::TooLarge { size, limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    let read = bytes.len() as u64;
    if read > limit {
        return Err(ReadError::TooLarge { size: read, limit });
    }
    Ok(bytes)
}

/// The text of the regular file at `path`, at most `limit` bytes of UTF-8.
///
/// # Errors
///
/// As [`read_bytes`], and [`ReadError::Io`] of kind `InvalidData` for text that is not
/// UTF-8, holding a [`NotUtf8`] that says where.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    String::from_utf8(read_bytes(path, limit)?).map_err(|error| {
        let at = NotUtf8::at(error.as_bytes(), error.utf8_error().valid_up_to());
        ReadError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, at))
    })
}

/// The text of the definition file at `path` (a tool file, a script, `toolsmith.toml`, a
/// prompt), at most [`file_limit`] bytes.
///
/// # Errors
///
/// As [`read_text`].
pub fn read_definition(path: &Path) -> Result<String, ReadError> {
    read_text(path, file_limit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_limit_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.star");
        // Sparse: the size is what counts, nothing is written.
        File::create(&path).unwrap().set_len(3 << 30).unwrap();
        let error = read_bytes(&path, 1 << 20).unwrap_err();
        assert!(
            matches!(error, ReadError::TooLarge { size, limit } if size == 3 << 30 && limit == 1 << 20),
            "{error:?}"
        );
        let diagnostic = error.diagnostic(SourceLocation::file(&path));
        assert_eq!(diagnostic.rule, "file-too-large");
        assert!(
            diagnostic.message.contains("3221225472 bytes"),
            "{diagnostic}"
        );
        assert!(
            diagnostic
                .help
                .as_deref()
                .unwrap_or_default()
                .contains("1 MiB"),
            "{diagnostic:?}"
        );
    }

    #[test]
    fn a_file_at_the_limit_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ok.star");
        std::fs::write(&path, "x = 1\n").unwrap();
        assert_eq!(read_text(&path, 6).unwrap(), "x = 1\n");
        assert!(matches!(
            read_text(&path, 5),
            Err(ReadError::TooLarge { size: 6, .. })
        ));
    }

    #[test]
    fn folders_and_missing_files_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_bytes(dir.path(), 10),
            Err(ReadError::NotRegular { kind: "a folder" })
        ));
        assert!(
            read_bytes(&dir.path().join("missing"), 10)
                .unwrap_err()
                .is_not_found()
        );
    }
}
