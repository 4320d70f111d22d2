//! An interval's bytes, given to the I/Os fio counted in it. fio takes a status dump's
//! bytes (`io_bytes`) first and its I/O counts and latency bins later (stat.c
//! `__show_running_run_stats`: it copies each job's bytes, waits for every job to update
//! its usage, then reports), so under load a dump's bytes lag its counts, and an interval
//! differenced from two dumps could show 6,242 bytes per 4 KiB I/O and the next 3,534.
//! An interval's bytes are therefore its I/Os times their size where a direction has one
//! size (exact: they add up to fio's totals, which fio takes at one moment at the end).
//! Where it has several (a range, a split), they are fio's bytes held within its I/Os
//! times the smallest and the largest size, what is held back (or given ahead) going to
//! the next interval: those add up to fio's totals but for what the last interval's few
//! I/Os cannot hold (the bytes of I/Os fio's last status counted ahead of them; which
//! those are no dump tells, so they are not guessed).

use super::parse::FileJob;

/// The smallest and largest I/O of a series in each direction (read, write, trim), where
/// its jobs' options say them.
pub(super) type Bounds = [Option<(u64, u64)>; 3];

/// A series' bounds: its jobs' (its job, or its reporting group: `shape::series_jobs`).
/// Unknown (`None`s) when no job of the step is so named.
pub(super) fn bounds_of(jobs: &[FileJob], series: &str) -> Bounds {
    let mine = super::shape::series_jobs(jobs, series);
    let mut out: Bounds = [None; 3];
    if mine.is_empty() {
        return out;
    }
    for (dir, slot) in out.iter_mut().enumerate() {
        let each: Option<Vec<(u64, u64)>> = mine.iter().map(|j| j.size_bounds(dir)).collect();
        *slot =
            each.and_then(|b| Some((b.iter().map(|x| x.0).min()?, b.iter().map(|x| x.1).max()?)));
    }
    out
}

/// Each series' block sizes by direction, and the bytes fio counted that no interval
/// has been given yet (negative: given ahead of fio's count).
#[derive(Debug, Default)]
pub(super) struct Sizes {
    pub(super) bounds: Vec<Bounds>,
    held: Vec<[i128; 3]>,
}

impl Sizes {
    /// The bytes of series `i`'s `ios` I/Os in direction `dir`, fio having counted `bytes`
    /// since its last dump (`fresh`: its counters started again, nothing is held).
    pub(super) fn give(&mut self, i: usize, dir: usize, fresh: bool, ios: u64, bytes: u64) -> u64 {
        let Some((lo, hi)) = self.bounds.get(i).and_then(|b| b[dir]) else {
            return bytes;
        };
        if self.held.len() <= i {
            self.held.resize(i + 1, [0; 3]);
        }
        let held = &mut self.held[i][dir];
        if fresh {
            *held = 0;
        }
        let avail = *held + i128::from(bytes);
        let given = avail.clamp(
            i128::from(ios) * i128::from(lo),
            i128::from(ios) * i128::from(hi),
        );
        *held = avail - given;
        u64::try_from(given).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_follow_the_ios_within_their_sizes() {
        let mut s = Sizes {
            bounds: vec![[Some((4096, 4096)), Some((4096, 65536)), None]],
            ..Sizes::default()
        };
        // fio's bytes lag its counts: 1000 I/Os counted, 600 of them in its bytes; then
        // they catch up.
        assert_eq!(s.give(0, 0, false, 1000, 600 * 4096), 1000 * 4096);
        assert_eq!(s.give(0, 0, false, 1000, 1400 * 4096), 1000 * 4096);
        assert_eq!(s.held[0][0], 0);
        // A range: held within the smallest and largest size, the rest carried on.
        assert_eq!(s.give(0, 1, false, 10, 1_000_000), 655_360);
        assert_eq!(s.give(0, 1, false, 10, 100_000), 444_640);
        // No bounds: fio's bytes as they are.
        assert_eq!(s.give(0, 2, false, 1, 12345), 12345);
        assert_eq!(s.give(3, 0, false, 1, 7), 7);
        // A fresh start drops what was held.
        s.give(0, 0, false, 0, 4096);
        assert_eq!(s.give(0, 0, true, 1, 4096), 4096);
    }
}
