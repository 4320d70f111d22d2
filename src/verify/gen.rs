//! Write generations: a block's generation cycles through 1..=63 (0 is "never written"),
//! so the generation map keeps one byte per block with two bits free (a write may have
//! been in flight; one is in flight now). Ordering is circular: a generation up to 31 steps
//! behind another is older.

use serde::Serialize;

/// A block's write generation, 1..=63.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Generation(u8);

/// Generations in the cycle.
pub const CYCLE: u8 = 63;
/// How far behind (or ahead of) another a generation still counts as older (newer).
pub const HORIZON: u8 = 31;

impl Generation {
    /// The first generation written to a block.
    pub const FIRST: Generation = Generation(1);

    /// `Some` for 1..=63.
    pub fn new(v: u8) -> Option<Generation> {
        (1..=CYCLE).contains(&v).then_some(Generation(v))
    }

    pub fn get(self) -> u8 {
        self.0
    }

    /// The generation after this one (63 wraps to 1).
    pub fn next(self) -> Generation {
        Generation(self.0 % CYCLE + 1)
    }

    /// The generation before this one (1 wraps to 63).
    pub fn prev(self) -> Generation {
        Generation((self.0 + CYCLE - 2) % CYCLE + 1)
    }

    /// Steps from `self` forward to `to`, 0..=62.
    pub fn steps_to(self, to: Generation) -> u8 {
        (to.0 + CYCLE - self.0) % CYCLE
    }

    /// `self` is older than `than` (1..=HORIZON steps behind it).
    pub fn is_older_than(self, than: Generation) -> bool {
        (1..=HORIZON).contains(&self.steps_to(than))
    }
}

impl std::fmt::Display for Generation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_through_1_to_63() {
        let mut g = Generation::FIRST;
        for _ in 0..CYCLE {
            assert!(Generation::new(g.get()).is_some());
            assert_eq!(g.next().prev(), g);
            g = g.next();
        }
        assert_eq!(g, Generation::FIRST, "63 steps come back to the start");
        assert_eq!(Generation::new(63).unwrap().next(), Generation::FIRST);
        assert_eq!(Generation::FIRST.prev().get(), 63);
        assert!(Generation::new(0).is_none() && Generation::new(64).is_none());
    }

    #[test]
    fn older_is_circular() {
        let g = |v| Generation::new(v).unwrap();
        assert!(g(5).is_older_than(g(6)));
        assert!(g(63).is_older_than(g(1)));
        assert!(!g(6).is_older_than(g(5)));
        assert!(!g(5).is_older_than(g(5)));
        assert!(g(1).is_older_than(g(32)));
        assert!(!g(1).is_older_than(g(33)), "past the horizon it is newer");
    }
}
