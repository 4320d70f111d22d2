//! SNIA DIRTH's operating points, picked from the last round of a threads x queue depth
//! matrix as ADATA's implementation (`BlockStorageTestDirth.php`, Test Flow 5) picks
//! them: the combinations whose mean response time is under 5 ms; max, the most IOPS
//! among them; mid, the one whose IOPS are closest to the mean of their most and least
//! (the least's on a tie, else the first in run order); min, 1 thread x QD 1 (here the
//! least outstanding I/O the matrix ran).

use serde::{Deserialize, Serialize};

pub use crate::preset::model::OperatingPoint;

/// Mean response times at or above this leave a combination out of max and mid, µs.
pub const MAX_MEAN_RESPONSE_US: f64 = 5000.0;

/// Where a phase's threads x queue depth come from: `point` of phase `phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapeFrom {
    pub phase: usize,
    pub point: OperatingPoint,
}

/// One combination's figures in its latest round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapePoint {
    pub jobs: u32,
    pub iodepth: u32,
    pub iops: f64,
    pub mean_us: f64,
}

/// Figures of one (jobs, iodepth) combination.
pub trait Shaped {
    fn shape(&self) -> (u32, u32);
}

impl Shaped for ShapePoint {
    fn shape(&self) -> (u32, u32) {
        (self.jobs, self.iodepth)
    }
}

/// Keeps `p` as its combination's latest figures (a later round replaces an earlier).
pub fn keep_latest<T: Shaped>(points: &mut Vec<T>, p: T) {
    match points.iter_mut().find(|o| o.shape() == p.shape()) {
        Some(o) => *o = p,
        None => points.push(p),
    }
}

/// The (jobs, iodepth) of operating point `which` among `points` (run order); `None`
/// when there are none, or none under [`MAX_MEAN_RESPONSE_US`] for max and mid.
pub fn pick(points: &[ShapePoint], which: OperatingPoint) -> Option<(u32, u32)> {
    let shape = |p: &ShapePoint| (p.jobs, p.iodepth);
    if which == OperatingPoint::Min {
        return points
            .iter()
            .min_by_key(|p| u64::from(p.jobs) * u64::from(p.iodepth))
            .map(shape);
    }
    let ok: Vec<&ShapePoint> = points
        .iter()
        .filter(|p| p.mean_us < MAX_MEAN_RESPONSE_US)
        .collect();
    // The first of equal maxima, as PHP's array_search(max()) finds it.
    let most = ok
        .iter()
        .copied()
        .reduce(|a, b| if b.iops > a.iops { b } else { a })?;
    if which == OperatingPoint::Max {
        return Some(shape(most));
    }
    let least = ok
        .iter()
        .copied()
        .reduce(|a, b| if b.iops < a.iops { b } else { a })?;
    let mean = (most.iops + least.iops) / 2.0;
    let mut mid = least;
    let mut best = (mean - least.iops).abs();
    for p in ok {
        let d = (mean - p.iops).abs();
        if d < best {
            best = d;
            mid = p;
        }
    }
    Some(shape(mid))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(jobs: u32, iodepth: u32, iops: f64, mean_us: f64) -> ShapePoint {
        ShapePoint {
            jobs,
            iodepth,
            iops,
            mean_us,
        }
    }

    #[test]
    fn max_mid_min_as_adata_picks_them() {
        let pts = [
            // Most IOPS but 6 ms: left out of max and mid.
            p(32, 32, 300e3, 6000.0),
            p(32, 8, 250e3, 1000.0),
            p(8, 8, 160e3, 400.0),
            p(8, 1, 120e3, 70.0),
            p(1, 1, 10e3, 100.0),
        ];
        assert_eq!(pick(&pts, OperatingPoint::Max), Some((32, 8)));
        // Mean of 250k and 10k: 130k; 120k is closest.
        assert_eq!(pick(&pts, OperatingPoint::Mid), Some((8, 1)));
        assert_eq!(pick(&pts, OperatingPoint::Min), Some((1, 1)));
        // None under 5 ms: no max nor mid; min still.
        let slow = [p(32, 32, 1e3, 9000.0), p(1, 1, 10.0, 8000.0)];
        assert_eq!(pick(&slow, OperatingPoint::Max), None);
        assert_eq!(pick(&slow, OperatingPoint::Mid), None);
        assert_eq!(pick(&slow, OperatingPoint::Min), Some((1, 1)));
        assert_eq!(pick(&[], OperatingPoint::Min), None);
    }

    #[test]
    fn a_later_round_replaces_a_combinations_figures() {
        let mut v = Vec::new();
        keep_latest(&mut v, p(1, 1, 1.0, 1.0));
        keep_latest(&mut v, p(2, 1, 2.0, 1.0));
        keep_latest(&mut v, p(1, 1, 3.0, 1.0));
        assert_eq!(v, [p(1, 1, 3.0, 1.0), p(2, 1, 2.0, 1.0)]);
    }
}
