//! Path resolution and workspace containment (being written).
