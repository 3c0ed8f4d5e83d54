//! The Landlock + seccomp mechanism: no namespaces, no helper process. The policy becomes a
//! Landlock ruleset and a seccomp filter, both built in jig before the command is spawned and
//! applied in the forked child just before `exec` (two system calls, nothing that allocates),
//! so the command and everything it starts stay confined, wherever they go.
//!
//! Landlock rules only ever *add* rights to a directory and everything beneath it, so a path
//! is denied by granting rights on each of its siblings instead of on its parent:
//!
//! - reads (`Execute`, `ReadFile`, device ioctls) are granted on `/` split around the protected
//!   paths that exist, which get nothing; listing directories (`ReadDir`) is allowed everywhere,
//!   so a protected directory's names can be listed but none of its files read;
//! - writes are granted on each writable root, split the same way around `.git/`, `.jig/` and
//!   the protected names in it. A root that holds any of them gets rights on its entries, not
//!   on itself, so new entries cannot be created directly in it (with them, a command could
//!   replace `.git/config` by rename);
//! - a private temporary directory (`TMPDIR`) and the terminal-like devices are writable;
//! - symlinks are never followed while the rules are built: a link in the workspace that
//!   points outside gets no rights of its own.
//!
//! The seccomp filter answers `EPERM` to `ptrace`, `process_vm_*`, the mount API, `unshare`,
//! `setns` and `io_uring` (which could open sockets behind the filter's back), and, with the
//! network off, to `socket` for every family but `AF_UNIX`. Landlock's own TCP rules (ABI 4)
//! deny `bind`/`connect` as well, and its scopes (ABI 6) keep the command from connecting to
//! abstract unix sockets or signalling processes outside the sandbox.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{
    ABI, Access as _, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible as _, PathBeneath,
    Ruleset, RulesetAttr as _, RulesetCreatedAttr as _, Scope,
};
use rustix::fs::{FileType, Mode, OFlags};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use jig_env::{READ_ONLY_SUBDIRS, SandboxMode, SandboxPolicy};

use super::LandlockUnavailable;

/// The newest Landlock ABI whose rights this module hands out (newer kernels enforce the same).
const NEWEST: ABI = ABI::V7;

/// Devices a confined command may write: the bit buckets and terminals.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The kernel's Landlock ABI version, or why Landlock cannot be used.
///
/// # Errors
/// Landlock is not supported or not enabled by this kernel.
#[expect(
    unsafe_code,
    reason = "the landlock crate has no call that returns the ABI version"
)]
pub(super) fn probe() -> Result<i32, LandlockUnavailable> {
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION takes no attribute and returns the ABI version.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0_usize,
            1_u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    if version < 1 {
        let error = io::Error::last_os_error();
        return Err(match error.raw_os_error() {
            Some(libc::ENOSYS) => LandlockUnavailable::NotInKernel,
            Some(libc::EOPNOTSUPP) => LandlockUnavailable::NotEnabled,
            _ => LandlockUnavailable::Unusable(error),
        });
    }
    i32::try_from(version).map_err(|_| LandlockUnavailable::UnexpectedAbi(version))
}

/// What the kernel's ABI adds to the description of the mechanism.
pub(super) fn describe(abi: i32) -> String {
    let mut parts = vec![format!(
        "Landlock ABI {abi} + seccomp: read-only system, writable roots, private TMPDIR, \
         protected paths unreadable, no ptrace, mount or namespaces"
    )];
    parts.push(if abi >= 4 {
        "network: no sockets but unix ones, TCP bind/connect denied".to_owned()
    } else {
        "network: no sockets but unix ones".to_owned()
    });
    parts.push(if abi >= 6 {
        "no signals or abstract unix sockets outside".to_owned()
    } else {
        "signals and abstract unix sockets are not scoped (Landlock ABI 6 needed)".to_owned()
    });
    parts.join("; ")
}

/// Why the Landlock ruleset or the seccomp filter of a policy could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ConfinementError {
    /// A path to grant rights on could not be opened.
    #[error("could not open {path}: {source}")]
    Open {
        /// The path.
        path: PathBuf,
        /// Why it could not be opened.
        source: rustix::io::Errno,
    },
    /// A path opened to grant rights on could not be inspected.
    #[error("could not inspect {path}: {source}")]
    Inspect {
        /// The path.
        path: PathBuf,
        /// Why it could not be inspected.
        source: rustix::io::Errno,
    },
    /// The kernel refused the ruleset or one of its rules.
    #[error("could not build the Landlock ruleset: {0}")]
    Ruleset(#[from] landlock::RulesetError),
    /// The kernel accepted the ruleset but enforces none of it.
    #[error("this kernel does not enforce Landlock")]
    NotEnforced,
    /// The seccomp filter could not be built.
    #[error(transparent)]
    Filter(#[from] &'static FilterError),
}

/// Why the seccomp filter could not be built (the same every time: it is built once).
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// seccompiler has no filters for this architecture.
    #[error("no seccomp filter for {arch}")]
    UnsupportedArch {
        /// The architecture (`std::env::consts::ARCH`).
        arch: &'static str,
    },
    /// seccompiler refused a rule or the filter.
    #[error("could not build the seccomp filter: {0}")]
    Backend(#[from] seccompiler::BackendError),
}

/// A ruleset and a filter, ready to be applied in the child before `exec`.
#[derive(Debug)]
pub(crate) struct Confinement {
    ruleset: OwnedFd,
    filter: &'static BpfProgram,
}

impl Confinement {
    /// Arranges for the child of `command` to confine itself just before `exec`.
    #[expect(
        unsafe_code,
        reason = "the ruleset and filter must be applied in the child between fork and exec"
    )]
    pub(crate) fn install(self, command: &mut tokio::process::Command) {
        // SAFETY: the closure runs in the forked child before exec; `apply` makes only system
        // calls on integers and a pointer to a live program, allocating nothing, taking no lock.
        unsafe {
            command.pre_exec(move || self.apply());
        }
    }

    /// Confines the calling process: `no_new_privs`, the Landlock ruleset, the seccomp filter.
    #[expect(
        unsafe_code,
        reason = "landlock_restrict_self on a prepared ruleset has no safe wrapper that does not allocate"
    )]
    fn apply(&self) -> io::Result<()> {
        // SAFETY: plain system calls on integers.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0_u32,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        seccompiler::apply_filter(self.filter).map_err(|error| match error {
            seccompiler::Error::Seccomp(error) | seccompiler::Error::Prctl(error) => error,
            _ => io::Error::from_raw_os_error(libc::EINVAL),
        })
    }
}

/// Builds the confinement of `policy` for a command whose private temporary directory is
/// `tmp`, on a kernel with Landlock `abi`.
///
/// # Errors
/// The ruleset or filter could not be built; the message says what failed.
pub(crate) fn confinement(
    abi: i32,
    policy: &SandboxPolicy,
    protected: &[PathBuf],
    tmp: &Path,
) -> Result<Confinement, ConfinementError> {
    let abi = if abi >= NEWEST as i32 {
        NEWEST
    } else {
        ABI::from(abi)
    };
    let all = AccessFs::from_all(abi);
    let read = (AccessFs::from_read(abi) & !BitFlags::from(AccessFs::ReadDir))
        | (BitFlags::from(AccessFs::IoctlDev) & all);
    let device_write = (AccessFs::WriteFile | AccessFs::IoctlDev | AccessFs::Truncate) & all;

    // A protected name that is a symlink protects what it points at, too: reading through
    // the link would otherwise reach the target under the target's own rights.
    let mut protected = protected.to_vec();
    let targets: Vec<PathBuf> = protected
        .iter()
        .filter(|path| path.is_symlink())
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .collect();
    protected.extend(targets);
    let protected = protected.as_slice();

    let mut rules: Vec<(OwnedFd, BitFlags<AccessFs>)> = Vec::new();
    // Listing is allowed everywhere; reading everywhere but the protected paths.
    push_rule(&mut rules, Path::new("/"), AccessFs::ReadDir.into())?;
    grant_except(&mut rules, Path::new("/"), read, protected)?;
    if policy.mode == SandboxMode::WorkspaceWrite {
        for root in policy.writable_roots.iter().filter(|root| root.is_dir()) {
            let mut held: Vec<PathBuf> = READ_ONLY_SUBDIRS
                .iter()
                .map(|name| root.join(name))
                .filter(|path| std::fs::symlink_metadata(path).is_ok())
                .collect();
            held.extend(protected.iter().filter(|p| p.starts_with(root)).cloned());
            if held.is_empty() {
                push_rule(&mut rules, root, all)?;
            } else {
                split_root(&mut rules, root, all, &held)?;
            }
        }
    }
    push_rule(&mut rules, tmp, all)?;
    for device in WRITABLE_DEVICES {
        if Path::new(device).exists() {
            push_rule(&mut rules, Path::new(device), device_write)?;
        }
    }

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?;
    if !policy.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))?
            .scope(Scope::AbstractUnixSocket)?;
    }
    let mut created = ruleset.scope(Scope::Signal)?.create()?;
    for (fd, access) in rules {
        created = created.add_rule(PathBeneath::new(fd, access))?;
    }
    let ruleset: Option<OwnedFd> = created.into();
    let ruleset = ruleset.ok_or(ConfinementError::NotEnforced)?;
    Ok(Confinement {
        ruleset,
        filter: filter(policy.network)?,
    })
}

/// Grants `access` on `dir`, or, when an `excluded` path lies beneath it, on each of its
/// entries but the excluded ones (recursively); symlinks get nothing.
fn grant_except(
    rules: &mut Vec<(OwnedFd, BitFlags<AccessFs>)>,
    dir: &Path,
    access: BitFlags<AccessFs>,
    excluded: &[PathBuf],
) -> Result<(), ConfinementError> {
    if excluded.iter().any(|path| path == dir) {
        return Ok(());
    }
    if !excluded.iter().any(|path| path.starts_with(dir)) {
        return push_rule(rules, dir, access);
    }
    split_root(rules, dir, access, excluded)
}

/// Grants `access` on each entry of `dir` (not on `dir` itself) but the `excluded` ones.
fn split_root(
    rules: &mut Vec<(OwnedFd, BitFlags<AccessFs>)>,
    dir: &Path,
    access: BitFlags<AccessFs>,
    excluded: &[PathBuf],
) -> Result<(), ConfinementError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_symlink() => {}
            Ok(kind) if kind.is_dir() => grant_except(rules, &path, access, excluded)?,
            Ok(_) if !excluded.contains(&path) => push_rule(rules, &path, access)?,
            _ => {}
        }
    }
    Ok(())
}

/// Opens `path` without following a final symlink and records a rule for it (a path that
/// vanished or turned into a symlink gets none). Rights that only apply to directories are
/// dropped for other files.
fn push_rule(
    rules: &mut Vec<(OwnedFd, BitFlags<AccessFs>)>,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<(), ConfinementError> {
    let fd = match rustix::fs::open(
        path,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::ACCESS | rustix::io::Errno::LOOP) => {
            return Ok(());
        }
        Err(source) => {
            return Err(ConfinementError::Open {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let kind = rustix::fs::fstat(&fd)
        .map(|stat| FileType::from_raw_mode(stat.st_mode))
        .map_err(|source| ConfinementError::Inspect {
            path: path.to_path_buf(),
            source,
        })?;
    let access = match kind {
        FileType::Symlink => return Ok(()),
        FileType::Directory => access,
        _ => access & AccessFs::from_file(ABI::V7),
    };
    if !access.is_empty() {
        rules.push((fd, access));
    }
    Ok(())
}

/// The seccomp filter, built once per network setting.
fn filter(network: bool) -> Result<&'static BpfProgram, &'static FilterError> {
    static WITH_NETWORK: OnceLock<Result<BpfProgram, FilterError>> = OnceLock::new();
    static WITHOUT_NETWORK: OnceLock<Result<BpfProgram, FilterError>> = OnceLock::new();
    let cell = if network {
        &WITH_NETWORK
    } else {
        &WITHOUT_NETWORK
    };
    cell.get_or_init(|| build_filter(network)).as_ref()
}

fn build_filter(network: bool) -> Result<BpfProgram, FilterError> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|_| FilterError::UnsupportedArch {
            arch: std::env::consts::ARCH,
        })?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ]
    .into_iter()
    .map(|call| (call, Vec::new()))
    .collect();
    if !network {
        let other_family = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?;
        rules.insert(
            libc::SYS_socket,
            vec![SeccompRule::new(vec![other_family])?],
        );
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    Ok(filter.try_into()?)
}
