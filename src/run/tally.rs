//! What a run counted as it went: steps run of steps planned, I/O errors and the first,
//! verification findings, a verify state not saved.

/// Counts kept while a run goes on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Steps that ran to a summary.
    pub steps_run: usize,
    /// Steps in the plan.
    pub steps: usize,
    /// Failed I/Os over every step.
    pub errors: u64,
    /// The first failed I/O, described.
    pub first_error: Option<String>,
    /// Verification findings over every step (`--verify`).
    pub findings: u64,
    /// The first verified step whose verify state could not be saved.
    pub verify_unsaved: Option<crate::outcome::VerifyUnsaved>,
}
