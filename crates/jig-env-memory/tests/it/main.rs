//! Integration tests of jig-env-memory: the conformance suite on `MemoryEnv`, and the object-safety
//! and `Send` guarantees of the trait.

mod memory_conformance;
mod send_and_object_safety;
mod suite_catches_bugs;
