//! What a step's engine could not use and worked around: each said to the observer once,
//! and all of them kept for the step's summary.

use crate::engine::StepObserver;

/// The notes of one step, in the order first said.
#[derive(Default)]
pub(super) struct Notes(Vec<String>);

impl Notes {
    /// Tells the observer `n` unless it was said before in this step.
    pub fn say(&mut self, n: String, obs: &mut dyn StepObserver) {
        if !self.0.contains(&n) {
            obs.note(&n);
            self.0.push(n);
        }
    }

    /// Every note, joined for the summary; `None` if there was none.
    pub fn joined(&self) -> Option<String> {
        (!self.0.is_empty()).then(|| self.0.join("; "))
    }
}
