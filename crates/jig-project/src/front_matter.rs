//! YAML front matter of Markdown files (`SKILL.md`, prompt templates): a first line `---`, the
//! YAML, a line `---`, then the body.

use std::collections::BTreeMap;

/// The front matter's fields (any YAML value) and the body after it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FrontMatter {
    /// The top-level keys, in the file's spelling.
    pub(crate) fields: BTreeMap<String, serde_yaml_ng::Value>,
    /// The text after the closing `---` line.
    pub(crate) body: String,
}

/// Why a file's front matter could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FrontMatterError {
    /// The file does not start with `---`.
    #[error("it does not start with YAML front matter (a line `---`, the fields, a line `---`)")]
    Missing,
    /// No closing `---`.
    #[error("its front matter has no closing `---` line")]
    Unclosed,
    /// Not YAML, or not a mapping.
    #[error("its front matter is not a YAML mapping: {0}")]
    Invalid(String),
}

/// Splits `text` into front matter and body. A text without front matter is
/// [`FrontMatterError::Missing`].
pub(crate) fn parse(text: &str) -> Result<FrontMatter, FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().ok_or(FrontMatterError::Missing)?;
    if first.trim_end() != "---" {
        return Err(FrontMatterError::Missing);
    }
    let mut yaml_end = first.len();
    let mut body_start = None;
    for line in lines {
        if line.trim_end() == "---" {
            body_start = Some(yaml_end + line.len());
            break;
        }
        yaml_end += line.len();
    }
    let body_start = body_start.ok_or(FrontMatterError::Unclosed)?;
    let yaml = &text[first.len()..yaml_end];
    let fields = if yaml.trim().is_empty() {
        BTreeMap::new()
    } else {
        serde_yaml_ng::from_str::<BTreeMap<String, serde_yaml_ng::Value>>(yaml)
            .map_err(|error| FrontMatterError::Invalid(error.to_string()))?
    };
    Ok(FrontMatter {
        fields,
        body: text[body_start..].to_owned(),
    })
}

/// A front matter field that should be text but is a list or mapping; displayed as a clause
/// for a bigger message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}` must be a string")]
pub(crate) struct FieldNotText {
    /// The field's key.
    pub(crate) key: String,
}

/// A field as text: strings as they are, numbers and booleans written out; `None` for a
/// missing field, [`FieldNotText`] for a list or mapping.
pub(crate) fn text_field(
    fields: &BTreeMap<String, serde_yaml_ng::Value>,
    key: &str,
) -> Result<Option<String>, FieldNotText> {
    match fields.get(key) {
        None | Some(serde_yaml_ng::Value::Null) => Ok(None),
        Some(serde_yaml_ng::Value::String(text)) => Ok(Some(text.clone())),
        Some(serde_yaml_ng::Value::Number(number)) => Ok(Some(number.to_string())),
        Some(serde_yaml_ng::Value::Bool(value)) => Ok(Some(value.to_string())),
        Some(_) => Err(FieldNotText {
            key: key.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_front_matter_and_body() {
        let parsed =
            parse("---\nname: pdf\ndescription: >\n  Fill PDF\n  forms.\n---\n# Body\n").unwrap();
        assert_eq!(
            text_field(&parsed.fields, "name").unwrap().as_deref(),
            Some("pdf")
        );
        // A folded block scalar, as in published skills.
        assert_eq!(
            text_field(&parsed.fields, "description")
                .unwrap()
                .as_deref(),
            Some("Fill PDF forms.\n")
        );
        assert_eq!(parsed.body, "# Body\n");
    }

    #[test]
    fn reports_what_is_wrong() {
        assert_eq!(parse("# no front matter\n"), Err(FrontMatterError::Missing));
        assert_eq!(parse("---\nname: x\n"), Err(FrontMatterError::Unclosed));
        assert!(matches!(
            parse("---\n- a\n- b\n---\n"),
            Err(FrontMatterError::Invalid(_))
        ));
        let parsed = parse("\u{feff}---\r\n---\r\nbody").unwrap();
        assert!(parsed.fields.is_empty());
        assert_eq!(parsed.body, "body");
        let parsed = parse("---\nlist: [a]\n---\n").unwrap();
        assert!(text_field(&parsed.fields, "list").is_err());
    }
}
