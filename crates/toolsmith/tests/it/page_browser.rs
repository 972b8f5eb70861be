//! The page of `toolsmith serve --http` in a real browser. Debian's
//! `chromium`, headless, driven by `puppeteer-core` (.ci/browser, pinned, installed by
//! `.ci/run`) through `.ci/browser/page-test.mjs`: every tool on the page, a try-it call
//! with a number, an enum and an array, an `isError` result in red, and with
//! `--auth-token` the token prompt and a wrong token's 401. Screenshots go to
//! `target/ci-artifacts/`.
//!
//! The tests are ignored unless run with `cargo test -- --include-ignored` (as `.ci/run`
//! does); there, without chromium or the node modules, they fail saying what to install.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::page::tools_folder;
use crate::serve_process::ServeProcess;
use crate::{require, workspace};

/// How long one run of the page test may take (it bounds itself to 120 s too).
const BROWSER_PATIENCE: Duration = Duration::from_secs(150);

/// The page test's script; the test fails without chromium or the node modules.
fn page_test() -> PathBuf {
    let browser = workspace().join(".ci/browser");
    let chromium = std::env::var_os("CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    require(
        chromium.exists(),
        &format!("{} (apt-get install chromium)", chromium.display()),
    );
    require(
        browser.join("node_modules/puppeteer-core").exists(),
        "puppeteer-core (npm ci --prefix .ci/browser)",
    );
    browser.join("page-test.mjs")
}

/// Runs the page test on `server`'s page; fails with what it said unless it passes.
fn run_page_test(script: &Path, server: &ServeProcess, screenshot: &str, token: Option<&str>) {
    let artifacts = workspace().join("target/ci-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let url = server.url().trim_end_matches("/mcp").to_owned() + "/";
    let mut command = Command::new("node");
    command
        .arg(script)
        .arg(&url)
        .arg(artifacts.join(screenshot))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(token) = token {
        command.args(["--token", token]);
    }
    let mut child = command.spawn().expect("node runs");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > BROWSER_PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the page test still ran after {BROWSER_PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the page test failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
#[ignore = "needs chromium and .ci/browser (CI runs it: cargo test -- --include-ignored)"]
fn the_page_works_in_a_real_browser() {
    let script = page_test();
    let dir = tools_folder();
    let server = ServeProcess::http(&[dir.path().to_str().unwrap()], None);
    run_page_test(&script, &server, "page.png", None);
    assert_eq!(server.stop(), Some(0));
}

#[test]
#[ignore = "needs chromium and .ci/browser (CI runs it: cargo test -- --include-ignored)"]
fn in_a_real_browser_the_page_asks_for_the_token() {
    let script = page_test();
    let dir = tools_folder();
    let token = "browser-s3cret";
    let server = ServeProcess::http(&[dir.path().to_str().unwrap()], Some(token));
    run_page_test(&script, &server, "page-auth.png", Some(token));
    assert_eq!(server.stop(), Some(0));
}
