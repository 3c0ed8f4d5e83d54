//! The conformance suite every `ExecutionEnv` implementation runs (being written).
