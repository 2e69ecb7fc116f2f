//! The one error type of the simulator crate. Every failure that comes from the outside world (a
//! file, a table, a download, a brain file) names the file or address and says what is wrong in
//! words a user can act on; nothing in `sim` panics on bad input.

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
