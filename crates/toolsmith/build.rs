//! Link options for the `toolsmith` binary.

use std::path::Path;
use std::process::Command;

/// Functions in the order the linker should lay them out: see `link/order.py`.
const SYMBOL_ORDER: &str = "link/symbol-order.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={SYMBOL_ORDER}");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if linux_gnu && native && glibc_has_dt_relr() {
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
    if linux_gnu
        && var("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && var("OPT_LEVEL") != "0"
        && links_with_bundled_lld()
    {
        // The functions that run from start to the first initialize response, then those a
        // tools/call runs, placed first and together. The kernel maps a binary's code
        // 64 KB around each page that faults, so ~2,000 startup functions (2.3 MB) spread
        // over 13.5 MB of code left ~9 MB of it resident; together, ~2.7 MB. Names the
        // file lists that a build no longer has are skipped (a stale list costs RSS, never
        // correctness). Passed only to rust-lld, the default linker here: GNU ld has no
        // such option.
        let order = Path::new(&var("CARGO_MANIFEST_DIR")).join(SYMBOL_ORDER);
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether this machine's glibc is 2.36 or later (`getconf GNU_LIBC_VERSION` prints
/// `glibc 2.36`).
fn glibc_has_dt_relr() -> bool {
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    text.trim()
        .strip_prefix("glibc ")
        .is_some_and(|version| at_least(version, (2, 36)))
}

/// Whether the binary is linked by the rust-lld that rustc 1.90 and later use by default
/// on `x86_64` Linux: no linker chosen in the cargo config (`RUSTC_LINKER`) or the flags
/// (`-C linker`, `-C linker-features`, `-C link-arg=-fuse-ld=...`).
fn links_with_bundled_lld() -> bool {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if std::env::var_os("RUSTC_LINKER").is_some()
        || flags.contains("linker")
        || flags.contains("fuse-ld")
    {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let Ok(output) = Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace()
        .nth(1)
        .is_some_and(|version| at_least(version, (1, 90)))
}

/// Whether a dotted version such as `2.36` or `1.95.0-nightly` is at least `(major, minor)`.
fn at_least(version: &str, wanted: (u32, u32)) -> bool {
    let mut parts = version
        .split(['.', '-'])
        .map(|part| part.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= wanted
}
