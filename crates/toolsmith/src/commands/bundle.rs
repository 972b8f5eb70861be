//! `toolsmith bundle DIR`: a tools folder packed into an MCP Bundle (`.mcpb`, manifest
//! version 0.4 of the `modelcontextprotocol/mcpb` format) with the `toolsmith` binary inside,
//! so that it runs where Toolsmith is not installed; with `--server-json`, the MCP
//! registry's `server.json` for it too (docs/bundle.md).
//!
//! What goes in is chosen in `files`, the manifest is written in `manifest`, and the
//! registry entry in `registry`.

mod files;
mod manifest;
mod registry;

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Read as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::json;
use sha2::{Digest as _, Sha256};
use toolsmith_model::{Severity, Transport};
use zip::write::SimpleFileOptions;

use crate::ExitStatus;
use crate::args::BundleArgs;
use crate::error::Hinted;
use crate::folder;
use crate::printer::{Printer, plural};

use files::Selection;
use manifest::{Binary, Manifest};

/// Where the tools folder sits inside the bundle; `${__dirname}/tools` is what the bundled
/// `toolsmith serve` serves.
const FOLDER_IN_BUNDLE: &str = "tools";

/// A bundle bigger than this is a warning: clients download and unpack it at install.
const LARGE_BUNDLE: u64 = 100 * 1024 * 1024;

pub(crate) fn run(args: &BundleArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let BundleArgs {
        folder: folder_arg,
        output,
        binary,
        include,
        allow_errors,
        server_json,
        name: registry_name,
        url,
        json,
    } = args;
    let loaded = folder::load_for(folder_arg.dir.as_deref(), Some(Transport::Stdio))?;
    refuse_errors(&loaded, folder_arg.dir.as_deref(), *allow_errors, printer)?;
    let binary = Binary::locate(binary.as_deref())?;
    let manifest = Manifest::build(&loaded, &binary, printer)?;
    let root = loaded.root().to_owned();
    let output = output.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "{}-{}.mcpb",
            manifest.file_stem(),
            manifest.version()
        ))
    });
    let selection = Selection::of(&root, include, &output)?;
    for skipped in &selection.secrets {
        printer.warning(&format!(
            "left out `{}`: it looks like a secret",
            skipped.display()
        ));
        printer.hint(&format!(
            "bundle it anyway with `--include {}`",
            skipped.display()
        ));
    }
    write_bundle(&output, &manifest, &binary, &root, &selection)?;
    let bytes = std::fs::metadata(&output)
        .with_context(|| format!("cannot read `{}`", output.display()))?
        .len();
    if bytes > LARGE_BUNDLE {
        printer.warning(&format!(
            "`{}` is {} MB, over the 100 MB clients expect",
            output.display(),
            bytes / (1024 * 1024)
        ));
        printer.hint("list what it need not carry in the folder's `.mcpbignore`; a `dist` build of `toolsmith` (`--binary`) is far smaller than a debug one");
    }
    let sha256 = sha256_of(&output)?;
    let server_json_path = if *server_json {
        let Some(name) = registry_name.as_deref().or(manifest.registry_name()) else {
            return Err(Hinted::new("`server.json` needs the server's registry name")
                .hint("pass `--name io.github.OWNER/NAME`, or set `registry_name` in toolsmith.toml's `[server]`")
                .into());
        };
        let url = url.as_deref().unwrap_or_default();
        let entry = registry::server_json(name, url, &sha256, &manifest)?;
        let path = output.with_file_name("server.json");
        let text = serde_json::to_string_pretty(&entry)? + "\n";
        std::fs::write(&path, text)
            .with_context(|| format!("cannot write `{}`", path.display()))?;
        Some(path)
    } else {
        None
    };
    if *json {
        printer.data(&serde_json::to_string_pretty(&json!({
            "bundle": output,
            "bytes": bytes,
            "sha256": sha256,
            "files": selection.files,
            "left_out": selection.secrets,
            "tools": manifest.tool_names(),
            "user_config": manifest.user_config_names(),
            "server_json": server_json_path,
        }))?)?;
    } else {
        let tools = manifest.tool_names().len();
        printer.message(&format!(
            "wrote `{}`: {tools} tool{}, {} file{} of the folder, {:.1} MB",
            output.display(),
            plural(tools),
            selection.files.len(),
            plural(selection.files.len()),
            as_megabytes(bytes),
        ));
        if let Some(path) = &server_json_path {
            printer.message(&format!("wrote `{}`", path.display()));
        }
        printer.message(&format!(
            "next: check it with `npx @anthropic-ai/mcpb info {}`, or open it in Claude Desktop",
            output.display()
        ));
    }
    Ok(ExitStatus::Success)
}

/// Refuses a folder with load errors, which a client would only show as missing tools;
/// with `--allow-errors`, lists each one as a warning instead.
fn refuse_errors(
    loaded: &toolsmith_folder::ToolFolder,
    dir: Option<&Path>,
    allow_errors: bool,
    printer: Printer,
) -> anyhow::Result<()> {
    let errors: Vec<_> = loaded
        .catalog()
        .diagnostics()
        .iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .cloned()
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    if allow_errors {
        for error in &errors {
            printer.warning(&format!(
                "bundled with a load error: {}: {}",
                error.location, error.message
            ));
        }
        return Ok(());
    }
    folder::report(printer, &errors);
    let shown = folder::path_of(dir);
    Err(Hinted::new(format!(
        "`{}` has {} load error{}; not bundled",
        shown.display(),
        errors.len(),
        plural(errors.len())
    ))
    .hint(format!(
        "fix them (`toolsmith check {}` shows each), or bundle anyway with `--allow-errors`",
        shown.display()
    ))
    .into())
}

/// Writes the `.mcpb`: `manifest.json`, the binary under `server/`, the folder's files
/// under `tools/`. Written beside the output and renamed over it, so a failed run leaves no
/// half bundle behind.
fn write_bundle(
    output: &Path,
    manifest: &Manifest,
    binary: &Binary,
    root: &Path,
    selection: &Selection,
) -> anyhow::Result<()> {
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create `{}`", parent.display()))?;
    }
    let partial = output.with_extension("mcpb.partial");
    let written = (|| -> anyhow::Result<()> {
        let file = File::create(&partial)
            .with_context(|| format!("cannot create `{}`", partial.display()))?;
        let mut zip = zip::ZipWriter::new(BufWriter::new(file));
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(false);
        zip.start_file("manifest.json", options.unix_permissions(0o644))?;
        zip.write_all((serde_json::to_string_pretty(&manifest.json)? + "\n").as_bytes())?;
        zip.start_file(binary.entry_point(), options.unix_permissions(0o755))?;
        let mut source = File::open(&binary.path)
            .with_context(|| format!("cannot read `{}`", binary.path.display()))?;
        std::io::copy(&mut source, &mut zip)?;
        for relative in &selection.files {
            let path = root.join(relative);
            let mode = executable_mode(&path);
            let name = format!("{FOLDER_IN_BUNDLE}/{}", zip_path(relative));
            zip.start_file(name, options.unix_permissions(mode))?;
            let mut source =
                File::open(&path).with_context(|| format!("cannot read `{}`", path.display()))?;
            std::io::copy(&mut source, &mut zip)?;
        }
        zip.finish()?.flush()?;
        Ok(())
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(error.context(format!("cannot write `{}`", output.display())));
    }
    std::fs::rename(&partial, output)
        .with_context(|| format!("cannot write `{}`", output.display()))
}

/// A file's Unix mode for the archive: executable files stay executable (a command tool's
/// script), everything else is `0644`.
#[cfg(unix)]
fn executable_mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    let executable =
        std::fs::metadata(path).is_ok_and(|meta| meta.permissions().mode() & 0o111 != 0);
    if executable { 0o755 } else { 0o644 }
}

/// Windows has no executable bit: every file of the folder is `0644`.
#[cfg(not(unix))]
fn executable_mode(_path: &Path) -> u32 {
    0o644
}

/// A relative path with `/` between its parts, as zip archives name files.
fn zip_path(relative: &Path) -> String {
    relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The SHA-256 of a file, in lowercase hex (the registry's `fileSha256`).
fn sha256_of(path: &Path) -> anyhow::Result<String> {
    let mut file = File::open(path).with_context(|| format!("cannot read `{}`", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 1 << 16];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        }))
}

#[expect(
    clippy::cast_precision_loss,
    reason = "a size shown to one decimal place"
)]
fn as_megabytes(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
