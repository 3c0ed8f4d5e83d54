//! The command line before clap reads it: the two-letter flags spelled long, project flags
//! written before the subcommand moved after it, and long options no subcommand defines spelled
//! as the extension flags they name.

use std::ffi::OsString;

/// The subcommands that take the project flags ([`crate::flags::ProjectArgs`]).
const PROJECT_SUBCOMMANDS: &[&str] = &["run", "mcp", "tool", "tools"];

/// The command line with the two-letter flags spelled long (`-ne` → `--no-extensions`, `-na`
/// → `--no-approve`), those flags, when written before the subcommand (`jig -ne run …`), moved
/// after it, and the long options the subcommand does not know (`--plan`, `--label=x`) spelled
/// as the extension flags they name (`--flag=plan`, `--flag=label=x`): extensions register
/// their flags only once they are loaded, which is after the command line is read. Nothing
/// after a `--` is touched. `cli` is the command line's definition.
pub(crate) fn normalize_args(
    args: impl IntoIterator<Item = OsString>,
    cli: &clap::Command,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    for arg in &mut args[..end] {
        if arg == "-ne" {
            *arg = "--no-extensions".into();
        } else if arg == "-na" {
            *arg = "--no-approve".into();
        }
    }
    // Leading project flags (and extension flags), then a subcommand that takes them.
    let mut index = 1;
    while index < end {
        let arg = args[index].to_string_lossy();
        let takes_value = arg == "-e" || arg == "--extension" || arg == "--flag";
        let extension_flag = arg
            .strip_prefix("--")
            .is_some_and(|name| !name.is_empty() && !matches!(name, "help" | "version"));
        let is_flag = takes_value || extension_flag || matches!(arg.as_ref(), "-a" | "-ne" | "-na");
        if !is_flag {
            break;
        }
        index += if takes_value { 2 } else { 1 };
    }
    let mut end = end;
    if index > 1 {
        // `jig -ne` or `jig -e PATH`: the interactive session, which is `jig run` without a
        // prompt. Before another subcommand (`jig -ne sessions`) clap reports them.
        let next = args[index.min(end)..end]
            .first()
            .map(|a| a.to_string_lossy().into_owned());
        let names_a_subcommand = next.as_deref().is_some_and(|name| {
            name == "help" || cli.get_subcommands().any(|sub| sub.get_name() == name)
        });
        if !names_a_subcommand {
            args.insert(index.min(end), "run".into());
            end += 1;
        }
    }
    let subcommand = args.get(index).map(|a| a.to_string_lossy().into_owned());
    if let Some(name) = subcommand
        .as_deref()
        .filter(|name| index < end && PROJECT_SUBCOMMANDS.contains(name))
    {
        if index > 1 {
            let flags: Vec<OsString> = args.drain(1..index).collect();
            let at = 2;
            for (offset, flag) in flags.into_iter().enumerate() {
                args.insert(at + offset, flag);
            }
        }
        if let Some(command) = cli.find_subcommand(name) {
            spell_extension_flags(&mut args[2..end], command);
        }
    }
    args
}

/// Whether `name` is close enough to a long option of `command` to be a misspelling of it.
fn resembles_an_option(name: &str, command: &clap::Command) -> bool {
    command
        .get_arguments()
        .filter_map(clap::Arg::get_long)
        .any(|long| strsim::jaro_winkler(name, long) >= TYPO_SIMILARITY)
}

/// How alike (Jaro-Winkler) an unknown option and one of jig's must be to be taken for a typo.
const TYPO_SIMILARITY: f64 = 0.9;

/// Rewrites each long option `command` does not define, `--NAME` or `--NAME=VALUE`, as
/// `--flag=NAME[=VALUE]`; the values of the options it does define are skipped. A name close
/// to one of the command's own (`--modle`) is most likely a typo: it is left for clap to
/// report with its suggestion (`--flag modle` still reaches such an extension flag).
fn spell_extension_flags(args: &mut [OsString], command: &clap::Command) {
    let takes_value = |arg: &clap::Arg| arg.get_action().takes_values();
    let mut index = 0;
    while index < args.len() {
        let word = args[index].to_string_lossy().into_owned();
        index += 1;
        if let Some(option) = word.strip_prefix("--").filter(|o| !o.is_empty()) {
            let (name, value) = match option.split_once('=') {
                Some((name, _)) => (name, true),
                None => (option, false),
            };
            match command.get_arguments().find(|arg| {
                arg.get_long_and_visible_aliases()
                    .is_some_and(|l| l.contains(&name))
            }) {
                Some(arg) => {
                    if takes_value(arg) && !value {
                        index += 1;
                    }
                }
                None if name == "help" || name == "version" => {}
                None if resembles_an_option(name, command) => {}
                None => args[index - 1] = format!("--flag={option}").into(),
            }
        } else if let Some(shorts) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            // `-e PATH` takes the next word; `-ePATH` and clusters of switches do not.
            let first = shorts.chars().next();
            let defined = command
                .get_arguments()
                .find(|arg| arg.get_short().is_some() && arg.get_short() == first);
            if shorts.chars().count() == 1 && defined.is_some_and(takes_value) {
                index += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalized(line: &str) -> String {
        use clap::CommandFactory as _;
        normalize_args(line.split(' ').map(OsString::from), &crate::Cli::command())
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn two_letter_flags_and_leading_flags_are_rewritten() {
        assert_eq!(normalized("jig run -ne hi"), "jig run --no-extensions hi");
        assert_eq!(normalized("jig mcp -na"), "jig mcp --no-approve");
        assert_eq!(
            normalized("jig -ne -e x.py -a run hi"),
            "jig run --no-extensions -e x.py -a hi"
        );
        assert_eq!(
            normalized("jig --extension=x tool read"),
            "jig tool --extension=x read"
        );
        // Not before a subcommand that takes them, or after `--`: untouched.
        assert_eq!(
            normalized("jig -ne sessions"),
            "jig --no-extensions sessions"
        );
        // Without a subcommand: the interactive session, `jig run`.
        assert_eq!(normalized("jig -ne"), "jig run --no-extensions");
        assert_eq!(
            normalized("jig -e x.py -a --strict"),
            "jig run -e x.py -a --flag=strict"
        );
        assert_eq!(normalized("jig -na fix"), "jig run --no-approve fix");
        assert_eq!(normalized("jig --help"), "jig --help");
        assert_eq!(normalized("jig"), "jig");
        // An extension flag before the subcommand moves with the others.
        assert_eq!(
            normalized("jig -e x --strict tool ls"),
            "jig tool -e x --flag=strict ls"
        );
        assert_eq!(normalized("jig run -- -ne"), "jig run -- -ne");
    }

    #[test]
    fn unknown_long_options_are_spelled_as_extension_flags() {
        assert_eq!(
            normalized("jig run --plan --label=nightly hi"),
            "jig run --flag=plan --flag=label=nightly hi"
        );
        // jig's own options and their values are left alone, wherever they are.
        assert_eq!(
            normalized("jig run --model --plan --tools=read --strict"),
            "jig run --model --plan --tools=read --flag=strict"
        );
        assert_eq!(
            normalized("jig tool read --args --x --cwd /w -e x.py --json --dry"),
            "jig tool read --args --x --cwd /w -e x.py --json --flag=dry"
        );
        assert_eq!(
            normalized("jig -ne mcp --strict"),
            "jig mcp --no-extensions --flag=strict"
        );
        assert_eq!(
            normalized("jig run --help --flag x"),
            "jig run --help --flag x"
        );
        // A likely typo of one of jig's options is left for clap to report.
        assert_eq!(normalized("jig run --modle x hi"), "jig run --modle x hi");
        assert_eq!(normalized("jig run --sesion=a"), "jig run --sesion=a");
        for typo in ["modle", "provder", "continu", "sytem-prompt", "max-turn"] {
            let line = format!("jig run --{typo} hi");
            assert_eq!(normalized(&line), line);
        }
        for flag in [
            "plan",
            "strict",
            "dry",
            "protect-reads",
            "label",
            "fast",
            "debug",
        ] {
            assert_eq!(
                normalized(&format!("jig run --{flag} hi")),
                format!("jig run --flag={flag} hi")
            );
        }
        // After `--`, and in subcommands without extensions: untouched.
        assert_eq!(normalized("jig run -- --plan"), "jig run -- --plan");
        assert_eq!(normalized("jig sessions --plan"), "jig sessions --plan");
    }
}
