use jsonschema::Validator;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::ToolError;

/// Why a schema given as JSON cannot check a tool's arguments.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The schema is not a JSON object.
    #[error("the input schema must be a JSON object")]
    NotAnObject,
    /// The schema does not compile.
    #[error(transparent)]
    Invalid(#[from] Box<jsonschema::ValidationError<'static>>),
}

/// A tool's argument schema, compiled once, and the checks every call goes through.
///
/// Typed tools get one through [`ErasedTool`](crate::ErasedTool); tools whose schema comes from
/// elsewhere (an extension process) use [`ArgumentValidator::for_schema`] and
/// [`ArgumentValidator::check`], so their arguments are held to the same rules and messages.
#[derive(Debug)]
pub struct ArgumentValidator {
    schema: Value,
    validator: Option<Validator>,
}

impl ArgumentValidator {
    pub(crate) fn for_type<T: JsonSchema>() -> Self {
        let schema = crate::schema::for_type::<T>();
        let validator = jsonschema::validator_for(&schema).ok();
        Self { schema, validator }
    }

    /// A validator for a schema given as JSON, made portable first (see [`crate::schema`]).
    /// A schema that does not compile is an error naming the problem.
    pub fn for_schema(schema: Value) -> Result<Self, SchemaError> {
        let schema = crate::schema::portable(schema);
        if !schema.is_object() {
            return Err(SchemaError::NotAnObject);
        }
        let validator = jsonschema::validator_for(&schema).map_err(Box::new)?;
        Ok(Self {
            schema,
            validator: Some(validator),
        })
    }

    /// The published (portable) schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Validates `args` for `tool` with the same coercions and messages as typed tools, and
    /// returns the arguments as they passed (numeric strings converted, `null` optionals
    /// dropped).
    pub fn check(&self, tool: &str, args: Value) -> Result<Value, ToolError> {
        self.validate(tool, args)
    }

    /// Coerces numeric strings, validates, and deserialises.
    pub(crate) fn validate<T: DeserializeOwned>(
        &self,
        tool: &str,
        args: Value,
    ) -> Result<T, ToolError> {
        let mut args = match args {
            Value::Null => Value::Object(Map::new()),
            other => other,
        };
        drop_null_optionals(&self.schema, &mut args);
        coerce_numeric_strings(&self.schema, &mut args);
        let mut problems: Vec<String> = Vec::new();
        if !args.is_object() {
            problems.push(format!(
                "arguments must be a JSON object, got {}",
                type_name(&args)
            ));
        } else if let Some(validator) = &self.validator {
            for error in validator.iter_errors(&args) {
                let location = error.instance_path().to_string();
                let location = if location.is_empty() {
                    "(root)".to_owned()
                } else {
                    location
                };
                problems.push(format!("{location}: {error}"));
            }
        }
        if problems.is_empty() {
            // Deserialise from a borrow: cloning would copy a large `content` argument once more.
            match T::deserialize(&args) {
                Ok(input) => return Ok(input),
                Err(error) => problems.push(error.to_string()),
            }
        }
        let received = serde_json::to_string(&args).unwrap_or_default();
        let list: Vec<String> = problems.iter().map(|p| format!("  - {p}")).collect();
        Err(ToolError::InvalidInput(format!(
            "Validation failed for tool \"{tool}\":\n{}\n\nReceived arguments:\n{received}",
            list.join("\n")
        )))
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Models often send `"limit": null` for an argument they leave out; the published schema has no
/// `null` type (not every consumer accepts type unions), so a top-level `null` for a property
/// that is not required means "absent".
fn drop_null_optionals(schema: &Value, args: &mut Value) {
    let Value::Object(values) = args else { return };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    values.retain(|name, value| !value.is_null() || required.contains(&name.as_str()));
}

/// Models often send `"10"` for `10`: convert strings holding numbers where the schema wants an
/// integer or a number (top-level properties, including nullable `["integer","null"]` types).
fn coerce_numeric_strings(schema: &Value, args: &mut Value) {
    let (Some(properties), Value::Object(values)) =
        (schema.get("properties").and_then(Value::as_object), args)
    else {
        return;
    };
    for (name, value) in values.iter_mut() {
        let Some(text) = value.as_str() else { continue };
        let Some(property) = properties.get(name) else {
            continue;
        };
        let types: Vec<&str> = match property.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        let text = text.trim();
        if types.contains(&"integer")
            && let Ok(n) = text.parse::<i64>()
        {
            *value = Value::from(n);
            continue;
        }
        if types.contains(&"number")
            && let Ok(n) = text.parse::<f64>()
            && let Some(number) = serde_json::Number::from_f64(n)
        {
            *value = Value::Number(number);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// Test input.
    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Input {
        /// A path.
        path: String,
        /// A count.
        limit: Option<u32>,
    }

    #[test]
    fn numeric_strings_are_accepted_for_integers() {
        let validator = ArgumentValidator::for_type::<Input>();
        let input: Input = validator
            .validate("t", serde_json::json!({"path": "a", "limit": "10"}))
            .unwrap();
        assert_eq!(
            input,
            Input {
                path: "a".into(),
                limit: Some(10)
            }
        );
    }

    #[test]
    fn invalid_arguments_list_each_problem_and_echo_the_input() {
        let validator = ArgumentValidator::for_type::<Input>();
        let error = validator
            .validate::<Input>("t", serde_json::json!({"limit": "x", "extra": 1}))
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with("Validation failed for tool \"t\":"),
            "{text}"
        );
        assert!(text.contains("\"path\" is a required property"), "{text}");
        assert!(
            text.contains("Received arguments:\n{\"extra\":1,\"limit\":\"x\"}"),
            "{text}"
        );
    }

    #[test]
    fn null_for_an_optional_argument_means_absent_but_not_for_a_required_one() {
        let validator = ArgumentValidator::for_type::<Input>();
        let input: Input = validator
            .validate("t", serde_json::json!({"path": "a", "limit": null}))
            .unwrap();
        assert_eq!(input.limit, None);
        let error = validator
            .validate::<Input>("t", serde_json::json!({"path": null}))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("/path: null is not of type \"string\""),
            "{error}"
        );
    }

    #[test]
    fn the_published_schema_is_portable() {
        let validator = ArgumentValidator::for_type::<Input>();
        let schema = validator.schema();
        assert_eq!(
            schema["properties"]["limit"],
            serde_json::json!({"description": "A count.", "type": "integer", "minimum": 0})
        );
        assert!(crate::schema::gemini_violations(schema).is_empty());
    }
}
