//! Paced I/Os counted where their schedule put them: the completions of an interval whose
//! I/Os were due in an earlier one (a worker that fell behind and caught up), by the
//! interval they were due in. A step's figures count a paced I/O in the interval it was
//! due in, so a catch-up after a starved ramp or a suspension is never a rate above the
//! schedule's.

use super::counts::DirCounts;

/// Completions due in earlier intervals: (that interval's index, counts per direction:
/// read, write, trim), in no particular order, one entry per interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DueEarlier {
    by_interval: Vec<(u64, [DirCounts; 3])>,
}

impl DueEarlier {
    /// One completion of `bytes` in direction `dir` (0 read, 1 write, 2 trim), due in
    /// interval `due_in`. A new interval's entry allocates (a few per interval, at most);
    /// the next ones add to it.
    #[inline]
    pub fn count(&mut self, due_in: u64, dir: usize, bytes: u64) {
        let c = DirCounts { ios: 1, bytes };
        match self.by_interval.iter_mut().find(|(k, _)| *k == due_in) {
            Some((_, d)) => d[dir].add(&c),
            None => {
                let mut d = [DirCounts::default(); 3];
                d[dir] = c;
                self.by_interval.push((due_in, d));
            }
        }
    }

    /// Adds another worker's (or interval's) counts.
    pub fn add(&mut self, o: &DueEarlier) {
        for (k, d) in &o.by_interval {
            match self.by_interval.iter_mut().find(|(j, _)| j == k) {
                Some((_, mine)) => {
                    for (a, b) in mine.iter_mut().zip(d) {
                        a.add(b);
                    }
                }
                None => self.by_interval.push((*k, *d)),
            }
        }
    }

    /// Each interval these were due in, with its counts.
    pub fn iter(&self) -> impl Iterator<Item = &(u64, [DirCounts; 3])> {
        self.by_interval.iter()
    }

    /// All of them, per direction.
    pub fn total(&self) -> [DirCounts; 3] {
        let mut t = [DirCounts::default(); 3];
        for (_, d) in &self.by_interval {
            for (a, b) in t.iter_mut().zip(d) {
                a.add(b);
            }
        }
        t
    }

    pub fn is_empty(&self) -> bool {
        self.by_interval.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_per_interval_and_direction() {
        let mut a = DueEarlier::default();
        a.count(3, 0, 4096);
        a.count(3, 0, 4096);
        a.count(1, 1, 512);
        let mut b = DueEarlier::default();
        b.count(3, 2, 100);
        b.count(7, 0, 4096);
        a.add(&b);
        let of = |k| a.iter().find(|(j, _)| *j == k).map(|(_, d)| *d);
        assert_eq!(
            of(3).map(|d| (d[0].ios, d[0].bytes, d[2].ios)),
            Some((2, 8192, 1))
        );
        assert_eq!(of(1).map(|d| d[1].bytes), Some(512));
        assert_eq!(of(7).map(|d| d[0].ios), Some(1));
        let t = a.total();
        assert_eq!((t[0].ios, t[1].ios, t[2].ios), (3, 1, 1));
        assert!(!a.is_empty() && DueEarlier::default().is_empty());
    }
}
