//! Listing a folder's files the way every part of a tools folder does: recursively, sorted,
//! skipping names that start with `_` or `.` (docs/tools.md).

use std::path::{Path, PathBuf};

/// Every visible file under `dir`, sorted; folders for which `skip` is true are not entered.
pub(crate) fn visible_files(
    dir: &Path,
    skip: &dyn Fn(&Path) -> bool,
) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    collect(dir, skip, &mut files)?;
    files.sort();
    Ok(files)
}

fn collect(
    dir: &Path,
    skip: &dyn Fn(&Path) -> bool,
    files: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('_') || name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            if !skip(&path) {
                collect(&path, skip, files)?;
            }
        } else {
            files.push(path);
        }
    }
    Ok(())
}
