//! Every built-in tool's input schema is accepted by the clients' schema subsets: the portable
//! form passes Gemini's check as it is published, and its strict form passes OpenAI's
//! strict-mode check.

use jig_tool::schema::{gemini_violations, openai_strict, openai_strict_violations};
use jig_tool_builtins::{BuiltinsConfig, builtin_registry};

#[test]
fn every_tool_schema_fits_the_gemini_subset() {
    let registry = builtin_registry(&BuiltinsConfig::default());
    assert!(registry.names().len() >= 7, "{:?}", registry.names());
    for tool in registry.iter() {
        let problems = gemini_violations(tool.input_schema());
        assert!(problems.is_empty(), "{}: {problems:#?}", tool.name());
    }
}

#[test]
fn every_tool_schema_fits_openai_strict_mode_once_made_strict() {
    let registry = builtin_registry(&BuiltinsConfig::default());
    for tool in registry.iter() {
        let strict = openai_strict(tool.input_schema());
        let problems = openai_strict_violations(&strict);
        assert!(problems.is_empty(), "{}: {problems:#?}", tool.name());
    }
}

#[test]
fn published_schemas_use_no_keyword_either_subset_rejects() {
    // The portable schema itself (before the strict rewrite) may only break strict mode's
    // structural rules (closed objects, everything required), never use a keyword it rejects.
    let registry = builtin_registry(&BuiltinsConfig::default());
    for tool in registry.iter() {
        let keyword_problems: Vec<String> = openai_strict_violations(tool.input_schema())
            .into_iter()
            .filter(|problem| problem.contains("keyword") || problem.contains("type"))
            .collect();
        assert!(
            keyword_problems.is_empty(),
            "{}: {keyword_problems:#?}",
            tool.name()
        );
    }
}
