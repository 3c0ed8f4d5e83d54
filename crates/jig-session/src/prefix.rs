//! Bash command prefixes: which prefix is offered for "always allow commands starting with …",
//! and which commands a saved prefix allows.
//!
//! A prefix allows a command only when all of these hold (otherwise the command is asked about):
//!
//! - the command is one simple command: after the shell's quote removal, no unquoted `;`, `&`,
//!   `|`, `<`, `>`, `(`, `)`, `#`, newline, no `$` or backtick outside single quotes, no
//!   unterminated quote, and no unquoted `*`, `?`, `[`, `]`, `{` or `}` (the shell would expand
//!   them into words of its, or the directory's, choosing; a lone `{}` is kept);
//! - its first word is not a variable assignment (`PATH=… cargo test`);
//! - its program is not one that deletes, overwrites or runs other programs ([`NEVER`]):
//!   no prefix of such a program is offered, and a saved one never matches;
//! - its words start with the prefix's words, exactly;
//! - none of its words is one of its program's denied arguments ([`DENIED`]; `sed` scripts are
//!   read for their `e`, `w` and `W` commands and flags).
//!
//! The lists are documented in `docs/permissions.md`; a test keeps the two in step.

use std::fmt::Write as _;
use std::path::Path;

/// Programs for which no prefix is offered and no saved prefix matches: they delete or
/// overwrite files, change permissions, kill processes, or run other programs or code given as
/// an argument (interpreters, shells, wrappers), so "every later command starting with this"
/// would allow anything.
pub const NEVER: &[&str] = &[
    // Delete, move, overwrite or change files and their permissions.
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "mv",
    "cp",
    "ln",
    "install",
    "dd",
    "truncate",
    "tee",
    "patch",
    "rsync",
    "scp",
    "chmod",
    "chown",
    "chgrp",
    "chattr",
    "setfacl",
    "mkfs",
    "mount",
    "umount",
    "fdisk",
    "parted",
    "crontab", // Processes and the machine.
    "kill",
    "pkill",
    "killall",
    "reboot",
    "shutdown",
    "halt",
    "poweroff",
    "systemctl",
    // Shells and interpreters: they run code given as an argument or in a file.
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "node",
    "nodejs",
    "deno",
    "bun",
    "perl",
    "ruby",
    "irb",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "Rscript",
    "julia",
    "osascript",
    "pwsh",
    "powershell",
    "java",
    "jshell",
    "groovy",
    "scala",
    "erl",
    "elixir",
    "guile",
    "racket",
    "sbcl",
    "expect", // Run another program or a package.
    "env",
    "xargs",
    "sudo",
    "doas",
    "su",
    "runuser",
    "pkexec",
    "nohup",
    "timeout",
    "nice",
    "ionice",
    "time",
    "watch",
    "exec",
    "eval",
    "source",
    ".",
    "command",
    "builtin",
    "strace",
    "ltrace",
    "gdb",
    "lldb",
    "valgrind",
    "chroot",
    "unshare",
    "nsenter",
    "setsid",
    "stdbuf",
    "flock",
    "parallel",
    "script",
    "ssh",
    "npx",
    "pnpx",
    "bunx",
    "uvx",
    "pipx",
    "ssh-agent",
    "trap", // Editors and pagers that run shell commands.
    "vi",
    "vim",
    "nvim",
    "view",
    "ex",
    "ed",
    "emacs",
    "nano",
];

/// Arguments that make a command of an otherwise allowed program run or delete other
/// programs' work: a command with one of them is always asked about, whatever prefix was
/// allowed. `=`-joined forms (`--pre=x`) and, for single-letter options, attached values
/// (`-cfoo`) count too. `sed` is checked by reading its script (`sed_denied`).
pub const DENIED: &[(&str, &[&str])] = &[
    (
        "find",
        &[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ],
    ),
    (
        "git",
        &[
            "-c",
            "-C",
            "--config",
            "--config-env",
            "--exec-path",
            "--git-dir",
            "--work-tree",
            "--upload-pack",
            "--receive-pack",
            "--exec",
            "-O",
            "--open-files-in-pager",
            "--output",
            "--ext-diff",
            "-x",
            "--extcmd",
            "foreach",
        ],
    ),
    ("rg", &["--pre", "--hostname-bin"]),
    (
        "tar",
        &[
            "--to-command",
            "--checkpoint-action",
            "--use-compress-program",
            "-I",
            "--info-script",
            "--new-volume-script",
            "-F",
            "--rsh-command",
            "--rmt-command",
            "--absolute-names",
            "-P",
            "--remove-files",
            "--unlink-first",
            "-U",
            "--recursive-unlink",
            "--overwrite",
        ],
    ),
    (
        "make",
        &[
            "-f",
            "--file",
            "--makefile",
            "-C",
            "--directory",
            "--eval",
            "-E",
            "-I",
            "--include-dir",
        ],
    ),
    (
        "cargo",
        &["--config", "--manifest-path", "-Z", "-C", "--target-dir"],
    ),
    ("go", &["-exec", "-toolexec", "-overlay", "-modfile", "-C"]),
    (
        "sort",
        &["-o", "--output", "--compress-program", "--files0-from"],
    ),
    (
        "curl",
        &[
            "-o",
            "--output",
            "-O",
            "--remote-name",
            "--remote-name-all",
            "-K",
            "--config",
            "-T",
            "--upload-file",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--libcurl",
            "--stderr",
        ],
    ),
    (
        "wget",
        &[
            "-O",
            "--output-document",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
            "-e",
            "--execute",
            "--config",
            "-P",
            "--directory-prefix",
            "--post-file",
            "--body-file",
            "-i",
            "--input-file",
        ],
    ),
    ("man", &["-P", "--pager", "-H", "--html"]),
    ("zip", &["-TT", "--unzip-command"]),
];

/// Subcommands that run a program or code named by the next words, or write what later
/// commands run (`git config core.fsmonitor …`): no prefix is offered for them and none matches,
/// like the programs of [`NEVER`]. The subcommand is the first word after the program that is
/// not an option.
pub const NEVER_SUBCOMMANDS: &[(&str, &[&str])] = &[
    ("git", &["config", "filter-branch", "filter-repo"]),
    ("bundle", &["exec"]),
    ("uv", &["run", "tool"]),
    ("poetry", &["run"]),
    ("pipenv", &["run"]),
    ("pdm", &["run"]),
    ("hatch", &["run"]),
    ("rye", &["run"]),
    ("conda", &["run"]),
    ("mamba", &["run"]),
    ("micromamba", &["run"]),
    ("pixi", &["run", "exec"]),
    ("go", &["run", "generate"]),
    ("dotnet", &["run", "exec"]),
    ("nix", &["run", "shell", "develop"]),
];

/// Package managers whose options before `--` change what they run (`--script-shell`,
/// `--node-options`, any npm config key): only these options are allowed by a prefix, and
/// their `exec`-like subcommands never are.
const PACKAGE_MANAGERS: &[&str] = &["npm", "pnpm", "yarn"];
const PACKAGE_MANAGER_SAFE_OPTIONS: &[&str] = &[
    "-s",
    "--silent",
    "-q",
    "--quiet",
    "--if-present",
    "--verbose",
    "-ws",
    "--workspaces",
    "--color",
    "--no-color",
];
const PACKAGE_MANAGER_EXEC: &[&str] = &["exec", "x", "dlx", "explore", "create", "init"];

/// Subcommands after which the next word is a subcommand too (`npm run lint`,
/// `git stash list`), for the offered prefix.
const TWO_LEVEL: &[(&str, &[&str])] = &[
    ("npm", &["run", "run-script"]),
    ("pnpm", &["run"]),
    ("yarn", &["run", "workspace"]),
    (
        "git",
        &["stash", "remote", "submodule", "worktree", "bisect"],
    ),
    (
        "docker",
        &["compose", "container", "image", "volume", "network"],
    ),
    ("go", &["mod", "tool"]),
    ("kubectl", &["get", "describe", "logs"]),
    ("cargo", &["llvm-cov"]),
];

/// Why a command is not one simple command of literal words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotSimple {
    /// An unquoted `;`, `&`, `|`, `<`, `>`, `(`, `)`, `#` or newline.
    Control,
    /// A `$` or backtick outside single quotes.
    Expansion,
    /// A word the shell expands (glob or brace) into words it chooses.
    Glob,
    /// A quote is not closed.
    Unterminated,
}

/// The words of `command` after the shell's quote removal, when it is one simple command whose
/// words are what they look like.
pub fn words(command: &str) -> Result<Vec<String>, NotSimple> {
    let mut words = Vec::new();
    let mut chars = command.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let Some(&first) = chars.peek() else {
            return Ok(words);
        };
        if first == '#' {
            return Err(NotSimple::Control);
        }
        let mut word = String::new();
        // Whether the word's first character was literal (quoted or escaped).
        let mut first_literal = None::<bool>;
        while let Some(&c) = chars.peek() {
            match c {
                ' ' | '\t' => break,
                ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' | '\r' => {
                    return Err(NotSimple::Control);
                }
                '$' | '`' => return Err(NotSimple::Expansion),
                '\'' => {
                    chars.next();
                    first_literal.get_or_insert(true);
                    loop {
                        match chars.next() {
                            Some('\'') => break,
                            Some('\n' | '\r') => return Err(NotSimple::Control),
                            Some(c) => word.push(c),
                            None => return Err(NotSimple::Unterminated),
                        }
                    }
                }
                '"' => {
                    chars.next();
                    first_literal.get_or_insert(true);
                    loop {
                        match chars.next() {
                            Some('"') => break,
                            Some('$' | '`') => return Err(NotSimple::Expansion),
                            Some('\n' | '\r') => return Err(NotSimple::Control),
                            Some('\\') => match chars.next() {
                                Some(c @ ('"' | '\\')) => word.push(c),
                                Some('$' | '`') => return Err(NotSimple::Expansion),
                                Some('\n' | '\r') => return Err(NotSimple::Control),
                                Some(c) => {
                                    word.push('\\');
                                    word.push(c);
                                }
                                None => return Err(NotSimple::Unterminated),
                            },
                            Some(c) => word.push(c),
                            None => return Err(NotSimple::Unterminated),
                        }
                    }
                }
                '\\' => {
                    chars.next();
                    first_literal.get_or_insert(true);
                    match chars.next() {
                        Some('\n' | '\r') => return Err(NotSimple::Control),
                        Some(c) => word.push(c),
                        None => return Err(NotSimple::Unterminated),
                    }
                }
                // `{}` alone is not expanded (find's placeholder).
                '{' if first_literal.is_none() && {
                    let mut ahead = chars.clone();
                    ahead.next();
                    ahead.next() == Some('}') && matches!(ahead.next(), None | Some(' ' | '\t'))
                } =>
                {
                    chars.next();
                    chars.next();
                    first_literal = Some(true);
                    word.push_str("{}");
                }
                // An unquoted glob or brace becomes words of the shell's (or the directory's)
                // choosing: a file named `-exec` or `--pre=x`, `e{xec,}` → `exec`, `s/a/b/*` →
                // a `sed` script ending in `e`.
                '*' | '?' | '[' | '{' | '}' | ']' => return Err(NotSimple::Glob),
                _ => {
                    chars.next();
                    first_literal.get_or_insert(true);
                    word.push(c);
                }
            }
        }
        words.push(word);
    }
}

/// The program's name as the lists know it: the last component of the first word
/// (`/usr/bin/rm` → `rm`).
fn program_name(word: &str) -> &str {
    Path::new(word)
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or(word)
}

/// True when `program` is one for which no prefix is offered or matches ([`NEVER`]), also in
/// its versioned spellings (`python3.12`, `pip3`-style suffixes of interpreters).
pub fn never_allowed(program: &str) -> bool {
    let name = program_name(program);
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    NEVER.contains(&name)
        || (!base.is_empty() && NEVER.contains(&base))
        || name.starts_with("mkfs.")
}

/// The denied arguments of `program` ([`DENIED`]).
pub fn denied_arguments(program: &str) -> &'static [&'static str] {
    let name = program_name(program);
    DENIED
        .iter()
        .find(|(tool, _)| *tool == name)
        .map_or(&[], |(_, denied)| *denied)
}

/// The first of `words` (the whole command, program first) that makes the command always asked
/// about, with why; `None` when a matching prefix may allow it.
pub fn denied_word(words: &[String]) -> Option<String> {
    let (program, args) = words.split_first()?;
    let name = program_name(program);
    if never_allowed(name) {
        return Some(format!(
            "`{name}` can delete files or run other programs, so no prefix allows it"
        ));
    }
    if name == "sed" {
        return sed_denied(args);
    }
    if let Some(subcommand) = args.iter().find(|arg| !arg.starts_with('-'))
        && NEVER_SUBCOMMANDS
            .iter()
            .any(|(tool, subs)| *tool == name && subs.contains(&subcommand.as_str()))
    {
        return Some(format!(
            "`{name} {subcommand}` runs or configures other programs, so no prefix allows it"
        ));
    }
    if name == "nix-shell" && args.iter().any(|arg| arg == "--run" || arg == "--command") {
        return Some("`nix-shell --run` runs any command, so no prefix allows it".to_owned());
    }
    // `git bisect run CMD` runs CMD.
    if name == "git"
        && let Some(at) = args.iter().position(|arg| arg == "bisect")
        && args[at + 1..].iter().any(|arg| arg == "run")
    {
        return Some("`git bisect run` runs any command, so no prefix allows it".to_owned());
    }
    if PACKAGE_MANAGERS.contains(&name) {
        return package_manager_denied(name, args);
    }
    let denied = denied_arguments(name);
    // Programs whose single-letter options may be grouped in one word (`-sO`, `-xPf`).
    let grouped = !matches!(name, "find" | "go");
    for arg in args {
        for flag in denied {
            let hit = arg == flag
                || arg
                    .strip_prefix(flag)
                    .is_some_and(|rest| rest.starts_with('=') || is_short(flag))
                || (*flag == "-fprint" && arg.starts_with("-fprint"));
            if hit {
                return Some(format!(
                    "`{name} {flag}` can run or delete other programs' work, so no prefix allows it"
                ));
            }
        }
        if let Some(group) = arg
            .strip_prefix('-')
            .filter(|g| grouped && !g.starts_with('-'))
        {
            for flag in denied.iter().filter(|flag| is_short(flag)) {
                if group.contains(&flag[1..]) {
                    return Some(format!(
                        "`{name} {flag}` can run or delete other programs' work, so no prefix allows it"
                    ));
                }
            }
        }
        // make's command-line variables override the makefile's (`SHELL=…`, `CC=…`).
        if name == "make" && !arg.starts_with('-') && arg.contains('=') {
            return Some("`make` with a variable assignment is always asked about".to_owned());
        }
    }
    // tar's old-style first argument: letters without a dash (`tar xPf a.tar`).
    if name == "tar"
        && let Some(first) = args.first().filter(|a| !a.starts_with('-'))
        && first.chars().any(|c| matches!(c, 'P' | 'I' | 'F' | 'U'))
    {
        return Some("`tar` with P, I, F or U is always asked about".to_owned());
    }
    None
}

fn is_short(flag: &str) -> bool {
    flag.len() == 2 && flag.starts_with('-')
}

fn package_manager_denied(name: &str, args: &[String]) -> Option<String> {
    let mut subcommand_seen = false;
    for arg in args {
        if arg == "--" {
            return None;
        }
        if arg.starts_with('-') {
            let option = arg.split('=').next().unwrap_or(arg);
            if !PACKAGE_MANAGER_SAFE_OPTIONS.contains(&option) {
                return Some(format!(
                    "`{name}` options other than {} are always asked about",
                    PACKAGE_MANAGER_SAFE_OPTIONS.join(" ")
                ));
            }
        } else if !subcommand_seen {
            subcommand_seen = true;
            if PACKAGE_MANAGER_EXEC.contains(&arg.as_str()) {
                return Some(format!("`{name} {arg}` is always asked about"));
            }
        }
    }
    None
}

/// Why a `sed` command is always asked about: it edits files in place (`-i`), reads its script
/// from a file (`-f`), or its script runs a command (`e`, the `s///e` flag) or writes a file
/// (`w`, `W`, the `s///w` flag); `None` when it only reads and prints.
fn sed_denied(args: &[String]) -> Option<String> {
    let mut scripts = Vec::new();
    let mut operands = Vec::new();
    let mut iter = args.iter();
    let mut options_done = false;
    while let Some(arg) = iter.next() {
        if options_done || !arg.starts_with('-') || arg == "-" {
            operands.push(arg.clone());
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "expression" => scripts.push(match value {
                    Some(v) => v.to_owned(),
                    None => iter.next()?.clone(),
                }),
                "quiet" | "silent" | "regexp-extended" | "null-data" | "zero-terminated"
                | "separate" | "unbuffered" | "posix" | "debug" | "sandbox" | "follow-symlinks" => {
                }
                "line-length" => {
                    if value.is_none() {
                        iter.next();
                    }
                }
                _ => return Some(format!("`sed --{name}` is always asked about")),
            }
            continue;
        }
        let group: Vec<char> = arg[1..].chars().collect();
        for (index, letter) in group.iter().enumerate() {
            match letter {
                'n' | 'E' | 'r' | 's' | 'u' | 'z' => {}
                'e' | 'l' => {
                    let rest: String = group[index + 1..].iter().collect();
                    let value = if rest.is_empty() {
                        iter.next().cloned().unwrap_or_default()
                    } else {
                        rest
                    };
                    if *letter == 'e' {
                        scripts.push(value);
                    }
                    break;
                }
                other => return Some(format!("`sed -{other}` is always asked about")),
            }
        }
    }
    if scripts.is_empty() && !operands.is_empty() {
        scripts.push(operands.remove(0));
    }
    scripts
        .iter()
        .find(|script| !sed_script_is_safe(script))
        .map(|_| "a `sed` script that runs commands or writes files (`e`, `w`, `W`) is always asked about".to_owned())
}

/// True when a `sed` script has no command or `s` flag that runs a command or writes a file.
/// Anything this reader does not understand counts as unsafe.
fn sed_script_is_safe(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    // Reads a delimited part (`/regex/`) starting after the opening delimiter; returns the
    // index after the closing one.
    let skip_part = |mut i: usize, delimiter: char| -> Option<usize> {
        while i < chars.len() {
            if chars[i] == '\\' {
                i += 2;
                continue;
            }
            if chars[i] == delimiter {
                return Some(i + 1);
            }
            i += 1;
        }
        None
    };
    while i < chars.len() {
        let c = chars[i];
        // Separators and addresses.
        if c.is_whitespace() || c == ';' || c == '}' || c == '!' || c == ',' {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || c == '$' || c == '~' || c == '+' {
            i += 1;
            continue;
        }
        if c == '/' {
            let Some(next) = skip_part(i + 1, '/') else {
                return false;
            };
            i = next;
            // Address flags `I` and `M`.
            while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                i += 1;
            }
            continue;
        }
        if c == '\\' {
            let Some(&delimiter) = chars.get(i + 1) else {
                return false;
            };
            let Some(next) = skip_part(i + 2, delimiter) else {
                return false;
            };
            i = next;
            continue;
        }
        i += 1;
        match c {
            '{' | 'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l' | '='
            | 'z' | 'F' | 'q' | 'Q' => {
                // `q`/`Q`/`l` take an optional number.
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            's' | 'y' => {
                let Some(&delimiter) = chars.get(i) else {
                    return false;
                };
                if delimiter == '\\' || delimiter == '\n' {
                    return false;
                }
                let Some(after_pattern) = skip_part(i + 1, delimiter) else {
                    return false;
                };
                let Some(after_replacement) = skip_part(after_pattern, delimiter) else {
                    return false;
                };
                i = after_replacement;
                if c == 's' {
                    while i < chars.len() && (chars[i].is_ascii_alphanumeric()) {
                        if matches!(chars[i], 'e' | 'w' | 'W') {
                            return false;
                        }
                        i += 1;
                    }
                }
            }
            // Labels and branches: a name to the end of the command.
            ':' | 'b' | 't' | 'T' => {
                while i < chars.len() && chars[i] != ';' && chars[i] != '\n' {
                    i += 1;
                }
            }
            // Text and reading files: the rest of the line.
            'a' | 'i' | 'c' | 'r' | 'R' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            // `e`, `w`, `W` and everything unknown.
            _ => return false,
        }
    }
    true
}

/// The words of `prefix` (prefixes are saved as words separated by single spaces).
fn prefix_words(prefix: &str) -> Vec<&str> {
    prefix.split_whitespace().collect()
}

/// True when the saved or offered `prefix` allows `command` (see the module's rules).
pub fn prefix_matches(prefix: &str, command: &str) -> bool {
    let wanted = prefix_words(prefix);
    let Some(program) = wanted.first() else {
        return false;
    };
    if never_allowed(program) {
        return false;
    }
    let Ok(words) = words(command) else {
        return false;
    };
    words.len() >= wanted.len()
        && words.iter().zip(&wanted).all(|(word, want)| word == want)
        && !words[0].contains('=')
        && denied_word(&words).is_none()
}

/// The prefix offered for "allow commands starting with …": the program, then its options and
/// subcommand up to the first path or free argument (`cargo test`, `git status`, `npm run
/// lint`, `ls -la`). `None` when no prefix is offered: the command is not one simple command,
/// starts with a variable assignment, its program is never allowed by a prefix ([`NEVER`]), or
/// it has a denied argument.
pub fn suggested_prefix(command: &str) -> Option<String> {
    let words = words(command).ok()?;
    let program = words.first()?;
    if program.contains('=') || never_allowed(program) || denied_word(&words).is_some() {
        return None;
    }
    let name = program_name(program);
    let mut taken = vec![program.as_str()];
    let mut subcommands = 0;
    let mut last_subcommand: Option<&str> = None;
    for word in &words[1..] {
        let option = word.starts_with('-')
            && word.len() > 1
            && word != "--"
            && word[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-');
        let subcommand = word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        // After options, a word is a subcommand only for programs with global options
        // (`git --no-pager log`); `ls -la src` stops at `src`.
        let after_options = taken.len() > 1 && last_subcommand.is_none();
        let more_subcommands = match last_subcommand {
            None => {
                subcommands == 0
                    && (!after_options
                        || matches!(
                            name,
                            "git" | "cargo" | "docker" | "kubectl" | "npm" | "pnpm" | "yarn"
                        ))
            }
            Some(previous) => TWO_LEVEL
                .iter()
                .any(|(tool, subs)| *tool == name && subs.contains(&previous)),
        };
        if option {
            taken.push(word);
        } else if subcommand && more_subcommands {
            taken.push(word);
            subcommands += 1;
            last_subcommand = Some(word);
        } else {
            break;
        }
    }
    Some(taken.join(" "))
}

/// Says exactly which later commands an allowance of `prefix` covers, for the question.
pub fn covers(prefix: &str) -> String {
    let program = prefix_words(prefix).first().copied().unwrap_or_default();
    let name = program_name(program);
    let mut text = format!(
        "covers `{prefix}` + any arguments, as one simple command (no ; & | < > $ `, parentheses or unquoted globs)"
    );
    if name == "sed" {
        text.push_str(", never -i, -f or a script with e/w/W");
    } else if PACKAGE_MANAGERS.contains(&name) {
        let _ = write!(
            text,
            ", never {} or options other than {}",
            PACKAGE_MANAGER_EXEC.join("/"),
            PACKAGE_MANAGER_SAFE_OPTIONS.join(" ")
        );
    } else {
        let denied = denied_arguments(name);
        if !denied.is_empty() {
            let _ = write!(text, ", never with {}", denied.join(" "));
        }
    }
    text
}

/// Why no prefix is offered for `command`, for the question (`None` when one is offered or the
/// command is empty).
pub fn why_no_prefix(command: &str) -> Option<String> {
    if suggested_prefix(command).is_some() {
        return None;
    }
    let words = match words(command) {
        Ok(words) => words,
        Err(NotSimple::Control | NotSimple::Expansion) => {
            return Some(
                "more than one simple command (or an expansion), which no prefix allows".to_owned(),
            );
        }
        Err(NotSimple::Glob) => {
            return Some(
                "an unquoted glob or brace could expand to any word, which no prefix allows"
                    .to_owned(),
            );
        }
        Err(NotSimple::Unterminated) => {
            return Some("an unterminated quote, which no prefix allows".to_owned());
        }
    };
    let program = words.first()?;
    if program.contains('=') {
        return Some("it sets variables for the program, which no prefix allows".to_owned());
    }
    denied_word(&words)
}

#[cfg(test)]
mod tests;
