//! Link options for the `toolsmith` binary.

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if target_os == "linux" && target_env == "gnu" {
        // Relative relocations packed as DT_RELR. The dynamic loader fixes up ~78,000
        // pointers at start (vtables and tables in `.data.rel.ro`) and reads their
        // descriptions from `.rela.dyn`, a 1.8 MB section that then stays resident in every
        // process; packed, they take ~18 KB. `serve`'s RSS after initialize drops by ~2.4 MB
        // (bench/serve.py). The price: the binary needs glibc 2.36 or later (it records a
        // dependency on `GLIBC_ABI_DT_RELR`, so an older glibc refuses to start it with a
        // clear message). Linkers that predate the option warn and ignore it.
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
