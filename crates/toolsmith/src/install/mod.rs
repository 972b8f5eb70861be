//! What `toolsmith install` knows about AI clients and their files: the client table
//! ([`clients`]), where each file is on this machine ([`paths`]), the entry each client
//! expects ([`entry`]), the format writers that put it in the text ([`files`]), the file on
//! disk, replaced without damaging or exposing it ([`config_file`]), and the snippets of
//! `serve --http`'s page ([`page`]). The command itself is `commands/install.rs`; the
//! table for people is docs/install.md.

pub(crate) mod clients;
pub(crate) mod config_file;
pub(crate) mod entry;
pub(crate) mod files;
pub(crate) mod page;
pub(crate) mod paths;
pub(crate) mod skill_folders;
