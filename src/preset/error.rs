//! Errors of loading presets: a file that cannot be read, a preset that does not parse or
//! validate (with `file:line:column`, the field path and, for a misspelt key, the nearest
//! valid one), or an id that names no preset.

use std::fmt;

use thiserror::Error;

/// Where and why a preset is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file's path, or `builtin:ID` for embedded presets.
    pub origin: String,
    /// 1-based.
    pub line: usize,
    /// 1-based.
    pub column: usize,
    /// The field path, e.g. `phases[2].workload.bs`; empty for the whole document.
    pub path: String,
    pub message: String,
    /// The nearest valid key or name, for a misspelt one.
    pub suggestion: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.origin, self.line, self.column)?;
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)?;
        if let Some(s) = &self.suggestion {
            write!(f, " (did you mean `{s}`?)")?;
        }
        Ok(())
    }
}

/// Why a preset could not be had.
#[derive(Debug, Error)]
pub enum PresetError {
    #[error(transparent)]
    Input(#[from] crate::user_file::InputError),
    #[error("{0}")]
    Invalid(Box<Diagnostic>),
    #[error("no preset '{id}'{}; known presets: {known}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    NotFound {
        id: String,
        known: String,
        suggestion: Option<String>,
    },
}

impl PresetError {
    /// The diagnostic, for an invalid preset.
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        match self {
            PresetError::Invalid(d) => Some(d),
            _ => None,
        }
    }
}
