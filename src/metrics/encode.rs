//! The scrape: [`Figures`] encoded as OpenMetrics families (a prometheus-client
//! `Collector`, asked once per scrape).

use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::encoding::{
    DescriptorEncoder, EncodeLabel, EncodeLabelSet, LabelSetEncoder, NoLabelSet,
};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

use super::figures::{DriveFigures, Figures, RunState, LATENCY_BUCKETS_S};

type Labels = Vec<(String, String)>;

/// The directions of the counters and rates: reads, writes and trims (an fio job file's
/// trim jobs, a `rw: trim` step; 0 in a run without any).
const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

fn drive_labels(i: usize, d: &DriveFigures) -> Labels {
    vec![
        ("drive".into(), i.to_string()),
        ("label".into(), d.label.clone()),
        ("host".into(), d.host.clone()),
    ]
}

fn with(mut l: Labels, k: &str, v: &str) -> Labels {
    l.push((k.into(), v.into()));
    l
}

/// The collector the registry asks at each scrape.
#[derive(Debug, Clone)]
pub struct Collector(pub Arc<Mutex<Figures>>);

/// Labels as every sample carries them: each value printable ([`crate::ostext::printable`]),
/// since a label, host, model or preset name may hold control characters, which
/// prometheus-client passes on as they are (it escapes only `\`, `"` and newline).
struct Shown<'a>(&'a Labels);

impl EncodeLabelSet for Shown<'_> {
    fn encode(&self, enc: &mut LabelSetEncoder) -> std::fmt::Result {
        for (k, v) in self.0 {
            (k.as_str(), crate::ostext::printable(v).as_ref()).encode(enc.encode_label())?;
        }
        Ok(())
    }
}

/// One family: its descriptor, then a sample per (labels, value) the closure yields.
fn family<V>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    ty: MetricType,
    samples: Vec<(Labels, V)>,
    mut put: impl FnMut(prometheus_client::encoding::MetricEncoder, &V) -> std::fmt::Result,
) -> std::fmt::Result {
    if samples.is_empty() {
        return Ok(());
    }
    let mut m = enc.encode_descriptor(name, help, unit, ty)?;
    for (labels, v) in &samples {
        put(m.encode_family(&Shown(labels))?, v)?;
    }
    Ok(())
}

fn gauge(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    samples: Vec<(Labels, f64)>,
) -> std::fmt::Result {
    family(
        enc,
        name,
        help,
        unit,
        MetricType::Gauge,
        samples,
        |mut m, v| m.encode_gauge(v),
    )
}

fn counter(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    samples: Vec<(Labels, u64)>,
) -> std::fmt::Result {
    family(
        enc,
        name,
        help,
        unit,
        MetricType::Counter,
        samples,
        |mut m, v| m.encode_counter::<NoLabelSet, _, u64>(v, None),
    )
}

fn per_direction<'a, V>(
    fig: &'a Figures,
    value: impl Fn(&'a DriveFigures, usize) -> V,
) -> Vec<(Labels, V)> {
    let mut out = Vec::new();
    for (i, d) in fig.drives.iter().enumerate() {
        for (k, dir) in DIRECTIONS.iter().enumerate() {
            out.push((with(drive_labels(i, d), "direction", dir), value(d, k)));
        }
    }
    out
}

fn per_drive<V>(fig: &Figures, value: impl Fn(&DriveFigures) -> Option<V>) -> Vec<(Labels, V)> {
    fig.drives
        .iter()
        .enumerate()
        .filter_map(|(i, d)| value(d).map(|v| (drive_labels(i, d), v)))
        .collect()
}

fn io(enc: &mut DescriptorEncoder, fig: &Figures) -> std::fmt::Result {
    counter(
        enc,
        "drivescope_ios",
        "I/Os completed since the run started",
        None,
        per_direction(fig, |d, k| d.ios[k]),
    )?;
    counter(
        enc,
        "drivescope_io",
        "bytes moved since the run started",
        Some(&Unit::Bytes),
        per_direction(fig, |d, k| d.bytes[k]),
    )?;
    counter(
        enc,
        "drivescope_io_errors",
        "I/Os that failed since the run started",
        None,
        per_drive(fig, |d| Some(d.errors)),
    )?;
    gauge(
        enc,
        "drivescope_iops",
        "I/Os per second over the latest interval",
        None,
        per_direction(fig, |d, k| d.iops[k]),
    )?;
    gauge(
        enc,
        "drivescope_bandwidth_bytes_per_second",
        "bytes per second over the latest interval",
        None,
        per_direction(fig, |d, k| d.bandwidth[k]),
    )?;
    gauge(
        enc,
        "drivescope_target_iops",
        "the paced rate the current step asks for",
        None,
        per_drive(fig, |d| d.target_iops),
    )
}

fn latency(enc: &mut DescriptorEncoder, fig: &Figures) -> std::fmt::Result {
    let hists = per_direction(fig, |d, k| &d.latency[k]);
    let mut m = enc.encode_descriptor(
        "drivescope_latency",
        "latency of every I/O (response latency when paced), from the interval histograms",
        Some(&Unit::Seconds),
        MetricType::Histogram,
    )?;
    for (labels, c) in &hists {
        let mut buckets: Vec<(f64, u64)> = LATENCY_BUCKETS_S
            .iter()
            .zip(c.buckets.iter())
            .map(|(b, n)| (*b, *n))
            .collect();
        buckets.push((f64::INFINITY, c.buckets[LATENCY_BUCKETS_S.len()]));
        m.encode_family(&Shown(labels))?
            .encode_histogram::<NoLabelSet>(c.sum_s, c.count, &buckets, None)?;
    }
    let mut q = Vec::new();
    for (i, d) in fig.drives.iter().enumerate() {
        if let Some(l) = &d.interval_latency {
            for (name, us) in [
                ("0.5", l.p50),
                ("0.9", l.p90),
                ("0.99", l.p99),
                ("0.999", l.p99_9),
                ("0.9999", l.p99_99),
                ("1", l.max),
            ] {
                q.push((with(drive_labels(i, d), "quantile", name), us / 1e6));
            }
        }
    }
    gauge(
        enc,
        "drivescope_interval_latency",
        "the latest interval's latency percentiles",
        Some(&Unit::Seconds),
        q,
    )
}

fn smart(d: &DriveFigures) -> Option<&crate::telemetry::SmartReading> {
    d.smart.as_ref()
}

fn drive_state(enc: &mut DescriptorEncoder, fig: &Figures) -> std::fmt::Result {
    gauge(
        enc,
        "drivescope_temperature",
        "the drive's composite temperature",
        Some(&Unit::Celsius),
        per_drive(fig, |d| smart(d)?.temperature_c.map(f64::from)),
    )?;
    gauge(
        enc,
        "drivescope_temperature_known",
        "1 when the drive reports a temperature, 0 when it reports none",
        None,
        per_drive(fig, |d| {
            Some(f64::from(u8::from(
                smart(d).and_then(|s| s.temperature_c).is_some(),
            )))
        }),
    )?;
    gauge(
        enc,
        "drivescope_power_state",
        "the NVMe power state the drive is in",
        None,
        per_drive(fig, |d| smart(d)?.power_state.map(f64::from)),
    )?;
    let mut throttle = Vec::new();
    for (i, d) in fig.drives.iter().enumerate() {
        if let Some(t) = d.smart.as_ref().and_then(|s| s.thermal_throttle) {
            throttle.push((
                with(drive_labels(i, d), "level", "light"),
                u64::from(t.tmt1_seconds),
            ));
            throttle.push((
                with(drive_labels(i, d), "level", "heavy"),
                u64::from(t.tmt2_seconds),
            ));
        }
    }
    counter(
        enc,
        "drivescope_thermal_throttle",
        "seconds the drive has spent throttling \
        (NVMe thermal management temperature 1: light, 2: heavy)",
        Some(&Unit::Seconds),
        throttle,
    )?;
    gauge(
        enc,
        "drivescope_health_passed",
        "the drive's health verdict: 1 passed, 0 failed (absent: no source gave one)",
        None,
        per_drive(fig, |d| {
            smart(d)?.health.passed.map(|p| f64::from(u8::from(p)))
        }),
    )
}

fn info(enc: &mut DescriptorEncoder, fig: &Figures) -> std::fmt::Result {
    let mut drive = Vec::new();
    let mut step = Vec::new();
    for (i, d) in fig.drives.iter().enumerate() {
        if let Some(s) = &d.smart {
            let text = |v: &Option<String>| v.clone().unwrap_or_default();
            let mut l = drive_labels(i, d);
            l.push(("model".into(), text(&s.model)));
            l.push(("serial".into(), text(&s.serial)));
            l.push(("firmware".into(), text(&s.firmware)));
            drive.push((l, ()));
        }
        let mut l = drive_labels(i, d);
        l.push(("preset".into(), d.preset.clone()));
        l.push(("phase".into(), d.phase.clone()));
        l.push(("step".into(), d.step.clone()));
        step.push((l, ()));
    }
    family(
        enc,
        "drivescope_drive",
        "the drive's identity",
        None,
        MetricType::Info,
        drive,
        |mut m, ()| m.encode_info(&Labels::new()),
    )?;
    family(
        enc,
        "drivescope_step",
        "the preset, phase and step running",
        None,
        MetricType::Info,
        step,
        |mut m, ()| m.encode_info(&Labels::new()),
    )?;
    let states = RunState::ALL
        .iter()
        .map(|s| {
            (
                vec![("state".to_string(), s.word().to_string())],
                f64::from(u8::from(*s == fig.state)),
            )
        })
        .collect();
    gauge(
        enc,
        "drivescope_run_state",
        "1 for the state the run is in, 0 for the others",
        None,
        states,
    )
}

impl prometheus_client::collector::Collector for Collector {
    fn encode(&self, mut enc: DescriptorEncoder) -> std::fmt::Result {
        let fig = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        io(&mut enc, &fig)?;
        latency(&mut enc, &fig)?;
        drive_state(&mut enc, &fig)?;
        info(&mut enc, &fig)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_reach_a_scrape_printable() {
        let hostile = "a\x1b[2J\x1b]52;c;aGk=\x07\r\n\u{7f}\u{9b}\u{202e}\"\\b";
        let mut d = DriveFigures::new(hostile.into(), hostile.into());
        d.preset = hostile.into();
        d.phase = hostile.into();
        d.step = hostile.into();
        d.smart = Some(crate::telemetry::SmartReading {
            model: Some(hostile.into()),
            serial: Some(hostile.into()),
            firmware: Some(hostile.into()),
            ..Default::default()
        });
        let fig = Figures {
            drives: vec![d],
            state: RunState::Running,
        };
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(Collector(Arc::new(Mutex::new(fig)))));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encoded");
        let odd: Vec<char> = text
            .chars()
            .filter(|c| (c.is_control() && *c != '\n') || *c == '\u{202e}')
            .collect();
        assert!(odd.is_empty(), "{odd:?} in\n{text}");
        assert!(
            text.contains(r#"label="a\\e[2J\\e]52;c;aGk=\\x07\\r\\n\\x7F\\x9B\\u{202E}\"\\b""#),
            "{text}"
        );
        assert!(text.contains(r#"model="a\\e[2J"#), "{text}");
    }
}
