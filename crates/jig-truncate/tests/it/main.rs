//! Integration tests for `jig-truncate`.

mod properties;
