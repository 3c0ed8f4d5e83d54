//! Integration tests of the extension runtime: fold rules, transports, faults, examples.

mod examples;
mod faults;
mod folds;
mod process;
mod support;
