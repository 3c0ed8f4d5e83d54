use std::collections::BTreeMap;
use std::sync::Arc;

use crate::tool::DynTool;

/// The tools a host offers, by name, in registration order.
#[derive(Debug, Default, Clone)]
pub struct ToolRegistry {
    order: Vec<String>,
    tools: BTreeMap<String, Arc<dyn DynTool>>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; a tool with the same name is replaced in place.
    pub fn register(&mut self, tool: Arc<dyn DynTool>) {
        let name = tool.name().to_owned();
        if self.tools.insert(name.clone(), tool).is_none() {
            self.order.push(name);
        }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.tools.get(name)
    }

    /// All tools in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn DynTool>> {
        self.order.iter().filter_map(|name| self.tools.get(name))
    }

    /// Tool names in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.order.iter().map(String::as_str).collect()
    }

    /// Keeps only the tools `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&dyn DynTool) -> bool) {
        self.tools.retain(|_, tool| keep(tool.as_ref()));
        let tools = &self.tools;
        self.order.retain(|name| tools.contains_key(name));
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
