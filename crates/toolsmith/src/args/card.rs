//! The arguments of `toolsmith card` and `toolsmith icon`.

use std::path::PathBuf;

use clap::Args;

use super::FolderArg;

#[derive(Debug, Args)]
pub(crate) struct CardArgs {
    #[command(flatten)]
    pub(crate) folder: FolderArg,

    /// The URL clients reach the MCP endpoint at [default: `http://localhost:8080/mcp`].
    ///
    /// The card's `remotes` entry names it, e.g. `--url https://tools.example.com/mcp`.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,

    /// Say in the card that the endpoint needs an `Authorization` header.
    #[arg(long)]
    pub(crate) auth: bool,

    /// Print the AI Catalog listing the card (at URL/server-card) instead of the card.
    #[arg(long)]
    pub(crate) catalog: bool,
}

#[derive(Debug, Args)]
pub(crate) struct IconArgs {
    /// The image: PNG, JPEG, WebP or SVG.
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,

    /// Scale a PNG to N×N pixels (its longer side to N, keeping its shape).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) size: Option<u32>,

    /// Print the icon entry as JSON only (for scripts), without the TOML line.
    #[arg(long)]
    pub(crate) json: bool,
}
