//! Pi extensions: modules written against Pi's `ExtensionAPI` (TypeScript or JavaScript), run
//! by jig's Node host (`pi-host/host.mjs` in this crate), which offers Pi's API to the modules
//! and speaks jig's extension protocol to jig.
//!
//! Where the host is: `$JIG_PI_HOST` (its directory), else `$XDG_DATA_HOME/jig/pi-host` (where
//! `jig pi-host install` puts it; `~/.local/share/jig/pi-host` without `XDG_DATA_HOME`), else
//! this crate's source directory when jig runs from the tree it was built in. The host needs
//! its npm dependencies installed (`node_modules/`) and Node.js 20 or newer on `PATH`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;

use crate::error::LoadError;
use crate::handle::ExtensionHandle;
use crate::loader::load_process;
use crate::options::LoadOptions;

/// The host's program file.
pub const PI_HOST_SCRIPT: &str = "host.mjs";
/// The oldest Node.js major version the host runs on.
pub const PI_HOST_NODE_MAJOR: u32 = 20;

/// The host's files, so that an installed jig can put them in place (`jig pi-host install`).
pub const PI_HOST_FILES: &[(&str, &str)] = &[
    (PI_HOST_SCRIPT, include_str!("../pi-host/host.mjs")),
    ("package.json", include_str!("../pi-host/package.json")),
    (
        "package-lock.json",
        include_str!("../pi-host/package-lock.json"),
    ),
];

/// The directory `jig pi-host install` installs the host into.
pub fn pi_host_install_dir() -> Option<PathBuf> {
    let data = std::env::var_os(jig_protocol::EnvVars::XDG_DATA_HOME)
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os(jig_protocol::EnvVars::HOME)
                .map(|home| Path::new(&home).join(".local/share"))
        })?;
    Some(data.join("jig").join("pi-host"))
}

/// Where the host is looked for, in order.
pub fn pi_host_candidates() -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) =
        std::env::var_os(jig_protocol::EnvVars::JIG_PI_HOST).filter(|dir| !dir.is_empty())
    {
        candidates.push(PathBuf::from(dir));
        return candidates;
    }
    candidates.extend(pi_host_install_dir());
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("pi-host"));
    candidates
}

/// No candidate directory holds the Node host with its dependencies ([`locate_pi_host`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a Pi extension needs jig's Node host, which is not installed (looked in {}): run `jig pi-host install` (needs Node.js {PI_HOST_NODE_MAJOR}+ and npm), or set JIG_PI_HOST to a host directory",
    list(.looked)
)]
pub struct PiHostNotInstalled {
    /// The directories looked in, in order ([`pi_host_candidates`]).
    pub looked: Vec<PathBuf>,
}

fn list(paths: &[PathBuf]) -> String {
    let paths: Vec<String> = paths.iter().map(|d| d.display().to_string()).collect();
    paths.join(", ")
}

/// The host directory to use: the first candidate with the script and its dependencies.
pub fn locate_pi_host() -> Result<PathBuf, PiHostNotInstalled> {
    let candidates = pi_host_candidates();
    for dir in &candidates {
        if dir.join(PI_HOST_SCRIPT).is_file() && dir.join("node_modules").is_dir() {
            return Ok(dir.clone());
        }
    }
    Err(PiHostNotInstalled { looked: candidates })
}

/// Why `node` cannot run the host.
#[derive(Debug, thiserror::Error)]
enum NodeUnusable {
    /// `node --version` could not be run.
    #[error(
        "a Pi extension runs on Node.js {PI_HOST_NODE_MAJOR} or newer, and `node` was not found on PATH ({0})"
    )]
    NotFound(#[source] std::io::Error),
    /// `node --version` names an older major version, or none.
    #[error(
        "a Pi extension runs on Node.js {PI_HOST_NODE_MAJOR} or newer; `node --version` says {version:?}"
    )]
    TooOld {
        /// What `node --version` printed, trimmed.
        version: String,
    },
}

/// Checks once per process that `node` is on `PATH` and new enough.
fn check_node() -> Result<(), &'static NodeUnusable> {
    static CHECKED: OnceLock<Result<(), NodeUnusable>> = OnceLock::new();
    CHECKED
        .get_or_init(|| {
            let output = std::process::Command::new("node")
                .arg("--version")
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(NodeUnusable::NotFound)?;
            let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
            let major = version
                .trim_start_matches('v')
                .split('.')
                .next()
                .and_then(|major| major.parse::<u32>().ok());
            match major {
                Some(major) if major >= PI_HOST_NODE_MAJOR => Ok(()),
                _ => Err(NodeUnusable::TooOld { version }),
            }
        })
        .as_ref()
        .copied()
}

/// Starts the Pi extension of `dir` made of `modules` in jig's Node host.
pub async fn load_pi(
    dir: &Path,
    modules: &[PathBuf],
    options: &LoadOptions,
) -> Result<Arc<dyn ExtensionHandle>, LoadError> {
    let name = dir.display().to_string();
    let path = match modules {
        [one] => one.as_path(),
        _ => dir,
    };
    check_node()
        .map_err(|reason| LoadError::new(path.display().to_string(), reason.to_string()))?;
    let host = locate_pi_host().map_err(|reason| LoadError::new(&name, reason.to_string()))?;
    let mut argv: Vec<OsString> = vec!["node".into(), host.join(PI_HOST_SCRIPT).into_os_string()];
    argv.extend(modules.iter().map(|module| module.as_os_str().to_owned()));
    load_process(path, &argv, options).await
}
