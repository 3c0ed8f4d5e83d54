//! Tool input schemas every client accepts, and the same form for the schemas of tools'
//! `details`.
//!
//! A tool's schema reaches very different consumers: MCP clients (some validate it with Ajv and
//! warn on unknown `format`s), OpenAI function calling (whose strict mode accepts a small subset
//! of JSON Schema), Gemini (whose function declarations accept another subset). schemars writes
//! what Rust knows — `"format": "uint64"`, `"type": ["integer", "null"]` for an `Option`,
//! `"default": null`, `$ref`s into `$defs` — and several of those are rejected or warned about
//! somewhere. [`portable`] rewrites a schema into the part all of them share; the same schema is
//! what calls are validated against, so what a model is shown is what is enforced.
//!
//! The portable form:
//! - no `$schema`, `$defs`/`$ref` (sub-schemas are inlined), `default` or `format`;
//! - `type` is always one name: an optional property is simply not `required` (a `null` sent for
//!   it is treated as absent by validation, see `ArgumentValidator`);
//! - everything else is kept (`description`, `properties`, `required`, `items`, `enum`,
//!   `minimum`, `maximum`, `additionalProperties`, …).
//!
//! [`openai_strict_violations`] and [`gemini_violations`] check a schema against the two
//! subsets; [`openai_strict`] derives the form strict mode demands (every property required,
//! optional ones nullable, no additional properties). Tests run every tool through them.
//!
//! ```
//! use serde_json::json;
//! let schema = jig_tool::schema::portable(json!({
//!     "$schema": "https://json-schema.org/draft/2020-12/schema",
//!     "type": "object",
//!     "properties": {"limit": {"type": ["integer", "null"], "format": "uint64", "default": null}},
//! }));
//! assert_eq!(schema, json!({"type": "object", "properties": {"limit": {"type": "integer"}}}));
//! assert!(jig_tool::schema::gemini_violations(&schema).is_empty());
//! ```

use serde_json::{Map, Value};

/// Keywords that describe how to find or label a schema, never what it accepts, and that some
/// consumer rejects.
const DROPPED: [&str; 5] = ["$schema", "$id", "default", "format", "examples"];

/// The portable schema of `T` (see the module docs), without the root `title` (the Rust type's
/// name, which means nothing to a reader). Input schemas and details schemas are both made here.
pub fn for_type<T: schemars::JsonSchema>() -> Value {
    let generated = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    let mut schema = portable(generated);
    if let Value::Object(map) = &mut schema {
        map.remove("title");
    }
    schema
}

/// `schema` in the form every consumer accepts (see the module docs).
pub fn portable(schema: Value) -> Value {
    let defs = match &schema {
        Value::Object(map) => map
            .get("$defs")
            .or_else(|| map.get("definitions"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        _ => Map::new(),
    };
    rewrite(schema, &defs, 0)
}

/// How deep `$ref`s are followed; tool inputs are not recursive, so hitting this is a bug in a
/// tool's input type, and the `$ref` is then left in place (and reported by the checks).
const MAX_REF_DEPTH: usize = 16;

fn rewrite(schema: Value, defs: &Map<String, Value>, depth: usize) -> Value {
    let Value::Object(map) = schema else {
        return schema;
    };
    if let Some(Value::String(reference)) = map.get("$ref")
        && depth < MAX_REF_DEPTH
        && let Some(target) = reference
            .strip_prefix("#/$defs/")
            .or_else(|| reference.strip_prefix("#/definitions/"))
            .and_then(|name| defs.get(name))
    {
        // Keywords beside the `$ref` (a description) override the target's.
        let mut merged = match rewrite(target.clone(), defs, depth + 1) {
            Value::Object(target) => target,
            other => return other,
        };
        for (key, value) in map {
            if key != "$ref" {
                merged.insert(key, rewrite_keyword(value, defs, depth));
            }
        }
        return Value::Object(merged);
    }
    let mut out = Map::new();
    for (key, value) in map {
        if DROPPED.contains(&key.as_str()) || key == "$defs" || key == "definitions" {
            continue;
        }
        if key == "type" {
            out.insert(key, single_type(value));
            continue;
        }
        let value = match key.as_str() {
            "properties" | "patternProperties" => match value {
                Value::Object(properties) => Value::Object(
                    properties
                        .into_iter()
                        .map(|(name, schema)| (name, rewrite(schema, defs, depth)))
                        .collect(),
                ),
                other => other,
            },
            _ => rewrite_keyword(value, defs, depth),
        };
        out.insert(key, value);
    }
    Value::Object(out)
}

/// A keyword's value: sub-schemas (`items`, `anyOf` members, …) are rewritten, data (`enum`,
/// `required`, numbers, strings) is kept as it is.
fn rewrite_keyword(value: Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match value {
        Value::Object(_) => rewrite(value, defs, depth),
        Value::Array(items) if items.iter().all(Value::is_object) => Value::Array(
            items
                .into_iter()
                .map(|item| rewrite(item, defs, depth))
                .collect(),
        ),
        other => other,
    }
}

/// `["integer", "null"]` → `"integer"`; a single name stays. A union of several non-null types
/// is kept (and reported by the checks): no tool input has one.
fn single_type(value: Value) -> Value {
    let Value::Array(types) = value else {
        return value;
    };
    let mut named: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
    if named.len() == 1 {
        named.pop().unwrap_or(Value::Null)
    } else {
        Value::Array(named)
    }
}

/// The keywords OpenAI's strict function calling accepts.
const OPENAI_STRICT_KEYWORDS: [&str; 19] = [
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "pattern",
    "$defs",
];

/// The keywords Gemini's function declarations accept (`parametersJsonSchema`), less those that
/// only its older OpenAPI-style `parameters` would reject (`$ref`, type unions) — both are
/// reported.
const GEMINI_KEYWORDS: [&str; 14] = [
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "propertyOrdering",
];

/// `schema` as OpenAI's strict mode wants it: every object closed (`additionalProperties:
/// false`) and every property required, the optional ones made nullable (`["integer",
/// "null"]`), which strict mode uses to express "may be absent".
pub fn openai_strict(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let value = match key.as_str() {
            "properties" => value.clone(),
            _ => match value {
                Value::Object(_) => openai_strict(value),
                Value::Array(items) if items.iter().all(Value::is_object) => {
                    Value::Array(items.iter().map(openai_strict).collect())
                }
                other => other.clone(),
            },
        };
        out.insert(key.clone(), value);
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut strict_properties = Map::new();
        for (name, property) in properties {
            let mut property = openai_strict(property);
            if !required.contains(&name.as_str())
                && let Value::Object(property) = &mut property
                && let Some(Value::String(kind)) = property.get("type").cloned()
            {
                property.insert(
                    "type".to_owned(),
                    Value::Array(vec![Value::String(kind), Value::from("null")]),
                );
            }
            strict_properties.insert(name.clone(), property);
        }
        out.insert(
            "required".to_owned(),
            Value::Array(properties.keys().cloned().map(Value::String).collect()),
        );
        out.insert("properties".to_owned(), Value::Object(strict_properties));
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    Value::Object(out)
}

/// Why OpenAI's strict function calling would reject `schema` (empty: it accepts it). Checks the
/// keywords, that the root is an object, that every object is closed and requires every
/// property.
pub fn openai_strict_violations(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if schema.get("type") != Some(&Value::from("object")) {
        problems.push("(root): the root must be `\"type\": \"object\"`".to_owned());
    }
    walk(schema, "", &mut |path, map| {
        for key in map.keys() {
            if !OPENAI_STRICT_KEYWORDS.contains(&key.as_str()) {
                problems.push(format!("{path}: keyword `{key}` is not supported"));
            }
        }
        if let Some(Value::Object(properties)) = map.get("properties") {
            if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                problems.push(format!(
                    "{path}: objects need `additionalProperties: false`"
                ));
            }
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for name in properties.keys() {
                if !required.contains(&name.as_str()) {
                    problems.push(format!("{path}: property `{name}` must be required"));
                }
            }
        }
        type_problems(path, map, true, &mut problems);
    });
    problems
}

/// Why Gemini's function declarations would reject `schema`, or a consumer of them would warn
/// (empty: accepted). Checks the keywords and that every `type` is a single name.
pub fn gemini_violations(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if schema.get("type") != Some(&Value::from("object")) {
        problems.push("(root): the root must be `\"type\": \"object\"`".to_owned());
    }
    walk(schema, "", &mut |path, map| {
        for key in map.keys() {
            if !GEMINI_KEYWORDS.contains(&key.as_str()) {
                problems.push(format!("{path}: keyword `{key}` is not supported"));
            }
        }
        type_problems(path, map, false, &mut problems);
    });
    problems
}

/// `type` must name JSON Schema types; a union is allowed only as `[T, "null"]` and only when
/// `nullable_union` is set.
fn type_problems(
    path: &str,
    map: &Map<String, Value>,
    nullable_union: bool,
    problems: &mut Vec<String>,
) {
    const TYPES: [&str; 7] = [
        "object", "array", "string", "integer", "number", "boolean", "null",
    ];
    match map.get("type") {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(types))
            if nullable_union && types.len() == 2 && types.contains(&Value::from("null")) => {}
        Some(other) => problems.push(format!("{path}: `type` must be one name, got {other}")),
    }
    if let Some(Value::String(kind)) = map.get("type")
        && !TYPES.contains(&kind.as_str())
    {
        problems.push(format!("{path}: unknown type `{kind}`"));
    }
}

/// Calls `visit` on every schema object in `schema` with its JSON-pointer-like path.
fn walk(schema: &Value, path: &str, visit: &mut dyn FnMut(&str, &Map<String, Value>)) {
    let Value::Object(map) = schema else { return };
    let shown = if path.is_empty() { "(root)" } else { path };
    visit(shown, map);
    for (key, value) in map {
        match (key.as_str(), value) {
            ("properties" | "$defs", Value::Object(children)) => {
                for (name, child) in children {
                    walk(child, &format!("{path}/{key}/{name}"), visit);
                }
            }
            ("items" | "additionalProperties" | "not", Value::Object(_)) => {
                walk(value, &format!("{path}/{key}"), visit);
            }
            ("anyOf" | "oneOf" | "allOf", Value::Array(members)) => {
                for (index, member) in members.iter().enumerate() {
                    walk(member, &format!("{path}/{key}/{index}"), visit);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schemars_like() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "path": {"type": "string", "description": "A path."},
                "limit": {"type": ["integer", "null"], "format": "uint64", "minimum": 1, "default": null},
                "edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}},
            },
            "required": ["path"],
            "$defs": {"Edit": {
                "type": "object",
                "properties": {"old": {"type": "string"}},
                "required": ["old"],
            }},
        })
    }

    #[test]
    fn portable_drops_formats_defaults_refs_and_null_unions() {
        assert_eq!(
            portable(schemars_like()),
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "path": {"type": "string", "description": "A path."},
                    "limit": {"type": "integer", "minimum": 1},
                    "edits": {"type": "array", "items": {
                        "type": "object",
                        "properties": {"old": {"type": "string"}},
                        "required": ["old"],
                    }},
                },
                "required": ["path"],
            })
        );
    }

    #[test]
    fn a_description_beside_a_ref_wins() {
        let schema = portable(json!({
            "type": "object",
            "properties": {"e": {"$ref": "#/$defs/E", "description": "outer"}},
            "$defs": {"E": {"type": "string", "description": "inner"}},
        }));
        assert_eq!(
            schema["properties"]["e"],
            json!({"type": "string", "description": "outer"})
        );
    }

    #[test]
    fn the_checks_name_every_problem_in_a_raw_schemars_schema() {
        let raw = schemars_like();
        let gemini = gemini_violations(&raw);
        assert!(gemini.iter().any(|p| p.contains("`$schema`")), "{gemini:?}");
        assert!(
            gemini
                .iter()
                .any(|p| p.starts_with("/properties/limit") && p.contains("`format`")),
            "{gemini:?}"
        );
        assert!(
            gemini
                .iter()
                .any(|p| p.starts_with("/properties/limit") && p.contains("one name")),
            "{gemini:?}"
        );
        let strict = openai_strict_violations(&raw);
        assert!(
            strict
                .iter()
                .any(|p| p.contains("`limit` must be required")),
            "{strict:?}"
        );
        assert!(
            strict
                .iter()
                .any(|p| p.starts_with("/$defs/Edit") && p.contains("additionalProperties")),
            "{strict:?}"
        );
        assert!(strict.iter().any(|p| p.contains("`default`")), "{strict:?}");
    }

    #[test]
    fn portable_passes_gemini_and_its_strict_form_passes_openai() {
        let schema = portable(schemars_like());
        assert_eq!(gemini_violations(&schema), Vec::<String>::new());
        let strict = openai_strict(&schema);
        assert_eq!(openai_strict_violations(&strict), Vec::<String>::new());
        assert_eq!(
            strict["properties"]["limit"]["type"],
            json!(["integer", "null"])
        );
        assert_eq!(strict["required"], json!(["edits", "limit", "path"]));
        assert_eq!(
            strict["properties"]["edits"]["items"]["additionalProperties"],
            false
        );
    }
}
