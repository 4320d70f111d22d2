//! The 24-hour scale benchmark: records a generated session through the real
//! `SessionRecorder` (86,400 one-second intervals, a poller-shaped telemetry sample every 2 s, an hourly sweep of
//! 24 steps, an autosave every 5 intervals, a snapshot every hour), then loads it in both forms and reports it.
//! Prints peak RSS while recording, autosave costs early and late, and load and report
//! times. Numbers go in docs/PERFORMANCE.md.
//!
//! `cargo run --release --example gen_session -- [--hours 24] [--telemetry-every 2] [--snapshot-every 3600] [--out DIR]`

use std::path::PathBuf;
use std::time::{Duration, Instant};

use drivescope::report;
use drivescope::session::{
    self, DiskIdentity, DriveIdentity, RecorderOptions, SessionRecorder, SessionStart,
    SessionState, TargetInfo,
};
use drivescope::stats::{DirCounts, IntervalReport, LatHists, LatSummary, StepSummary};
use serde_yaml::Value;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn interval(rng: &mut Rng, index: u64, iops: f64, base_ns: u64) -> IntervalReport {
    let mut h = LatHists::new(false);
    // 2,000 samples per interval shape the histogram; the counts below carry the rate.
    for _ in 0..2000 {
        let tail = if rng.unit() < 0.01 { 20.0 } else { 1.0 };
        let v = (base_ns as f64 * (0.6 + rng.unit()) * tail) as u64;
        h.service[0].saturating_record(v);
    }
    let ios = (iops * (0.95 + 0.1 * rng.unit())) as u64;
    IntervalReport {
        index,
        start_s: index as f64,
        end_s: index as f64 + 1.0,
        read: DirCounts {
            ios: ios * 7 / 10,
            bytes: ios * 7 / 10 * 4096,
        },
        write: DirCounts {
            ios: ios * 3 / 10,
            bytes: ios * 3 / 10 * 4096,
        },
        read_iops: (ios * 7 / 10) as f64,
        write_iops: (ios * 3 / 10) as f64,
        read_bw_bytes: (ios * 7 / 10 * 4096) as f64,
        write_bw_bytes: (ios * 3 / 10 * 4096) as f64,
        lat_us: LatSummary::from_hist(&h.service_all()),
        hists: Some(Box::new(h)),
        ..Default::default()
    }
}

/// A sample shaped like the telemetry poller's (`TelemetrySample`: SMART reading, block
/// stat delta, host stats), so its size in memory and on disk is realistic.
fn telemetry(rng: &mut Rng, t: u64) -> Value {
    let temp = 38 + (12 * t / 86_400) + rng.next() % 2;
    let text = format!(
        "{{t: {t}, t_ns: {}, smart: {{device: /dev/nvme0, model: Generated NVMe 1TB, serial: GEN0001, \
         firmware: \"1.0\", temperature_c: {temp}, sensors_c: [{{sensor: 1, c: {temp}}}, {{sensor: 2, c: {}}}], \
         warning_temp_c: 84, critical_temp_c: 88, critical_warning: 0, available_spare: 100, \
         percentage_used: 3, data_units_read: {}, data_units_written: {}, host_read_commands: {}, \
         host_write_commands: {}, power_on_hours: {}, power_cycles: 40, unsafe_shutdowns: 2, \
         media_errors: 0, power_state: 0, power_state_max_w: 8.25, power_w: ~, \
         thermal_throttle: {{tmt1_transitions: 0, tmt2_transitions: 0, tmt1_seconds: {}, tmt2_seconds: 0}}, \
         source: nvme_admin, notes: []}}, smart_age_ms: {}, block: {{interval_s: 2.0, read_ios: {}, \
         write_ios: {}, read_bytes: {}, write_bytes: {}, read_iops: {}, write_iops: {}, \
         read_bytes_per_s: {}, write_bytes_per_s: {}, util_percent: {:.2}, in_flight: {}}}, \
         host: {{cpu_percent: {:.2}, cpus: 2, mem_used_bytes: {}, mem_total_bytes: 25276059648, \
         self_cpu_percent: {:.2}, self_rss_bytes: {}}}, notes: []}}",
        t * 1_000_000_000,
        temp + 3,
        2_000_000 + t * 200,
        1_000_000 + t * 300,
        60_000_000 + t * 49_000,
        50_000_000 + t * 70_000,
        1000 + t / 3600,
        t / 7200,
        rng.next() % 2000,
        98_000 + rng.next() % 1000,
        42_000 + rng.next() % 1000,
        401_408_000 + rng.next() % 4_000_000,
        172_032_000 + rng.next() % 4_000_000,
        49_000 + rng.next() % 500,
        21_000 + rng.next() % 500,
        200_704_000 + rng.next() % 2_000_000,
        86_016_000 + rng.next() % 2_000_000,
        90.0 + rng.unit() * 10.0,
        rng.next() % 64,
        rng.unit() * 100.0,
        4_000_000_000u64 + rng.next() % 1_000_000,
        rng.unit() * 100.0,
        40_000_000 + rng.next() % 1_000_000
    );
    serde_yaml::from_str(&text).unwrap_or(Value::Null)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let hours: u64 = get("--hours").and_then(|h| h.parse().ok()).unwrap_or(24);
    let tel_every: u64 = get("--telemetry-every")
        .and_then(|h| h.parse().ok())
        .unwrap_or(2)
        .max(1);
    // A snapshot (YAML, charts, CSV, HTML of the session so far) every N intervals, as
    // `run --snapshot-every` does; 0 for none.
    let snap_every: u64 = get("--snapshot-every")
        .and_then(|h| h.parse().ok())
        .unwrap_or(3600);
    let out = PathBuf::from(get("--out").unwrap_or_else(|| "/tmp/drivescope-gen".into()));
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("{}: {e}", out.display());
        std::process::exit(2);
    }
    let path = out.join("gen-24h.yaml");
    let seconds = hours * 3600;
    let mut rng = Rng(0x5eed);
    let start = SessionStart {
        target: TargetInfo {
            path: "/dev/nvme0n1".into(),
            kind: drivescope::session::Word::Known(drivescope::session::TargetKind::BlockDevice),
            size_bytes: 1 << 40,
            align_bytes: 512,
            host: None,
            page_cache: false,
        },
        command: Some("gen_session".into()),
        note: None,
        drive: Some(DriveIdentity {
            disks: vec![DiskIdentity {
                model: Some("Generated NVMe 1TB".into()),
                serial: Some("GEN0001".into()),
                firmware: Some("1.0".into()),
                ..DiskIdentity::default()
            }],
            ..DriveIdentity::default()
        }),
        preset: session::Document::from_yaml("{name: generated-sweep}"),
        plan: None,
        drives: Vec::new(),
    };
    let opts = RecorderOptions {
        autosave_every: Duration::from_secs(3600 * 24 * 365),
        ..RecorderOptions::default()
    };
    let mut rec = match SessionRecorder::create(&path, start, opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let t_rec = Instant::now();
    let mut autosave_times: Vec<Duration> = Vec::new();
    let steps = hours.max(1);
    let per_step = seconds / steps;
    let mut index = 0u64;
    for step in 0..steps {
        let iops = 20_000.0 + 20_000.0 * step as f64;
        rec.begin_step(format!("{}% of max", (step + 1) * 100 / steps), None, None);
        for _ in 0..per_step {
            let r = interval(&mut rng, index, iops, 80_000 + step * 5_000);
            rec.push_interval(&r);
            if index.is_multiple_of(tel_every) {
                rec.push_telemetry(telemetry(&mut rng, index));
            }
            if index % 5 == 4 {
                let t = Instant::now();
                if let Err(e) = rec.autosave() {
                    eprintln!("{e}");
                }
                autosave_times.push(t.elapsed());
                // A real run autosaves every 5 s and the disk keeps up; here autosaves
                // come much faster, so wait for the writer now and then rather than
                // measure a backlog no run has.
                if autosave_times.len().is_multiple_of(100) {
                    rec.flush();
                }
            }
            if snap_every > 0 && index > 0 && index.is_multiple_of(snap_every) {
                rec.snapshot(&out.join("snapshot"));
                for n in rec.tick() {
                    eprintln!("{n}");
                }
            }
            index += 1;
        }
        let mut s = StepSummary {
            engine: drivescope::workload::EngineKind::IoUring,
            runtime_s: per_step as f64,
            ios: (iops * per_step as f64) as u64,
            iops,
            read_iops: iops * 0.7,
            write_iops: iops * 0.3,
            read_bw_bytes: iops * 0.7 * 4096.0,
            write_bw_bytes: iops * 0.3 * 4096.0,
            target_iops: Some(iops),
            ended_by: drivescope::outcome::EndedBy::Duration,
            ..Default::default()
        };
        let base = 80.0 + step as f64 * 5.0;
        s.lat_us = LatSummary {
            samples: s.ios,
            mean: base * 1.1,
            p50: base * 1.05,
            p90: base * 1.4,
            p99: base * 1.6 * (1.0 + step as f64 / 8.0),
            p99_9: base * 18.0,
            p99_99: base * 20.0,
            max: base * 21.0,
            ..LatSummary::default()
        };
        rec.end_step(s);
        rec.push_event(
            drivescope::session::EventKind::Other("step".into()),
            format!("step {step} done"),
        );
    }
    rec.flush();
    let record_s = t_rec.elapsed().as_secs_f64();
    let rss_recording = peak_rss_kib();
    let stream_copy = out.join("gen-24h-stream.yaml");
    let _ = std::fs::copy(&path, &stream_copy);
    let n = autosave_times.len();
    let mean = |v: &[Duration]| {
        v.iter().map(Duration::as_secs_f64).sum::<f64>() / v.len().max(1) as f64 * 1e6
    };
    let first = &autosave_times[..n.min(1000)];
    let last = &autosave_times[n.saturating_sub(1000)..];
    let t_fin = Instant::now();
    let saved = rec.finalize(
        SessionState::Complete,
        &drivescope::session::RunEnd::parse("completed"),
    );
    let finalize_s = t_fin.elapsed().as_secs_f64();
    if let Err(e) = saved {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let size = |p: &PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;

    let t = Instant::now();
    let l = session::load(&path);
    let load_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let ls = session::load(&stream_copy);
    let load_stream_s = t.elapsed().as_secs_f64();
    let (Ok(l), Ok(ls)) = (l, ls) else {
        eprintln!("load failed");
        std::process::exit(1);
    };
    let t = Instant::now();
    let files = report::write_report(&l.session, &out.join("report"), &[]);
    let report_s = t.elapsed().as_secs_f64();
    let html = size(&out.join("report").join("report.html"));
    println!("intervals                 {}", l.session.intervals.len());
    println!("telemetry samples         {}", l.session.telemetry.len());
    println!("steps                     {}", l.session.steps.len());
    println!(
        "stream form documents     {} ({} intervals)",
        ls.documents,
        ls.session.intervals.len()
    );
    println!("recording (in-process)    {record_s:.2} s");
    println!(
        "peak RSS while recording  {:.1} MB",
        rss_recording as f64 / 1024.0
    );
    println!("autosave mean, first 1000 {:.0} µs", mean(first));
    println!("autosave mean, last 1000  {:.0} µs", mean(last));
    println!("final save                {finalize_s:.2} s");
    println!("file size (final)         {:.1} MB", size(&path));
    println!("file size (stream)        {:.1} MB", size(&stream_copy));
    println!("load (final form)         {load_s:.2} s");
    println!("load (stream form)        {load_stream_s:.2} s");
    println!(
        "report                    {report_s:.2} s ({} files, page {html:.1} MB)",
        files.map(|f| f.len()).unwrap_or(0)
    );
    println!(
        "peak RSS at the end       {:.1} MB",
        peak_rss_kib() as f64 / 1024.0
    );
}
