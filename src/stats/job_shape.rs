//! One fio job's shape as it ran (its pattern, mix, block sizes, depth, engine and copies,
//! under the name fio reports), and the honest summary of a step's jobs: one shape when
//! they all share it, the list of them when they are few, else how many shapes there are.
//! Never a mix that did not run.

use serde::{Deserialize, Serialize};

/// One job of an fio job file, as fio runs it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobShape {
    /// fio's job name (`name=`, else its section), as fio's JSON names it.
    pub name: String,
    /// fio's `rw` (`randread`, `write`, `randrw`, `trim`, `trimwrite`, ...).
    pub rw: String,
    /// The read share of a mix (`rw`, `randrw`), percent; none for one direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwmixread: Option<u8>,
    /// Its block sizes as drivescope says them: `4KiB`, `4KiB,64KiB` (reads, writes), a
    /// range `4KiB-512KiB`, a split `4KiB/50:64KiB/50`.
    pub bs: String,
    /// The smallest and largest I/O it makes in the directions it does.
    pub bs_min: u64,
    pub bs_max: u64,
    /// The queue depth fio runs it at (1 on a synchronous engine).
    pub iodepth: u32,
    pub engine: String,
    /// Its copies (`numjobs`).
    pub jobs: u32,
}

impl JobShape {
    /// The shape without its name: what tells one job's workload from another's.
    fn key(&self) -> (&str, Option<u8>, &str, u32, &str) {
        (
            &self.rw,
            self.rwmixread,
            &self.bs,
            self.iodepth,
            &self.engine,
        )
    }

    /// `randrw 70%read 4KiB QD8`: the pattern, a mix's read share, sizes and depth.
    pub fn workload(&self) -> String {
        let mix = self
            .rwmixread
            .map(|r| format!(" {r}%read"))
            .unwrap_or_default();
        format!("{}{mix} {} QD{}", self.rw, self.bs, self.iodepth)
    }

    /// The summary of a step's jobs: `randread 4KiB QD64×4` when they share a shape; up to
    /// [`LISTED`] shapes listed (`2 jobs: write 128KiB QD1×1, randread 4KiB QD64×1`); else
    /// `mixed: 5 shapes, 7 jobs`.
    pub fn summary(jobs: &[JobShape]) -> String {
        let mut shapes: Vec<(&JobShape, u32)> = Vec::new();
        for j in jobs {
            match shapes.iter_mut().find(|(s, _)| s.key() == j.key()) {
                Some((_, n)) => *n += j.jobs,
                None => shapes.push((j, j.jobs)),
            }
        }
        let threads: u32 = jobs.iter().map(|j| j.jobs).sum();
        let one = |(s, n): &(&JobShape, u32)| format!("{}×{n}", s.workload());
        match shapes.len() {
            0 => "no job".to_string(),
            1 => one(&shapes[0]),
            k if k <= LISTED => {
                let list: Vec<String> = shapes.iter().map(one).collect();
                format!("{} jobs: {}", jobs.len(), list.join(", "))
            }
            k => format!("mixed: {k} shapes, {threads} jobs"),
        }
    }
}

/// The most shapes a summary lists.
pub const LISTED: usize = 4;

impl std::fmt::Display for JobShape {
    /// `randread 4KiB QD64×2 (libaio)`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{} ({})", self.workload(), self.jobs, self.engine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, rw: &str, mix: Option<u8>, bs: &str, qd: u32, n: u32) -> JobShape {
        JobShape {
            name: name.into(),
            rw: rw.into(),
            rwmixread: mix,
            bs: bs.into(),
            bs_min: 4096,
            bs_max: 4096,
            iodepth: qd,
            engine: "libaio".into(),
            jobs: n,
        }
    }

    #[test]
    fn a_steps_jobs_are_summed_up_without_a_mix_that_did_not_run() {
        let a = job("a", "randread", None, "4KiB", 64, 2);
        let b = job("b", "randread", None, "4KiB", 64, 1);
        assert_eq!(JobShape::summary(&[a.clone(), b]), "randread 4KiB QD64×3");
        let w = job("w", "write", None, "128KiB", 64, 1);
        let m = job("m", "randrw", Some(70), "4KiB", 1, 1);
        let t = job("t", "randtrim", None, "4KiB", 1, 1);
        assert_eq!(
            JobShape::summary(&[a.clone(), w.clone(), m.clone(), t.clone()]),
            "4 jobs: randread 4KiB QD64×2, write 128KiB QD64×1, randrw 70%read 4KiB QD1×1, \
             randtrim 4KiB QD1×1"
        );
        let r = job("r", "read", None, "1MiB", 1, 1);
        assert_eq!(
            JobShape::summary(&[a.clone(), w, m, t, r]),
            "mixed: 5 shapes, 6 jobs"
        );
        assert_eq!(a.to_string(), "randread 4KiB QD64×2 (libaio)");
    }
}
