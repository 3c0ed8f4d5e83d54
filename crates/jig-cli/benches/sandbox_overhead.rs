//! What the command sandbox adds to `bash`, per command and on a build.
//!
//! ```text
//! cargo bench -p jig-cli --bench sandbox_overhead [-- -n 200 --build-files 60]
//! ```
//!
//! One `jig mcp` server per setting runs at once on the same workspace: `--sandbox off`, and
//! `--sandbox workspace-write` under each mechanism that works here (bubblewrap, Landlock +
//! seccomp; forced with `JIG_SANDBOX_MECHANISM`). `bash` calls rotate between the servers so
//! machine noise hits all alike; start-up and warm-up calls are not timed, so the numbers are
//! what a command costs inside a running session.
//!
//! - `echo`: `echo hello`, the fixed cost of a command.
//! - `build`: `make -j2` of a generated C project (`--build-files` files, `gcc -O2`), cleaned
//!   before each call, a build-like workload where the sandbox's cost should vanish. Skipped
//!   without `make` and `gcc`.
#![expect(
    clippy::disallowed_methods,
    reason = "a benchmark driving server processes directly"
)]
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

#[path = "support/mcp_client.rs"]
mod mcp_client;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use mcp_client::Client;

const WARMUP: usize = 5;

fn main() -> Result<()> {
    let options = Options::parse()?;
    let dir = tempfile::tempdir().context("creating the workspace")?;
    let root = dir
        .path()
        .canonicalize()
        .context("resolving the workspace")?;
    let build = has("make") && has("gcc");
    if build {
        write_project(&root.join("build"), options.build_files)?;
    } else {
        println!("make or gcc missing: the build workload is skipped");
    }

    let mut servers: Vec<(String, Client)> = vec![("off".to_owned(), server(&root, None)?)];
    for mechanism in ["bwrap", "landlock"] {
        let mut probe = server(&root, Some(mechanism))?;
        let (_, result) = call(&mut probe, "echo hello")?;
        probe.stop();
        if text(&result).contains("hello") {
            servers.push((mechanism.to_owned(), server(&root, Some(mechanism))?));
        } else {
            println!("{mechanism} does not work here: {}", text(&result));
        }
    }

    let mut report = String::new();
    for (name, command, calls) in [
        ("echo", "echo hello".to_owned(), options.calls),
        (
            "build",
            "cd build && make clean >/dev/null && make -j2 >/dev/null && echo built".to_owned(),
            options.builds,
        ),
    ] {
        if name == "build" && !build {
            continue;
        }
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); servers.len()];
        for round in 0..WARMUP.min(calls) + calls {
            let count = servers.len();
            for turn in 0..count {
                // The order rotates every round.
                let index = (turn + round) % count;
                let (label, client) = &mut servers[index];
                let (elapsed, result) = call(client, &command)?;
                let shown = text(&result);
                ensure!(
                    shown.contains(if name == "echo" { "hello" } else { "built" }),
                    "{label}: {name} failed: {shown}"
                );
                if round >= WARMUP.min(calls) {
                    times[index].push(elapsed);
                }
            }
        }
        let base = median(&mut times[0]);
        writeln!(report, "{name} ({calls} calls each, median):")?;
        for (index, (label, _)) in servers.iter().enumerate() {
            let value = median(&mut times[index]);
            let added = value.as_secs_f64() - base.as_secs_f64();
            writeln!(
                report,
                "  {label:<9} {:>9.2} ms   added {:>+8.2} ms ({:>+6.1} %)",
                ms(value),
                added * 1000.0,
                added / base.as_secs_f64() * 100.0
            )?;
        }
    }
    for (_, client) in &mut servers {
        client.stop();
    }
    print!("{report}");
    Ok(())
}

/// `jig mcp` on `root`, sandboxed with `mechanism` (off without one).
fn server(root: &Path, mechanism: Option<&str>) -> Result<Client> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_jig"));
    command
        .arg("mcp")
        .arg("--root")
        .arg(root)
        .current_dir(root)
        .env("XDG_CONFIG_HOME", root.join("config"));
    match mechanism {
        Some(mechanism) => {
            command
                .args(["--sandbox", "workspace-write"])
                .env("JIG_SANDBOX_MECHANISM", mechanism);
        }
        None => {
            command.args(["--sandbox", "off"]);
        }
    }
    Client::start("jig", command)
}

fn call(client: &mut Client, command: &str) -> Result<(Duration, Value)> {
    client.request(
        "tools/call",
        &json!({"name": "bash", "arguments": {"command": command, "timeout": 600}}),
    )
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

/// A C project of `files` small translation units and a Makefile.
fn write_project(dir: &Path, files: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for i in 0..files {
        std::fs::write(
            dir.join(format!("f{i}.c")),
            format!(
                "#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n\
                 int f{i}(int n) {{ int s = 0; for (int i = 0; i < n; i++) s += (i * {i}) % 7;\n\
                 char b[64]; snprintf(b, sizeof b, \"%d\", s); return (int)strlen(b) + s; }}\n"
            ),
        )?;
    }
    std::fs::write(
        dir.join("Makefile"),
        "OBJS := $(patsubst %.c,%.o,$(wildcard *.c))\nall: $(OBJS)\n%.o: %.c\n\tgcc -O2 -c $< -o $@\n\
         clean:\n\trm -f *.o\n",
    )?;
    Ok(())
}

struct Options {
    calls: usize,
    builds: usize,
    build_files: usize,
}

impl Options {
    fn parse() -> Result<Self> {
        let mut options = Self {
            calls: 200,
            builds: 10,
            build_files: 60,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = |name: &str| -> Result<usize> {
                args.next()
                    .with_context(|| format!("{name} needs a number"))?
                    .parse()
                    .with_context(|| format!("{name} needs a number"))
            };
            match arg.as_str() {
                "-n" => options.calls = value("-n")?,
                "--builds" => options.builds = value("--builds")?,
                "--build-files" => options.build_files = value("--build-files")?,
                // What `cargo bench` passes to every bench target.
                "--bench" => {}
                other => bail!("unknown option {other}: use -n N, --builds N, --build-files N"),
            }
        }
        Ok(options)
    }
}
