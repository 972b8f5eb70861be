//! `toolsmith.toml`: TOML, then every section (`[server]`, `[defaults]`, `[search]`,
//! `[check]`, …) into the folder's settings, problems as diagnostics.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use toolsmith_folder::FolderConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let _ = FolderConfig::parse(Path::new("toolsmith.toml"), source);
});
