//! `--env` end to end: the env conformance suite over ssh to a real `sshd` on loopback, over a
//! stand-in `kubectl`, and into a real podman container, each running this `jig env serve`;
//! the fault cases over ssh; and `jig tool --env` itself.
//!
//! A missing `sshd` or `podman` skips its test with a "SKIPPED" line on stderr, unless
//! `JIG_REQUIRE_REMOTE=1` (CI), which makes it a failure.
#![expect(
    clippy::expect_used,
    reason = "set-up helpers of tests: a failed step is a failed test"
)]

use std::io::Write as _;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jig_env::conformance::{Capabilities, Fixture, run_all};
use jig_env::{Bytes, DiscardSink, EnvError, EnvResult, ExecRequest, ExecutionEnv};
use jig_env_remote::RemoteEnv;
use jig_env_remote::transport::{EnvUrl, connect_command};

fn jig() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_jig"))
}

/// Skips (or, with `JIG_REQUIRE_REMOTE=1`, fails) a test whose tool is missing.
fn skip(reason: &str) {
    assert!(
        std::env::var("JIG_REQUIRE_REMOTE").as_deref() != Ok("1"),
        "{reason}, and JIG_REQUIRE_REMOTE=1 requires this test"
    );
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {reason} (set JIG_REQUIRE_REMOTE=1 to make this a failure)"
    );
}

fn run(command: &mut Command) {
    let output = command.output().expect("run a setup command");
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn host(operation: &'static str, path: &Path, result: std::io::Result<()>) -> EnvResult<()> {
    result.map_err(|error| EnvError::io(operation, path, error))
}

/// A fixture on `env`, whose files are this machine's files at the same paths (loopback
/// ssh, a pod that is a local process, a container with the directory mounted at its own
/// path): symlinks and modes are set up on the host.
fn same_path_fixture(env: RemoteEnv, base: &Path) -> Fixture {
    let dir = tempfile::tempdir_in(base).expect("temp dir");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("root dir");
    Fixture::new(Arc::new(env), root)
        .with_symlink(|target, link| {
            host("symlink", link, std::os::unix::fs::symlink(target, link))
        })
        .with_set_mode(|path, mode| {
            host(
                "chmod",
                path,
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)),
            )
        })
        .with_capabilities(Capabilities {
            exec: true,
            enforces_permissions: !rustix::process::geteuid().is_root(),
        })
        .keep_alive(dir)
}

// ----- ssh --------------------------------------------------------------------------------

/// An `sshd` on a free loopback port with its own host key and one authorized client key;
/// its sessions find this `jig` first on `PATH`. Killed when dropped.
struct Sshd {
    dir: tempfile::TempDir,
    port: u16,
    child: Child,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Sshd {
    fn start() -> Option<Self> {
        if !Path::new("/usr/sbin/sshd").exists() || Command::new("ssh").arg("-V").output().is_err()
        {
            skip("sshd or ssh is not installed (Debian: openssh-server, openssh-client)");
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        for key in ["host_key", "client_key"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(d.join(key)));
        }
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).expect("copy");
        let port = free_port();
        let jig_dir = jig().parent().expect("bin dir").to_path_buf();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n\
             PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\nStrictModes no\nSetEnv PATH={jig}:/usr/local/bin:/usr/bin:/bin\n",
            d = d.display(),
            jig = jig_dir.display(),
        );
        std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
        let user = String::from_utf8(
            Command::new("id")
                .arg("-un")
                .output()
                .expect("id -un")
                .stdout,
        )
        .expect("utf-8")
        .trim()
        .to_owned();
        let client = format!(
            "Host *\n  User {user}\n  IdentityFile {d}/client_key\n  IdentitiesOnly yes\n  \
             UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking accept-new\n  \
             BatchMode yes\n  LogLevel ERROR\n",
            d = d.display()
        );
        std::fs::write(d.join("ssh_config"), client).expect("ssh_config");
        let _ = std::fs::create_dir_all("/run/sshd");
        let log = std::fs::File::create(d.join("sshd.log")).expect("log");
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start sshd");
        let sshd = Self { dir, port, child };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd did not listen: {}",
                std::fs::read_to_string(sshd.dir.path().join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(sshd)
    }

    fn url(&self, path: &Path) -> String {
        format!("ssh://127.0.0.1:{}{}", self.port, path.display())
    }

    /// `JIG_SSH` for this server.
    fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.dir.path().join("ssh_config").display())
    }

    async fn connect(&self, path: &Path) -> RemoteEnv {
        let url = self.url(path);
        let mut argv = EnvUrl::parse(&url).expect("url").command().expect("argv");
        argv.splice(
            0..1,
            self.ssh_command().split_whitespace().map(str::to_owned),
        );
        connect_command(&url, &argv)
            .await
            .expect("connect over ssh")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_over_ssh() {
    let Some(sshd) = Sshd::start() else { return };
    let base = std::env::temp_dir();
    run_all(|| async { same_path_fixture(sshd.connect(&base).await, &base) }).await;
}

fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssh_faults_kill_the_far_side_and_fail_cleanly() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let env = sshd.connect(dir.path()).await;
    let pids = dir.path().join("pids");
    let script = format!(
        "sleep 300 & echo $! > {p}.tmp; echo $$ >> {p}.tmp; mv {p}.tmp {p}; wait",
        p = pids.display()
    );
    let request = ExecRequest::new("/bin/sh", vec!["-c".into(), script], dir.path());
    let mut sink = DiscardSink;
    let exec = env.exec(request, &mut sink);
    let cut = async {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !pids.exists() {
            assert!(Instant::now() < deadline, "the command never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The connection is gone: the ssh client dies mid-exec.
        env.close_transport();
    };
    let (result, ()) =
        tokio::time::timeout(Duration::from_secs(30), async { tokio::join!(exec, cut) })
            .await
            .expect("no hang when the connection is lost");
    let error = result.expect_err("a lost connection is an error");
    assert!(error.to_string().contains("lost"), "{error}");
    let pids: Vec<i32> = std::fs::read_to_string(&pids)
        .expect("pids")
        .lines()
        .map(|line| line.trim().parse().expect("pid"))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !pids.iter().all(|pid| gone(*pid)) {
        assert!(
            Instant::now() < deadline,
            "the far side's processes outlived the connection: {pids:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Later calls fail the same way, promptly; nothing falls back to the local disk.
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "local").expect("write");
    let error = tokio::time::timeout(Duration::from_secs(5), env.read(&file))
        .await
        .expect("no hang")
        .expect_err("no fallback to the local file");
    assert!(error.to_string().contains("lost"), "{error}");
}

#[test]
fn jig_tool_runs_over_ssh_with_an_audit_log() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("notes.txt"), "far side\n").expect("write");
    let audit = dir.path().join("audit.jsonl");
    let output = Command::new(jig())
        .args(["tool", "read", "--env", &sshd.url(dir.path()), "--audit"])
        .arg(&audit)
        .args(["--args", r#"{"path":"notes.txt"}"#])
        .env("JIG_SSH", sshd.ssh_command())
        .output()
        .expect("jig tool");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("far side"));
    let log = std::fs::read_to_string(&audit).expect("audit log");
    assert!(
        log.lines().any(|line| line.contains(r#""op":"read"#)
            && line.contains("notes.txt")
            && line.contains(r#""outcome":"ok""#)),
        "{log}"
    );
    // A server that is not there is a clear error naming the URL, not a local fallback.
    let output = Command::new(jig())
        .args([
            "tool",
            "read",
            "--env",
            &format!("ssh://127.0.0.1:{}/", free_port()),
        ])
        .args(["--args", r#"{"path":"/etc/hostname"}"#])
        .env("JIG_SSH", sshd.ssh_command())
        .output()
        .expect("jig tool");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no answer from `jig env serve`"),
        "{stderr}"
    );
}

// ----- Kubernetes (a stand-in kubectl) -----------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_over_a_stand_in_kubectl() {
    let tools = tempfile::tempdir().expect("temp dir");
    let args_log = tools.path().join("kubectl-args");
    // Checks the `kubectl exec -i` shape, then runs the command after `--` with this jig on
    // PATH, as the pod would.
    let script = format!(
        "#!/bin/sh\necho \"$*\" > {log}\n[ \"$1 $2\" = \"exec -i\" ] || exit 64\n\
         while [ \"$1\" != \"--\" ]; do shift; done; shift\n\
         PATH={jig}:$PATH exec \"$@\"\n",
        log = args_log.display(),
        jig = jig().parent().expect("bin dir").display()
    );
    let kubectl = tools.path().join("kubectl");
    std::fs::write(&kubectl, script).expect("kubectl");
    std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let base = std::env::temp_dir();
    let url = format!("k8s://team/agent-0/main{}", base.display());
    let connect = || async {
        let mut argv = EnvUrl::parse(&url).expect("url").command().expect("argv");
        argv[0] = kubectl.display().to_string();
        connect_command(&url, &argv).await.expect("connect")
    };
    run_all(|| async { same_path_fixture(connect().await, &base) }).await;
    let args = std::fs::read_to_string(&args_log).expect("args");
    assert!(
        args.starts_with("exec -i -n team agent-0 -c main -- sh -c "),
        "{args}"
    );
}

// ----- podman -----------------------------------------------------------------------------

/// A running podman container from a busybox image built locally, with this jig and the
/// host's libraries mounted read-only and a host directory mounted at its own path.
struct Container {
    name: String,
    conf: PathBuf,
    _dir: tempfile::TempDir,
    shared: PathBuf,
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = self
            .podman()
            .args(["rm", "-f", "-t", "0", &self.name])
            .output();
    }
}

const IMAGE: &str = "localhost/jig-test-busybox:latest";
/// The same image, labelled for another architecture than this machine's.
const FOREIGN_IMAGE: &str = "localhost/jig-test-busybox-foreign:latest";
const FOREIGN_ARCH: &str = if cfg!(target_arch = "aarch64") {
    "amd64"
} else {
    "arm64"
};

/// Tells apart the containers of the tests of one process.
static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl Container {
    fn podman(&self) -> Command {
        let mut command = Command::new("podman");
        command.env("CONTAINERS_CONF", &self.conf);
        command
    }

    fn start() -> Option<Self> {
        Self::start_with(true, IMAGE)
    }

    /// A container whose image and mounts have no jig (the Docker-API transport copies it in).
    fn start_without_jig() -> Option<Self> {
        Self::start_with(false, IMAGE)
    }

    /// Like [`Self::start_without_jig`], from an image that says it is for another CPU
    /// architecture (its busybox is this machine's, so it runs).
    fn start_foreign() -> Option<Self> {
        Self::start_with(false, FOREIGN_IMAGE)
    }

    fn start_with(mount_jig: bool, image: &str) -> Option<Self> {
        if Command::new("podman").arg("--version").output().is_err()
            || !Path::new("/bin/busybox").exists()
        {
            skip("podman or busybox-static is not installed");
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let conf = dir.path().join("containers.conf");
        // The workarounds this machine needs (see the CI notes): fixed ulimits, runc, cgroupfs.
        std::fs::write(
            &conf,
            "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=4096:4096\"]\n\
             [engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\n",
        )
        .expect("containers.conf");
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).expect("shared");
        let container = Self {
            name: format!(
                "jig-test-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ),
            conf,
            _dir: dir,
            shared,
        };
        let exists = container
            .podman()
            .args(["image", "exists", image])
            .status()
            .is_ok_and(|status| status.success());
        if !exists {
            container.build_image(image);
        }
        let jig_dir = jig().parent().expect("bin dir").to_path_buf();
        let mut run_cmd = container.podman();
        run_cmd.args(["run", "-d", "--rm", "--name", &container.name]);
        for (host_dir, inside) in [("/usr/lib", "/usr/lib"), ("/usr/lib64", "/usr/lib64")] {
            if Path::new(host_dir).exists() {
                run_cmd.args(["-v", &format!("{host_dir}:{inside}:ro")]);
            }
        }
        if mount_jig {
            run_cmd.args(["-v", &format!("{}:/opt/jig:ro", jig_dir.display())]);
        }
        run_cmd.args([
            "-v",
            &format!("{0}:{0}", container.shared.display()),
            image,
            "/bin/sleep",
            "100000",
        ]);
        run(&mut run_cmd);
        Some(container)
    }

    fn build_image(&self, image: &str) {
        let build = tempfile::tempdir().expect("temp dir");
        let rootfs = build.path().join("rootfs");
        for dir in [
            "bin",
            "tmp",
            "root",
            "usr/lib",
            "usr/lib64",
            "opt/jig",
            "etc",
        ] {
            std::fs::create_dir_all(rootfs.join(dir)).expect("mkdir");
        }
        std::fs::set_permissions(rootfs.join("tmp"), std::fs::Permissions::from_mode(0o1777))
            .expect("chmod");
        std::fs::copy("/bin/busybox", rootfs.join("bin/busybox")).expect("busybox");
        for applet in [
            "sh", "cat", "echo", "ls", "mkdir", "rm", "mv", "sleep", "printf", "uname", "id", "ln",
            "chmod", "grep", "true", "false", "env", "kill",
        ] {
            std::os::unix::fs::symlink("busybox", rootfs.join("bin").join(applet)).expect("applet");
        }
        // Merged /usr, like the host whose libraries are mounted.
        std::os::unix::fs::symlink("usr/lib", rootfs.join("lib")).expect("lib");
        std::os::unix::fs::symlink("usr/lib64", rootfs.join("lib64")).expect("lib64");
        std::fs::write(rootfs.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n")
            .expect("passwd");
        let tar = build.path().join("rootfs.tar");
        run(Command::new("tar")
            .arg("-C")
            .arg(&rootfs)
            .arg("-cf")
            .arg(&tar)
            .arg("."));
        let mut import = self.podman();
        import.arg("import");
        if image == FOREIGN_IMAGE {
            import.args(["--arch", FOREIGN_ARCH]);
        }
        run(import.arg(&tar).arg(image));
    }

    async fn connect(&self) -> RemoteEnv {
        let argv: Vec<String> = [
            "env",
            &format!("CONTAINERS_CONF={}", self.conf.display()),
            "podman",
            "exec",
            "-i",
            &self.name,
            "/opt/jig/jig",
            "env",
            "serve",
        ]
        .iter()
        .map(|part| (*part).to_owned())
        .collect();
        connect_command(&format!("podman container {}", self.name), &argv)
            .await
            .expect("connect into the container")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_in_a_podman_container() {
    let Some(container) = Container::start() else {
        return;
    };
    let base = container.shared.clone();
    // The env really is inside: the container's root has no /work.
    let env = container.connect().await;
    assert!(!env.exists(Path::new("/work")).await.expect("exists"));
    env.write(&base.join("probe"), Bytes::from_static(b"x"))
        .await
        .expect("write through the mount");
    run_all(|| async { same_path_fixture(container.connect().await, &base) }).await;
}

// ----- docker:// and podman:// through the Docker Engine API (Podman's compatible socket) ----

/// `podman system service` on a socket of its own (or a loopback TCP port), with the
/// container's containers.conf. Killed when dropped.
struct PodmanService {
    dir: tempfile::TempDir,
    endpoint: jig_env_remote::container::Endpoint,
    child: Child,
}

impl Drop for PodmanService {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PodmanService {
    fn start(container: &Container) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let socket = dir.path().join("podman.sock");
        Self::start_on(
            container,
            dir,
            jig_env_remote::container::Endpoint::Unix(socket),
        )
    }

    /// The service on plain HTTP at `tcp://127.0.0.1:PORT`.
    fn start_tcp(container: &Container) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let address = format!("127.0.0.1:{}", free_port());
        Self::start_on(
            container,
            dir,
            jig_env_remote::container::Endpoint::Tcp(address),
        )
    }

    fn start_on(
        container: &Container,
        dir: tempfile::TempDir,
        endpoint: jig_env_remote::container::Endpoint,
    ) -> Self {
        let log = std::fs::File::create(dir.path().join("service.log")).expect("log");
        let child = container
            .podman()
            .args(["system", "service", "--time=0"])
            .arg(endpoint.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start podman system service");
        let service = Self {
            dir,
            endpoint,
            child,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !service.listens() {
            assert!(
                Instant::now() < deadline,
                "podman system service did not listen: {}",
                std::fs::read_to_string(service.dir.path().join("service.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        service
    }

    fn listens(&self) -> bool {
        match &self.endpoint {
            jig_env_remote::container::Endpoint::Unix(socket) => {
                std::os::unix::net::UnixStream::connect(socket).is_ok()
            }
            jig_env_remote::container::Endpoint::Tcp(address) => {
                std::net::TcpStream::connect(address).is_ok()
            }
        }
    }

    fn host(&self) -> String {
        self.endpoint.to_string()
    }

    async fn connect(&self, container: &Container, engine: &str) -> RemoteEnv {
        let url = format!(
            "{engine}://{}{}",
            container.name,
            container.shared.display()
        );
        jig_env_remote::container::connect_container(
            &url,
            engine,
            &container.name,
            &jig_env_remote::container::ContainerOptions {
                endpoint: Some(self.endpoint.clone()),
                binary: Some(jig()),
            },
        )
        .await
        .expect("connect through the engine API")
    }
}

/// Whether `path` is an executable file in the container.
fn in_container(container: &Container, path: &Path) -> bool {
    container
        .podman()
        .args(["exec", &container.name, "/bin/busybox", "test", "-x"])
        .arg(path)
        .status()
        .is_ok_and(|status| status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_over_the_docker_api_copies_jig_in() {
    let Some(container) = Container::start_without_jig() else {
        return;
    };
    let service = PodmanService::start(&container);
    let inside = jig_env_remote::container::container_binary_path(&jig());
    assert!(!in_container(&container, &inside), "the image has no jig");
    let env = service.connect(&container, "docker").await;
    assert!(in_container(&container, &inside), "jig was copied in");
    assert!(!env.exists(Path::new("/work")).await.expect("exists"));
    drop(env);
    let base = container.shared.clone();
    run_all(|| async { same_path_fixture(service.connect(&container, "docker").await, &base) })
        .await;
}

/// `jig tool TOOL --args ARGS` in `container`'s shared directory over `engine://`, with the
/// engine's socket given by `host` (`(variable, value)`) and no other engine setting.
fn tool_over_engine(
    container: &Container,
    engine: &str,
    host: (&str, &str),
    tool: &str,
    args: &str,
) -> std::process::Output {
    let url = format!(
        "{engine}://{}{}",
        container.name,
        container.shared.display()
    );
    Command::new(jig())
        .args(["tool", tool, "--env", &url, "--args", args])
        .env_remove("CONTAINER_HOST")
        .env_remove("DOCKER_HOST")
        .env_remove("DOCKER_TLS_VERIFY")
        .env(host.0, host.1)
        .output()
        .expect("jig tool")
}

#[test]
fn jig_tool_runs_over_podman_and_docker_urls() {
    let Some(container) = Container::start_without_jig() else {
        return;
    };
    let service = PodmanService::start(&container);
    std::fs::write(container.shared.join("notes.txt"), "in the container\n").expect("write");
    for (engine, variable) in [("podman", "CONTAINER_HOST"), ("docker", "DOCKER_HOST")] {
        let output = tool_over_engine(
            &container,
            engine,
            (variable, &service.host()),
            "read",
            r#"{"path":"notes.txt"}"#,
        );
        assert!(
            output.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("in the container"),
            "{engine}"
        );
    }
    // A container that is not there is named in the error.
    let output = Command::new(jig())
        .args(["tool", "read", "--env", "podman://no-such-container/"])
        .args(["--args", r#"{"path":"/etc/hostname"}"#])
        .env("CONTAINER_HOST", service.host())
        .output()
        .expect("jig tool");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no container named no-such-container"),
        "{stderr}"
    );
}

#[test]
fn a_missing_engine_socket_is_a_clear_error_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let socket = dir.path().join("docker.sock");
    for (engine, variable) in [("docker", "DOCKER_HOST"), ("podman", "CONTAINER_HOST")] {
        let output = Command::new(jig())
            .args(["tool", "read", "--env", &format!("{engine}://box/ws")])
            .args(["--args", r#"{"path":"a.txt"}"#])
            .env_remove("DOCKER_HOST")
            .env_remove("CONTAINER_HOST")
            .env(variable, format!("unix://{}", socket.display()))
            .output()
            .expect("jig tool");
        assert!(!output.status.success(), "{engine}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!(
                "cannot reach the {engine} API at unix://{}",
                socket.display()
            )),
            "{stderr}"
        );
    }
    // A DOCKER_HOST the transport does not speak is refused, not replaced by a default.
    let refused = |host: &str, tls_verify: Option<&str>| {
        let mut command = Command::new(jig());
        command
            .args(["tool", "read", "--env", "docker://box/ws"])
            .args(["--args", r#"{"path":"a.txt"}"#])
            .env("DOCKER_HOST", host)
            .env_remove("DOCKER_TLS_VERIFY");
        if let Some(verify) = tls_verify {
            command.env("DOCKER_TLS_VERIFY", verify);
        }
        let output = command.output().expect("jig tool");
        assert!(!output.status.success(), "{host}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let stderr = refused("ssh://me@box", None);
    assert!(
        stderr.contains("is not a unix:// socket or a tcp:// address"),
        "{stderr}"
    );
    // Nothing listens on a fresh loopback port.
    let address = format!("127.0.0.1:{}", free_port());
    let stderr = refused(&format!("tcp://{address}"), None);
    assert!(
        stderr.contains(&format!("cannot reach the docker API at tcp://{address}")),
        "{stderr}"
    );
    // TLS is asked for and not supported: an error, never a plain connection instead.
    let stderr = refused(&format!("tcp://{address}"), Some("1"));
    assert!(
        stderr.contains("TLS, which jig does not support yet"),
        "{stderr}"
    );
}

#[test]
fn jig_tool_runs_over_the_docker_api_on_tcp() {
    let Some(container) = Container::start_without_jig() else {
        return;
    };
    let service = PodmanService::start_tcp(&container);
    std::fs::write(container.shared.join("notes.txt"), "over plain HTTP\n").expect("write");
    for (engine, variable) in [("docker", "DOCKER_HOST"), ("podman", "CONTAINER_HOST")] {
        let output = tool_over_engine(
            &container,
            engine,
            (variable, &service.host()),
            "bash",
            r#"{"command":"cat notes.txt; uname -n"}"#,
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains("over plain HTTP"), "{engine}: {stdout}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_in_the_container_mid_call_is_an_error_not_a_hang() {
    let Some(container) = Container::start_without_jig() else {
        return;
    };
    let service = PodmanService::start(&container);
    let env = service.connect(&container, "podman").await;
    let dir = container.shared.clone();
    let mut sink = DiscardSink;
    let waiting = env.exec(
        ExecRequest::new("/bin/sh", vec!["-c".into(), "sleep 300".into()], &dir),
        &mut sink,
    );
    let kill = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        // The server is the parent of the commands it runs.
        let mut sink = DiscardSink;
        env.exec(
            ExecRequest::new("/bin/sh", vec!["-c".into(), "kill -9 $PPID".into()], &dir),
            &mut sink,
        )
        .await
    };
    let (waited, killed) = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::join!(waiting, kill)
    })
    .await
    .expect("no hang when the server dies");
    for result in [waited, killed] {
        let error = result.expect_err("a dead server is an error");
        assert!(error.to_string().contains("lost"), "{error}");
    }
    let file = dir.join("a.txt");
    std::fs::write(&file, "local").expect("write");
    let error = tokio::time::timeout(Duration::from_secs(5), env.read(&file))
        .await
        .expect("no hang")
        .expect_err("no fallback to the local file");
    assert!(error.to_string().contains("lost"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_of_another_architecture_is_refused_before_the_copy() {
    let Some(container) = Container::start_foreign() else {
        return;
    };
    let service = PodmanService::start(&container);
    let inside = jig_env_remote::container::container_binary_path(&jig());
    assert!(!in_container(&container, &inside), "the image has no jig");
    let error = jig_env_remote::container::connect_container(
        "docker://foreign",
        "docker",
        &container.name,
        &jig_env_remote::container::ContainerOptions {
            endpoint: Some(service.endpoint.clone()),
            binary: Some(jig()),
        },
    )
    .await
    .expect_err("another architecture is refused");
    let message = error.to_string();
    assert!(
        message.contains(&format!("this jig is built for {}", std::env::consts::ARCH)),
        "{message}"
    );
    assert!(!in_container(&container, &inside), "nothing was copied");
}

// ----- benchmarks (run by hand: `cargo test -p jig-cli --test it bench_remote -- --ignored --nocapture`)

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Makes a tree of source files to grep: `copies` copies of this repository's crates.
fn bench_tree(base: &Path, copies: usize) -> PathBuf {
    let tree = base.join("tree");
    std::fs::create_dir_all(&tree).expect("tree");
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for copy in 0..copies {
        run(Command::new("cp")
            .arg("-r")
            .arg(&crates)
            .arg(tree.join(format!("copy{copy}"))));
    }
    tree
}

/// `left` times the same chunk.
struct Repeat {
    chunk: Bytes,
    left: usize,
}

#[async_trait::async_trait]
impl jig_env::ChunkSource for Repeat {
    async fn next_chunk(&mut self) -> jig_env::EnvResult<Option<Bytes>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        Ok(Some(self.chunk.clone()))
    }
}

/// Counts the bytes it is handed.
struct Count(usize);

#[async_trait::async_trait]
impl jig_env::ChunkSink for Count {
    async fn chunk(&mut self, chunk: Bytes) -> jig_env::EnvResult<()> {
        self.0 += chunk.len();
        Ok(())
    }
}

async fn bench_env(label: &str, env: &dyn ExecutionEnv, dir: &Path, tree: &Path) -> String {
    let small = dir.join("small.txt");
    env.write(&small, Bytes::from_static(b"a small file\n"))
        .await
        .expect("write");
    for _ in 0..20 {
        env.read(&small).await.expect("warm");
    }
    let calls = 500;
    let started = Instant::now();
    for _ in 0..calls {
        env.read(&small).await.expect("read");
    }
    let per_call = millis(started.elapsed()) / f64::from(calls);
    let big = dir.join("big.bin");
    let data = Bytes::from(vec![7_u8; 200 << 20]);
    let started = Instant::now();
    env.write(&big, data).await.expect("write big");
    let write_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let read = env.read(&big).await.expect("read big");
    let read_s = started.elapsed().as_secs_f64();
    assert_eq!(read.len(), 200 << 20);
    drop(read);
    // The same through the streaming methods: a chunk source and sink holding 1 MiB.
    let started = Instant::now();
    let mut source = Repeat {
        chunk: Bytes::from(vec![7_u8; 1 << 20]),
        left: 200,
    };
    env.write_chunks(&big, &mut source)
        .await
        .expect("write_chunks");
    let write_chunks_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut sink = Count(0);
    env.read_chunks(&big, &mut sink).await.expect("read_chunks");
    let read_chunks_s = started.elapsed().as_secs_f64();
    assert_eq!(sink.0, 200 << 20);
    env.remove(&big, jig_env::Recursive::No).await.expect("rm");
    let mut best = f64::MAX;
    let mut matches = 0;
    for _ in 0..3 {
        let started = Instant::now();
        let found = env
            .search(jig_env::SearchRequest::new(tree, "fn [a-z_]+\\("))
            .await
            .expect("search");
        best = best.min(millis(started.elapsed()));
        matches = found.matches;
    }
    format!(
        "{label:>8}: read small {per_call:.3} ms/call | write 200 MB {:.0} MB/s | read 200 MB {:.0} MB/s | write_chunks {:.0} MB/s | read_chunks {:.0} MB/s | grep {best:.0} ms ({matches} matches)",
        200.0 / write_s,
        200.0 / read_s,
        200.0 / write_chunks_s,
        200.0 / read_chunks_s
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: run by hand with --ignored --nocapture"]
async fn bench_remote() {
    let sshd = Sshd::start().expect("sshd");
    let container = Container::start().expect("podman");
    let base = container.shared.clone();
    let tree = bench_tree(&base, 10);
    let mut lines = Vec::new();
    let mut stderr = std::io::stderr();
    let local = jig_env_local::LocalEnv::new();
    lines.push(bench_env("local", &local, &base, &tree).await);
    let _ = writeln!(stderr, "{}", lines[0]);
    let ssh = sshd.connect(&base).await;
    lines.push(bench_env("ssh", &ssh, &base, &tree).await);
    let _ = writeln!(stderr, "{}", lines[1]);
    let podman = container.connect().await;
    lines.push(bench_env("podman", &podman, &base, &tree).await);
    let _ = writeln!(stderr, "{}", lines[2]);
    // The same 200 MB with the engines' own copy tools.
    let file = base.join("copy.bin");
    std::fs::write(&file, vec![7_u8; 200 << 20]).expect("write");
    let started = Instant::now();
    run(Command::new("scp")
        .args(["-q", "-O", "-F"])
        .arg(sshd.dir.path().join("ssh_config"))
        .args(["-P", &sshd.port.to_string()])
        .arg(&file)
        .arg(format!("127.0.0.1:{}", base.join("copy2.bin").display())));
    let scp = started.elapsed().as_secs_f64();
    let started = Instant::now();
    run(container
        .podman()
        .arg("cp")
        .arg(&file)
        .arg(format!("{}:/tmp/copy3.bin", container.name)));
    let cp = started.elapsed().as_secs_f64();
    lines.push(format!(
        "  copies: scp 200 MB {:.0} MB/s | podman cp 200 MB {:.0} MB/s",
        200.0 / scp,
        200.0 / cp
    ));
    for line in lines {
        let _ = writeln!(stderr, "{line}");
    }
}
