//! Why each job of a job file's step ended, from fio's figures and the job's own options
//! ([`JobEnd`]), and the step's end that follows from its jobs'.

use super::json::Series;
use super::parse::FileJob;
use crate::outcome::EndedBy;
use crate::stats::JobEnd;

/// Whether a job that ran `ran_ms` ran all of its `runtime` (fio's measure), less fio's
/// clock's slack: a tick of its 1 ms timer or 1%, the larger.
pub(super) fn ran_all(ran_ms: f64, runtime: std::time::Duration) -> bool {
    let d_ms = runtime.as_secs_f64() * 1000.0;
    ran_ms >= d_ms - (d_ms * 0.01).max(1.0)
}

/// Why a series ended: fio's error; the user's stop; its `runtime` when it is time based
/// or ran all of it; its `io_size` or `number_ios` when it has one; else its `size`. None
/// when its job is not known (a series is named by its group's first job).
pub(super) fn job_end(job: Option<&FileJob>, s: &Series, stopped: bool) -> Option<JobEnd> {
    if s.error != 0 {
        return Some(JobEnd::Error);
    }
    if stopped {
        return Some(JobEnd::Stopped);
    }
    let job = job?;
    if let Some(runtime) = job.runtime() {
        if job.flag("time_based") || ran_all(s.runtime_ms, runtime) {
            return Some(JobEnd::Runtime);
        }
    }
    if job.get("io_size").is_some() || job.get("number_ios").is_some() {
        return Some(JobEnd::IoSize);
    }
    Some(JobEnd::Size)
}

/// Each series' end, its job found by name among the step's `jobs` (the job text read
/// again as it was when the file was read; none when it no longer reads).
pub(super) fn job_ends(jobs: &[FileJob], last: &[Series], step: &EndedBy) -> Vec<Option<JobEnd>> {
    let stopped = !step.is_own_end() && !step.is_device_failure();
    last.iter()
        .map(|s| job_end(jobs.iter().find(|j| j.fio_name() == s.name), s, stopped))
        .collect()
}

/// The step's end from its jobs': by its time when one of them ran out of time, by its
/// data when every one did its amount; else as it was (`step`: fio's errors, the user's
/// stop, or a job that is not known).
pub(super) fn step_end(step: EndedBy, ends: &[Option<JobEnd>]) -> EndedBy {
    if !step.is_own_end() || ends.is_empty() {
        return step;
    }
    if ends.contains(&Some(JobEnd::Runtime)) {
        EndedBy::Duration
    } else if ends
        .iter()
        .all(|e| matches!(e, Some(JobEnd::Size | JobEnd::IoSize)))
    {
        EndedBy::Bytes
    } else {
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse::parse_steps;

    fn job(text: &str) -> FileJob {
        parse_steps(&format!("[j]\nioengine=null\n{text}"))
            .unwrap()
            .remove(0)
            .jobs
            .remove(0)
    }

    fn ran(ms: f64) -> Series {
        Series {
            runtime_ms: ms,
            ..Series::default()
        }
    }

    #[test]
    fn a_job_ends_by_what_fio_stopped_it_on() {
        let end = |text: &str, ms: f64| job_end(Some(&job(text)), &ran(ms), false);
        // A size-bound job under a runtime cap it did not reach: its size.
        assert_eq!(end("size=1m\nruntime=30\n", 500.0), Some(JobEnd::Size));
        assert_eq!(end("size=1m\nruntime=1\n", 999.5), Some(JobEnd::Runtime));
        assert_eq!(
            end("size=1m\ntime_based\nruntime=1\n", 10.0),
            Some(JobEnd::Runtime)
        );
        // time_based=0 is not time based.
        assert_eq!(
            end("size=1m\ntime_based=0\nruntime=30\n", 10.0),
            Some(JobEnd::Size)
        );
        assert_eq!(end("size=1m\nio_limit=64k\n", 10.0), Some(JobEnd::IoSize));
        assert_eq!(end("size=1m\nnumber_ios=3\n", 10.0), Some(JobEnd::IoSize));
        let failed = Series {
            error: 5,
            ..ran(10.0)
        };
        assert_eq!(job_end(None, &failed, true), Some(JobEnd::Error));
        assert_eq!(job_end(None, &ran(1.0), true), Some(JobEnd::Stopped));
        assert_eq!(job_end(None, &ran(1.0), false), None);
    }

    #[test]
    fn a_step_ends_by_its_time_when_a_job_ran_out_of_it_else_by_its_data() {
        let (size, time) = (Some(JobEnd::Size), Some(JobEnd::Runtime));
        assert_eq!(step_end(EndedBy::Duration, &[size, size]), EndedBy::Bytes);
        assert_eq!(step_end(EndedBy::Bytes, &[size, time]), EndedBy::Duration);
        assert_eq!(step_end(EndedBy::Bytes, &[size, None]), EndedBy::Bytes);
        assert_eq!(step_end(EndedBy::Stopped, &[time]), EndedBy::Stopped);
    }
}
