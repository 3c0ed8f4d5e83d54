//! Turning what a model wrote into a path, and refusing paths outside the workspace.
//!
//! Every file tool calls [`resolve`] (or [`resolve_for_read`] for `read`) first. Resolution:
//!
//! 1. A NUL byte anywhere is refused ([`PathError::Nul`]) before anything is touched.
//! 2. Unicode space variants (U+00A0, U+2000–U+200A, U+202F, U+205F, U+3000) become ASCII
//!    spaces; then one leading `@` is stripped (models copy `@file` mentions).
//! 3. `~` and `~/…` expand to the env's home directory (`~user` is not expanded); `file://`
//!    URLs become paths (percent-decoded; host empty or `localhost`).
//! 4. A relative path is joined onto the context's canonical cwd and normalised lexically
//!    ([`ExecutionEnv::absolute_path`]): that is [`ResolvedPath::absolute`], what the tool hands
//!    to the env.
//! 5. The canonical form ([`ExecutionEnv::canonical_path_lenient`]: every symlink resolved; for a
//!    path that does not exist yet, the realpath of its nearest existing ancestor plus the rest;
//!    a dangling symlink resolved to its missing target) is [`ResolvedPath::canonical`], also the
//!    mutation-queue key.
//!
//! `read` alone, when the exact path does not exist, also tries macOS screenshot spellings
//! ([`read_variants`]): a narrow no-break space (U+202F) before `AM.`/`PM.`, the NFD form, a
//! curly apostrophe (U+2019) for `'`, and their combinations; the first that exists is used.
//!
//! # Containment
//! With [`ContainmentMode::Workspace`] a path is refused unless **both** its lexical absolute
//! form and its canonical form are inside one of the canonical roots. "Inside" is a
//! component-wise prefix test, so `<root>_evil`, `<root>-x` and `<root>.bak` are outside. This
//! refuses `../` escapes, absolute paths elsewhere, a symlink inside the root pointing outside
//! (also as a parent directory of a file that does not exist yet), and a dangling symlink
//! pointing outside (a containment refusal, not "not found"). The refusal text names the root
//! and the reason ([`PathError::Outside`]).
//!
//! A path spelled through a symlink to a root (`/tmp/ws/a` when the root is
//! `/private/tmp/ws`) is respelled with its directory resolved and is inside.
//!
//! This check gives the model a clear answer, but it is not what keeps a race out: between the
//! check and the operation another process may swap a directory for a symlink. File tools
//! therefore act through [`ToolContext::files`], a view of the env confined beneath the roots
//! that resolves each path beneath an open handle of a root when it is used; a path that leads
//! outside by then fails with the env's `OutsideRoots` error ([`refusal`]). Hard links are not
//! covered (a hard link inside the workspace to a file elsewhere is that file). The shell tool is
//! not contained at all: it can reach anything the user can.

use std::fmt;
use std::path::{Path, PathBuf};

use jig_env::{EnvError, ErrorKind, ExecutionEnv};
use unicode_normalization::UnicodeNormalization;

use crate::context::{Containment, ContainmentMode, ToolContext};
use crate::error::ToolError;

/// A path a tool will act on, in its three forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// What the model wrote, after Unicode-space normalisation and `@` stripping: the form to
    /// echo back in messages (`Wrote 12 bytes to notes/a.txt`).
    pub display: String,
    /// The lexical absolute path (joined onto the cwd, `.`/`..` removed, no symlink resolved).
    /// Tools pass this to the env.
    pub absolute: PathBuf,
    /// The canonical path: every symlink resolved; for a path that does not exist yet, the
    /// realpath of the nearest existing ancestor plus the remaining components. This is the
    /// mutation-queue key.
    pub canonical: PathBuf,
}

impl ResolvedPath {
    /// The absolute path as a string, for messages and `details`.
    pub fn absolute_display(&self) -> String {
        self.absolute.display().to_string()
    }
}

/// Why a path cannot be used; each message is written for a model (what was wrong, what to do).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path contains a NUL byte.
    #[error(
        "Invalid path {path:?}: it contains a NUL byte (\\0), which no file name can contain. Remove it and try again."
    )]
    Nul {
        /// The path as received, with the NUL shown as `\0`.
        path: String,
    },
    /// The path is empty.
    #[error(
        "Invalid path: the path is empty. Give a file path relative to the workspace, e.g. \"src/main.rs\"."
    )]
    Empty,
    /// A `file://` URL that cannot be turned into a local path.
    #[error("Invalid file URL {url:?}: {reason}. Give a plain path instead.")]
    InvalidUrl {
        /// The URL as received.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `~` was used but the env has no home directory.
    #[error(
        "Cannot expand \"~\" in {path:?}: this environment has no home directory. Give the full path instead."
    )]
    NoHome {
        /// The path as received.
        path: String,
    },
    /// Containment refused the path.
    #[error("{0}")]
    Outside(Box<OutsideRoots>),
    /// The env failed while resolving the path.
    #[error("{}", env_message(path, source))]
    Env {
        /// The path being resolved.
        path: String,
        /// What the env reported.
        #[source]
        source: EnvError,
    },
}

fn env_message(path: &str, source: &EnvError) -> String {
    match source.kind() {
        ErrorKind::NotADirectory => {
            format!("Invalid path {path}: a parent of it is a file, not a directory.")
        }
        ErrorKind::PermissionDenied => {
            format!(
                "Permission denied while resolving {path}: {}",
                source.message()
            )
        }
        _ => format!("Cannot resolve path {path}: {source}"),
    }
}

impl From<PathError> for ToolError {
    fn from(error: PathError) -> Self {
        match error {
            PathError::Env { ref source, .. } if source.kind() == ErrorKind::Aborted => {
                ToolError::Cancelled
            }
            other => ToolError::Failed(other.to_string()),
        }
    }
}

/// Why a path was found outside the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutsideReason {
    /// The path itself (after joining onto the cwd and removing `..`) is outside.
    Lexical,
    /// The path is inside, but a symlink on the way (the file itself or a parent directory)
    /// leads outside.
    Symlink,
}

/// A containment refusal: the path, where it leads, the roots and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideRoots {
    /// What the model wrote.
    pub display: String,
    /// The lexical absolute path.
    pub absolute: PathBuf,
    /// The canonical path (equal to `absolute` for a lexical refusal).
    pub canonical: PathBuf,
    /// The canonical roots.
    pub roots: Vec<PathBuf>,
    /// Why it is outside.
    pub reason: OutsideReason,
}

impl fmt::Display for OutsideRoots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let roots = match self.roots.as_slice() {
            [] => "no workspace root is configured".to_owned(),
            [root] => format!("the workspace root {}", root.display()),
            roots => format!(
                "the workspace roots {}",
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        match self.reason {
            OutsideReason::Lexical => write!(
                f,
                "Access denied: {:?} resolves to {}, which is outside {roots}. Only paths inside the workspace may be used; give a path relative to the workspace root.",
                self.display,
                self.absolute.display()
            ),
            OutsideReason::Symlink => write!(
                f,
                "Access denied: {:?} goes through a symbolic link that leads to {}, which is outside {roots}. Symbolic links may not lead out of the workspace; use a path whose real location is inside it.",
                self.display,
                self.canonical.display()
            ),
        }
    }
}

/// Whether `path` is `root` or below it, comparing whole components (so `/ws_evil` is not
/// inside `/ws`). Both must be absolute and normalised.
pub fn is_within(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

/// Unicode space variants models and macOS produce, all turned into an ASCII space.
fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Steps 1–2 of resolution: refuses NUL bytes, turns Unicode space variants into ASCII spaces
/// and strips one leading `@`.
pub fn clean_input(raw: &str) -> Result<String, PathError> {
    if raw.contains('\0') {
        return Err(PathError::Nul {
            path: raw.replace('\0', "\\0"),
        });
    }
    let spaced: String = raw
        .chars()
        .map(|c| if is_unicode_space(c) { ' ' } else { c })
        .collect();
    Ok(match spaced.strip_prefix('@') {
        Some(rest) => rest.to_owned(),
        None => spaced,
    })
}

/// Step 3: `~`, `~/…` and `file://` URLs turned into a path (still possibly relative).
pub fn expand(env: &dyn ExecutionEnv, cleaned: &str) -> Result<PathBuf, PathError> {
    if cleaned == "~" || cleaned.starts_with("~/") {
        let home = env.home_dir().ok_or_else(|| PathError::NoHome {
            path: cleaned.to_owned(),
        })?;
        return Ok(match cleaned.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => home,
        });
    }
    if let Some(parsed) = file_url_path(cleaned) {
        return parsed.map_err(|error| match error {
            FileUrlError::Nul => PathError::Nul {
                path: cleaned.replace('\0', "\\0"),
            },
            other => PathError::InvalidUrl {
                url: cleaned.to_owned(),
                reason: other.to_string(),
            },
        });
    }
    Ok(PathBuf::from(cleaned))
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Why a `file://` URL names no local path (the text completes "Invalid file URL …: ").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FileUrlError {
    /// Nothing follows the host.
    #[error("it has no path after the host")]
    NoPath,
    /// The URL names another machine.
    #[error("it names the remote host {0:?}")]
    RemoteHost(String),
    /// A `%` not followed by two hex digits.
    #[error("it has an invalid percent escape")]
    BadEscape,
    /// The decoded bytes are not UTF-8.
    #[error("it does not decode to UTF-8")]
    NotUtf8,
    /// The decoded path contains a NUL byte.
    #[error("it contains a NUL byte")]
    Nul,
}

/// The local path a `file://` URL names: `file:///a/b%20c` or `file://localhost/a` (scheme and
/// `localhost` in any letter case), percent-decoded, without query or fragment. `None` when
/// `url` is not a `file://` URL at all. This is the one reading of `file://` URLs in jig: tool
/// paths and the MCP client's roots both go through it.
///
/// ```
/// use std::path::PathBuf;
/// use jig_tool::paths::{FileUrlError, file_url_path};
///
/// assert_eq!(file_url_path("file:///a/b%20c"), Some(Ok(PathBuf::from("/a/b c"))));
/// assert_eq!(file_url_path("file://evil.com/x"), Some(Err(FileUrlError::RemoteHost("evil.com".into()))));
/// assert_eq!(file_url_path("/plain/path"), None);
/// ```
pub fn file_url_path(url: &str) -> Option<Result<PathBuf, FileUrlError>> {
    let rest = strip_prefix_ignore_case(url, "file://")?;
    Some(parse_file_url(rest))
}

fn parse_file_url(rest: &str) -> Result<PathBuf, FileUrlError> {
    // `file:///abs` has an empty host; `file://localhost/abs` names this machine.
    let (host, path) = match rest.find('/') {
        Some(slash) => rest.split_at(slash),
        None => return Err(FileUrlError::NoPath),
    };
    if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
        return Err(FileUrlError::RemoteHost(host.to_owned()));
    }
    // Query and fragment are not part of a file path.
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let decoded = percent_decode(path).ok_or(FileUrlError::BadEscape)?;
    let decoded = String::from_utf8(decoded).map_err(|_| FileUrlError::NotUtf8)?;
    if decoded.contains('\0') {
        return Err(FileUrlError::Nul);
    }
    Ok(PathBuf::from(decoded))
}

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    Some(out)
}

/// The lexical absolute path for `raw` in `cwd` (steps 1–4), touching nothing.
pub fn absolute_path(env: &dyn ExecutionEnv, cwd: &Path, raw: &str) -> Result<PathBuf, PathError> {
    let cleaned = clean_input(raw)?;
    if cleaned.is_empty() {
        return Err(PathError::Empty);
    }
    Ok(env.absolute_path(cwd, &expand(env, &cleaned)?))
}

/// Resolves `raw` for a tool call in `ctx` and applies the context's containment.
pub async fn resolve(ctx: &ToolContext, raw: &str) -> Result<ResolvedPath, PathError> {
    let result = resolve_unrecorded(ctx, raw).await;
    note_refusal(ctx, &result);
    result
}

/// A containment refusal told to the env ([`ExecutionEnv::note_refused`]), so an audit log
/// records it as refused.
fn note_refusal(ctx: &ToolContext, result: &Result<ResolvedPath, PathError>) {
    if let Err(error @ PathError::Outside(outside)) = result {
        ctx.env
            .note_refused("resolve", &outside.absolute, &error.to_string());
    }
}

async fn resolve_unrecorded(ctx: &ToolContext, raw: &str) -> Result<ResolvedPath, PathError> {
    let display = clean_input(raw)?;
    if display.is_empty() {
        return Err(PathError::Empty);
    }
    let absolute = ctx
        .env
        .absolute_path(&ctx.cwd, &expand(ctx.env.as_ref(), &display)?);
    check(ctx.env.as_ref(), &ctx.containment, display, absolute).await
}

/// Like [`resolve`], but when the exact path does not exist, also tries the macOS screenshot
/// spellings ([`read_variants`]) and uses the first that exists. For read-only tools: the
/// read-only roots ([`Containment::read_only_roots`]) count as roots.
pub async fn resolve_for_read(ctx: &ToolContext, raw: &str) -> Result<ResolvedPath, PathError> {
    let result = resolve_for_read_unrecorded(ctx, raw).await;
    note_refusal(ctx, &result);
    result
}

async fn resolve_for_read_unrecorded(
    ctx: &ToolContext,
    raw: &str,
) -> Result<ResolvedPath, PathError> {
    let display = clean_input(raw)?;
    if display.is_empty() {
        return Err(PathError::Empty);
    }
    let env = ctx.env.as_ref();
    let containment = &ctx.containment.for_reading();
    let absolute = env.absolute_path(&ctx.cwd, &expand(env, &display)?);
    // A path outside the roots is refused by `check` without being looked at.
    if !inside_roots(containment, &absolute) {
        return check(env, containment, display, absolute).await;
    }
    // The common case, an existing file, takes one env call: its realpath.
    match env.canonical_path(&absolute).await {
        Ok(canonical) => return check_canonical(containment, display, absolute, canonical),
        // Only a definite "does not exist" looks further; any other answer (an error the real
        // operation will report properly) keeps the exact path.
        Err(error) if error.kind() == ErrorKind::NotFound => {}
        Err(_) => return check(env, containment, display, absolute).await,
    }
    for variant in read_variants(&display) {
        let Ok(expanded) = expand(env, &variant) else {
            continue;
        };
        let candidate = env.absolute_path(&ctx.cwd, &expanded);
        // Never probe outside the workspace, not even for existence.
        if !inside_roots(containment, &candidate) {
            continue;
        }
        if matches!(env.exists(&candidate).await, Ok(true)) {
            return check(env, containment, variant, candidate).await;
        }
    }
    check(env, containment, display, absolute).await
}

/// Whether `path` is below one of the roots, compared as given (always true without
/// containment).
fn inside_roots(containment: &Containment, path: &Path) -> bool {
    containment.mode != ContainmentMode::Workspace
        || containment.roots.iter().any(|root| is_within(path, root))
}

/// Computes the canonical form of `absolute` and applies containment.
async fn check(
    env: &dyn ExecutionEnv,
    containment: &Containment,
    display: String,
    absolute: PathBuf,
) -> Result<ResolvedPath, PathError> {
    let absolute = through_symlinked_root(env, containment, absolute).await;
    if !inside_roots(containment, &absolute) {
        return Err(outside(
            containment,
            display,
            absolute.clone(),
            absolute,
            OutsideReason::Lexical,
        ));
    }
    let canonical = match env.canonical_path_lenient(&absolute).await {
        Ok(canonical) => canonical,
        Err(source) => {
            return Err(PathError::Env {
                path: absolute.display().to_string(),
                source,
            });
        }
    };
    check_canonical(containment, display, absolute, canonical)
}

/// A path spelled outside the roots but through a symlink to one of them (`/tmp/ws/a` with the
/// root `/private/tmp/ws`, a symlinked project directory given as `--cwd`) is the same place:
/// it is respelled with its directory resolved (`/private/tmp/ws/a`), keeping the final
/// component as written (a final symlink stays a symlink). Anything else is returned as given.
async fn through_symlinked_root(
    env: &dyn ExecutionEnv,
    containment: &Containment,
    absolute: PathBuf,
) -> PathBuf {
    if inside_roots(containment, &absolute) {
        return absolute;
    }
    let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return absolute;
    };
    match env.canonical_path_lenient(parent).await {
        Ok(real_parent) => {
            let respelled = real_parent.join(name);
            if inside_roots(containment, &respelled) {
                respelled
            } else {
                absolute
            }
        }
        Err(_) => absolute,
    }
}

/// The model-facing refusal for an env error that is a containment refusal of a confined view
/// ([`ToolContext::files`]): a symlink swapped in after the path was checked, or a path the
/// check did not catch. `None` for every other error.
pub fn refusal(display: &str, error: &EnvError) -> Option<ToolError> {
    (error.kind() == ErrorKind::OutsideRoots).then(|| {
        ToolError::failed(format!(
            "Access denied: {display:?}: {}. Only paths inside the workspace may be used.",
            error.message()
        ))
    })
}

/// Applies containment to the realpath of a lexically contained `absolute`.
fn check_canonical(
    containment: &Containment,
    display: String,
    absolute: PathBuf,
    canonical: PathBuf,
) -> Result<ResolvedPath, PathError> {
    if !inside_roots(containment, &canonical) {
        return Err(outside(
            containment,
            display,
            absolute,
            canonical,
            OutsideReason::Symlink,
        ));
    }
    Ok(ResolvedPath {
        display,
        absolute,
        canonical,
    })
}

fn outside(
    containment: &Containment,
    display: String,
    absolute: PathBuf,
    canonical: PathBuf,
    reason: OutsideReason,
) -> PathError {
    PathError::Outside(Box::new(OutsideRoots {
        display,
        absolute,
        canonical,
        roots: containment.roots.clone(),
        reason,
    }))
}

/// The macOS screenshot spellings of `path`, in the order they are tried, without duplicates
/// and without `path` itself: narrow no-break space (U+202F) before `AM.`/`PM.`
/// (case-insensitive), the NFD form, `'` as U+2019, then the combinations.
pub fn read_variants(path: &str) -> Vec<String> {
    let am_pm = with_narrow_space_before_meridiem(path);
    let nfd = |s: &str| s.nfd().collect::<String>();
    let curly = |s: &str| s.replace('\'', "\u{2019}");
    let candidates = [
        am_pm.clone(),
        nfd(path),
        curly(path),
        nfd(&curly(path)),
        nfd(&am_pm),
        curly(&am_pm),
        nfd(&curly(&am_pm)),
    ];
    let mut out: Vec<String> = Vec::new();
    for candidate in candidates {
        if candidate != path && !out.contains(&candidate) {
            out.push(candidate);
        }
    }
    out
}

/// `"… 10.15.32 AM.png"` → `"… 10.15.32\u{202F}AM.png"` (also `PM`, any case).
fn with_narrow_space_before_meridiem(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 4);
    let mut rest = path;
    while let Some(index) = rest.find(' ') {
        let after = &rest[index + 1..];
        let is_meridiem = after.len() >= 3
            && after.is_char_boundary(3)
            && (after[..2].eq_ignore_ascii_case("am") || after[..2].eq_ignore_ascii_case("pm"))
            && after.as_bytes()[2] == b'.';
        out.push_str(&rest[..index]);
        out.push(if is_meridiem { '\u{202F}' } else { ' ' });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_within_compares_whole_components() {
        let root = Path::new("/ws");
        assert!(is_within(Path::new("/ws"), root));
        assert!(is_within(Path::new("/ws/a/b"), root));
        assert!(!is_within(Path::new("/ws_evil"), root));
        assert!(!is_within(Path::new("/ws-x/a"), root));
        assert!(!is_within(Path::new("/ws.bak"), root));
        assert!(!is_within(Path::new("/"), root));
    }

    #[test]
    fn unicode_spaces_become_ascii_and_one_at_sign_is_stripped() {
        let raw = "@my\u{00A0}file\u{2003}x\u{202F}y\u{205F}z\u{3000}.txt";
        assert_eq!(clean_input(raw).unwrap(), "my file x y z .txt");
        assert_eq!(clean_input("@@a").unwrap(), "@a");
        assert_eq!(clean_input("a@b").unwrap(), "a@b");
    }

    #[test]
    fn a_nul_byte_is_refused() {
        let error = clean_input("a\0b").unwrap_err();
        assert!(matches!(error, PathError::Nul { .. }));
        assert!(error.to_string().contains("a\\\\0b"), "{error}");
    }

    #[test]
    fn file_urls_become_paths() {
        let env = jig_env_memory::MemoryEnv::new();
        assert_eq!(
            expand(&env, "file:///tmp/a%20b.txt").unwrap(),
            PathBuf::from("/tmp/a b.txt")
        );
        assert_eq!(
            expand(&env, "file://localhost/x").unwrap(),
            PathBuf::from("/x")
        );
        assert!(matches!(
            expand(&env, "file://evil.com/x"),
            Err(PathError::InvalidUrl { .. })
        ));
        assert!(matches!(
            expand(&env, "file:///a%zz"),
            Err(PathError::InvalidUrl { .. })
        ));
        assert!(matches!(
            expand(&env, "file:///a%00b"),
            Err(PathError::Nul { .. })
        ));
    }

    #[test]
    fn screenshot_variants_cover_meridiem_nfd_and_curly_quotes() {
        let name = "Capture d'écran 2024-01-01 at 10.15.32 AM.png";
        let variants = read_variants(name);
        assert_eq!(
            variants[0],
            "Capture d'écran 2024-01-01 at 10.15.32\u{202F}AM.png"
        );
        assert_eq!(variants[1], name.nfd().collect::<String>());
        assert_eq!(
            variants[2],
            "Capture d\u{2019}écran 2024-01-01 at 10.15.32 AM.png"
        );
        assert!(
            variants.contains(
                &"Capture d\u{2019}écran 2024-01-01 at 10.15.32\u{202F}AM.png"
                    .nfd()
                    .collect::<String>()
            )
        );
        assert_eq!(variants.len(), 7);
        assert!(read_variants("plain.txt").is_empty());
        assert_eq!(
            with_narrow_space_before_meridiem("a pm.x b"),
            "a\u{202F}pm.x b"
        );
    }
}
