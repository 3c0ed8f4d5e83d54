//! Host-specific behaviour of `LocalEnv` the generic conformance suite cannot see.
