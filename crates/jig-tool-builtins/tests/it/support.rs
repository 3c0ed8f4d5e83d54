//! A workspace on `MemoryEnv` for the file-tool tests: `/ws` is the root (and the cwd),
//! `/outside` holds what containment must keep out.
#![expect(clippy::unwrap_used, reason = "test set-up helpers fail loudly")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_env_memory::MemoryEnv;
use jig_tool::{DynTool, ToolContext, ToolRegistry, ToolResult};
use jig_tool_builtins::details::{
    BashDetails, EditDetails, FindDetails, GrepDetails, LsDetails, ReadDetails, WriteDetails,
};
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub(crate) const WS: &str = "/ws";

pub(crate) struct Workspace {
    pub(crate) env: Arc<MemoryEnv>,
    pub(crate) ctx: ToolContext,
    registry: ToolRegistry,
}

impl Workspace {
    pub(crate) fn new() -> Self {
        Self::with_config(&BuiltinsConfig::default())
    }

    pub(crate) fn with_config(config: &BuiltinsConfig) -> Self {
        let env = Arc::new(MemoryEnv::with_home("/ws/home"));
        env.add_dir(WS).unwrap();
        let ctx = ToolContext::new(env.clone(), PathBuf::from(WS));
        Self {
            env,
            ctx,
            registry: builtin_registry(config),
        }
    }

    /// Creates `path` (relative to `/ws`, or absolute) with `content`.
    pub(crate) fn file(&self, path: &str, content: impl Into<Vec<u8>>) -> &Self {
        self.env
            .add_file(Path::new(WS).join(path), content)
            .unwrap();
        self
    }

    pub(crate) fn dir(&self, path: &str) -> &Self {
        self.env.add_dir(Path::new(WS).join(path)).unwrap();
        self
    }

    pub(crate) fn symlink(&self, target: &str, link: &str) -> &Self {
        self.env.symlink(target, Path::new(WS).join(link)).unwrap();
        self
    }

    pub(crate) fn content(&self, path: &str) -> Option<Vec<u8>> {
        self.env.files().get(&Path::new(WS).join(path)).cloned()
    }

    /// Runs a call; its details must conform to the tool's published details schema.
    pub(crate) async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let tool = self
            .registry
            .get(tool)
            .unwrap_or_else(|| panic!("{tool} is registered"));
        let result = tool.run(&self.ctx, args).await;
        assert_details_conform(tool.as_ref(), &result);
        result
    }

    /// Runs a call that must succeed and returns its text.
    pub(crate) async fn ok(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert!(!result.is_error, "expected success, got {result:#?}");
        result.text_content()
    }

    /// Runs a call that must fail without changing any file, and returns its text.
    pub(crate) async fn err(&self, tool: &str, args: Value) -> String {
        let before = self.env.files();
        let result = self.call(tool, args).await;
        assert!(result.is_error, "expected an error, got {result:#?}");
        assert_eq!(self.env.files(), before, "a failed call changed files");
        result.text_content()
    }
}

/// Checks `result.details` (when there are any) against the details schema `tool` publishes, and
/// that the tool's `Details` type reads them back to the same JSON (so the type, its schema and
/// the wire agree). Every result the tests see goes through this.
pub(crate) fn assert_details_conform(tool: &dyn DynTool, result: &ToolResult) {
    let details = &result.details;
    if details.is_null() {
        // Error results built from a `ToolError` carry no details.
        return;
    }
    let validator = jsonschema::validator_for(tool.details_schema())
        .unwrap_or_else(|error| panic!("{}: the details schema compiles: {error}", tool.name()));
    let problems: Vec<String> = validator
        .iter_errors(details)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "{}: details do not conform to the published schema: {problems:#?}\n{details:#}",
        tool.name()
    );
    let round_trip = match tool.name() {
        "read" => round_trip::<ReadDetails>(details),
        "write" => round_trip::<WriteDetails>(details),
        "edit" => round_trip::<EditDetails>(details),
        "grep" => round_trip::<GrepDetails>(details),
        "find" => round_trip::<FindDetails>(details),
        "ls" => round_trip::<LsDetails>(details),
        "bash" => round_trip::<BashDetails>(details),
        other => panic!("no details type known for {other}"),
    };
    assert_eq!(&round_trip, details, "{}: details round trip", tool.name());
}

fn round_trip<T: DeserializeOwned + Serialize>(details: &Value) -> Value {
    let typed: T = serde_json::from_value(details.clone()).unwrap();
    serde_json::to_value(typed).unwrap()
}
