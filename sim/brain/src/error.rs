//! The brain crate's error type, and `layer_error!`, the macro each simulator crate above makes its
//! own from. Every failure that comes from the outside world (a file, a table, a download, a brain
//! file) names the file or address and says what is wrong in words a user can act on; nothing in
//! `sim` panics on bad input.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {cause}")]
    Io { path: PathBuf, cause: std::io::Error },
    /// A table (feather file) that is missing a column, has a wrong type, is damaged, ...
    #[error("{path}: {problem}")]
    Table { path: PathBuf, problem: String },
    /// A brain file that is damaged, of another version, or does not match its checksum.
    #[error("brain file {path}: {problem}")]
    BrainFile { path: PathBuf, problem: String },
    #[error("download of {url}: {problem}")]
    Download { url: String, problem: String },
    /// The tables are readable but do not make a usable brain.
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io { path: path.to_path_buf(), cause: source }
    }
    pub fn table(path: &Path, problem: impl Into<String>) -> Error {
        Error::Table { path: path.to_path_buf(), problem: problem.into() }
    }
    pub fn brain_file(path: &Path, problem: impl Into<String>) -> Error {
        Error::BrainFile { path: path.to_path_buf(), problem: problem.into() }
    }
    pub fn download(url: &str, problem: impl Into<String>) -> Error {
        Error::Download { url: url.to_string(), problem: problem.into() }
    }
}

/// The error type of a crate above this one (issue 58: each crate has its own): a file that cannot
/// be read or written (`Io`), a file or table whose contents are wrong (`Table`), input that makes
/// no sense (`Invalid`), and, shown exactly as they were, the errors of the crates below it
/// (`name(Type)`, each converted by `?`); a crate may name errors of its own first, in
/// `own { Name(Type) = "its message" }`. Also defines `Result`, and `Error::io` / `Error::table`
/// as here.
#[macro_export]
macro_rules! layer_error {
    (own { $($(#[$odoc:meta])* $own:ident($oty:ty) = $msg:literal),* $(,)? } $($(#[$doc:meta])* $below:ident($ty:ty)),* $(,)?) => {
        #[derive(Debug, thiserror::Error)]
        pub enum Error {
            #[error("{path}: {cause}")]
            Io { path: std::path::PathBuf, cause: std::io::Error },
            /// A file or table that is missing a part, has a wrong type or is damaged.
            #[error("{path}: {problem}")]
            Table { path: std::path::PathBuf, problem: String },
            /// Input (a name, a position, a request) that cannot be acted on, said in words.
            #[error("{0}")]
            Invalid(String),
            $($(#[$odoc])* #[error($msg)] $own($oty),)*
            $($(#[$doc])* #[error(transparent)] $below(#[from] $ty),)*
        }

        pub type Result<T> = std::result::Result<T, Error>;

        impl Error {
            pub fn io(path: &std::path::Path, source: std::io::Error) -> Error {
                Error::Io { path: path.to_path_buf(), cause: source }
            }
            pub fn table(path: &std::path::Path, problem: impl Into<String>) -> Error {
                Error::Table { path: path.to_path_buf(), problem: problem.into() }
            }
        }
    };
    ($($(#[$doc:meta])* $below:ident($ty:ty)),* $(,)?) => {
        $crate::layer_error! { own {} $($(#[$doc])* $below($ty)),* }
    };
}
