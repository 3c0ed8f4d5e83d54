//! The `jig` command (being written).
fn main() {}
