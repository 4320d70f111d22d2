//! Each job of a job file's step described as fio runs it ([`JobShape`]): its `rw`, a
//! mix's read share, its block sizes (one, per direction, a `bsrange`, a `bssplit`), the
//! depth fio runs it at, its engine and copies, under the name fio reports; and the jobs
//! each of fio's series (a job, or a reporting group) holds.

use super::parse::FileJob;
use crate::stats::JobShape;
use crate::units::format_size;

/// The directions a job does I/O in (0 reads, 1 writes, 2 trims), as its `rw` says.
fn directions(job: &FileJob) -> Vec<usize> {
    let rw = job.rw();
    if rw.contains("trim") {
        // trimwrite trims then writes each block.
        return if rw.contains("write") {
            vec![1, 2]
        } else {
            vec![2]
        };
    }
    let mut out = Vec::new();
    if job.reads() {
        out.push(0);
    }
    if job.writes() {
        out.push(1);
    }
    out
}

/// A direction's sizes as said: `4KiB`, a range `4KiB-512KiB`, a split `4KiB/50:64KiB/50`.
fn sizes_text(job: &FileJob, dir: usize) -> String {
    if job.get("bssplit").is_some() {
        if let Some(b) = job.block_sizes(dir != 0) {
            return b.to_string();
        }
    }
    match job.size_bounds(dir) {
        Some((lo, hi)) if lo == hi => format_size(lo),
        Some((lo, hi)) => format!("{}-{}", format_size(lo), format_size(hi)),
        None => job.get("bs").unwrap_or("?").trim().to_string(),
    }
}

/// The job's shape.
pub(super) fn job_shape(job: &FileJob) -> JobShape {
    let dirs = directions(job);
    let mut texts: Vec<String> = Vec::new();
    for d in &dirs {
        let t = sizes_text(job, *d);
        if !texts.contains(&t) {
            texts.push(t);
        }
    }
    let bounds: Vec<(u64, u64)> = dirs.iter().filter_map(|d| job.size_bounds(*d)).collect();
    let mixed = matches!(job.rw(), "rw" | "readwrite" | "randrw");
    JobShape {
        name: job.fio_name().to_string(),
        rw: job.rw().to_string(),
        rwmixread: mixed.then(|| job.rwmixread()),
        bs: texts.join(","),
        bs_min: bounds.iter().map(|b| b.0).min().unwrap_or(4096),
        bs_max: bounds.iter().map(|b| b.1).max().unwrap_or(4096),
        iodepth: job.queue_depth(),
        engine: job.engine().to_string(),
        jobs: job.threads(),
    }
}

impl super::parse::FileStep {
    /// Its jobs' shapes, in the file's order.
    pub fn shapes(&self) -> Vec<JobShape> {
        self.jobs.iter().map(job_shape).collect()
    }

    /// What the step is: its jobs summed up ([`JobShape::summary`]).
    pub fn workload_label(&self) -> String {
        JobShape::summary(&self.shapes())
    }

    /// Its jobs' names as fio reports them (`name=`, else the section's).
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.jobs.iter().map(FileJob::fio_name).collect();
        names.join(" + ")
    }
}

/// The jobs fio's series `name` holds among a step's `jobs`: the job of that name, or
/// under `group_reporting` its group (the jobs from it up to the next `new_group`).
pub(super) fn series_jobs<'a>(jobs: &'a [FileJob], name: &str) -> Vec<&'a FileJob> {
    let Some(at) = jobs.iter().position(|j| j.fio_name() == name) else {
        return Vec::new();
    };
    if !jobs[at].flag("group_reporting") {
        return vec![&jobs[at]];
    }
    let rest = jobs[at + 1..]
        .iter()
        .take_while(|j| !j.flag("new_group") && j.flag("group_reporting"));
    std::iter::once(&jobs[at]).chain(rest).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse::parse_steps;

    fn shapes(text: &str) -> Vec<JobShape> {
        parse_steps(text).unwrap()[0]
            .jobs
            .iter()
            .map(job_shape)
            .collect()
    }

    #[test]
    fn each_job_is_described_as_fio_runs_it() {
        let s = shapes(
            "[global]\nfilename=/tmp/x\n[a]\nname=reader\nrw=randread\nbs=4k\nioengine=libaio\niodepth=64\n\
             [b]\nrw=write\nbs=32k\n[c]\nrw=randrw\nrwmixread=70\nbs=4k,64k\n\
             [d]\nrw=randwrite\nblocksize_range=4k-512k\n[e]\nrw=randtrim\nbs=64k\n\
             [f]\nrw=read\nbssplit=4k/50:64k/50\nnumjobs=3\n",
        );
        let got: Vec<String> = s.iter().map(|j| format!("{} {j}", j.name)).collect();
        assert_eq!(
            got,
            [
                "reader randread 4KiB QD64×1 (libaio)",
                "b write 32KiB QD1×1 (psync)",
                "c randrw 70%read 4KiB,64KiB QD1×1 (psync)",
                "d randwrite 4KiB-512KiB QD1×1 (psync)",
                "e randtrim 64KiB QD1×1 (psync)",
                "f read 4KiB/50:64KiB/50 QD1×3 (psync)",
            ]
        );
        assert_eq!((s[3].bs_min, s[3].bs_max), (4096, 512 << 10));
        let steps = parse_steps(
            "[global]\nfilename=/tmp/x\ngroup_reporting\n[a]\n[b]\n[c]\nnew_group\n[d]\n",
        )
        .unwrap();
        let names = |n: &str| -> Vec<String> {
            series_jobs(&steps[0].jobs, n)
                .iter()
                .map(|j| j.name.clone())
                .collect()
        };
        assert_eq!(names("a"), ["a", "b"]);
        assert_eq!(names("c"), ["c", "d"]);
        assert!(names("z").is_empty());
    }
}
