//! Every built-in tool publishes the schema of its `details`, and real results conform to it.
//!
//! The test helpers check every result they see against its tool's published schema
//! ([`assert_details_conform`]), so each snapshot case of each tool is checked where it runs.
//! This module adds a tour through the shapes each tool's details take.
#![expect(
    clippy::disallowed_methods,
    reason = "bash runs in a host temporary directory, found with std::fs"
)]

use std::sync::Arc;

use jig_env_local::LocalEnv;
use jig_tool::{ErasedTool, ToolContext};
use jig_tool_builtins::{BashConfig, BashTool, BuiltinsConfig, builtin_registry};
use serde_json::json;

use crate::support::{Workspace, assert_details_conform};

#[test]
fn every_tool_publishes_a_portable_details_schema() {
    let registry = builtin_registry(&BuiltinsConfig::default());
    for tool in registry.iter() {
        let schema = tool.details_schema();
        assert!(schema.is_object(), "{}: {schema}", tool.name());
        let text = schema.to_string();
        assert!(
            !text.contains("$ref") && !text.contains("$defs"),
            "{}: {text}",
            tool.name()
        );
        assert!(
            schema.get("properties").is_some() || schema.get("anyOf").is_some(),
            "{}: {text}",
            tool.name()
        );
    }
}

#[tokio::test]
async fn the_file_tools_details_conform_in_every_shape() {
    let ws = Workspace::new();
    ws.file("a.txt", "one\ntwo\nthree\n")
        .file("empty.txt", "")
        .file("bin.dat", b"\x7FELF\0\0\0".to_vec())
        .file("long.txt", "x\n".repeat(5000))
        .dir("sub");
    let calls = [
        ("read", json!({"path": "a.txt"})),
        ("read", json!({"path": "empty.txt"})),
        ("read", json!({"path": "bin.dat"})),
        ("read", json!({"path": "long.txt"})),
        ("read", json!({"path": "a.txt", "offset": 2, "limit": 1})),
        ("write", json!({"path": "new.txt", "content": "hi\n"})),
        (
            "write",
            json!({"path": "a.txt", "content": "one\ntwo\nthree\n"}),
        ),
        (
            "edit",
            json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]}),
        ),
        (
            "edit",
            json!({"path": "a.txt", "edits": [{"oldText": "three  ", "newText": "3"}]}),
        ),
        ("ls", json!({})),
        ("ls", json!({"limit": 1})),
        ("find", json!({"pattern": "*.txt"})),
        ("find", json!({"pattern": "*.txt", "limit": 1})),
        ("find", json!({"pattern": "*.none"})),
        ("grep", json!({"pattern": "x"})),
        ("grep", json!({"pattern": "x", "limit": 1})),
        ("grep", json!({"pattern": "nothing here"})),
        ("read", json!({"path": "missing.txt"})),
    ];
    for (tool, args) in calls {
        // `Workspace::call` checks the details against the published schema.
        let result = ws.call(tool, args.clone()).await;
        if !result.is_error {
            assert!(!result.details.is_null(), "{tool} {args}: no details");
        }
    }
}

#[tokio::test]
async fn bash_details_conform_in_every_shape() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let ctx = ToolContext::new(Arc::new(LocalEnv::new()), root);
    let tool = ErasedTool::new(BashTool::new(BashConfig::default().with_limits(10, 512)));
    for command in [
        "echo hi",
        "exit 3",
        "kill -KILL $$",
        "seq 1 1000",
        "head -c 4000 /dev/zero | tr '\\0' 'x'",
    ] {
        let result = jig_tool::DynTool::run(&tool, &ctx, json!({ "command": command })).await;
        assert!(!result.details.is_null(), "{command}: no details");
        assert_details_conform(&tool, &result);
    }
    let timed_out =
        jig_tool::DynTool::run(&tool, &ctx, json!({ "command": "sleep 5", "timeout": 0.2 })).await;
    assert_eq!(timed_out.details["timedOut"], json!(true));
    assert_details_conform(&tool, &timed_out);
}
