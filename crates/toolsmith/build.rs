//! Link options for the `toolsmith` binary.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let native = std::env::var("HOST").ok() == std::env::var("TARGET").ok();
    if target_os == "linux" && target_env == "gnu" && native && glibc_has_dt_relr() {
        // Relative relocations packed as DT_RELR. The dynamic loader fixes up ~78,000
        // pointers at start (vtables and tables in `.data.rel.ro`) and reads their
        // descriptions from `.rela.dyn`, a 1.8 MB section that then stays resident in every
        // process; packed, they take ~18 KB. `serve`'s RSS after initialize drops by ~2.4 MB
        // (bench/serve.py). The binary then needs glibc 2.36 or later (it records a
        // dependency on `GLIBC_ABI_DT_RELR`, so an older glibc refuses to start it with a
        // clear message), so it is only packed when the glibc building it has that: a
        // build on an older system (Ubuntu 22.04, RHEL 9) or a cross build links as usual.
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's glibc is 2.36 or later (`getconf GNU_LIBC_VERSION` prints
/// `glibc 2.36`).
fn glibc_has_dt_relr() -> bool {
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version
        .split('.')
        .map(|part| part.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
