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
        PiHostAction::Status => Ok(status()),
    }
}

fn status() -> ExitCode {
    let mut out = std::io::stdout().lock();
    match locate_pi_host() {
        Ok(dir) => {
            let _ = writeln!(out, "Pi extensions run in the host at {}", dir.display());
            ExitCode::SUCCESS
        }
        Err(reason) => {
            let looked: Vec<String> = pi_host_candidates()
                .iter()
                .map(|dir| dir.display().to_string())
                .collect();
            let _ = writeln!(out, "No Pi extension host: {reason}");
            let _ = writeln!(out, "Looked in: {}", looked.join(", "));
            ExitCode::from(1)
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
    let _ = writeln!(
        std::io::stderr(),
        "jig: installing the Pi extension host's npm dependencies in {}",
        dir.display()
    );
    npm(
        Command::new("npm")
            .args([
                "ci",
                "--omit=dev",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
            ])
            .current_dir(&dir),
        &format!("npm ci in {}", dir.display()),
    )?;
    let _ = writeln!(
        std::io::stdout(),
        "Pi extensions run in the host at {}",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs an npm `command`; `what` names it in the error when it cannot start or fails.
fn npm(command: &mut Command, what: &str) -> Result<(), CliError> {
    let status = command
        .stdin(Stdio::null())
        .status()
        .context("cannot run npm (install Node.js 20+ with npm)")
        .map_err(CliError::Failure)?;
    if status.success() {
        Ok(())
    } else {
        Err(CliError::Failure(anyhow::anyhow!(
            "{what} failed ({status})"
        )))
    }
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

/// Arguments of `jig install`.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The package: `npm:NAME` or `npm:NAME@VERSION` (a Pi package from the npm registry,
    /// whose package.json lists its extensions under `pi.extensions`).
    #[arg(value_name = "SOURCE")]
    source: String,
}

/// Runs `jig install npm:PACKAGE`: installs the package with npm into
/// `$XDG_CONFIG_HOME/jig/npm` and links it into the global extensions directory
/// (`$XDG_CONFIG_HOME/jig/extensions/<name>`), where every mode finds it.
pub(crate) fn run_install(args: &InstallArgs) -> CliResult {
    let Some(spec) = args.source.strip_prefix("npm:") else {
        return Err(CliError::usage(format!(
            "cannot install {:?}: name an npm package as npm:NAME or npm:NAME@VERSION",
            args.source
        )));
    };
    let name = package_name(spec);
    if name.is_empty() || name.starts_with('.') || name.contains("..") {
        return Err(CliError::usage(format!(
            "{spec:?} is not an npm package name"
        )));
    }
    let config = jig_project::config_dir()
        .context("cannot tell where to install: neither XDG_CONFIG_HOME nor HOME is set")
        .map_err(CliError::Failure)?;
    let prefix = config.join("npm");
    let extensions = config.join("extensions");
    for dir in [&prefix, &extensions] {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {}", dir.display()))
            .map_err(CliError::Failure)?;
    }
    let _ = writeln!(
        std::io::stderr(),
        "jig: npm install {spec} (in {})",
        prefix.display()
    );
    npm(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(spec),
        &format!("npm install {spec}"),
    )?;
    let package = prefix.join("node_modules").join(name);
    let manifest = std::fs::read_to_string(package.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
    let is_pi_package = manifest
        .as_ref()
        .and_then(|manifest| manifest.get("pi")?.get("extensions")?.as_array())
        .is_some_and(|list| !list.is_empty());
    if !is_pi_package {
        // Taken out again: nothing but Pi packages is kept in jig's npm directory.
        let removed = Command::new("npm")
            .args(["uninstall", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(name)
            .stdin(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        let left = if removed {
            "removed it again"
        } else {
            "could not remove it again"
        };
        return Err(CliError::Failure(anyhow::anyhow!(
            "{name} is not a Pi package: its package.json lists no pi.extensions; jig {left} ({})",
            prefix.display()
        )));
    }
    let link = extensions.join(name.rsplit('/').next().unwrap_or(name));
    if std::fs::symlink_metadata(&link).is_ok() {
        let points_here = std::fs::canonicalize(&link)
            .ok()
            .zip(std::fs::canonicalize(&package).ok())
            .is_some_and(|(a, b)| a == b);
        if !points_here {
            return Err(CliError::Failure(anyhow::anyhow!(
                "{} already exists and is another extension: remove it, or install under another name",
                link.display()
            )));
        }
    } else {
        std::os::unix::fs::symlink(&package, &link)
            .with_context(|| format!("cannot link {}", link.display()))
            .map_err(CliError::Failure)?;
    }
    let _ = writeln!(
        std::io::stdout(),
        "Installed {name}: {} → {} (loaded by every mode; -ne turns it off)",
        link.display(),
        package.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `NAME` of `NAME@VERSION`: the version follows the last `@` after the first character (a
/// scoped name starts with its own `@`).
fn package_name(spec: &str) -> &str {
    match spec.get(1..).and_then(|rest| rest.rfind('@')) {
        Some(at) => &spec[..=at],
        None => spec,
    }
}

#[cfg(test)]
mod tests {
    use super::package_name;

    #[test]
    fn package_names_lose_their_version() {
        for (spec, name) in [
            ("pi-aliases", "pi-aliases"),
            ("pi-aliases@1.0.7", "pi-aliases"),
            ("@scope/pkg", "@scope/pkg"),
            ("@scope/pkg@2.0.0", "@scope/pkg"),
        ] {
            assert_eq!(package_name(spec), name, "{spec}");
        }
    }
}
