//! The next I/O of a job: direction (by `rwmixread`), block size (by `bssplit` weights) and
//! offset — uniform and aligned over the whole region for random patterns; for sequential
//! ones, a stream per direction over the job's own disjoint slice of the region, wrapping at
//! its end.

use super::rng::Rng;
use crate::workload::JobRegion;
use crate::workload::{Region, Workload};

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextIo {
    pub offset: u64,
    pub len: u32,
    pub write: bool,
}

/// Per-job generator of I/Os.
#[derive(Debug, Clone)]
pub struct IoGen {
    rng: Rng,
    random: bool,
    read_pct: u64,
    /// Cumulative weights (out of 100) and sizes.
    sizes: Vec<(u64, u32)>,
    align: u64,
    region: Region,
    /// Sequential: the job's slice and a position per direction.
    slice: Region,
    pos: [u64; 2],
    /// Random, zoned access: cumulative shares of the I/Os (out of 100) and their ranges.
    zones: Vec<(u64, Region)>,
}

impl IoGen {
    /// `align` is the offset alignment in bytes (the smallest block size, itself a
    /// multiple of the target's logical block size).
    pub fn new(w: &Workload, job: usize, align: u64) -> Self {
        let jobs = u64::from(w.jobs.max(1));
        let slice_len = (w.region.len / jobs / align) * align;
        let slice = if w.job_region == JobRegion::Slice && slice_len >= w.bs.max() {
            Region {
                offset: w.region.offset + job as u64 * slice_len,
                len: slice_len,
            }
        } else {
            w.region
        };
        let mut cum = 0;
        let sizes =
            w.bs.split
                .iter()
                .map(|&(bs, wt)| {
                    cum += wt;
                    (bs, cum)
                })
                .collect();
        IoGen {
            rng: Rng::new(w.seed ^ (job as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            random: w.rw.is_random(),
            read_pct: u64::from(w.rw.read_percent(w.rwmixread)),
            sizes,
            align: align.max(1),
            region: w.region,
            slice,
            pos: [slice.offset; 2],
            zones: access_zones(w, align.max(1)),
        }
    }

    #[inline]
    fn pick_len(&mut self) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0].0;
        }
        let r = self.rng.below(100) as u32;
        for &(bs, cum) in &self.sizes {
            if r < cum {
                return bs;
            }
        }
        self.sizes[self.sizes.len() - 1].0
    }

    /// The range a random I/O of `len` bytes falls in: by the zoned shares, or the region.
    #[inline]
    fn access_range(&mut self, len: u64) -> Region {
        if self.zones.is_empty() {
            return self.region;
        }
        let r = self.rng.below(100);
        let zone = self
            .zones
            .iter()
            .find(|z| r < z.0)
            .map_or(self.region, |z| z.1);
        if zone.len >= len {
            zone
        } else {
            self.region
        }
    }

    #[inline]
    pub fn next_io(&mut self) -> NextIo {
        let write = match self.read_pct {
            100 => false,
            0 => true,
            p => self.rng.below(100) >= p,
        };
        let len = self.pick_len();
        let offset = if self.random {
            let region = self.access_range(len);
            let span = region.len.saturating_sub(len) / self.align + 1;
            region.offset + self.rng.below(span) * self.align
        } else {
            let d = usize::from(write);
            let end = self.slice.offset + self.slice.len;
            if self.pos[d] + len > end {
                self.pos[d] = self.slice.offset;
            }
            let o = self.pos[d];
            self.pos[d] += len;
            o
        };
        NextIo {
            offset,
            len: len as u32,
            write,
        }
    }
}

/// A zoned access's ranges over `w`'s region, each aligned to `align`: the cumulative share
/// of the I/Os it ends at, and its range; empty for uniform access.
fn access_zones(w: &Workload, align: u64) -> Vec<(u64, Region)> {
    let crate::workload::Access::Zoned(ranges) = &w.access else {
        return Vec::new();
    };
    let at = |pct: u64| {
        let off = (u128::from(w.region.len) * u128::from(pct) / 100) as u64;
        w.region.offset + off / align * align
    };
    let (mut io, mut range) = (0u64, 0u64);
    ranges
        .iter()
        .map(|&(i, r)| {
            let start = at(range);
            io += u64::from(i);
            range += u64::from(r);
            let end = if range >= 100 {
                w.region.offset + w.region.len
            } else {
                at(range)
            };
            (
                io,
                Region {
                    offset: start,
                    len: end - start,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Arrivals, BlockSizes, RwMode};

    fn wl(rw: RwMode, bs: BlockSizes, jobs: u32, len: u64) -> Workload {
        Workload {
            rw,
            rwmixread: 70,
            bs,
            iodepth: 8,
            jobs,
            region: Region {
                offset: 1 << 20,
                len,
            },
            rate_iops: None,
            arrivals: Arrivals::Uniform,
            seed: 42,
            direct: true,
            job_region: Default::default(),
            access: Default::default(),
        }
    }

    #[test]
    fn random_offsets_are_aligned_uniform_and_inside() {
        let w = wl(RwMode::RandRw, BlockSizes::single(4096), 1, 64 << 20);
        let mut g = IoGen::new(&w, 0, 4096);
        let mut buckets = [0u32; 16];
        let mut reads = 0;
        for _ in 0..160_000 {
            let io = g.next_io();
            assert_eq!(io.offset % 4096, 0);
            assert!(io.offset >= 1 << 20 && io.offset + 4096 <= (1 << 20) + (64 << 20));
            buckets[((io.offset - (1 << 20)) / (4 << 20)) as usize] += 1;
            reads += u32::from(!io.write);
        }
        for b in buckets {
            assert!((9_000..11_000).contains(&b), "{buckets:?}");
        }
        assert!((110_000..114_000).contains(&reads), "70% reads: {reads}");
    }

    #[test]
    fn zoned_access_puts_each_share_of_the_ios_on_its_range() {
        // SNIA PTS ECW's access range: 50% of the I/Os on the first 5% of the region, 30%
        // on the next 15%, 20% on the last 80%; uniform inside each range.
        let mut w = wl(RwMode::RandWrite, BlockSizes::single(4096), 1, 100 << 20);
        w.access = "zoned:50/5:30/15:20/80".parse().unwrap();
        let mut g = IoGen::new(&w, 0, 4096);
        let (start, len) = (1u64 << 20, 100u64 << 20);
        let mut ranges = [0u32; 3];
        let mut halves = [0u32; 2];
        let n = 1_000_000;
        for _ in 0..n {
            let io = g.next_io();
            assert_eq!(io.offset % 4096, 0);
            assert!(io.offset >= start && io.offset + 4096 <= start + len);
            let pct = (io.offset - start) * 100 / len;
            ranges[match pct {
                0..5 => 0,
                5..20 => 1,
                _ => 2,
            }] += 1;
            if pct < 5 {
                halves[usize::from((io.offset - start) * 200 / len >= 5)] += 1;
            }
        }
        for (got, want) in ranges.iter().zip([0.5, 0.3, 0.2]) {
            let share = f64::from(*got) / f64::from(n);
            assert!((share - want).abs() < 0.003, "{ranges:?}");
        }
        let half = f64::from(halves[0]) / f64::from(halves[0] + halves[1]);
        assert!((half - 0.5).abs() < 0.005, "{halves:?}");
    }

    #[test]
    fn sequential_jobs_get_disjoint_slices_and_wrap() {
        let w = wl(RwMode::Write, BlockSizes::single(128 << 10), 4, 4 << 20);
        let mut seen = Vec::new();
        for job in 0..4 {
            let mut g = IoGen::new(&w, job, 4096);
            let first = g.next_io();
            assert_eq!(first.offset, (1 << 20) + job as u64 * (1 << 20));
            assert!(first.write);
            for _ in 0..7 {
                g.next_io();
            }
            // 8 × 128 KiB = the 1 MiB slice: the ninth wraps to the slice start.
            assert_eq!(g.next_io().offset, first.offset);
            seen.push(first.offset);
        }
        seen.dedup();
        assert_eq!(seen.len(), 4);
    }

    #[test]
    fn bssplit_weights_are_followed() {
        let bs = BlockSizes::parse_split("4k/60:8k/30:64k/10").unwrap();
        let w = wl(RwMode::RandRead, bs, 1, 64 << 20);
        let mut g = IoGen::new(&w, 0, 4096);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..100_000 {
            let io = g.next_io();
            assert!(io.offset + u64::from(io.len) <= (1 << 20) + (64 << 20));
            *counts.entry(io.len).or_insert(0u32) += 1;
        }
        assert!((59_000..61_000).contains(&counts[&4096]), "{counts:?}");
        assert!((29_000..31_000).contains(&counts[&8192]), "{counts:?}");
        assert!((9_300..10_700).contains(&counts[&65536]), "{counts:?}");
    }

    #[test]
    fn jobs_over_the_whole_region_each_start_at_its_start() {
        let mut w = wl(RwMode::Read, BlockSizes::single(128 << 10), 4, 4 << 20);
        w.job_region = JobRegion::Whole;
        for job in 0..4 {
            let mut g = IoGen::new(&w, job, 4096);
            let offsets: Vec<u64> = (0..40).map(|_| g.next_io().offset).collect();
            assert_eq!(offsets[0], w.region.offset, "job {job}");
            // 32 x 128 KiB = the 4 MiB region: the 33rd wraps to its start.
            assert_eq!(offsets[32], w.region.offset, "job {job}");
        }
    }
}
