//! jig's built-in tools, one module per tool (being written).
