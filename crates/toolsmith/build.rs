//! Link options for the `toolsmith` binary, and the build it names in `--version`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-env-changed=TOOLSMITH_COMMIT");
    println!(
        "cargo:rustc-env=TOOLSMITH_VERSION={} ({})",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default(),
        build_description()
    );
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if linux_gnu && native && glibc_has_dt_relr() {
        // Relative relocations packed as DT_RELR. The dynamic loader fixes up ~78,000
        // pointers at start (vtables and tables in `.data.rel.ro`) and reads their
        // descriptions from `.rela.dyn`, a 1.8 MB section that then stays resident in every
        // process; packed, they take ~18 KB, and `serve` holds 2.3 MB less after initialize
        // (docs/performance.md, "What each build setting measured"). The binary then needs glibc 2.36 or later (it records a
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
    text.trim()
        .strip_prefix("glibc ")
        .is_some_and(|version| at_least(version, (2, 36)))
}

/// Whether a dotted version such as `2.36` or `1.95.0-nightly` is at least `(major, minor)`.
fn at_least(version: &str, wanted: (u32, u32)) -> bool {
    let mut parts = version
        .split(['.', '-'])
        .map(|part| part.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= wanted
}

/// What `toolsmith --version` says about this build after the version: `abc1234
/// 2026-12-08`, the commit and the build date, or `unknown commit, built 2026-12-08` where
/// there is no git (a source archive, an sdist built by maturin).
///
/// `TOOLSMITH_COMMIT` names the commit when the build cannot ask git (a release job that
/// builds from an exported tree); `SOURCE_DATE_EPOCH` fixes the date, for reproducible
/// builds.
fn build_description() -> String {
    let date = build_date();
    let commit = std::env::var("TOOLSMITH_COMMIT")
        .ok()
        .filter(|commit| !commit.trim().is_empty())
        .or_else(git_commit);
    match commit {
        Some(commit) => format!("{} {date}", commit.trim()),
        None => format!("unknown commit, built {date}"),
    }
}

/// The short hash of the checked-out commit, rebuilding when it moves; `None` outside a
/// git work tree or without git.
fn git_commit() -> Option<String> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").ok()?);
    let git = |args: &[&str]| -> Option<String> {
        let output = Command::new("git")
            .args(args)
            .current_dir(&manifest_dir)
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short=7", "HEAD"])?;
    // A new commit or a checkout changes HEAD or the branch it names (loose or packed).
    // Only files that exist are watched: cargo reruns a build script on every build while
    // a watched path is missing.
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in &watched {
        if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", name])
            && Path::new(&path).is_file()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    Some(commit)
}

/// Today's date in UTC as `YYYY-MM-DD`, or the day of `SOURCE_DATE_EPOCH` when set.
fn build_date() -> String {
    let seconds = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|epoch| epoch.trim().parse::<u64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs())
        });
    let (year, month, day) = civil_date(seconds / 86_400);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The proleptic Gregorian date `days` days after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_date(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}
