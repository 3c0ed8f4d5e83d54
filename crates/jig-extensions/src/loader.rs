//! Loading extensions from the forms discovery finds: an executable, a directory with
//! `extension.toml`, a directory with `index.*`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml_edit::{DocumentMut, Item, Value as TomlValue};

use crate::error::LoadError;
use crate::handle::ExtensionHandle;
use crate::hook::HookExtension;
use crate::options::LoadOptions;
use crate::process::ProcessExtension;
use crate::registration::{FlagRegistration, events};

/// The manifest file of an extension directory.
pub const MANIFEST_FILE: &str = "extension.toml";

/// Starts `argv` as a long-lived JSON-RPC extension; `path` names it in messages.
pub async fn load_process(
    path: &Path,
    argv: &[OsString],
    options: &LoadOptions,
) -> Result<Arc<dyn ExtensionHandle>, LoadError> {
    let name = path.display().to_string();
    let extension = ProcessExtension::start(&name, argv, options).await?;
    Ok(Arc::new(extension))
}

/// Loads an executable file as a JSON-RPC extension (it is run directly).
pub async fn load_executable(
    path: &Path,
    options: &LoadOptions,
) -> Result<Arc<dyn ExtensionHandle>, LoadError> {
    if !path.exists() {
        return Err(LoadError::new(
            path.display().to_string(),
            format!("Extension path does not exist: {}", path.display()),
        ));
    }
    load_process(path, &[path.as_os_str().to_owned()], options).await
}

/// Loads a directory with an `extension.toml`: either `command = ["prog", "arg", …]` (a
/// JSON-RPC process) or a `[hooks]` table of `event = ["prog", "arg", …]` (command hooks).
/// Words starting with `./` or `../`, and a relative program containing `/`, are resolved
/// against the directory; the processes run in the session's working directory.
pub async fn load_manifest_dir(
    dir: &Path,
    options: &LoadOptions,
) -> Result<Arc<dyn ExtensionHandle>, LoadError> {
    let name = dir.display().to_string();
    let fail = |reason: String| LoadError::new(&name, reason);
    let manifest_path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|error| fail(format!("cannot read {}: {error}", manifest_path.display())))?;
    let manifest =
        parse_manifest(&text, dir).map_err(|reason| fail(format!("{MANIFEST_FILE}: {reason}")))?;
    match manifest {
        Manifest::Command(argv) => load_process(dir, &argv, options).await,
        Manifest::Hooks { hooks, flags } => {
            let hooks = HookExtension::new(&name, hooks, &options.cwd).with_flags(flags);
            hooks
                .registrations()
                .check()
                .map_err(|error| fail(error.to_string()))?;
            Ok(hooks.into_handle())
        }
    }
}

/// The runtime that runs an `index.*` file, by its extension: `.py` → `python3`,
/// `.js`/`.mjs` → `node`, `.sh` → `sh`, `.rb` → `ruby`, `.pl` → `perl`.
pub fn index_runtime(file: &Path) -> Option<&'static str> {
    match file.extension()?.to_str()? {
        "py" => Some("python3"),
        "js" | "mjs" | "cjs" => Some("node"),
        "sh" => Some("sh"),
        "rb" => Some("ruby"),
        "pl" => Some("perl"),
        _ => None,
    }
}

/// Loads a directory holding an `index.*` file, run by `runtime` (or, when `None`, by the
/// runtime [`index_runtime`] names for it) as a JSON-RPC extension.
pub async fn load_index_dir(
    dir: &Path,
    runtime: Option<&[OsString]>,
    options: &LoadOptions,
) -> Result<Arc<dyn ExtensionHandle>, LoadError> {
    let name = dir.display().to_string();
    let entries = std::fs::read_dir(dir).map_err(|error| {
        LoadError::new(&name, format!("cannot list {}: {error}", dir.display()))
    })?;
    let mut indexes: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.file_stem().is_some_and(|stem| stem == "index"))
        .collect();
    indexes.sort();
    let index = match runtime {
        Some(_) => indexes.first(),
        None => indexes.iter().find(|path| index_runtime(path).is_some()),
    };
    let Some(index) = index else {
        return Err(LoadError::new(
            &name,
            "no index file with a known runtime (index.py, index.js, index.sh, …)",
        ));
    };
    let mut argv: Vec<OsString> = match runtime {
        Some(runtime) => runtime.to_vec(),
        None => vec![index_runtime(index).unwrap_or("sh").into()],
    };
    argv.push(index.as_os_str().to_owned());
    load_process(dir, &argv, options).await
}

/// What a manifest asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Manifest {
    /// A long-lived JSON-RPC process.
    Command(Vec<OsString>),
    /// Command hooks by event, and the flags they declare (`[flags.NAME]`).
    Hooks {
        /// The argv run for each event.
        hooks: BTreeMap<String, Vec<OsString>>,
        /// The flags, whose values each hook receives as `"flags"` in its input.
        flags: Vec<FlagRegistration>,
    },
}

/// Why an `extension.toml` cannot be used. `key` fields name the manifest key at fault
/// (`command`, `hooks.tool_call`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// The file is not TOML.
    #[error(transparent)]
    Toml(#[from] toml_edit::TomlError),
    /// Both `command` and `[hooks]` are given.
    #[error("give either `command` or `[hooks]`, not both")]
    CommandAndHooks,
    /// Neither `command` nor `[hooks]` is given.
    #[error("give `command = [...]` or a `[hooks]` table")]
    NoCommandOrHooks,
    /// `[flags]` next to `command`: a process registers its flags itself.
    #[error(
        "`[flags]` is for command hooks: a process registers its flags in its initialize reply"
    )]
    FlagsWithCommand,
    /// `hooks` is not a table.
    #[error("`hooks` must be a table of event = [command]")]
    HooksNotTable,
    /// A hook for an event this host does not send (a typo must not switch a guard off).
    #[error("`hooks.{event}`: {}", events::unknown(.event))]
    UnknownEvent {
        /// The event as written.
        event: String,
    },
    /// `[hooks]` names no event.
    #[error("`[hooks]` is empty")]
    NoHooks,
    /// `flags` is not a table.
    #[error("`flags` must be a table of [flags.NAME] tables")]
    FlagsNotTable,
    /// `flags.NAME` is not a table.
    #[error("`flags.{flag}` must be a table with `type`")]
    FlagNotTable {
        /// The flag's name.
        flag: String,
    },
    /// `flags.NAME` has a field other than `type`, `default` and `description`.
    #[error("`flags.{flag}.{field}` is not a flag field (type, default, description)")]
    UnknownFlagField {
        /// The flag's name.
        flag: String,
        /// The field.
        field: String,
    },
    /// `flags.NAME.type` or `flags.NAME.description` is not a string.
    #[error("`flags.{flag}.{field}` must be a string")]
    FlagFieldNotString {
        /// The flag's name.
        flag: String,
        /// The field (`type`, `description`).
        field: &'static str,
    },
    /// `flags.NAME` has no `type`.
    #[error("`flags.{flag}` needs a `type`")]
    FlagWithoutType {
        /// The flag's name.
        flag: String,
    },
    /// A command is neither a string nor an array.
    #[error("`{key}` must be a string or an array of strings")]
    NotACommand {
        /// The key.
        key: String,
    },
    /// A command's array holds something other than strings.
    #[error("`{key}` must list strings")]
    NotStrings {
        /// The key.
        key: String,
    },
    /// A command's array is empty.
    #[error("`{key}` is empty")]
    EmptyCommand {
        /// The key.
        key: String,
    },
}

/// Parses `extension.toml`; `./` and `../` words (and a relative program with a `/`) resolve
/// against `dir`.
pub fn parse_manifest(text: &str, dir: &Path) -> Result<Manifest, ManifestError> {
    let document: DocumentMut = text.parse()?;
    let command = document.get("command");
    let hooks = document.get("hooks");
    match (command, hooks) {
        (Some(_), Some(_)) => Err(ManifestError::CommandAndHooks),
        (None, None) => Err(ManifestError::NoCommandOrHooks),
        (Some(_), None) if document.get("flags").is_some() => Err(ManifestError::FlagsWithCommand),
        (Some(command), None) => Ok(Manifest::Command(argv(command, dir, "command")?)),
        (None, Some(hooks)) => {
            let table = hooks.as_table_like().ok_or(ManifestError::HooksNotTable)?;
            let mut map = BTreeMap::new();
            for (event, item) in table.iter() {
                // A typo must not silently switch a guard off.
                if !events::is_known(event) {
                    return Err(ManifestError::UnknownEvent {
                        event: event.to_owned(),
                    });
                }
                map.insert(
                    event.to_owned(),
                    argv(item, dir, &format!("hooks.{event}"))?,
                );
            }
            if map.is_empty() {
                return Err(ManifestError::NoHooks);
            }
            let flags = match document.get("flags") {
                Some(flags) => manifest_flags(flags)?,
                None => Vec::new(),
            };
            Ok(Manifest::Hooks { hooks: map, flags })
        }
    }
}

/// `[flags.NAME]` tables: `type = "boolean" | "string"`, `default`, `description`. The type
/// and default are checked like a process's registrations when the extension loads.
fn manifest_flags(item: &Item) -> Result<Vec<FlagRegistration>, ManifestError> {
    let table = item.as_table_like().ok_or(ManifestError::FlagsNotTable)?;
    let mut flags = Vec::new();
    for (name, flag) in table.iter() {
        let flag = flag
            .as_table_like()
            .ok_or_else(|| ManifestError::FlagNotTable {
                flag: name.to_owned(),
            })?;
        for (field, _) in flag.iter() {
            if !matches!(field, "type" | "default" | "description") {
                return Err(ManifestError::UnknownFlagField {
                    flag: name.to_owned(),
                    field: field.to_owned(),
                });
            }
        }
        let text = |field: &'static str| -> Result<Option<String>, ManifestError> {
            match flag.get(field) {
                None => Ok(None),
                Some(item) => item
                    .as_str()
                    .map(|text| Some(text.to_owned()))
                    .ok_or_else(|| ManifestError::FlagFieldNotString {
                        flag: name.to_owned(),
                        field,
                    }),
            }
        };
        let kind = text("type")?.ok_or_else(|| ManifestError::FlagWithoutType {
            flag: name.to_owned(),
        })?;
        let default = flag
            .get("default")
            .and_then(Item::as_value)
            .map(|value| match value {
                TomlValue::Boolean(value) => serde_json::Value::Bool(*value.value()),
                TomlValue::String(value) => serde_json::Value::String(value.value().clone()),
                TomlValue::Integer(value) => serde_json::Value::from(*value.value()),
                TomlValue::Float(value) => serde_json::Value::from(*value.value()),
                TomlValue::Datetime(_) | TomlValue::Array(_) | TomlValue::InlineTable(_) => {
                    serde_json::Value::Array(Vec::new())
                }
            });
        flags.push(FlagRegistration {
            name: name.to_owned(),
            kind,
            default,
            description: text("description")?,
        });
    }
    Ok(flags)
}

fn argv(item: &Item, dir: &Path, key: &str) -> Result<Vec<OsString>, ManifestError> {
    let words: Vec<String> = match item.as_value() {
        Some(TomlValue::String(word)) => vec![word.value().clone()],
        Some(TomlValue::Array(array)) => array
            .iter()
            .map(|word| {
                word.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ManifestError::NotStrings {
                        key: key.to_owned(),
                    })
            })
            .collect::<Result<_, _>>()?,
        _ => {
            return Err(ManifestError::NotACommand {
                key: key.to_owned(),
            });
        }
    };
    if words.is_empty() {
        return Err(ManifestError::EmptyCommand {
            key: key.to_owned(),
        });
    }
    Ok(words
        .iter()
        .enumerate()
        .map(|(index, word)| resolve_word(word, index == 0, dir))
        .collect())
}

/// Words starting with `./` or `../`, and a relative program containing `/`, name files of the
/// extension directory.
fn resolve_word(word: &str, program: bool, dir: &Path) -> OsString {
    if let Some(rest) = word.strip_prefix("./") {
        return dir.join(rest).into_os_string();
    }
    let path = Path::new(word);
    if word.starts_with("../") || (program && path.is_relative() && word.contains('/')) {
        return dir.join(path).into_os_string();
    }
    OsString::from(word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_manifest_names_a_command_or_hooks() {
        let dir = Path::new("/ext");
        assert_eq!(
            parse_manifest("command = [\"python3\", \"main.py\"]", dir).unwrap(),
            Manifest::Command(vec!["python3".into(), "main.py".into()])
        );
        assert_eq!(
            parse_manifest("[hooks]\ntool_call = [\"./guard.sh\"]\n", dir).unwrap(),
            Manifest::Hooks {
                hooks: BTreeMap::from([("tool_call".to_owned(), vec!["/ext/guard.sh".into()])]),
                flags: Vec::new(),
            }
        );
        assert_eq!(
            parse_manifest(
                "[hooks]\ntool_call = \"./g\"\n[flags.strict]\ntype = \"boolean\"\ndefault = true\n\
                 description = \"block more\"\n[flags.label]\ntype = \"string\"\n",
                dir
            )
            .unwrap(),
            Manifest::Hooks {
                hooks: BTreeMap::from([("tool_call".to_owned(), vec!["/ext/g".into()])]),
                flags: vec![
                    FlagRegistration {
                        name: "strict".to_owned(),
                        kind: "boolean".to_owned(),
                        default: Some(serde_json::Value::Bool(true)),
                        description: Some("block more".to_owned()),
                    },
                    FlagRegistration {
                        name: "label".to_owned(),
                        kind: "string".to_owned(),
                        default: None,
                        description: None,
                    },
                ],
            }
        );
        for (manifest, error) in [
            (
                "command = \"x\"\n[flags.a]\ntype = \"string\"\n",
                "`[flags]` is for command hooks: a process registers its flags in its initialize reply",
            ),
            (
                "[hooks]\ntool_call = \"b\"\n[flags.a]\ndefault = true\n",
                "`flags.a` needs a `type`",
            ),
            (
                "[hooks]\ntool_call = \"b\"\n[flags.a]\ntype = \"string\"\nvalue = 1\n",
                "`flags.a.value` is not a flag field (type, default, description)",
            ),
            (
                "flags = 1\n[hooks]\ntool_call = \"b\"\n",
                "`flags` must be a table of [flags.NAME] tables",
            ),
        ] {
            assert_eq!(
                parse_manifest(manifest, dir).unwrap_err().to_string(),
                error,
                "{manifest}"
            );
        }
        assert_eq!(
            parse_manifest("command = \"x\"\n[hooks]\na = \"b\"\n", dir)
                .unwrap_err()
                .to_string(),
            "give either `command` or `[hooks]`, not both"
        );
        insta::assert_snapshot!(
            parse_manifest("[hooks]\ntool_calls = [\"./guard.sh\"]\n", dir).unwrap_err(),
            @"`hooks.tool_calls`: unknown event \"tool_calls\" (known events: project_trust, tool_call, tool_result, input, before_agent_start, context, message_end, session_start, session_shutdown, session_before_switch, session_before_fork, session_before_compact, session_before_tree, agent_start, agent_end, turn_start, turn_end, message_start, message_update, tool_execution_start, tool_execution_update, tool_execution_end)"
        );
        assert_eq!(
            parse_manifest("name = 1\n", dir).unwrap_err().to_string(),
            "give `command = [...]` or a `[hooks]` table"
        );
        assert_eq!(
            parse_manifest("command = [1]\n", dir)
                .unwrap_err()
                .to_string(),
            "`command` must list strings"
        );
    }
}
