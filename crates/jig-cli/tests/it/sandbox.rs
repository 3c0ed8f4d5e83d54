//! The escape suite: each attempt is denied with the sandbox on and succeeds with it off, so
//! every check can fail. It runs through `jig sandbox`, through the bash tool (`jig tool`), and
//! through a remote env (`--env "stdio:jig env serve"`, enforced on the far side).
//!
//! Every sandboxed check runs under each mechanism, bubblewrap and Landlock + seccomp, forced
//! with `JIG_SANDBOX_MECHANISM` so the other is off. A mechanism that does not work here is
//! skipped with a printed reason, unless `JIG_REQUIRE_SANDBOX=1` (CI), which makes it a failure.
#![expect(
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "test set-up fails loudly and tells when a test is skipped"
)]

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::json;

use crate::support::{jig, stdout_of};

/// True when `mechanism` (`bwrap` or `landlock`) works here; otherwise a skip reason is printed
/// (or, with `JIG_REQUIRE_SANDBOX=1`, the test fails).
fn available(mechanism: &str, test: &str) -> bool {
    let found = jig_env_local::sandbox::Mechanism::forced(mechanism);
    if found.is_available() {
        return true;
    }
    assert!(
        std::env::var("JIG_REQUIRE_SANDBOX").as_deref() != Ok("1"),
        "{test}: JIG_REQUIRE_SANDBOX=1 but {mechanism} does not work here: {}",
        found.describe()
    );
    eprintln!("SKIPPED {test} under {mechanism}: {}", found.describe());
    false
}

/// The mechanisms that work here, each to run a test under (with the other forced off).
pub(crate) fn mechanisms(test: &str) -> Vec<&'static str> {
    ["bwrap", "landlock"]
        .into_iter()
        .filter(|mechanism| available(mechanism, test))
        .collect()
}

/// A home with planted secrets and a project in it, outside `/tmp` (the sandbox's private `/tmp`
/// would hide a `/tmp` path and make the checks too easy).
struct Layout {
    _dir: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
    ws: PathBuf,
}

impl Layout {
    fn new() -> Self {
        // Not under /tmp: paths outside the roots must be plain host paths, visible and
        // read-only inside the sandbox, for a denied write to read as one whatever a mechanism
        // does with /tmp (wherever the tree is checked out).
        let target_tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
        let parent = if target_tmp.starts_with("/tmp") {
            std::path::Path::new("/var/tmp")
        } else {
            target_tmp
        };
        let dir = tempfile::Builder::new()
            .prefix("sandbox-")
            .tempdir_in(parent)
            .unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let home = base.join("home");
        let ws = home.join("project");
        for dir in [
            ws.join(".git"),
            ws.join(".jig"),
            home.join(".ssh"),
            base.join("outside"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(ws.join(".jig/settings.json"), "{}\n").unwrap();
        std::fs::write(ws.join(".env"), "SECRET=env-secret\n").unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "FAKE-SSH-KEY\n").unwrap();
        std::os::unix::fs::symlink(base.join("outside"), ws.join("link-out")).unwrap();
        Self {
            _dir: dir,
            base,
            home,
            ws,
        }
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_default()
    }
}

/// How an attempt is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    /// `jig sandbox --mode M -- bash -c SCRIPT`.
    Command,
    /// `jig tool bash --sandbox M`.
    Tool,
    /// `jig tool bash --sandbox M --env "stdio:jig env serve"`.
    Remote,
}

fn run(layout: &Layout, via: Via, mode: &str, mechanism: &str, script: &str) -> Output {
    let mut command = jig();
    command
        .env("HOME", &layout.home)
        .env("JIG_SANDBOX_MECHANISM", mechanism)
        .current_dir(&layout.ws)
        .timeout(Duration::from_mins(1));
    match via {
        Via::Command => {
            command.args(["sandbox", "--mode", mode, "--cwd"]);
            command.arg(&layout.ws).args(["--", "bash", "-c", script]);
        }
        Via::Tool | Via::Remote => {
            command.args(["tool", "bash", "--sandbox", mode, "--cwd"]);
            command.arg(&layout.ws);
            command
                .arg("--args")
                .arg(json!({ "command": script }).to_string());
            if via == Via::Remote {
                command
                    .arg("--env")
                    .arg(format!("stdio:{} env serve", env!("CARGO_BIN_EXE_jig")));
            }
        }
    }
    command.output().unwrap()
}

/// Whether an attempt got out, from the layout after the run and the run's output.
type Check = Box<dyn Fn(&Layout, &Output) -> bool>;

/// One escape attempt: the script, and whether it got out.
struct Attempt {
    name: &'static str,
    script: String,
    escaped: Check,
}

/// Serves one HTTP answer per connection on 127.0.0.1 until the test ends.
fn http_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buffer = [0_u8; 1024];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\nhello-http");
        }
    });
    port
}

#[expect(
    clippy::too_many_lines,
    reason = "one list of every attempt reads best"
)]
fn attempts(layout: &Layout) -> Vec<Attempt> {
    let base = layout.base.display().to_string();
    let me = std::process::id();
    let tcp = http_server();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let udp = std::sync::Mutex::new(udp);
    let abstract_name = format!(
        "jig-sandbox-test-{me}-{}",
        layout.base.display().to_string().len()
    );
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt as _;
        let addr =
            std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        std::os::unix::net::UnixListener::bind_addr(&addr).unwrap()
    };
    let python = "/usr/bin/python3";
    let mut list = vec![
        Attempt {
            name: "write outside the roots",
            script: format!("echo pwned > {base}/outside/new.txt"),
            escaped: Box::new(|l, _| {
                Layout::read(&l.base.join("outside/new.txt")).contains("pwned")
            }),
        },
        Attempt {
            name: "write .git/config",
            script: "echo pwned >> .git/config".to_owned(),
            escaped: Box::new(|l, _| Layout::read(&l.ws.join(".git/config")).contains("pwned")),
        },
        Attempt {
            name: "write .jig/settings.json",
            script: "echo pwned > .jig/settings.json".to_owned(),
            escaped: Box::new(|l, _| {
                Layout::read(&l.ws.join(".jig/settings.json")).contains("pwned")
            }),
        },
        Attempt {
            name: "read ~/.ssh/id_ed25519",
            script: "cat ~/.ssh/id_ed25519".to_owned(),
            escaped: Box::new(|_, out| stdout_of(out).contains("FAKE-SSH-KEY")),
        },
        Attempt {
            name: "read .env",
            script: "cat .env".to_owned(),
            escaped: Box::new(|_, out| stdout_of(out).contains("env-secret")),
        },
        Attempt {
            name: "connect to a 127.0.0.1 listener",
            script: format!("exec 3<>/dev/tcp/127.0.0.1/{tcp} && echo connected-tcp"),
            escaped: Box::new(|_, out| stdout_of(out).contains("connected-tcp")),
        },
        Attempt {
            name: "UDP datagram to the host",
            script: format!(
                "{python} -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'pwned', ('127.0.0.1', {udp_port}))\""
            ),
            escaped: Box::new(move |_, _| {
                let mut buffer = [0_u8; 16];
                udp.lock()
                    .unwrap()
                    .recv(&mut buffer)
                    .is_ok_and(|n| &buffer[..n] == b"pwned")
            }),
        },
        Attempt {
            name: "connect to a host abstract unix socket",
            script: format!(
                "{python} -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0{abstract_name}'); print('connected-unix')\""
            ),
            escaped: Box::new(move |_, out| {
                let _ = &abstract_listener;
                stdout_of(out).contains("connected-unix")
            }),
        },
        Attempt {
            name: "write through a symlink in the workspace pointing outside",
            script: "echo pwned > link-out/via-link.txt".to_owned(),
            escaped: Box::new(|l, _| {
                Layout::read(&l.base.join("outside/via-link.txt")).contains("pwned")
            }),
        },
        Attempt {
            name: "write through /proc/self/root",
            script: format!("echo pwned > /proc/self/root{base}/outside/proc.txt"),
            escaped: Box::new(|l, _| {
                Layout::read(&l.base.join("outside/proc.txt")).contains("pwned")
            }),
        },
        Attempt {
            name: "mount",
            script: "mkdir -p mnt && mount -t tmpfs tmpfs mnt && echo mounted && umount mnt"
                .to_owned(),
            escaped: Box::new(|_, out| stdout_of(out).contains("mounted")),
        },
        Attempt {
            name: "ptrace the process that started jig",
            script: format!(
                "{python} -c \"import ctypes; l = ctypes.CDLL(None, use_errno=True); r = l.ptrace(0x4206, {me}, 0, 0); print('seized' if r == 0 else 'denied'); l.ptrace(17, {me}, 0, 0)\""
            ),
            escaped: Box::new(|_, out| stdout_of(out).contains("seized")),
        },
        Attempt {
            name: "signal the process that started jig",
            script: format!("kill -0 {me} && echo signalled"),
            escaped: Box::new(|_, out| stdout_of(out).contains("signalled")),
        },
        Attempt {
            name: "setsid and double fork, then write after the command ended",
            script: format!(
                "setsid bash -c \"trap '' TERM; ( sleep 0.5; echo pwned > {base}/outside/late.txt ) &\" & exit 0"
            ),
            escaped: Box::new(|l, _| {
                std::thread::sleep(Duration::from_secs(1));
                Layout::read(&l.base.join("outside/late.txt")).contains("pwned")
            }),
        },
    ];
    if curl_available() {
        list.push(Attempt {
            name: "curl a local HTTP server",
            script: format!("curl -s --max-time 5 http://127.0.0.1:{tcp}/"),
            escaped: Box::new(|_, out| stdout_of(out).contains("hello-http")),
        });
    }
    list
}

fn curl_available() -> bool {
    let found = std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        assert!(
            std::env::var("JIG_REQUIRE_SANDBOX").as_deref() != Ok("1"),
            "JIG_REQUIRE_SANDBOX=1 but curl is missing"
        );
        eprintln!("SKIPPED the curl attempt: curl is not installed");
    }
    found
}

/// Runs every attempt with the sandbox on (each must be denied) and off (each must succeed),
/// through `via`, and reports all the failures at once.
fn escape_suite(via: Via, mode: &str, mechanism: &str) {
    let mut failures = Vec::new();
    for sandboxed in [true, false] {
        let layout = Layout::new();
        for attempt in attempts(&layout) {
            let output = if sandboxed {
                run(&layout, via, mode, mechanism, &attempt.script)
            } else {
                run(&layout, via, "off", "none", &attempt.script)
            };
            let escaped = (attempt.escaped)(&layout, &output);
            if escaped == sandboxed {
                failures.push(format!(
                    "{} ({}): escaped={escaped}\nstdout: {}\nstderr: {}",
                    attempt.name,
                    if sandboxed { mechanism } else { "sandbox off" },
                    stdout_of(&output),
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn bwrap_denies_every_escape_through_jig_sandbox() {
    if available("bwrap", "bwrap_denies_every_escape_through_jig_sandbox") {
        escape_suite(Via::Command, "workspace-write", "bwrap");
    }
}

#[test]
fn bwrap_denies_every_escape_through_the_bash_tool() {
    if available("bwrap", "bwrap_denies_every_escape_through_the_bash_tool") {
        escape_suite(Via::Tool, "workspace-write", "bwrap");
    }
}

#[test]
fn bwrap_denies_every_escape_on_the_far_side_of_a_remote_env() {
    if available(
        "bwrap",
        "bwrap_denies_every_escape_on_the_far_side_of_a_remote_env",
    ) {
        escape_suite(Via::Remote, "workspace-write", "bwrap");
    }
}

#[test]
fn landlock_denies_every_escape_through_jig_sandbox() {
    if available(
        "landlock",
        "landlock_denies_every_escape_through_jig_sandbox",
    ) {
        escape_suite(Via::Command, "workspace-write", "landlock");
    }
}

#[test]
fn landlock_denies_every_escape_through_the_bash_tool() {
    if available(
        "landlock",
        "landlock_denies_every_escape_through_the_bash_tool",
    ) {
        escape_suite(Via::Tool, "workspace-write", "landlock");
    }
}

#[test]
fn landlock_denies_every_escape_on_the_far_side_of_a_remote_env() {
    if available(
        "landlock",
        "landlock_denies_every_escape_on_the_far_side_of_a_remote_env",
    ) {
        escape_suite(Via::Remote, "workspace-write", "landlock");
    }
}

#[test]
fn read_only_mode_denies_writes_inside_the_workspace_too() {
    for mechanism in mechanisms("read_only_mode_denies_writes_inside_the_workspace_too") {
        let layout = Layout::new();
        let output = run(
            &layout,
            Via::Command,
            "read-only",
            mechanism,
            "echo x > inside.txt; cat .gitignore 2>/dev/null; echo x > \"$TMPDIR/scratch\" && echo tmp-ok",
        );
        assert!(
            !layout.ws.join("inside.txt").exists(),
            "{mechanism}: {output:?}"
        );
        assert!(
            stdout_of(&output).contains("tmp-ok"),
            "{mechanism}: {output:?}"
        );
        std::fs::create_dir_all(layout.ws.join("src")).unwrap();
        std::fs::write(layout.ws.join("README.md"), "old\n").unwrap();
        let output = run(
            &layout,
            Via::Command,
            "workspace-write",
            mechanism,
            "echo x > README.md && mkdir -p src/deep && echo y > src/deep/new.rs && \
             echo z > inside.txt",
        );
        assert_eq!(
            Layout::read(&layout.ws.join("README.md")),
            "x\n",
            "{mechanism}"
        );
        assert_eq!(
            Layout::read(&layout.ws.join("src/deep/new.rs")),
            "y\n",
            "{mechanism}"
        );
        if mechanism == "landlock" {
            // Landlock's documented limit: no new entry directly in a root that holds .git/,
            // .jig/ or .env (a rule cannot say "create here, except these names").
            assert!(!output.status.success(), "{mechanism}: {output:?}");
            assert!(!layout.ws.join("inside.txt").exists(), "{mechanism}");
        } else {
            assert!(output.status.success(), "{mechanism}: {output:?}");
            assert_eq!(
                Layout::read(&layout.ws.join("inside.txt")),
                "z\n",
                "{mechanism}"
            );
        }
    }
}

#[test]
fn a_denied_command_gets_a_sandbox_note() {
    for mechanism in mechanisms("a_denied_command_gets_a_sandbox_note") {
        let layout = Layout::new();
        let base = layout.base.display().to_string();
        let output = run(
            &layout,
            Via::Tool,
            "workspace-write",
            mechanism,
            &format!("echo pwned > {base}/outside/new.txt"),
        );
        let text = stdout_of(&output).replace(&base, "[BASE]");
        insta::assert_snapshot!(
            format!("a_denied_command_gets_a_sandbox_note_{mechanism}"),
            text
        );
    }
}

#[test]
fn no_mechanism_is_a_clear_error_and_nothing_runs() {
    let layout = Layout::new();
    for (mechanism, via) in [
        ("none", Via::Command),
        ("seatbelt", Via::Command),
        ("none", Via::Tool),
    ] {
        let output = run(
            &layout,
            via,
            "workspace-write",
            mechanism,
            "echo ran > ran.txt",
        );
        assert!(!output.status.success(), "{mechanism} {via:?}: {output:?}");
        assert!(
            !layout.ws.join("ran.txt").exists(),
            "{mechanism} {via:?}: the command ran"
        );
        let all = format!(
            "{}{}",
            stdout_of(&output),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            all.contains("cannot be enforced"),
            "{mechanism} {via:?}: {all}"
        );
        assert!(all.contains("--sandbox off"), "{mechanism} {via:?}: {all}");
    }
    let output = run(&layout, Via::Command, "workspace-write", "none", "true");
    let stderr = String::from_utf8_lossy(&output.stderr)
        .replace(&layout.base.display().to_string(), "[BASE]");
    insta::assert_snapshot!(stderr);
}

#[test]
fn timeout_kills_a_sandboxed_command_tree() {
    for mechanism in mechanisms("timeout_kills_a_sandboxed_command_tree") {
        let layout = Layout::new();
        let started = std::time::Instant::now();
        let output = jig()
            .env("HOME", &layout.home)
            .env("JIG_SANDBOX_MECHANISM", mechanism)
            .args(["tool", "bash", "--sandbox", "workspace-write", "--cwd"])
            .arg(&layout.ws)
            .arg("--args")
            .arg(
                json!({ "command": "(trap '' TERM; sleep 30) & sleep 30", "timeout": 1 })
                    .to_string(),
            )
            .timeout(Duration::from_mins(1))
            .output()
            .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{mechanism}: {output:?}"
        );
        assert!(
            stdout_of(&output).contains("timed out"),
            "{mechanism}: {}",
            stdout_of(&output)
        );
    }
}

/// `jig run --verbose --sandbox …` says what the sandbox enforces and with which mechanism;
/// with no mechanism it refuses to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_verbose_reports_the_sandbox_and_refuses_without_a_mechanism() {
    use jig_llm::scripted::ScriptedReply;
    // One reply per mechanism.
    let setup = crate::run_cmd::Setup::new(vec![
        crate::run_cmd::reply(ScriptedReply::text("done")),
        crate::run_cmd::reply(ScriptedReply::text("done")),
    ])
    .await;
    let args = [
        "--model",
        "m",
        "--no-session",
        "--verbose",
        "--sandbox",
        "workspace-write",
        "hi",
    ];
    let mut refused = setup.command(&args);
    refused
        .env("JIG_SANDBOX_MECHANISM", "none")
        .env("HOME", &setup.ws);
    let refused = tokio::task::spawn_blocking(move || refused.output().unwrap())
        .await
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let ws = setup.ws.display().to_string();
    insta::assert_snapshot!(
        "run_refused_without_mechanism",
        String::from_utf8_lossy(&refused.stderr).replace(&ws, "[WS]")
    );
    for mechanism in mechanisms("run_verbose_reports_the_sandbox_and_refuses_without_a_mechanism") {
        let mut run = setup.command(&args);
        run.env("JIG_SANDBOX_MECHANISM", mechanism)
            .env("HOME", &setup.ws);
        let run = tokio::task::spawn_blocking(move || run.output().unwrap())
            .await
            .unwrap();
        assert!(run.status.success(), "{mechanism}: {run:?}");
        let stderr = String::from_utf8_lossy(&run.stderr);
        let line = stderr
            .lines()
            .find(|line| line.starts_with("jig: sandbox:"))
            .unwrap_or_default();
        let bwrap = which_bwrap();
        insta::assert_snapshot!(
            format!("run_verbose_sandbox_line_{mechanism}"),
            line.replace(&ws, "[WS]").replace(&bwrap, "[BWRAP]")
        );
    }
}

fn which_bwrap() -> String {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| candidate.is_file())
        .map(|path| path.display().to_string())
        .unwrap_or_default()
}

/// One `jig run` whose model runs `command` in bash, with the user's `settings` and the
/// project's `project` settings (trusted with `--approve`); the run's output and the text of
/// the bash result the model read.
async fn run_with_settings(
    mechanism: &str,
    settings: Option<serde_json::Value>,
    project: Option<serde_json::Value>,
    files: &[(&str, &str)],
    command: &str,
) -> (Output, String, crate::run_cmd::Setup) {
    use jig_llm::scripted::ScriptedReply;
    let setup = crate::run_cmd::Setup::new(vec![
        crate::run_cmd::reply(ScriptedReply::tool_call(
            "c1",
            "bash",
            json!({ "command": command }),
        )),
        crate::run_cmd::reply(ScriptedReply::text("done")),
    ])
    .await;
    if let Some(settings) = settings {
        let dir = setup.data.with_file_name("config").join("jig");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    }
    for (name, text) in files {
        std::fs::write(setup.ws.join(name), text).unwrap();
    }
    if let Some(project) = project {
        std::fs::create_dir_all(setup.ws.join(".jig")).unwrap();
        std::fs::write(setup.ws.join(".jig/settings.json"), project.to_string()).unwrap();
    }
    let mut run = setup.command(&["--model", "m", "--no-session", "--approve", "go"]);
    run.env("JIG_SANDBOX_MECHANISM", mechanism)
        .env("HOME", setup.ws.parent().unwrap());
    let output = tokio::task::spawn_blocking(move || run.output().unwrap())
        .await
        .unwrap();
    let result = setup
        .server
        .requests()
        .get(1)
        .map(|request| {
            request.json()["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|message| message["role"] == "tool")
                .map(|message| message["content"].to_string())
                .collect::<String>()
        })
        .unwrap_or_default();
    (output, result, setup)
}

/// `jig run` is sandboxed by default; the user's settings turn it off or change it; a
/// project may add protected paths but not turn the sandbox off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jig_run_is_sandboxed_by_default_and_the_settings_decide_otherwise() {
    let write_outside = "echo pwned > ../outside.txt";
    for mechanism in mechanisms("jig_run_is_sandboxed_by_default_and_the_settings_decide_otherwise")
    {
        let (output, result, setup) =
            run_with_settings(mechanism, None, None, &[], write_outside).await;
        assert!(output.status.success(), "{mechanism}: {output:?}");
        assert!(
            !setup.ws.with_file_name("outside.txt").exists(),
            "{mechanism}: the default sandbox let a write outside through: {result}"
        );
        assert!(result.contains("[sandbox]"), "{mechanism}: {result}");

        let (_, result, setup) = run_with_settings(
            mechanism,
            Some(json!({"sandbox": {"mode": "off"}})),
            None,
            &[],
            write_outside,
        )
        .await;
        assert!(
            setup.ws.with_file_name("outside.txt").exists(),
            "{mechanism}: sandbox.mode off in the settings was not honoured: {result}"
        );

        // A project cannot turn the sandbox off, only protect more.
        let (output, result, setup) = run_with_settings(
            mechanism,
            None,
            Some(json!({"sandbox": {"mode": "off", "protectedPaths": ["notes.txt"]}})),
            &[("notes.txt", "NOTE-SECRET\n")],
            "cat notes.txt; echo pwned > ../outside.txt",
        )
        .await;
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("a project may only add"),
            "{mechanism}: {output:?}"
        );
        assert!(
            !setup.ws.with_file_name("outside.txt").exists(),
            "{mechanism}: the project turned the sandbox off: {result}"
        );
        assert!(
            !result.contains("NOTE-SECRET"),
            "{mechanism}: a project's protected path was readable: {result}"
        );
    }
}

/// On only by default and no mechanism: the run goes on unsandboxed, saying so loudly. Asked
/// for in the settings and no mechanism: exit 2. A `sandbox` section that is not valid: exit 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_mechanism_the_default_warns_and_a_setting_refuses() {
    let write_outside = "echo pwned > ../outside.txt";
    let (output, _, setup) = run_with_settings("none", None, None, &[], write_outside).await;
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("jig: warning: NO SANDBOX"), "{stderr}");
    assert!(
        setup.ws.with_file_name("outside.txt").exists(),
        "the command should have run, unsandboxed"
    );

    let (output, _, setup) = run_with_settings(
        "none",
        Some(json!({"sandbox": {"mode": "workspace-write"}})),
        None,
        &[],
        write_outside,
    )
    .await;
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(!setup.ws.with_file_name("outside.txt").exists());
    let stderr =
        String::from_utf8_lossy(&output.stderr).replace(&setup.ws.display().to_string(), "[WS]");
    insta::assert_snapshot!("settings_sandbox_without_mechanism", stderr);

    let (output, _, _) = run_with_settings(
        "none",
        Some(json!({"sandbox": {"mode": "sideways"}})),
        None,
        &[],
        write_outside,
    )
    .await;
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown variant `sideways`"), "{stderr}");
}
