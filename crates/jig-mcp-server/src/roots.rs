//! Workspace roots: the client's `file://` roots turned into canonical directories.

use std::path::PathBuf;

use jig_env::{ExecutionEnv, FileKind};

/// The roots calls run with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RootsState {
    /// The working directory: the first root.
    pub(crate) cwd: PathBuf,
    /// Canonical root directories (containment roots).
    pub(crate) roots: Vec<PathBuf>,
    /// True while the client's roots have been asked for but not yet applied.
    pub(crate) pending: bool,
}

/// The path of a `file://` URI (`file:///a/b%20c`, `file://localhost/a`), percent-decoded, read
/// by [`jig_tool::paths::file_url_path`]. Other schemes, remote hosts and relative forms are
/// `None`.
pub fn file_uri_path(uri: &str) -> Option<PathBuf> {
    jig_tool::paths::file_url_path(uri)?.ok()
}

/// The canonical directories named by `uris`, in order and without duplicates, with the first
/// as working directory; `None` when none is usable. Unusable entries (not `file://`, missing,
/// not a directory) are logged and skipped.
pub(crate) async fn resolve_client_roots(
    env: &dyn ExecutionEnv,
    uris: &[String],
) -> Option<(PathBuf, Vec<PathBuf>)> {
    let mut roots: Vec<PathBuf> = Vec::new();
    for uri in uris {
        let Some(path) = file_uri_path(uri) else {
            tracing::warn!(%uri, "ignoring a root that is not a local file:// URI");
            continue;
        };
        let canonical = match env.canonical_path(&path).await {
            Ok(canonical) => canonical,
            Err(error) => {
                tracing::warn!(%uri, %error, "ignoring a root that cannot be resolved");
                continue;
            }
        };
        match env.stat(&canonical).await {
            Ok(info) if info.kind == FileKind::Directory => {}
            Ok(_) => {
                tracing::warn!(%uri, "ignoring a root that is not a directory");
                continue;
            }
            Err(error) => {
                tracing::warn!(%uri, %error, "ignoring a root that cannot be read");
                continue;
            }
        }
        if !roots.contains(&canonical) {
            roots.push(canonical);
        }
    }
    let cwd = roots.first()?.clone();
    Some((cwd, roots))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_file_uris() {
        assert_eq!(
            file_uri_path("file:///home/u/my%20proj"),
            Some(PathBuf::from("/home/u/my proj"))
        );
        assert_eq!(
            file_uri_path("file://localhost/srv/x"),
            Some(PathBuf::from("/srv/x"))
        );
        assert_eq!(
            file_uri_path("file:///caf%C3%A9"),
            Some(PathBuf::from("/café"))
        );
    }

    #[test]
    fn rejects_other_uris() {
        assert_eq!(file_uri_path("https://example.com/x"), None);
        assert_eq!(file_uri_path("file://otherhost/x"), None);
        assert_eq!(file_uri_path("file:///bad%zz"), None);
        assert_eq!(file_uri_path("file:///nul%00byte"), None);
        assert_eq!(file_uri_path("/plain/path"), None);
    }
}
