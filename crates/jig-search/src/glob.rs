//! Globs that filter walk and search results (see the crate docs for their semantics).

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use jig_env::{FileKind, SearchInputError};

/// A compiled walk/search glob (see the module docs for its semantics).
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
    by_name: bool,
    directories_only: bool,
}

impl PathGlob {
    /// Compiles `glob`; `*` and `?` never match `/`, `**` matches any number of directories,
    /// `{a,b}` alternates and `[ab]` classes work as in ripgrep's globs.
    pub fn new(glob: &str) -> Result<Self, SearchInputError> {
        let mut pattern = glob.trim();
        let directories_only = pattern.len() > 1 && pattern.ends_with('/');
        if directories_only {
            pattern = pattern.trim_end_matches('/');
        }
        while let Some(rest) = pattern.strip_prefix("./") {
            pattern = rest;
        }
        let by_name = !pattern.contains('/');
        let pattern = pattern.trim_start_matches('/');
        let compiled = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|error| SearchInputError::Glob {
                glob: glob.to_owned(),
                message: error.kind().to_string(),
            })?;
        Ok(Self {
            matcher: compiled.compile_matcher(),
            by_name,
            directories_only,
        })
    }

    /// Whether the entry at `relative` (relative to the root, any depth) of `kind` matches.
    pub fn is_match(&self, relative: &Path, kind: FileKind) -> bool {
        if self.directories_only && kind != FileKind::Directory {
            return false;
        }
        if self.by_name {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_without_slash_matches_names_at_any_depth() {
        let glob = PathGlob::new("*.rs").unwrap();
        assert!(glob.is_match(Path::new("src/deep/x.rs"), FileKind::File));
        assert!(!glob.is_match(Path::new("src/x.rs.txt"), FileKind::File));
        let glob = PathGlob::new("src/*.rs").unwrap();
        assert!(glob.is_match(Path::new("src/x.rs"), FileKind::File));
        assert!(!glob.is_match(Path::new("src/a/x.rs"), FileKind::File));
        assert!(!glob.is_match(Path::new("lib/src/x.rs"), FileKind::File));
        let glob = PathGlob::new("**/*.spec.ts").unwrap();
        assert!(glob.is_match(Path::new("a.spec.ts"), FileKind::File));
        assert!(glob.is_match(Path::new("x/y/a.spec.ts"), FileKind::File));
        let glob = PathGlob::new("build/").unwrap();
        assert!(glob.is_match(Path::new("a/build"), FileKind::Directory));
        assert!(!glob.is_match(Path::new("a/build"), FileKind::File));
    }

    #[test]
    fn invalid_glob_quotes_the_glob() {
        let error = PathGlob::new("src/{a,b").unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid glob \"src/{a,b\": unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"
        );
    }
}
