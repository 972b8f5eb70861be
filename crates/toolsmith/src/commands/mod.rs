//! One module per subcommand, each exposing `run(args, printer) -> Result<ExitStatus>`.

mod audit;
pub(crate) mod bundle;
pub(crate) mod call;
pub(crate) mod card;
pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod dev;
pub(crate) mod icon;
pub(crate) mod install;
pub(crate) mod list;
pub(crate) mod new;
pub(crate) mod packages;
pub(crate) mod search;
mod search_cache;
pub(crate) mod serve;
pub(crate) mod skills;
pub(crate) mod test;
pub(crate) mod upstream;
