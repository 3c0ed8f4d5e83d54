//! The env over `docker://` (Podman's Docker-compatible API) and over `podman exec` as a
//! `stdio:` command, against the same calls run locally and against `podman cp`.
//!
//! ```text
//! cargo bench -p jig-cli --bench remote_env [-- --size-mb 200 --copies 10 --calls 500 --greps 3 --pattern 'fn [a-z_]+\(']
//! ```
//!
//! Needs root podman, runc and busybox-static (Debian packages). It imports a busybox image
//! (no registry needed), runs a container from it with the host's `/usr/lib` mounted
//! read-only (for jig's C library) and a host directory mounted at its own path, starts
//! `podman system service` on a socket of its own, and connects with `docker://`: this jig
//! (the release build of this package) is copied into the container. Measured, for each env:
//! the mean of `read` of a small file over `--calls` calls, a `--size-mb` write and read of a
//! file in the container's own filesystem (`/tmp`), and the best and the median of `--greps`
//! greps over `--copies` copies of this repository's crates (in the mounted directory, so the
//! local grep sees the same tree). `podman cp` copies the same size in and out of the
//! container's `/tmp`. A `RemoteEnv` over an in-process pipe to a `LocalEnv` server shows the
//! protocol's own cost, without a container or a relay.
#![expect(
    clippy::disallowed_methods,
    reason = "a benchmark setting up containers and files directly"
)]
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use jig_env::{Bytes, ExecutionEnv, Recursive, SearchRequest};
use jig_env_remote::container::{ContainerOptions, connect_container, container_binary_path};
use jig_env_remote::transport::connect_command;

const IMAGE: &str = "localhost/jig-test-busybox:latest";

struct Options {
    size_mb: usize,
    copies: usize,
    calls: u32,
    greps: usize,
    pattern: String,
}

impl Options {
    fn parse() -> Result<Self> {
        let mut options = Self {
            size_mb: 200,
            copies: 10,
            calls: 500,
            greps: 3,
            pattern: "fn [a-z_]+\\(".to_owned(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value =
                || -> Result<usize> { args.next().context("a value")?.parse().context("a number") };
            match arg.as_str() {
                "--size-mb" => options.size_mb = value()?,
                "--copies" => options.copies = value()?,
                "--calls" => options.calls = u32::try_from(value()?)?,
                "--greps" => options.greps = value()?.max(1),
                "--pattern" => options.pattern = args.next().context("a pattern")?,
                "--bench" => {}
                other => bail!("unknown argument {other}"),
            }
        }
        Ok(options)
    }
}

fn run(command: &mut Command) -> Result<()> {
    let output = command.output().with_context(|| format!("{command:?}"))?;
    ensure!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

/// A container from the busybox image, without jig, and the API service; removed and stopped
/// when dropped.
struct Setup {
    dir: tempfile::TempDir,
    name: String,
    shared: PathBuf,
    service: Option<Child>,
}

impl Drop for Setup {
    fn drop(&mut self) {
        if let Some(mut service) = self.service.take() {
            let _ = service.kill();
            let _ = service.wait();
        }
        let _ = self
            .podman()
            .args(["rm", "-f", "-t", "0", &self.name])
            .output();
    }
}

impl Setup {
    fn podman(&self) -> Command {
        let mut command = Command::new("podman");
        command.env("CONTAINERS_CONF", self.dir.path().join("containers.conf"));
        command
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("podman.sock")
    }

    fn start() -> Result<Self> {
        let dir = tempfile::tempdir()?;
        std::fs::write(
            dir.path().join("containers.conf"),
            "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=4096:4096\"]\n\
             [engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\n",
        )?;
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared)?;
        let mut setup = Self {
            name: format!("jig-bench-{}", std::process::id()),
            dir,
            shared,
            service: None,
        };
        let exists = setup
            .podman()
            .args(["image", "exists", IMAGE])
            .status()
            .is_ok_and(|status| status.success());
        if !exists {
            setup.build_image()?;
        }
        let mut command = setup.podman();
        command.args(["run", "-d", "--rm", "--name", &setup.name]);
        for lib in ["/usr/lib", "/usr/lib64"] {
            if Path::new(lib).exists() {
                command.args(["-v", &format!("{lib}:{lib}:ro")]);
            }
        }
        command.args([
            "-v",
            &format!("{0}:{0}", setup.shared.display()),
            IMAGE,
            "/bin/sleep",
            "100000",
        ]);
        run(&mut command)?;
        let socket = setup.socket();
        setup.service = Some(
            setup
                .podman()
                .args(["system", "service", "--time=0"])
                .arg(format!("unix://{}", socket.display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .context("podman system service")?,
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            ensure!(
                Instant::now() < deadline,
                "podman system service did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(setup)
    }

    fn build_image(&self) -> Result<()> {
        let rootfs = self.dir.path().join("rootfs");
        for dir in ["bin", "tmp", "root", "usr/lib", "usr/lib64", "etc"] {
            std::fs::create_dir_all(rootfs.join(dir))?;
        }
        std::fs::set_permissions(rootfs.join("tmp"), std::fs::Permissions::from_mode(0o1777))?;
        std::fs::copy("/bin/busybox", rootfs.join("bin/busybox"))?;
        for applet in ["sh", "cat", "sleep", "uname", "kill", "mv", "rm", "mkdir"] {
            std::os::unix::fs::symlink("busybox", rootfs.join("bin").join(applet))?;
        }
        std::os::unix::fs::symlink("usr/lib", rootfs.join("lib"))?;
        std::os::unix::fs::symlink("usr/lib64", rootfs.join("lib64"))?;
        std::fs::write(rootfs.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n")?;
        let tar = self.dir.path().join("rootfs.tar");
        run(Command::new("tar")
            .arg("-C")
            .arg(&rootfs)
            .arg("-cf")
            .arg(&tar)
            .arg("."))?;
        run(self.podman().arg("import").arg(&tar).arg(IMAGE))
    }
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

struct Numbers {
    read_ms: f64,
    write_mbs: f64,
    read_mbs: f64,
    grep_ms: f64,
    grep_median_ms: f64,
    matches: usize,
}

async fn measure(
    env: &dyn ExecutionEnv,
    dir: &Path,
    tree: &Path,
    options: &Options,
) -> Result<Numbers> {
    let small = dir.join("small.txt");
    env.write(&small, Bytes::from_static(b"a small file\n"))
        .await?;
    for _ in 0..20 {
        env.read(&small).await?;
    }
    let started = Instant::now();
    for _ in 0..options.calls {
        env.read(&small).await?;
    }
    let read_ms = millis(started.elapsed()) / f64::from(options.calls);
    let size = options.size_mb << 20;
    let big = dir.join("big.bin");
    let data = Bytes::from(vec![7_u8; size]);
    let started = Instant::now();
    env.write(&big, data).await?;
    let write_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let read = env.read(&big).await?;
    let big_read_s = started.elapsed().as_secs_f64();
    ensure!(read.len() == size, "read {} bytes", read.len());
    drop(read);
    env.remove(&big, Recursive::No).await?;
    let mut greps = Vec::with_capacity(options.greps);
    let mut matches = 0;
    for _ in 0..options.greps {
        let started = Instant::now();
        let found = env
            .search(SearchRequest::new(tree, options.pattern.as_str()))
            .await?;
        greps.push(millis(started.elapsed()));
        matches = found.matches;
    }
    greps.sort_by(f64::total_cmp);
    #[expect(clippy::cast_precision_loss, reason = "sizes in MB")]
    let mb = options.size_mb as f64;
    Ok(Numbers {
        read_ms,
        write_mbs: mb / write_s,
        read_mbs: mb / big_read_s,
        grep_ms: greps[0],
        grep_median_ms: greps[greps.len() / 2],
        matches,
    })
}

fn row(label: &str, numbers: &Numbers, local: Option<&Numbers>) -> String {
    let grep = match local {
        Some(local) => format!(
            "{:.0} ms ({:.2}x local), median {:.0} ms ({:.2}x)",
            numbers.grep_ms,
            numbers.grep_ms / local.grep_ms,
            numbers.grep_median_ms,
            numbers.grep_median_ms / local.grep_median_ms
        ),
        None => format!(
            "{:.0} ms, median {:.0} ms",
            numbers.grep_ms, numbers.grep_median_ms
        ),
    };
    format!(
        "| {label} | {:.3} ms | {:.0} MB/s | {:.0} MB/s | {grep} | {} |",
        numbers.read_ms, numbers.write_mbs, numbers.read_mbs, numbers.matches
    )
}

/// A `RemoteEnv` served by a `LocalEnv` on this machine over an in-process pipe.
async fn in_process_pipe() -> Result<jig_env_remote::RemoteEnv> {
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let local: std::sync::Arc<dyn ExecutionEnv> =
        std::sync::Arc::new(jig_env_local::LocalEnv::new());
    tokio::spawn(jig_env_remote::serve(
        local,
        jig_env_remote::ServeOptions::default(),
        server_read,
        server_write,
    ));
    let (client_read, client_write) = tokio::io::split(client);
    Ok(
        jig_env_remote::RemoteEnv::connect(
            "in-process pipe",
            client_read,
            client_write,
            None,
            None,
        )
        .await?,
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
#[expect(clippy::too_many_lines, reason = "one benchmark run, step by step")]
async fn main() -> Result<()> {
    let options = Options::parse()?;
    let jig = PathBuf::from(env!("CARGO_BIN_EXE_jig"));
    let setup = Setup::start()?;
    let tree = setup.shared.join("tree");
    std::fs::create_dir_all(&tree)?;
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for copy in 0..options.copies {
        run(Command::new("cp")
            .arg("-r")
            .arg(&crates)
            .arg(tree.join(format!("copy{copy}"))))?;
    }
    let url = format!("docker://{}/tmp", setup.name);
    let started = Instant::now();
    let docker = connect_container(
        &url,
        "docker",
        &setup.name,
        &ContainerOptions {
            endpoint: Some(setup.socket().into()),
            binary: Some(jig.clone()),
        },
    )
    .await?;
    let first_connect = started.elapsed();
    let started = Instant::now();
    drop(
        connect_container(
            &url,
            "docker",
            &setup.name,
            &ContainerOptions {
                endpoint: Some(setup.socket().into()),
                binary: Some(jig.clone()),
            },
        )
        .await?,
    );
    let connect = started.elapsed();
    let inside = container_binary_path(&jig);
    let exec_argv: Vec<String> = [
        "env".to_owned(),
        format!(
            "CONTAINERS_CONF={}",
            setup.dir.path().join("containers.conf").display()
        ),
        "podman".to_owned(),
        "exec".to_owned(),
        "-i".to_owned(),
        setup.name.clone(),
        inside.display().to_string(),
        "env".to_owned(),
        "serve".to_owned(),
    ]
    .to_vec();
    let exec = connect_command("podman exec", &exec_argv).await?;

    let tmp = Path::new("/tmp");
    let local_dir = tempfile::tempdir()?;
    let local = measure(
        &jig_env_local::LocalEnv::new(),
        local_dir.path(),
        &tree,
        &options,
    )
    .await?;
    let pipe = in_process_pipe().await?;
    let pipe_dir = tempfile::tempdir()?;
    let over_pipe = measure(&pipe, pipe_dir.path(), &tree, &options).await?;
    let over_docker = measure(&docker, tmp, &tree, &options).await?;
    let over_exec = measure(&exec, tmp, &tree, &options).await?;

    let file = setup.dir.path().join("copy.bin");
    std::fs::write(&file, vec![7_u8; options.size_mb << 20])?;
    let started = Instant::now();
    run(setup
        .podman()
        .arg("cp")
        .arg(&file)
        .arg(format!("{}:/tmp/copy.bin", setup.name)))?;
    let cp_in = started.elapsed().as_secs_f64();
    std::fs::remove_file(&file)?;
    let started = Instant::now();
    run(setup
        .podman()
        .arg("cp")
        .arg(format!("{}:/tmp/copy.bin", setup.name))
        .arg(&file))?;
    let cp_out = started.elapsed().as_secs_f64();
    #[expect(clippy::cast_precision_loss, reason = "sizes in MB")]
    let mb = options.size_mb as f64;

    println!(
        "{} MB file, {} small reads, grep over {} copies of crates/ (best and median of {})\n",
        options.size_mb, options.calls, options.copies, options.greps
    );
    println!(
        "| env | read (small file) | write {0} MB | read {0} MB | grep | matches |",
        options.size_mb
    );
    println!("|---|---|---|---|---|---|");
    println!("{}", row("local", &local, None));
    println!("{}", row("in-process pipe", &over_pipe, Some(&local)));
    println!(
        "{}",
        row("docker:// (API socket)", &over_docker, Some(&local))
    );
    println!("{}", row("stdio: podman exec -i", &over_exec, Some(&local)));
    println!(
        "| podman cp | | {:.0} MB/s (in) | {:.0} MB/s (out) | | |",
        mb / cp_in,
        mb / cp_out
    );
    println!(
        "\ndocker:// vs podman cp: write {:.0}%, read {:.0}%; connect {:.0} ms (first, with the \
         copy of jig: {:.0} ms)",
        100.0 * over_docker.write_mbs / (mb / cp_in),
        100.0 * over_docker.read_mbs / (mb / cp_out),
        millis(connect),
        millis(first_connect)
    );
    Ok(())
}
