//! A one-line progress bar on stderr for long work (`toolsmith test`): redrawn in place as
//! steps finish, erased at the end so that only results stay on the screen. The printer
//! hands out a hidden one when stderr is not a terminal, so pipes and CI logs stay clean.

use std::io::Write;
use std::sync::Mutex;

/// Width of the bar itself, in characters.
const WIDTH: usize = 24;

/// A progress bar; every method is a no-op when it is hidden.
#[derive(Debug)]
pub(crate) struct Progress {
    state: Option<Mutex<State>>,
}

#[derive(Debug)]
struct State {
    label: String,
    done: usize,
    total: usize,
}

impl Progress {
    /// A bar that draws nothing.
    pub(crate) fn hidden() -> Self {
        Self { state: None }
    }

    /// A bar of `total` steps, drawn at once.
    pub(crate) fn new(label: &str, total: usize) -> Self {
        let state = State {
            label: label.to_owned(),
            done: 0,
            total,
        };
        draw(&state);
        Self {
            state: Some(Mutex::new(state)),
        }
    }

    /// Marks one step done, with what it was.
    pub(crate) fn step(&self, what: &str) {
        if let Some(state) = &self.state {
            let mut state = state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state.done = (state.done + 1).min(state.total);
            what.clone_into(&mut state.label);
            draw(&state);
        }
    }

    /// Erases the bar.
    pub(crate) fn finish(&self) {
        if self.state.is_some() {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r\x1b[2K");
            let _ = stderr.flush();
        }
    }
}

fn draw(state: &State) {
    let filled = (WIDTH * state.done)
        .checked_div(state.total)
        .unwrap_or(WIDTH);
    let bar = format!("{}{}", "=".repeat(filled), " ".repeat(WIDTH - filled));
    let mut label: String = state.label.chars().take(48).collect();
    if label.len() < state.label.len() {
        label.push('…');
    }
    let mut stderr = std::io::stderr().lock();
    let _ = write!(
        stderr,
        "\r\x1b[2K[{bar}] {}/{} {label}",
        state.done, state.total
    );
    let _ = stderr.flush();
}
