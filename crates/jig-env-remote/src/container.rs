//! `docker://container/path` and `podman://container/path`: `jig env serve` run in a container
//! through the Docker Engine API (Docker's, or Podman's compatible one), its attached
//! stdin/stdout carrying the byte stream.
//!
//! - **The API** ([`Endpoint`]): `podman://` takes `CONTAINER_HOST`, then `DOCKER_HOST`, then
//!   `$XDG_RUNTIME_DIR/podman/podman.sock` (when it exists) or `/run/podman/podman.sock`;
//!   `docker://` takes `DOCKER_HOST`, then `/var/run/docker.sock`. `unix://` sockets and
//!   plain HTTP on `tcp://host:port` are spoken; TLS (`DOCKER_TLS_VERIFY`) is refused as not
//!   supported, never replaced by plain HTTP. An API that cannot be reached is an error naming
//!   it; nothing falls back.
//! - **jig in the container**: the server runs from [`container_binary_path`]
//!   (`/tmp/.jig/jig-VERSION-BUILD`). When that file is absent (or does not run), the jig
//!   binary is uploaded there with the API's archive upload (a tar streamed from the file),
//!   after checking that the image's CPU architecture is this binary's.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bollard::Docker;
use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use bollard::query_parameters::UploadToContainerOptions;
use bytes::Bytes;
use futures::{Stream, StreamExt as _};
use jig_protocol::EnvVars;
use tokio::io::AsyncWrite;
use tokio_util::io::{ReaderStream, StreamReader};
use tokio_util::sync::CancellationToken;

use crate::client::{ConnectError, Diagnostics, RemoteEnv};
use crate::transport::StderrTail;

/// How the server is reached in a container.
#[derive(Debug, Clone, Default)]
pub struct ContainerOptions {
    /// Where the engine's API is served; `None`: from the environment and the engine's
    /// default.
    pub endpoint: Option<Endpoint>,
    /// The jig binary copied into the container when it has none; `None`: the running
    /// executable.
    pub binary: Option<PathBuf>,
}

/// Where jig's binary lives in a container (`/tmp/.jig/jig-VERSION-BUILD`; BUILD tells builds
/// of one version apart by the binary's size and modification time).
pub fn container_binary_path(binary: &Path) -> PathBuf {
    #[expect(
        clippy::disallowed_methods,
        reason = "the jig binary on this machine, not a file of the env"
    )]
    let build = std::fs::metadata(binary)
        .map(|meta| {
            let modified = meta
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |since| since.as_nanos());
            fnv1a(&[&meta.len().to_le_bytes(), &modified.to_le_bytes()])
        })
        .unwrap_or_default();
    PathBuf::from(format!(
        "/tmp/.jig/jig-{}-{build:016x}",
        env!("CARGO_PKG_VERSION")
    ))
}

fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in parts.iter().flat_map(|part| part.iter()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Where an engine's API is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A unix socket: `unix:///run/podman/podman.sock`.
    Unix(PathBuf),
    /// Plain HTTP on a TCP address: `tcp://host:port`.
    Tcp(String),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unix(path) => write!(f, "unix://{}", path.display()),
            Self::Tcp(address) => write!(f, "tcp://{address}"),
        }
    }
}

impl From<PathBuf> for Endpoint {
    fn from(path: PathBuf) -> Self {
        Self::Unix(path)
    }
}

/// The port of the engine's plain-HTTP API when `tcp://host` names none (Docker's).
const PLAIN_HTTP_PORT: u16 = 2375;

/// Why a variable naming the engine's API (`DOCKER_HOST`, `CONTAINER_HOST`) cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// An `https://` address: TLS, which jig does not speak.
    #[error(
        "{variable}={value} asks for TLS, which jig does not support yet; jig never connects \
         without it when it is asked for. Use tcp://host:port for an engine that serves plain \
         HTTP, or reach the engine through its unix socket"
    )]
    Https {
        /// The variable's name.
        variable: String,
        /// Its value.
        value: String,
    },
    /// A `tcp://` address while `DOCKER_TLS_VERIFY` asks for TLS.
    #[error(
        "{variable}={value} with DOCKER_TLS_VERIFY set asks for TLS, which jig does not support \
         yet; jig never connects without it when it is asked for. Unset DOCKER_TLS_VERIFY for \
         an engine that serves plain HTTP, or reach the engine through its unix socket"
    )]
    TlsVerify {
        /// The variable's name.
        variable: String,
        /// Its value.
        value: String,
    },
    /// Neither a `unix://` socket nor a `tcp://` address.
    #[error(
        "{variable}={value} is not a unix:// socket or a tcp:// address; {engine}:// reaches the \
         engine's API over a unix socket (set {variable}=unix:///path/to/{engine}.sock) or \
         plain HTTP ({variable}=tcp://host:port)"
    )]
    Unsupported {
        /// The variable's name.
        variable: String,
        /// Its value.
        value: String,
        /// `docker` or `podman`.
        engine: String,
    },
}

/// Why `jig env serve` could not be started in a container.
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    /// The engine's API is named wrongly.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// The engine's API does not answer.
    #[error(
        "cannot reach the {engine} API at {endpoint}: {cause}; {}",
        start_hint(.engine, .endpoint)
    )]
    Unreachable {
        /// `docker` or `podman`.
        engine: String,
        /// Where it was asked.
        endpoint: Endpoint,
        /// What happened.
        cause: Unreachable,
    },
    /// The running jig's own path is unknown (to copy it).
    #[error("cannot locate the running jig binary: {0}")]
    CurrentExe(std::io::Error),
    /// The engine knows no such container.
    #[error("no container named {container} (asked the {engine} API at {endpoint})")]
    NoContainer {
        /// The container's name.
        container: String,
        /// `docker` or `podman`.
        engine: String,
        /// Where the engine was asked.
        endpoint: Endpoint,
    },
    /// The engine could not say whether the container runs.
    #[error("cannot inspect container {container}: {error}")]
    Inspect {
        /// The container's name.
        container: String,
        /// The engine's answer.
        error: bollard::errors::Error,
    },
    /// The container exists but does not run.
    #[error("container {container} is not running ({status}); start it first")]
    NotRunning {
        /// The container's name.
        container: String,
        /// Its state as the engine names it.
        status: String,
    },
    /// A command (checking for jig) could not be run in the container.
    #[error("cannot exec in {container}: {error}")]
    Exec {
        /// The container's name.
        container: String,
        /// The engine's answer.
        error: bollard::errors::Error,
    },
    /// The container's image is for another CPU architecture than this jig.
    #[error(
        "container {container} is {arch}, this jig is built for {ours}: build jig for {arch}, or \
         run a jig built for {arch} in the container through stdio:\"docker exec -i {container} \
         /path/to/jig env serve\"",
        ours = std::env::consts::ARCH
    )]
    Architecture {
        /// The container's name.
        container: String,
        /// Its architecture, as Rust names it.
        arch: String,
    },
    /// jig could not be copied into the container.
    #[error("cannot copy jig into {container}:{}: {cause}", .inside.display())]
    Copy {
        /// The container's name.
        container: String,
        /// Where the copy goes.
        inside: PathBuf,
        /// What failed.
        cause: CopyError,
    },
    /// jig was copied but does not run in the container.
    #[error(
        "jig was copied to {container}:{} but does not run there ({}); the container needs the \
         C library jig is linked against, or use a statically linked jig (target \
         x86_64-unknown-linux-musl)",
        .inside.display(),
        .said.trim()
    )]
    DoesNotRun {
        /// The container's name.
        container: String,
        /// Where jig was copied.
        inside: PathBuf,
        /// What `jig --version` printed there.
        said: String,
    },
    /// The exec running `jig env serve` could not be created.
    #[error("cannot exec jig in {container}: {error}")]
    ExecJig {
        /// The container's name.
        container: String,
        /// The engine's answer.
        error: bollard::errors::Error,
    },
    /// The exec running `jig env serve` could not be started.
    #[error("cannot start jig in {container}: {error}")]
    StartJig {
        /// The container's name.
        container: String,
        /// The engine's answer.
        error: bollard::errors::Error,
    },
    /// The engine started the exec detached.
    #[error("the {engine} API at {endpoint} did not attach to the exec")]
    NotAttached {
        /// `docker` or `podman`.
        engine: String,
        /// Where the engine was asked.
        endpoint: Endpoint,
    },
    /// The server started but the connection to it failed.
    #[error("{0}")]
    Serve(ConnectError),
}

/// Why the engine's API did not answer.
#[derive(Debug, thiserror::Error)]
pub enum Unreachable {
    /// The unix socket does not exist.
    #[error("no such socket")]
    NoSocket,
    /// No answer to a ping within 20 s.
    #[error("no answer within 20 s")]
    Timeout,
    /// The client could not be set up, or the ping failed.
    #[error("{0}")]
    Api(bollard::errors::Error),
}

/// Why jig could not be copied into a container.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// The jig binary on this machine cannot be read.
    #[error("{}: {error}", .binary.display())]
    Binary {
        /// Its path.
        binary: PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// The path in the container has no directory inside another one.
    #[error("not a file path")]
    NotAFilePath,
    /// A path does not fit in a tar header.
    #[error("{0}")]
    Header(std::io::Error),
    /// The engine refused the upload.
    #[error("{0}")]
    Upload(bollard::errors::Error),
}

/// Reads `variable`'s `value` (`unix://PATH`, `tcp://HOST[:PORT]`); `tls_verify` is the value
/// of `DOCKER_TLS_VERIFY`, which asks for TLS that jig does not speak.
pub fn parse_endpoint(
    variable: &str,
    value: &str,
    engine: &str,
    tls_verify: Option<&str>,
) -> Result<Endpoint, EndpointError> {
    if value.starts_with("https://") {
        return Err(EndpointError::Https {
            variable: variable.to_owned(),
            value: value.to_owned(),
        });
    }
    if let Some(path) = value.strip_prefix("unix://") {
        if !path.is_empty() {
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
    } else if let Some(address) = value.strip_prefix("tcp://") {
        let address = address.trim_end_matches('/');
        if !address.is_empty() && !address.contains('/') {
            if tls_verify.is_some_and(|verify| !verify.is_empty()) {
                return Err(EndpointError::TlsVerify {
                    variable: variable.to_owned(),
                    value: value.to_owned(),
                });
            }
            let has_port = address
                .rsplit_once(':')
                .is_some_and(|(_, port)| port.parse::<u16>().is_ok())
                && !address.ends_with(']');
            return Ok(Endpoint::Tcp(if has_port {
                address.to_owned()
            } else {
                format!("{address}:{PLAIN_HTTP_PORT}")
            }));
        }
    }
    Err(EndpointError::Unsupported {
        variable: variable.to_owned(),
        value: value.to_owned(),
        engine: engine.to_owned(),
    })
}

/// Where `engine` (`docker` or `podman`) is reached, from the environment and the engine's
/// defaults.
pub fn default_endpoint(engine: &str) -> Result<Endpoint, EndpointError> {
    let variables: &[&str] = if engine == "podman" {
        &[EnvVars::CONTAINER_HOST, EnvVars::DOCKER_HOST]
    } else {
        &[EnvVars::DOCKER_HOST]
    };
    for variable in variables {
        let Ok(value) = std::env::var(variable) else {
            continue;
        };
        if value.trim().is_empty() {
            continue;
        }
        let tls_verify = std::env::var(EnvVars::DOCKER_TLS_VERIFY).ok();
        return parse_endpoint(variable, &value, engine, tls_verify.as_deref());
    }
    if engine == "podman" {
        if let Some(runtime) = std::env::var_os(EnvVars::XDG_RUNTIME_DIR) {
            let user = PathBuf::from(runtime).join("podman/podman.sock");
            if user.exists() {
                return Ok(Endpoint::Unix(user));
            }
        }
        Ok(Endpoint::Unix(PathBuf::from("/run/podman/podman.sock")))
    } else {
        Ok(Endpoint::Unix(PathBuf::from("/var/run/docker.sock")))
    }
}

fn start_hint(engine: &str, endpoint: &Endpoint) -> String {
    if engine == "podman" {
        let also = match endpoint {
            Endpoint::Unix(_) => " (or `systemctl start podman.socket`)",
            Endpoint::Tcp(_) => "",
        };
        format!(
            "is Podman's API service running? Start it with `podman system service --time=0 \
             {endpoint}`{also}, or name another socket with \
             CONTAINER_HOST=unix:///path/to/podman.sock"
        )
    } else {
        "is the Docker daemon running? Name another socket with \
         DOCKER_HOST=unix:///path/to/docker.sock (Podman's works too)"
            .to_owned()
    }
}

/// One upload at a time per container in this process, so concurrent connects do not write
/// the same file at once.
static UPLOADS: LazyLock<tokio::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> =
    LazyLock::new(Default::default);

/// Runs `jig env serve` in `container` through the engine's API and connects to it, copying
/// jig into the container first when it has none. `target` names the far side in messages.
pub async fn connect_container(
    target: &str,
    engine: &str,
    container: &str,
    options: &ContainerOptions,
) -> Result<RemoteEnv, ConnectError> {
    let fail = |error: ContainerError| ConnectError::Container {
        target: target.to_owned(),
        error: Box::new(error),
    };
    let endpoint = match &options.endpoint {
        Some(endpoint) => endpoint.clone(),
        None => default_endpoint(engine).map_err(|error| fail(error.into()))?,
    };
    let api = Api::connect(engine, &endpoint).await.map_err(fail)?;
    let binary = match &options.binary {
        Some(binary) => binary.clone(),
        None => std::env::current_exe().map_err(|error| fail(ContainerError::CurrentExe(error)))?,
    };
    let inside = container_binary_path(&binary);
    api.check_running(container).await.map_err(fail)?;
    {
        let lock = Arc::clone(
            UPLOADS
                .lock()
                .await
                .entry(format!("{endpoint}\0{container}"))
                .or_default(),
        );
        let _one_at_a_time = lock.lock().await;
        if !api.runs_jig(container, &inside).await.map_err(fail)? {
            api.check_arch(container).await.map_err(fail)?;
            api.upload_binary(container, &binary, &inside)
                .await
                .map_err(fail)?;
            if !api.runs_jig(container, &inside).await.map_err(fail)? {
                let said = api
                    .output(container, &[&inside.to_string_lossy(), "--version"])
                    .await
                    .map(|(_, output)| output)
                    .unwrap_or_default();
                return Err(fail(ContainerError::DoesNotRun {
                    container: container.to_owned(),
                    inside,
                    said,
                }));
            }
        }
    }
    api.serve(target, container, &inside).await.map_err(fail)
}

/// A connected engine API.
struct Api {
    docker: Docker,
    engine: String,
    endpoint: Endpoint,
}

impl Api {
    async fn connect(engine: &str, endpoint: &Endpoint) -> Result<Self, ContainerError> {
        let unreachable = |cause: Unreachable| ContainerError::Unreachable {
            engine: engine.to_owned(),
            endpoint: endpoint.clone(),
            cause,
        };
        let docker = match endpoint {
            Endpoint::Unix(socket) => {
                if !socket.exists() {
                    return Err(unreachable(Unreachable::NoSocket));
                }
                Docker::connect_with_unix(
                    &socket.to_string_lossy(),
                    600,
                    bollard::API_DEFAULT_VERSION,
                )
            }
            Endpoint::Tcp(address) => Docker::connect_with_http(
                &format!("http://{address}"),
                600,
                bollard::API_DEFAULT_VERSION,
            ),
        }
        .map_err(|error| unreachable(Unreachable::Api(error)))?;
        match tokio::time::timeout(Duration::from_secs(20), docker.ping()).await {
            Err(_) => return Err(unreachable(Unreachable::Timeout)),
            Ok(Err(error)) => return Err(unreachable(Unreachable::Api(error))),
            Ok(Ok(_)) => {}
        }
        Ok(Self {
            docker,
            engine: engine.to_owned(),
            endpoint: endpoint.clone(),
        })
    }

    async fn check_running(&self, container: &str) -> Result<(), ContainerError> {
        let inspect = self
            .docker
            .inspect_container(container, None)
            .await
            .map_err(|error| match error {
                bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                } => ContainerError::NoContainer {
                    container: container.to_owned(),
                    engine: self.engine.clone(),
                    endpoint: self.endpoint.clone(),
                },
                error => ContainerError::Inspect {
                    container: container.to_owned(),
                    error,
                },
            })?;
        let state = inspect.state.unwrap_or_default();
        if state.running != Some(true) {
            let status = state
                .status
                .map_or_else(|| "not running".to_owned(), |status| status.to_string());
            return Err(ContainerError::NotRunning {
                container: container.to_owned(),
                status,
            });
        }
        Ok(())
    }

    /// Runs `argv` in the container to completion: its exit code and output (stdout and
    /// stderr). An exec the engine refuses to start (no such file) is exit code 127.
    async fn output(
        &self,
        container: &str,
        argv: &[&str],
    ) -> Result<(i64, String), ContainerError> {
        let created = self
            .docker
            .create_exec(
                container,
                CreateExecOptions {
                    cmd: Some(argv.to_vec()),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    ..Default::default()
                },
            )
            .await
            .map_err(|error| ContainerError::Exec {
                container: container.to_owned(),
                error,
            })?;
        let mut text = String::new();
        match self.docker.start_exec(&created.id, None).await {
            Ok(StartExecResults::Attached { mut output, .. }) => {
                while let Some(item) = output.next().await {
                    match item {
                        Ok(chunk) => text.push_str(&String::from_utf8_lossy(&chunk.into_bytes())),
                        Err(error) => {
                            text.push_str(&error.to_string());
                            break;
                        }
                    }
                }
            }
            Ok(StartExecResults::Detached) => {}
            Err(error) => return Ok((127, error.to_string())),
        }
        let code = self
            .docker
            .inspect_exec(&created.id)
            .await
            .ok()
            .and_then(|inspect| inspect.exit_code)
            .unwrap_or(127);
        Ok((code, text))
    }

    async fn runs_jig(&self, container: &str, inside: &Path) -> Result<bool, ContainerError> {
        let (code, output) = self
            .output(container, &[&inside.to_string_lossy(), "--version"])
            .await?;
        Ok(code == 0 && output.contains(concat!("jig ", env!("CARGO_PKG_VERSION"))))
    }

    /// Refuses a container whose image is for another CPU architecture than this jig.
    async fn check_arch(&self, container: &str) -> Result<(), ContainerError> {
        let image = self
            .docker
            .inspect_container(container, None)
            .await
            .ok()
            .and_then(|inspect| inspect.image);
        let mut arch = match image {
            Some(image) => self
                .docker
                .inspect_image(&image)
                .await
                .ok()
                .and_then(|inspect| inspect.architecture)
                .map(|arch| rust_arch(&arch).to_owned()),
            None => None,
        };
        if arch.as_deref().is_none_or(str::is_empty)
            && let Ok((0, machine)) = self.output(container, &["uname", "-m"]).await
        {
            arch = Some(rust_arch(machine.trim()).to_owned());
        }
        let ours = std::env::consts::ARCH;
        match arch {
            Some(arch) if !arch.is_empty() && arch != ours => Err(ContainerError::Architecture {
                container: container.to_owned(),
                arch,
            }),
            _ => Ok(()),
        }
    }

    /// Streams `binary` into the container as `inside` (mode 755), a tar of one directory and
    /// one file built on the fly.
    async fn upload_binary(
        &self,
        container: &str,
        binary: &Path,
        inside: &Path,
    ) -> Result<(), ContainerError> {
        let fail = |cause: CopyError| ContainerError::Copy {
            container: container.to_owned(),
            inside: inside.to_path_buf(),
            cause,
        };
        let unreadable = |error: std::io::Error| {
            fail(CopyError::Binary {
                binary: binary.to_path_buf(),
                error,
            })
        };
        #[expect(
            clippy::disallowed_methods,
            reason = "the jig binary on this machine, not a file of the env"
        )]
        let file = tokio::fs::File::open(binary).await.map_err(unreadable)?;
        let size = file.metadata().await.map_err(unreadable)?.len();
        let (Some(dir), Some(name)) = (inside.parent(), inside.file_name()) else {
            return Err(fail(CopyError::NotAFilePath));
        };
        let (Some(base), Some(dir_name)) = (dir.parent(), dir.file_name()) else {
            return Err(fail(CopyError::NotAFilePath));
        };
        let header =
            |path: &Path, kind: tar::EntryType, size: u64| -> Result<Bytes, ContainerError> {
                let mut header = tar::Header::new_gnu();
                header
                    .set_path(path)
                    .map_err(|error| fail(CopyError::Header(error)))?;
                header.set_entry_type(kind);
                header.set_size(size);
                header.set_mode(0o755);
                header.set_mtime(0);
                header.set_cksum();
                Ok(Bytes::copy_from_slice(header.as_bytes()))
            };
        let dir_header = header(Path::new(dir_name), tar::EntryType::Directory, 0)?;
        let file_header = header(
            &Path::new(dir_name).join(name),
            tar::EntryType::Regular,
            size,
        )?;
        let padding = usize::try_from((512 - size % 512) % 512).unwrap_or(0);
        let trailer = Bytes::from(vec![0_u8; padding + 1024]);
        let body = futures::stream::iter([Ok(dir_header), Ok(file_header)])
            .chain(ReaderStream::with_capacity(file, 1 << 20))
            .chain(futures::stream::iter([Ok(trailer)]));
        let options = UploadToContainerOptions {
            path: base.to_string_lossy().into_owned(),
            ..Default::default()
        };
        self.docker
            .upload_to_container(container, Some(options), bollard::body_try_stream(body))
            .await
            .map_err(|error| fail(CopyError::Upload(error)))
    }

    /// Starts `inside env serve` with attached stdin/stdout and connects to it.
    async fn serve(
        self,
        target: &str,
        container: &str,
        inside: &Path,
    ) -> Result<RemoteEnv, ContainerError> {
        let created = self
            .docker
            .create_exec(
                container,
                CreateExecOptions {
                    cmd: Some(vec![
                        inside.to_string_lossy().into_owned(),
                        "env".into(),
                        "serve".into(),
                    ]),
                    attach_stdin: Some(true),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    tty: Some(false),
                    ..Default::default()
                },
            )
            .await
            .map_err(|error| ContainerError::ExecJig {
                container: container.to_owned(),
                error,
            })?;
        let started = self
            .docker
            .start_exec(
                &created.id,
                Some(StartExecOptions {
                    detach: false,
                    tty: false,
                    output_capacity: Some(crate::protocol::CHUNK * 2),
                }),
            )
            .await
            .map_err(|error| ContainerError::StartJig {
                container: container.to_owned(),
                error,
            })?;
        let StartExecResults::Attached { output, input } = started else {
            return Err(ContainerError::NotAttached {
                engine: self.engine,
                endpoint: self.endpoint,
            });
        };
        let tail = StderrTail::default();
        let sink = tail.clone();
        let stdout = output.filter_map(move |item| {
            let chunk = match item {
                Ok(bollard::container::LogOutput::StdErr { message }) => {
                    sink.push(&message);
                    None
                }
                Ok(other) => Some(Ok(other.into_bytes())),
                Err(error) => Some(Err(std::io::Error::other(error))),
            };
            std::future::ready(chunk)
        });
        // Dropping the env (or `close_transport`) ends both directions of the attached
        // stream, so the engine closes the server's stdin and the server exits.
        let closed = CancellationToken::new();
        let reader = StreamReader::new(Cut {
            inner: stdout.boxed(),
            closed: Box::pin(closed.clone().cancelled_owned()),
        });
        let writer = CutWriter {
            inner: input,
            closed: Box::pin(closed.clone().cancelled_owned()),
        };
        let diagnostics: Diagnostics = Arc::new(move || tail.text());
        RemoteEnv::connect(
            target,
            reader,
            writer,
            Some(diagnostics),
            Some(Box::new(closed.drop_guard())),
        )
        .await
        .map_err(ContainerError::Serve)
    }
}

/// The Go architecture names images carry, as Rust names them.
fn rust_arch(arch: &str) -> &str {
    match arch {
        "amd64" => "x86_64",
        "arm64" => "aarch64",
        "386" => "x86",
        "ppc64le" => "powerpc64",
        "mips64le" => "mips64",
        other => other,
    }
}

type Closed = Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// A stream that ends when `closed` fires.
struct Cut<S> {
    inner: S,
    closed: Closed,
}

impl<S: Stream<Item = std::io::Result<Bytes>> + Unpin> Stream for Cut<S> {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.closed.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the transport was closed",
            ))));
        }
        self.inner.poll_next_unpin(cx)
    }
}

/// A writer that fails once `closed` fired.
struct CutWriter {
    inner: Pin<Box<dyn AsyncWrite + Send>>,
    closed: Closed,
}

impl CutWriter {
    fn check(&mut self, cx: &mut Context<'_>) -> std::io::Result<()> {
        if self.closed.as_mut().poll(cx).is_ready() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the transport was closed",
            ));
        }
        Ok(())
    }
}

impl AsyncWrite for CutWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.check(cx)?;
        self.inner.as_mut().poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.check(cx)?;
        self.inner.as_mut().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.inner.as_mut().poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_architectures_map_to_rust_names() {
        assert_eq!(rust_arch("amd64"), "x86_64");
        assert_eq!(rust_arch("arm64"), "aarch64");
        assert_eq!(rust_arch("s390x"), "s390x");
    }

    #[test]
    fn the_binary_path_names_the_version() {
        let path = container_binary_path(Path::new("/nonexistent/jig"));
        assert!(
            path.to_string_lossy().starts_with(concat!(
                "/tmp/.jig/jig-",
                env!("CARGO_PKG_VERSION"),
                "-"
            )),
            "{}",
            path.display()
        );
    }

    #[test]
    fn engine_hosts_are_unix_sockets_or_plain_http() {
        let parse = |value: &str| parse_endpoint("DOCKER_HOST", value, "docker", None);
        assert_eq!(
            parse("unix:///run/podman/podman.sock"),
            Ok(Endpoint::Unix(PathBuf::from("/run/podman/podman.sock")))
        );
        assert_eq!(
            parse("tcp://127.0.0.1:8080"),
            Ok(Endpoint::Tcp("127.0.0.1:8080".to_owned()))
        );
        assert_eq!(
            parse("tcp://build-box/"),
            Ok(Endpoint::Tcp("build-box:2375".to_owned()))
        );
        assert_eq!(
            parse("tcp://[::1]"),
            Ok(Endpoint::Tcp("[::1]:2375".to_owned()))
        );
        assert_eq!(
            parse("tcp://[::1]:2375").map(|endpoint| endpoint.to_string()),
            Ok("tcp://[::1]:2375".to_owned())
        );
        for refused in [
            "unix://",
            "tcp://",
            "ssh://me@box",
            "http://box:2375",
            "box:2375",
        ] {
            let error = parse(refused).expect_err(refused).to_string();
            assert!(
                error.contains("is not a unix:// socket or a tcp:// address"),
                "{error}"
            );
        }
    }

    #[test]
    fn container_errors_read_as_sentences() {
        let unreachable = ContainerError::Unreachable {
            engine: "podman".to_owned(),
            endpoint: Endpoint::Unix(PathBuf::from("/run/podman/podman.sock")),
            cause: Unreachable::NoSocket,
        };
        assert_eq!(
            unreachable.to_string(),
            "cannot reach the podman API at unix:///run/podman/podman.sock: no such socket; is \
             Podman's API service running? Start it with `podman system service --time=0 \
             unix:///run/podman/podman.sock` (or `systemctl start podman.socket`), or name \
             another socket with CONTAINER_HOST=unix:///path/to/podman.sock"
        );
        let copy = ContainerError::Copy {
            container: "box".to_owned(),
            inside: PathBuf::from("/tmp/.jig/jig"),
            cause: CopyError::NotAFilePath,
        };
        assert_eq!(
            copy.to_string(),
            "cannot copy jig into box:/tmp/.jig/jig: not a file path"
        );
        let arch = ContainerError::Architecture {
            container: "box".to_owned(),
            arch: "s390x".to_owned(),
        };
        assert_eq!(
            arch.to_string(),
            format!(
                "container box is s390x, this jig is built for {}: build jig for s390x, or run \
                 a jig built for s390x in the container through stdio:\"docker exec -i box \
                 /path/to/jig env serve\"",
                std::env::consts::ARCH
            )
        );
        let does_not_run = ContainerError::DoesNotRun {
            container: "box".to_owned(),
            inside: PathBuf::from("/tmp/.jig/jig"),
            said: " not found\n".to_owned(),
        };
        assert!(
            does_not_run
                .to_string()
                .starts_with("jig was copied to box:/tmp/.jig/jig but does not run there (not found); the container"),
            "{does_not_run}"
        );
    }

    #[test]
    fn tls_is_refused_not_replaced_by_plain_http() {
        let error = parse_endpoint("DOCKER_HOST", "tcp://box:2376", "docker", Some("1"))
            .expect_err("TLS asked for")
            .to_string();
        assert!(
            error.contains("TLS, which jig does not support yet"),
            "{error}"
        );
        // An empty DOCKER_TLS_VERIFY asks for nothing (as for the docker client).
        assert_eq!(
            parse_endpoint("DOCKER_HOST", "tcp://box:2375", "docker", Some("")),
            Ok(Endpoint::Tcp("box:2375".to_owned()))
        );
        // A unix socket needs no TLS.
        assert!(parse_endpoint("DOCKER_HOST", "unix:///s.sock", "docker", Some("1")).is_ok());
    }
}
