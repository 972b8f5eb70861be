//! Integration tests for command tools: real processes (bash, python3, node, coreutils) run
//! through [`toolsmith_command::CommandTool`].

mod argv;
mod catalog;
mod environment;
mod events;
mod failures;
mod limits;
mod orphans;
mod results;
mod stdin;
mod support;
mod workers;
