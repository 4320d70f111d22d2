//! The next I/O of a job: direction (by `rwmixread`; `trimwrite` alternates a trim and a
//! write of the block it trimmed), block size (by `bssplit` weights) and offset — uniform
//! and aligned over the whole region for random patterns; for sequential ones, a stream per
//! direction over the job's own disjoint slice of the region, wrapping at its end.

use crate::engine::Rng;
use crate::workload::{JobRegion, RwMode};
use crate::workload::{Region, Workload};

/// Which way an I/O goes; its value indexes the tallies' directions (reads, writes, trims).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum IoDir {
    #[default]
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl IoDir {
    /// Its index in the per-direction counters and histograms.
    #[inline(always)]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextIo {
    pub offset: u64,
    pub len: u32,
    pub dir: IoDir,
}

impl NextIo {
    /// A write of data (not a trim).
    #[inline(always)]
    pub fn is_write(&self) -> bool {
        matches!(self.dir, IoDir::Write)
    }
}

/// How a job picks each I/O's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mix {
    /// Every I/O goes this way.
    Only(IoDir),
    /// Reads with this share in percent, the rest writes.
    Reads(u64),
    /// Trims and reads with these shares in hundredths of a percent, the rest writes.
    Shares { trim: u64, read: u64 },
    /// A trim, then a write of the block it trimmed.
    TrimWrite,
}

/// Per-job generator of I/Os.
#[derive(Debug, Clone)]
pub struct IoGen {
    rng: Rng,
    random: bool,
    mix: Mix,
    /// `trimwrite`: the write of the block just trimmed, issued next.
    pending_write: Option<NextIo>,
    /// Cumulative weights (out of 100) and sizes.
    sizes: Vec<(u64, u32)>,
    align: u64,
    region: Region,
    /// Sequential: the job's slice and a position per direction.
    slice: Region,
    pos: [u64; 3],
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
            mix: match (w.rw, w.rw.read_percent(w.rwmixread)) {
                (RwMode::TrimWrite, _) => Mix::TrimWrite,
                (rw, p) if rw.is_mixed() && w.rwmixtrim > 0 => {
                    let t = u64::from(w.rwmixtrim.min(100));
                    // Of the non-trims, the read share: (100 - t)% × p% in 1/10000.
                    Mix::Shares {
                        trim: t * 100,
                        read: (100 - t) * u64::from(p),
                    }
                }
                (rw, _) if rw.is_trim() => Mix::Only(IoDir::Trim),
                (_, 100) => Mix::Only(IoDir::Read),
                (_, 0) => Mix::Only(IoDir::Write),
                (_, p) => Mix::Reads(u64::from(p)),
            },
            pending_write: None,
            sizes,
            align: align.max(1),
            region: w.region,
            slice,
            pos: [slice.offset; 3],
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

    /// The range a random I/O of `len` bytes falls in: by the zoned shares, or the region
    /// (validate refuses a range under the largest block, so the region is a guard only).
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
        let dir = match self.mix {
            Mix::Only(d) => d,
            Mix::Reads(p) => {
                if self.rng.below(100) >= p {
                    IoDir::Write
                } else {
                    IoDir::Read
                }
            }
            Mix::Shares { trim, read } => match self.rng.below(10_000) {
                r if r < trim => IoDir::Trim,
                r if r < trim + read => IoDir::Read,
                _ => IoDir::Write,
            },
            Mix::TrimWrite => return self.trim_write(),
        };
        self.placed(dir)
    }

    /// A `trimwrite` trim was issued and its write not yet: a stopping worker issues it
    /// before it drains, so that every block trimmed is written (fio issue #2122).
    #[inline]
    pub fn holds_write(&self) -> bool {
        self.pending_write.is_some()
    }

    /// `trimwrite`'s next I/O: the write of the block trimmed last, or the next trim.
    fn trim_write(&mut self) -> NextIo {
        if let Some(w) = self.pending_write.take() {
            return w;
        }
        let trim = self.placed(IoDir::Trim);
        self.pending_write = Some(NextIo {
            dir: IoDir::Write,
            ..trim
        });
        trim
    }

    /// An I/O of direction `dir`: its size and offset. Inlined always, as `next_io` was one
    /// function before `trimwrite` (a call per I/O in a debug build otherwise).
    #[inline(always)]
    fn placed(&mut self, dir: IoDir) -> NextIo {
        let len = self.pick_len();
        let offset = if self.random {
            let region = self.access_range(len);
            let span = region.len.saturating_sub(len) / self.align + 1;
            region.offset + self.rng.below(span) * self.align
        } else {
            let d = dir.index();
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
            dir,
        }
    }
}

/// A zoned access's ranges over `w`'s region, each aligned to `align`: the cumulative share
/// of the I/Os it ends at, and its range; empty for uniform access.
pub(super) fn access_zones(w: &Workload, align: u64) -> Vec<(u64, Region)> {
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
    use crate::workload::{BlockSizes, RwMode};

    fn wl(rw: RwMode, bs: BlockSizes, jobs: u32, len: u64) -> Workload {
        Workload {
            rwmixread: 70,
            jobs,
            ..Workload::new(
                rw,
                bs,
                8,
                Region {
                    offset: 1 << 20,
                    len,
                },
                42,
            )
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
            reads += u32::from(io.dir == IoDir::Read);
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
            assert_eq!(first.dir, IoDir::Write);
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
    fn trimwrite_trims_a_block_then_writes_it_sequentially() {
        let w = wl(RwMode::TrimWrite, BlockSizes::single(64 << 10), 1, 1 << 20);
        let mut g = IoGen::new(&w, 0, 4096);
        let ios: Vec<NextIo> = (0..40).map(|_| g.next_io()).collect();
        for (k, pair) in ios.chunks(2).enumerate() {
            let at = (1 << 20) + (k as u64 % 16) * (64 << 10);
            assert_eq!(pair[0].dir, IoDir::Trim, "{k}");
            assert_eq!(pair[1].dir, IoDir::Write, "{k}");
            assert_eq!((pair[0].offset, pair[1].offset), (at, at), "{k}");
            assert_eq!(pair[0].len, pair[1].len);
        }
        let trims = RwMode::RandTrim;
        let mut g = IoGen::new(&wl(trims, BlockSizes::single(4096), 1, 1 << 20), 0, 4096);
        assert!((0..100).all(|_| g.next_io().dir == IoDir::Trim));
    }

    #[test]
    fn a_mix_with_a_trim_share_draws_each_direction_by_its_share() {
        let mut w = wl(RwMode::RandRw, BlockSizes::single(4096), 1, 1 << 30);
        (w.rwmixread, w.rwmixtrim) = (50, 20);
        let mut g = IoGen::new(&w, 0, 4096);
        let n = 200_000;
        let mut counts = [0u32; 3];
        for _ in 0..n {
            counts[g.next_io().dir.index()] += 1;
        }
        // 20% trims; the other 80% half reads, half writes: 40% each.
        let share = |d: IoDir| f64::from(counts[d.index()]) / f64::from(n) * 100.0;
        assert!((share(IoDir::Trim) - 20.0).abs() < 0.5, "{counts:?}");
        assert!((share(IoDir::Read) - 40.0).abs() < 0.5, "{counts:?}");
        assert!((share(IoDir::Write) - 40.0).abs() < 0.5, "{counts:?}");
        // Without a trim share the same mix never trims.
        w.rwmixtrim = 0;
        let mut g = IoGen::new(&w, 0, 4096);
        assert!((0..10_000).all(|_| g.next_io().dir != IoDir::Trim));
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
