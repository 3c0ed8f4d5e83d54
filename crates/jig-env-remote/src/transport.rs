//! Reaching `jig env serve` on another machine: env URLs and the commands that carry the
//! byte stream.
//!
//! | URL | byte stream |
//! |---|---|
//! | `stdio:CMD` | `sh -c CMD`; its stdin/stdout must reach `jig env serve` |
//! | `ssh://[user@]host[:port]/path` | the system `ssh` client (so keys, agents, `ProxyJump` and `~/.ssh/config` work) running `jig env serve` far side |
//! | `k8s://namespace/pod[/container]/path` | `kubectl exec -i` running `jig env serve` in the pod |
//! | `docker://container/path`, `podman://container/path` | an exec through the Docker Engine API ([`crate::container`]) |
//!
//! The path part is the working directory on the far side (default: its home directory).
//! Far side, the command runs `$HOME/.jig/bin/jig` when present (where `jig env install`
//! puts it), otherwise `jig` from `PATH`. `JIG_SSH` and `JIG_KUBECTL` replace the `ssh` and
//! `kubectl` commands (split on whitespace, e.g. `JIG_SSH="ssh -F /path/to/config"`).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::AsyncReadExt as _;

use crate::client::{ConnectError, Diagnostics, RemoteEnv};

/// The shell command that starts the server far side.
pub const REMOTE_SERVE: &str =
    r#"J="$HOME/.jig/bin/jig"; [ -x "$J" ] || J=jig; exec "$J" env serve"#;

/// A parsed `--env` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvUrl {
    /// `stdio:CMD`.
    Stdio {
        /// The shell command.
        command: String,
    },
    /// `ssh://[user@]host[:port]/path`.
    Ssh {
        /// `user@host` or `host`.
        destination: String,
        /// The port, when given.
        port: Option<u16>,
        /// The working directory far side.
        path: Option<PathBuf>,
    },
    /// `k8s://namespace/pod[/container]/path`.
    Kubernetes {
        /// The namespace.
        namespace: String,
        /// The pod.
        pod: String,
        /// The container, when given (`/container` before the path, spelled `pod:container`
        /// is not accepted).
        container: Option<String>,
        /// The working directory far side.
        path: Option<PathBuf>,
    },
    /// `docker://container/path` or `podman://container/path`.
    Container {
        /// `docker` or `podman`.
        engine: String,
        /// The container name or id.
        container: String,
        /// The working directory far side.
        path: Option<PathBuf>,
    },
}

/// A URL that does not name an env.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid env URL {url:?}: {reason}")]
pub struct UrlError {
    url: String,
    reason: String,
}

fn url_error(url: &str, reason: &str) -> UrlError {
    UrlError {
        url: url.to_owned(),
        reason: reason.to_owned(),
    }
}

fn path_part(rest: &str) -> Option<PathBuf> {
    if rest.is_empty() || rest == "/" {
        None
    } else {
        Some(PathBuf::from(format!("/{}", rest.trim_start_matches('/'))))
    }
}

impl EnvUrl {
    /// Parses `stdio:CMD`, `ssh://…`, `k8s://…`, `docker://…` or `podman://…`.
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        if let Some(command) = url.strip_prefix("stdio:") {
            if command.trim().is_empty() {
                return Err(url_error(url, "stdio: needs a command"));
            }
            return Ok(Self::Stdio {
                command: command.to_owned(),
            });
        }
        if let Some(rest) = url.strip_prefix("ssh://") {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let (destination, port) = match authority.rsplit_once(':') {
                Some((host, port)) => (
                    host,
                    Some(
                        port.parse::<u16>()
                            .map_err(|_| url_error(url, "the port is not a number"))?,
                    ),
                ),
                None => (authority, None),
            };
            if destination.is_empty() || destination.ends_with('@') {
                return Err(url_error(url, "ssh:// needs a host"));
            }
            return Ok(Self::Ssh {
                destination: destination.to_owned(),
                port,
                path: path_part(path),
            });
        }
        if let Some(rest) = url.strip_prefix("k8s://") {
            let mut parts = rest.splitn(3, '/');
            let namespace = parts.next().unwrap_or_default();
            let pod = parts.next().unwrap_or_default();
            if namespace.is_empty() || pod.is_empty() {
                return Err(url_error(url, "k8s:// needs namespace/pod"));
            }
            let rest = parts.next().unwrap_or_default();
            // The segment after the pod is a container unless the path is absolute-looking
            // with a known root; `k8s://ns/pod//work` gives no container.
            let (container, path) = match rest.split_once('/') {
                Some((container, path)) if !container.is_empty() => {
                    (Some(container.to_owned()), path_part(path))
                }
                Some((_, path)) => (None, path_part(path)),
                None if rest.is_empty() => (None, None),
                None => (Some(rest.to_owned()), None),
            };
            return Ok(Self::Kubernetes {
                namespace: namespace.to_owned(),
                pod: pod.to_owned(),
                container,
                path,
            });
        }
        for engine in ["docker", "podman"] {
            if let Some(rest) = url.strip_prefix(&format!("{engine}://")) {
                let (container, path) = rest.split_once('/').unwrap_or((rest, ""));
                if container.is_empty() {
                    return Err(url_error(url, "needs a container name"));
                }
                return Ok(Self::Container {
                    engine: engine.to_owned(),
                    container: container.to_owned(),
                    path: path_part(path),
                });
            }
        }
        Err(url_error(
            url,
            "expected stdio:CMD, ssh://[user@]host[:port]/path, k8s://namespace/pod[/container]/path, docker://container/path or podman://container/path",
        ))
    }

    /// The URL of `path` (absolute) in the same environment: `ssh://me@box:2222/srv/repo`,
    /// `k8s://dev/pod/container/srv/repo`, `docker://box/srv/repo`; a `stdio:CMD` names no
    /// path, so the path follows the command after a space and `//`: `stdio:CMD //srv/repo`.
    /// A stable name for a directory over there (project trust is saved under it), never a
    /// path of this machine.
    pub fn naming(&self, path: &Path) -> String {
        let path = path.to_string_lossy();
        match self {
            Self::Stdio { command } => format!("stdio:{command} /{path}"),
            Self::Ssh {
                destination, port, ..
            } => match port {
                Some(port) => format!("ssh://{destination}:{port}{path}"),
                None => format!("ssh://{destination}{path}"),
            },
            Self::Kubernetes {
                namespace,
                pod,
                container,
                ..
            } => match container {
                Some(container) => format!("k8s://{namespace}/{pod}/{container}{path}"),
                None => format!("k8s://{namespace}/{pod}{path}"),
            },
            Self::Container {
                engine, container, ..
            } => format!("{engine}://{container}{path}"),
        }
    }

    /// The working directory the URL names, if any.
    pub fn path(&self) -> Option<&PathBuf> {
        match self {
            Self::Stdio { .. } => None,
            Self::Ssh { path, .. }
            | Self::Kubernetes { path, .. }
            | Self::Container { path, .. } => path.as_ref(),
        }
    }

    /// The program and arguments that carry the byte stream (not for containers, which go
    /// through the Docker Engine API).
    pub fn command(&self) -> Option<Vec<String>> {
        match self {
            Self::Stdio { command } => Some(vec!["/bin/sh".into(), "-c".into(), command.clone()]),
            _ => self.shell_command(REMOTE_SERVE),
        }
    }

    /// The program and arguments that run the shell command `script` far side, its
    /// stdin/stdout connected (ssh and k8s only).
    pub fn shell_command(&self, script: &str) -> Option<Vec<String>> {
        match self {
            Self::Stdio { .. } | Self::Container { .. } => None,
            Self::Ssh {
                destination, port, ..
            } => {
                let mut argv = program_from_env(jig_protocol::EnvVars::JIG_SSH, "ssh");
                argv.push("-T".into());
                if let Some(port) = port {
                    argv.extend(["-p".into(), port.to_string()]);
                }
                argv.extend([destination.clone(), "--".into(), script.into()]);
                Some(argv)
            }
            Self::Kubernetes {
                namespace,
                pod,
                container,
                ..
            } => {
                let mut argv = program_from_env(jig_protocol::EnvVars::JIG_KUBECTL, "kubectl");
                argv.extend(["exec".into(), "-i".into(), "-n".into(), namespace.clone()]);
                argv.push(pod.clone());
                if let Some(container) = container {
                    argv.extend(["-c".into(), container.clone()]);
                }
                argv.extend(["--".into(), "sh".into(), "-c".into(), script.into()]);
                Some(argv)
            }
        }
    }
}

fn program_from_env(variable: &str, default: &str) -> Vec<String> {
    match std::env::var(variable) {
        Ok(value) if !value.trim().is_empty() => {
            value.split_whitespace().map(str::to_owned).collect()
        }
        _ => vec![default.to_owned()],
    }
}

/// Keeps the last few KiB a child wrote to stderr, for error messages.
#[derive(Debug, Default, Clone)]
pub struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl StderrTail {
    const KEEP: usize = 4096;

    pub(crate) fn push(&self, bytes: &[u8]) {
        let mut tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tail.extend(bytes);
        while tail.len() > Self::KEEP {
            tail.pop_front();
        }
    }

    /// What was kept, as text.
    pub fn text(&self) -> String {
        let tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&tail.iter().copied().collect::<Vec<u8>>()).into_owned()
    }
}

/// Connects to the server at the far end of `argv` (a child process whose stdin/stdout carry
/// the stream; its stderr is kept for error messages and otherwise dropped). The child is
/// killed when the env is dropped.
#[expect(
    clippy::disallowed_methods,
    reason = "the transport is a host process (ssh, kubectl, a shell command)"
)]
pub async fn connect_command(target: &str, argv: &[String]) -> Result<RemoteEnv, ConnectError> {
    let transport = |reason: String| ConnectError::Transport {
        target: target.to_owned(),
        reason,
    };
    let Some((program, arguments)) = argv.split_first() else {
        return Err(transport("empty command".to_owned()));
    };
    let mut child = tokio::process::Command::new(program)
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| transport(format!("cannot start {program}: {error}")))?;
    let (Some(stdin), Some(stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(transport("no pipes to the child".to_owned()));
    };
    let tail = StderrTail::default();
    let sink = tail.clone();
    tokio::spawn(async move {
        let mut buffer = [0_u8; 4096];
        while let Ok(read) = stderr.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            sink.push(&buffer[..read]);
        }
    });
    let diagnostics: Diagnostics = Arc::new(move || tail.text());
    RemoteEnv::connect(
        target,
        stdout,
        stdin,
        Some(diagnostics),
        Some(Box::new(child)),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_far_directory_is_named_by_its_url_never_as_a_local_path() {
        let named = |url: &str| EnvUrl::parse(url).unwrap().naming(Path::new("/srv/repo"));
        assert_eq!(named("ssh://me@box:2222/x"), "ssh://me@box:2222/srv/repo");
        assert_eq!(named("ssh://box"), "ssh://box/srv/repo");
        assert_eq!(named("k8s://ns/pod/app/x"), "k8s://ns/pod/app/srv/repo");
        assert_eq!(named("podman://box/x"), "podman://box/srv/repo");
        assert_eq!(
            named("stdio:ssh box jig env serve"),
            "stdio:ssh box jig env serve //srv/repo"
        );
    }

    #[test]
    fn urls_parse() {
        assert_eq!(
            EnvUrl::parse("ssh://me@box:2222/srv/repo").unwrap(),
            EnvUrl::Ssh {
                destination: "me@box".into(),
                port: Some(2222),
                path: Some("/srv/repo".into())
            }
        );
        assert_eq!(
            EnvUrl::parse("ssh://box").unwrap(),
            EnvUrl::Ssh {
                destination: "box".into(),
                port: None,
                path: None
            }
        );
        assert_eq!(
            EnvUrl::parse("k8s://ns/pod/app/work/repo").unwrap(),
            EnvUrl::Kubernetes {
                namespace: "ns".into(),
                pod: "pod".into(),
                container: Some("app".into()),
                path: Some("/work/repo".into())
            }
        );
        assert_eq!(
            EnvUrl::parse("k8s://ns/pod//work").unwrap(),
            EnvUrl::Kubernetes {
                namespace: "ns".into(),
                pod: "pod".into(),
                container: None,
                path: Some("/work".into())
            }
        );
        assert_eq!(
            EnvUrl::parse("podman://box1/ws").unwrap(),
            EnvUrl::Container {
                engine: "podman".into(),
                container: "box1".into(),
                path: Some("/ws".into())
            }
        );
        assert!(EnvUrl::parse("http://x").is_err());
        assert!(EnvUrl::parse("ssh://:22/x").is_err());
    }
}
