//! The job shapes an fio older than 3.42 deadlocks on while it gives the status dumps
//! drivescope's live figures need ([`Hang`]): refused before fio starts, in words that say
//! which fio fixes it and which option to drop.

use std::time::Duration;

use super::error::FioError;
use super::file::JobFile;
use super::parse::{refuse, FileJob};
use super::refusal::{Hang, Refusal};

/// The first fio that no longer deadlocks on these shapes.
const FIXED: (u32, u32) = (3, 42);

/// fio's version (`fio-3.33`) as (major, minor); none when it does not read so.
fn version_of(v: &str) -> Option<(u32, u32)> {
    let rest = v.strip_prefix("fio-")?;
    let mut parts = rest.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().ok()?))
}

/// The longest a job's byte `rate` (each of its read, write, trim parts that is given)
/// makes one of its blocks wait, with the rate as written.
fn slowest_block(job: &FileJob) -> Option<(String, f64)> {
    let rate = job.get("rate")?;
    let bs = job.bs().unwrap_or(4096) as f64;
    super::value::rounds(rate.trim())
        .into_iter()
        .filter_map(|r| super::value::decimal(r, job.kb_base())?.bytes())
        .filter(|r| *r > 0)
        .map(|r| bs / r as f64)
        .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))))
        .map(|s| (rate.to_string(), s))
}

/// Refuses a job file with a shape `job.version`'s fio deadlocks on under a status
/// interval of `interval` (fio older than 3.42): `io_submit_mode=offload`, or `exitall`
/// (`exit_what`) in a file where a byte `rate` makes one block wait longer than an
/// interval.
pub fn refuse_hangs(job: &JobFile, interval: Duration) -> Result<(), FioError> {
    if version_of(&job.version).is_none_or(|v| v >= FIXED) {
        return Ok(());
    }
    let hangs = |j: &FileJob, hang: Hang| {
        refuse(
            j,
            Refusal::FioHangs {
                version: job.version.clone(),
                hang,
            },
        )
    };
    let jobs: Vec<&FileJob> = job.steps.iter().flat_map(|s| &s.jobs).collect();
    if let Some(j) = jobs.iter().find(|j| {
        j.get("io_submit_mode")
            .is_some_and(|m| m.trim() == "offload")
    }) {
        return Err(hangs(j, Hang::Offload));
    }
    let exits = jobs
        .iter()
        .any(|j| j.flag("exitall") || j.get("exit_what").is_some());
    let interval_s = super::child::dump_every(interval).as_secs_f64();
    if let Some((j, (rate, block_s))) = jobs
        .iter()
        .filter_map(|j| Some((*j, slowest_block(j)?)))
        .find(|(_, (_, s))| exits && *s > interval_s)
    {
        return Err(hangs(
            j,
            Hang::ExitallSlowRate {
                rate,
                block_ms: (block_s * 1000.0).round() as u64,
                interval_ms: (interval_s * 1000.0).round() as u64,
            },
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse::parse_steps;

    fn file(text: &str, version: &str) -> JobFile {
        JobFile {
            path: "x.fio".into(),
            text: text.into(),
            version: version.into(),
            steps: parse_steps(text).unwrap(),
            targets: Vec::new(),
            logs: Vec::new(),
        }
    }

    #[test]
    fn fio_before_3_42_is_refused_the_shapes_it_deadlocks_on() {
        let half = Duration::from_millis(500);
        let offload = "[a]\nioengine=null\nsize=1m\nio_submit_mode=offload\n";
        let err = refuse_hangs(&file(offload, "fio-3.33"), half).unwrap_err();
        assert!(matches!(
            &err,
            FioError::Unsafe {
                line: Some(1),
                why: Refusal::FioHangs {
                    hang: Hang::Offload,
                    ..
                },
                ..
            }
        ));
        let text = err.to_string();
        assert!(
            text.contains("fio-3.33 deadlocks on io_submit_mode=offload")
                && text.contains("fio 3.42 or later")
                && text.contains("736c2015"),
            "{text}"
        );
        assert!(refuse_hangs(&file(offload, "fio-3.42"), half).is_ok());
        assert!(refuse_hangs(&file(offload, "fio-4.0"), half).is_ok());
        // exitall with 4k blocks at 300 bytes/s: 13.7 s a block.
        let slow = "[global]\nexitall=1\nioengine=null\nsize=1m\n[a]\nrw=read\n\
                    [b]\nrw=randrw\nrate=300,300,300\n";
        let err = refuse_hangs(&file(slow, "fio-3.33"), half).unwrap_err();
        match &err {
            FioError::Unsafe {
                job: Some(j),
                why:
                    Refusal::FioHangs {
                        hang: Hang::ExitallSlowRate { block_ms, .. },
                        ..
                    },
                ..
            } => assert!(j == "b" && *block_ms == 13_653, "{err}"),
            e => panic!("{e}"),
        }
        // A rate that moves a block within an interval, or no exitall: no deadlock.
        let fast = slow.replace("rate=300,300,300", "rate=1m");
        assert!(refuse_hangs(&file(&fast, "fio-3.33"), half).is_ok());
        let no_exit = slow.replace("exitall=1\n", "");
        assert!(refuse_hangs(&file(&no_exit, "fio-3.33"), half).is_ok());
        assert!(refuse_hangs(&file(slow, "fio-3.42"), half).is_ok());
    }
}
