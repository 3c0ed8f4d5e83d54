use proptest::prelude::*;

use super::*;

#[test]
fn the_offered_prefix_stops_at_the_first_path_or_free_argument() {
    let table = [
        ("cargo test", Some("cargo test")),
        ("cargo test -p jig-tui", Some("cargo test -p")),
        (
            "cargo test --workspace --all-features",
            Some("cargo test --workspace --all-features"),
        ),
        ("git status", Some("git status")),
        ("git status --short src/", Some("git status --short")),
        (
            "git --no-pager log --oneline",
            Some("git --no-pager log --oneline"),
        ),
        ("git stash list", Some("git stash list")),
        ("npm run lint", Some("npm run lint")),
        ("npm run lint -- --fix", Some("npm run lint")),
        ("npm test", Some("npm test")),
        ("ls", Some("ls")),
        ("ls -la", Some("ls -la")),
        ("ls -la src", Some("ls -la")),
        ("touch denied.txt", Some("touch")),
        ("cat README.md", Some("cat")),
        ("/usr/bin/make check", Some("/usr/bin/make check")),
        ("find . -name '*.rs'", Some("find")),
        ("rg --pre ./x foo", None),
        ("find . -exec rm {} +", None),
        ("rm -rf build", None),
        ("rm build", None),
        ("/bin/rm -rf build", None),
        ("\\rm -rf build", None),
        ("mv a b", None),
        ("cp a b", None),
        ("dd if=/dev/zero of=x", None),
        ("chmod +x run.sh", None),
        ("python3 script.py", None),
        ("python3.12 -m pytest", None),
        ("python -m pytest", None),
        ("node index.js", None),
        ("bash -c 'ls'", None),
        ("sh run.sh", None),
        ("sudo ls", None),
        ("env FOO=1 ls", None),
        ("xargs rm", None),
        ("perl -e 1", None),
        ("awk '{print}' f", None),
        ("npx prettier .", None),
        ("git config user.name x", None),
        ("bundle exec rspec", None),
        ("uv run pytest", None),
        (
            "git submodule update --init",
            Some("git submodule update --init"),
        ),
        ("PATH=. cargo test", None),
        ("make | tee log", None),
        ("cargo test && rm -rf ~", None),
        ("echo $HOME", None),
        ("   ", None),
    ];
    for (command, expected) in table {
        assert_eq!(
            suggested_prefix(command).as_deref(),
            expected,
            "the prefix offered for `{command}`"
        );
    }
}

/// (prefix, command, allowed): what a saved prefix allows.
const MATCHES: &[(&str, &str, bool)] = &[
    ("cargo test", "cargo test", true),
    ("cargo test", "cargo test -p x -- --nocapture", true),
    ("cargo test", "cargo testx", false),
    ("cargo test", "cargo  test   -q", true),
    ("cargo test", "'cargo' \"test\"", true),
    ("cargo test", "cargo test && rm -rf ~", false),
    ("cargo test", "cargo test; rm -rf ~", false),
    ("cargo test", "cargo test | sh", false),
    ("cargo test", "cargo test > /etc/passwd", false),
    ("cargo test", "cargo test $(rm -rf ~)", false),
    ("cargo test", "cargo test `rm -rf ~`", false),
    ("cargo test", "cargo test \"$(rm -rf ~)\"", false),
    ("cargo test", "cargo test &", false),
    ("cargo test", "cargo test\nrm -rf ~", false),
    ("cargo test", "cargo test # comment", false),
    ("cargo test", "cargo test 'unterminated", false),
    (
        "cargo test",
        "cargo test --config 'target.x.runner=\"sh\"'",
        false,
    ),
    ("cargo test", "cargo test --config=x", false),
    (
        "cargo test",
        "cargo test --manifest-path /tmp/other/Cargo.toml",
        false,
    ),
    ("cargo test", "PATH=. cargo test", false),
    ("cargo test", "cargo test 'a;b'", true),
    ("cargo test", "cargo test 'a(b)'", true),
    ("cargo", "cargo test", true),
    // find: the words that run, delete or write.
    ("find", "find . -name '*.rs'", true),
    ("find", "find . -type f -newer x", true),
    ("find", "find . -exec rm {} +", false),
    ("find", "find . -exec sh -c 'x' \\;", false),
    ("find", "find . -execdir rm {} +", false),
    ("find", "find . -ok rm {} \\;", false),
    ("find", "find . -okdir rm {} \\;", false),
    ("find", "find /outside -delete", false),
    ("find", "find . '-delete'", false),
    ("find", "find . \"-del\"ete", false),
    ("find", "find . -de\\lete", false),
    ("find", "find . -fprint /etc/x", false),
    ("find", "find . -fprint0 x", false),
    ("find", "find . -fprintf x %p", false),
    ("find", "find . -fls x", false),
    ("find", "find -- . -delete", false),
    ("find", "find . -{delete,name}", false),
    ("find", "find . -dele*", false),
    ("find", "find . *", false),
    ("find", "find . ?", false),
    ("find", "find . [a]", false),
    ("find", "find src/*", false),
    ("find", "find src/'*'", true),
    ("npm", "npm e{xec,} evil", false),
    ("npm", "npm e* evil", false),
    ("sed", "sed s/a/b/* file", false),
    ("ls", "ls *.rs", false),
    ("ls", "ls '*.rs'", true),
    // git: options that run configured programs or reach another repository.
    ("git status", "git status", true),
    ("git status", "git status --short", true),
    ("git", "git -c core.fsmonitor=x status", false),
    ("git", "git --config-env=core.pager=X log", false),
    ("git", "git --exec-path=/tmp log", false),
    ("git", "git -C /elsewhere status", false),
    ("git", "git --git-dir=/tmp/evil/.git status", false),
    ("git", "git --work-tree /tmp status", false),
    ("git", "git clone --upload-pack='touch x' a b", false),
    ("git", "git clone -u 'touch x' a b", true),
    ("git", "git grep -Ovim x", false),
    ("git", "git grep --open-files-in-pager=sh x", false),
    ("git", "git diff --output=/etc/x", false),
    ("git", "git archive --exec=x --remote=y", false),
    ("git log", "git log --oneline", true),
    // rg, sed, tar.
    ("rg", "rg foo src", true),
    ("rg", "rg --pre ./evil foo", false),
    ("rg", "rg --pre=./evil foo", false),
    ("rg", "rg --hostname-bin=./evil foo", false),
    ("sed", "sed -n '1,10p' file", true),
    ("sed", "sed 's/a/b/g' file", true),
    ("sed", "sed -e 's/hello/world/' -e '/x/d' f", true),
    ("sed", "sed -i 's/a/b/' file", false),
    ("sed", "sed -i.bak 's/a/b/' file", false),
    ("sed", "sed -ni 's/a/b/p' file", false),
    ("sed", "sed --in-place 's/a/b/' file", false),
    ("sed", "sed -f script.sed file", false),
    ("sed", "sed 's/a/b/e' file", false),
    ("sed", "sed 's/a/b/w out' file", false),
    ("sed", "sed '1e touch x' file", false),
    ("sed", "sed 'w out' file", false),
    ("sed", "sed -n '/x/W out' file", false),
    ("sed", "sed -ne 's/x/y/e' file", false),
    ("sed", "sed --expression='e id' file", false),
    ("tar", "tar -tzf a.tar.gz", true),
    ("tar", "tar -xzf a.tar.gz", true),
    ("tar", "tar -xf a.tar --to-command='sh -c x'", false),
    (
        "tar",
        "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=sh .",
        false,
    ),
    ("tar", "tar -xPf a.tar", false),
    ("tar", "tar xPf a.tar", false),
    ("tar", "tar -I ./evil -xf a.tar", false),
    ("tar", "tar --use-compress-program=./evil -xf a.tar", false),
    // make, package managers, curl.
    ("make", "make test", true),
    ("make", "make test SHELL=./evil", false),
    ("make", "make -f /tmp/evil.mk", false),
    ("make", "make -C /elsewhere", false),
    ("make", "make --eval='x:=$(shell id)'", false),
    ("npm run lint", "npm run lint", true),
    ("npm run lint", "npm run lint -- --fix", true),
    ("npm run lint", "npm run lint --script-shell=./evil", false),
    ("npm run lint", "npm run lint --silent", true),
    ("npm", "npm exec evil", false),
    ("npm", "npm x evil", false),
    ("npm", "npm --node-options=--require=./evil.js test", false),
    ("pnpm", "pnpm dlx evil", false),
    ("curl", "curl -fsSL https://example.com", true),
    ("curl", "curl -o ~/.bashrc https://example.com", false),
    ("curl", "curl -sO https://example.com/x", false),
    ("curl", "curl -K cfg https://example.com", false),
    ("go test", "go test ./...", true),
    ("go test", "go test -exec ./evil ./...", false),
    ("go build", "go build -toolexec=./evil", false),
    ("sort", "sort -o /etc/x f", false),
    ("sort", "sort --compress-program=./evil f", false),
    // Programs that are never allowed by a prefix, whatever was saved.
    ("rm", "rm -rf build", false),
    ("rm -rf build", "rm -rf build", false),
    ("rm", "rm -rf src", false),
    ("/bin/rm", "/bin/rm x", false),
    ("python3", "python3 x.py", false),
    ("python3 -m pytest", "python3 -m pytest", false),
    ("node", "node x.js", false),
    ("bash", "bash -c x", false),
    ("xargs", "xargs rm", false),
    ("env", "env", false),
    ("sudo", "sudo ls", false),
    ("ls", "ls -la", true),
    ("", "ls", false),
    // Subcommands that run a named program or write what later commands run.
    ("git", "git config core.fsmonitor 'touch x'", false),
    ("git config", "git config user.name x", false),
    ("git", "git submodule foreach 'rm -rf .'", false),
    ("git", "git bisect run ./evil", false),
    ("git", "git rebase -x ./evil main", false),
    ("git", "git difftool --extcmd=./evil", false),
    ("git", "git filter-branch --tree-filter x", false),
    ("git submodule", "git submodule update --init", true),
    ("bundle", "bundle exec rm -rf src", false),
    ("bundle exec rspec", "bundle exec rspec", false),
    ("uv run", "uv run evil.py", false),
    ("poetry run", "poetry run rm -rf src", false),
    ("go", "go run ./cmd/x", false),
    ("go test", "go test ./...", true),
    ("nix-shell", "nix-shell --run 'rm -rf src'", false),
];

#[test]
fn prefixes_allow_only_what_they_say() {
    for (prefix, command, allowed) in MATCHES {
        assert_eq!(
            prefix_matches(prefix, command),
            *allowed,
            "prefix `{prefix}`, command `{command}`"
        );
    }
}

#[test]
fn the_question_says_what_an_allowance_covers() {
    let text = [
        "cargo test",
        "git status",
        "find",
        "sed",
        "npm run lint",
        "ls -la",
    ]
    .map(|prefix| format!("{prefix}: {}", covers(prefix)))
    .join("\n");
    insta::assert_snapshot!(text, @r"
    cargo test: covers `cargo test` + any arguments, as one simple command (no ; & | < > $ `, parentheses or unquoted globs), never with --config --manifest-path -Z -C --target-dir
    git status: covers `git status` + any arguments, as one simple command (no ; & | < > $ `, parentheses or unquoted globs), never with -c -C --config --config-env --exec-path --git-dir --work-tree --upload-pack --receive-pack --exec -O --open-files-in-pager --output --ext-diff -x --extcmd foreach
    find: covers `find` + any arguments, as one simple command (no ; & | < > $ `, parentheses or unquoted globs), never with -exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls
    sed: covers `sed` + any arguments, as one simple command (no ; & | < > $ `, parentheses or unquoted globs), never -i, -f or a script with e/w/W
    npm run lint: covers `npm run lint` + any arguments, as one simple command (no ; & | < > $ `, parentheses or unquoted globs), never exec/x/dlx/explore/create/init or options other than -s --silent -q --quiet --if-present --verbose -ws --workspaces --color --no-color
    ls -la: covers `ls -la` + any arguments, as one simple command (no ; & | < > $ `, parentheses or unquoted globs)
    ");
    let why = [
        "rm -rf build",
        "cargo test && rm -rf ~",
        "find . -exec rm {} +",
        "PATH=. make",
        "ls *",
    ]
    .map(|command| format!("{command}: {}", why_no_prefix(command).unwrap_or_default()))
    .join("\n");
    insta::assert_snapshot!(why, @r#"
        rm -rf build: `rm` can delete files or run other programs, so no prefix allows it
        cargo test && rm -rf ~: more than one simple command (or an expansion), which no prefix allows
        find . -exec rm {} +: `find -exec` can run or delete other programs' work, so no prefix allows it
        PATH=. make: it sets variables for the program, which no prefix allows
        ls *: an unquoted glob or brace could expand to any word, which no prefix allows
    "#);
}

/// Every program of the lists, spelled as the shell would see it.
fn never_program() -> impl Strategy<Value = String> {
    prop::sample::select(NEVER.to_vec()).prop_map(str::to_owned)
}

/// A word of a command that the shell does not expand: letters, digits, `-`, `.`, `/`, `_`.
fn plain_word() -> impl Strategy<Value = String> {
    "[a-z0-9._/][a-z0-9._/-]{0,8}".prop_map(|w| w)
}

/// `word` spelled in one of the shell's quotings.
fn quoted(word: String, how: u8) -> String {
    match how % 4 {
        0 => word,
        1 => format!("'{word}'"),
        2 => format!("\"{word}\""),
        _ => word.chars().fold(String::new(), |mut escaped, c| {
            escaped.push('\\');
            escaped.push(c);
            escaped
        }),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// A program that deletes or runs other programs is never offered and never matched,
    /// whatever follows it and whatever was saved.
    #[test]
    fn never_programs_are_never_allowed(
        program in never_program(),
        args in prop::collection::vec(plain_word(), 0..4),
        how in any::<u8>(),
    ) {
        let command = std::iter::once(quoted(program.clone(), how))
            .chain(args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        prop_assert_eq!(suggested_prefix(&command), None);
        for len in 0..=args.len() {
            let prefix = std::iter::once(program.clone())
                .chain(args[..len].iter().cloned())
                .collect::<Vec<_>>()
                .join(" ");
            prop_assert!(!prefix_matches(&prefix, &command), "{prefix} / {command}");
        }
    }

    /// A denied argument, in any quoting and anywhere in the command, makes it asked about.
    #[test]
    fn denied_arguments_are_always_asked_about(
        tool in 0..DENIED.len(),
        pick in any::<prop::sample::Index>(),
        before in prop::collection::vec(plain_word(), 0..3),
        after in prop::collection::vec(plain_word(), 0..3),
        how in any::<u8>(),
        value in plain_word(),
        joined in any::<bool>(),
    ) {
        let (program, denied) = DENIED[tool];
        let flag = denied[pick.index(denied.len())];
        let flag_word = if joined && flag.starts_with("--") {
            format!("{flag}={value}")
        } else {
            flag.to_owned()
        };
        let command = std::iter::once(program.to_owned())
            .chain(before.iter().cloned())
            .chain(std::iter::once(quoted(flag_word, how)))
            .chain(after.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        prop_assert!(!prefix_matches(program, &command), "{command}");
        prop_assert_eq!(suggested_prefix(&command), None, "{}", command);
    }

    /// Whatever follows a control character, a prefix never matches beyond the first command.
    #[test]
    fn control_characters_never_match(
        separator in prop::sample::select(vec![";", "&&", "||", "|", "&", ">", "<", "$(", "`", "\n", ">>", "<(", "$"]),
        rest in "[ -~]{0,20}",
    ) {
        let command = format!("cargo test {separator}{rest}");
        prop_assert!(!prefix_matches("cargo test", &command), "{command:?}");
        prop_assert!(!prefix_matches("cargo", &command), "{command:?}");
    }

    /// The offered prefix allows the command it was offered for, and is never longer than it.
    #[test]
    fn the_offered_prefix_allows_its_command(
        program in "[a-z][a-z0-9]{1,6}",
        args in prop::collection::vec(prop_oneof![plain_word(), "-[a-z]{1,3}", "--[a-z]{2,6}"], 0..5),
    ) {
        let command = std::iter::once(program).chain(args).collect::<Vec<_>>().join(" ");
        if let Some(prefix) = suggested_prefix(&command) {
            prop_assert!(prefix_matches(&prefix, &command), "{prefix} / {command}");
            prop_assert!(command.starts_with(&prefix), "{prefix} / {command}");
        }
    }
}

#[test]
fn the_documented_lists_are_the_lists() {
    let doc = include_str!("../../../../docs/permissions.md");
    for program in NEVER {
        assert!(
            doc.contains(&format!("`{program}`")),
            "docs/permissions.md does not list `{program}`"
        );
    }
    for (program, subs) in NEVER_SUBCOMMANDS {
        for sub in *subs {
            assert!(
                doc.contains(&format!("`{program} {sub}`")),
                "docs/permissions.md does not list `{program} {sub}`"
            );
        }
    }
    for (program, denied) in DENIED {
        let line = doc
            .lines()
            .find(|line| line.starts_with(&format!("| `{program}` |")))
            .unwrap_or_else(|| panic!("docs/permissions.md has no row for `{program}`"));
        for flag in *denied {
            assert!(
                line.contains(&format!("`{flag}`")),
                "docs/permissions.md's row for `{program}` does not list `{flag}`"
            );
        }
    }
}

/// The words `bash` sees in `command` (run in an empty directory, printed NUL-separated).
#[expect(
    clippy::disallowed_methods,
    reason = "the shell itself is the reference for how a command splits into words"
)]
fn bash_words(command: &str, dir: &std::path::Path) -> Option<Vec<String>> {
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("printf '%s\\0' {command}"))
        .current_dir(dir)
        .output()
        .ok()?;
    output.status.success().then(|| {
        String::from_utf8_lossy(&output.stdout)
            .split_terminator('\0')
            .map(str::to_owned)
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Whatever a command looks like, when jig reads it as one simple command its words are
    /// exactly the words bash gives the program — so the prefix and the denied arguments are
    /// compared with what actually runs.
    #[test]
    fn the_words_are_the_words_bash_sees(
        parts in prop::collection::vec(
            prop::sample::select(vec![
                "a", "-exec", "x y", " ", "  ", "'", "\"", "\\", "'q r'", "\"s t\"", "\\ ",
                "\\'", "\"\\\"\"", "\"\\x\"", "{}", "{", "}", "*", "?", "[", "]",
                "=", "--pre=", "%", "'$x'", "\"a'b\"", "'a\"b'", "é", "\t",
            ]),
            1..8,
        ),
    ) {
        let command = parts.concat();
        let dir = tempfile::tempdir().unwrap();
        // (An unquoted `~` is left out: bash turns it into a path, which no list names.)
        if let Some(ours) = words(&command).ok().filter(|words| !words.is_empty()) {
            let theirs = bash_words(&command, dir.path());
            prop_assert_eq!(Some(ours), theirs, "{:?}", command);
        }
    }
}
