//! Head and tail truncation (being written).
