//! Integration tests of the built-in tools, one module per tool.

mod bash;
mod containment;
mod details;
mod edit;
mod edit_concurrency;
mod edit_differential;
mod edit_gutter;
mod edit_props;
mod find;
mod grep;
mod image;
mod ls;
mod race;
mod read;
mod schemas;
mod support;
mod write;
