//! `toolsmith dev`: `serve --http --watch` for someone writing tools, who wants to see them
//! (docs/serve.md#toolsmith-dev). It picks the port, prints the page's URL and, with
//! `--open`, opens it in the default browser.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};

use crate::ExitStatus;
use crate::args::DevArgs;
use crate::commands::serve;
use crate::printer::Printer;

/// The port `dev` listens on unless told otherwise (or taken).
const PORT: u16 = 8080;

pub(crate) fn run(args: DevArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let DevArgs { mut serve, open } = args;
    serve.watch = true;
    let mut port_taken = false;
    if serve.http.is_none() {
        let (address, taken) = default_address();
        serve.http = Some(address);
        port_taken = taken;
    }
    serve::run_then(&serve, printer, |bound| {
        if port_taken {
            printer.message(&format!(
                "port {PORT} is taken, so this is port {} (choose one with --http PORT)",
                bound.port()
            ));
        }
        let page = format!("{}/", serve::origin(bound));
        printer.message(&format!(
            "Page: {page} (every tool as served, with a form to try each; it follows your edits)"
        ));
        if open {
            open_page(&page, printer);
        }
    })
}

/// Opens `page` in the default browser, and says what happened: `xdg-open` exits quietly
/// when no browser can start, so `--open` said nothing on a machine without a display.
fn open_page(page: &str, printer: Printer) {
    let cannot = |why: &str| {
        printer.warning(&format!("cannot open a browser: {why}"));
        printer.hint(&format!(
            "open {page} yourself, or set BROWSER to the program to use"
        ));
    };
    if let Some(why) = no_display() {
        cannot(why);
        return;
    }
    match opener::open_browser(page) {
        Ok(()) => printer.message(&format!(
            "Opening {page} in the browser (if none opens, open it yourself)"
        )),
        Err(error) => cannot(&error.to_string()),
    }
}

/// Why no browser can start: on Linux (not WSL) without `BROWSER`, no graphical display.
fn no_display() -> Option<&'static str> {
    let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    let elsewhere = set("BROWSER") || set("WSL_DISTRO_NAME") || set("WSL_INTEROP");
    (cfg!(target_os = "linux") && !elsewhere && !set("DISPLAY") && !set("WAYLAND_DISPLAY"))
        .then_some("there is no graphical display (neither `DISPLAY` nor `WAYLAND_DISPLAY` is set)")
}

/// `127.0.0.1:8080`, or a free port when something else listens there (then `true`).
fn default_address() -> (String, bool) {
    let preferred = SocketAddr::from((Ipv4Addr::LOCALHOST, PORT));
    if TcpListener::bind(preferred).is_ok() {
        // Closed again at once; the server binds it a moment later.
        return (preferred.to_string(), false);
    }
    ("127.0.0.1:0".to_owned(), true)
}
