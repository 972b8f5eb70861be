//! Code mode against direct tool calls (docs/code-mode.md, "Measured"): the tokens that pass
//! through the model and the tools' wall time for five multi-step tasks, as a Markdown
//! table.
//!
//! Run: `cargo bench -p toolsmith-bench --bench code_mode`

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![expect(clippy::cast_precision_loss, reason = "token counts far below 2^52")]

use toolsmith_bench::code_mode::{Shop, table, tasks};

fn main() {
    let shop = Shop::new();
    let measured: Vec<_> = tasks().iter().map(|task| shop.measure(task)).collect();
    println!("{}", table(&measured));
    let direct: usize = measured.iter().map(|row| row.direct_tokens).sum();
    let code: usize = measured.iter().map(|row| row.code_tokens).sum();
    let direct_context: usize = measured.iter().map(|row| row.direct_context).sum();
    let code_context: usize = measured.iter().map(|row| row.code_context).sum();
    println!(
        "\nin all: {direct} tokens direct, {code} with run_code ({:.1}x fewer); \
         over all turns {direct_context} against {code_context} ({:.1}x fewer)",
        direct as f64 / code.max(1) as f64,
        direct_context as f64 / code_context.max(1) as f64,
    );
}
