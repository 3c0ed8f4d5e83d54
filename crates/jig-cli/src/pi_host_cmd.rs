//! `jig pi-host`: installs and locates the Node host that runs Pi extensions (modules written
//! against Pi's `ExtensionAPI`; see docs/extensions.md, "Pi extensions").

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use anyhow::Context as _;
use clap::{Args, Subcommand};
use jig_extensions::{PI_HOST_FILES, locate_pi_host, pi_host_candidates, pi_host_install_dir};

use crate::CliResult;
use crate::exit::CliError;

/// Arguments of `jig pi-host`.
#[derive(Debug, Args)]
pub(crate) struct PiHostArgs {
    #[command(subcommand)]
    action: PiHostAction,
}

#[derive(Debug, Subcommand)]
enum PiHostAction {
    /// Install the host and its npm dependencies (`npm ci`) into jig's data directory
    /// ($XDG_DATA_HOME/jig/pi-host); needs Node.js 20+ and npm.
    Install,
    /// Say which host Pi extensions would use, or why there is none.
    Status,
}

/// Runs `jig pi-host`.
pub(crate) fn run_pi_host(args: &PiHostArgs) -> CliResult {
    match args.action {
        PiHostAction::Install => install(),
        PiHostAction::Status => status(),
    }
}

fn status() -> CliResult {
    let mut out = std::io::stdout().lock();
    match locate_pi_host() {
        Ok(dir) => {
            let _ = writeln!(out, "Pi extensions run in the host at {}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(reason) => {
            let looked: Vec<String> = pi_host_candidates()
                .iter()
                .map(|dir| dir.display().to_string())
                .collect();
            let _ = writeln!(out, "No Pi extension host: {reason}");
            let _ = writeln!(out, "Looked in: {}", looked.join(", "));
            Ok(ExitCode::from(1))
        }
    }
}

fn install() -> CliResult {
    let dir = pi_host_install_dir()
        .context("cannot tell where to install: neither XDG_DATA_HOME nor HOME is set")
        .map_err(CliError::Failure)?;
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))
        .map_err(CliError::Failure)?;
    for (name, text) in PI_HOST_FILES {
        write_file(&dir.join(name), text).map_err(CliError::Failure)?;
    }
    eprintln!(
        "jig: installing the Pi extension host's npm dependencies in {}",
        dir.display()
    );
    let status = Command::new("npm")
        .args([
            "ci",
            "--omit=dev",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
        ])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .status()
        .context("cannot run npm (install Node.js 20+ with npm)")
        .map_err(CliError::Failure)?;
    if !status.success() {
        return Err(CliError::Failure(anyhow::anyhow!(
            "npm ci in {} failed ({status})",
            dir.display()
        )));
    }
    println!("Pi extensions run in the host at {}", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// Writes `text` to `path` through a temporary file and a rename.
fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    let temporary = path.with_extension("jig-tmp");
    std::fs::write(&temporary, text)
        .with_context(|| format!("cannot write {}", temporary.display()))?;
    std::fs::rename(&temporary, path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
