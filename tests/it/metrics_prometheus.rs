//! `--metrics`: a real Prometheus server (Debian's `prometheus`) on 127.0.0.1 scrapes a
//! running drivescope every second, and its HTTP API then holds the run's per-drive series;
//! the figures it scraped agree with the run's own summary. The Grafana dashboard shipped in
//! `assets/grafana/` uses only metrics drivescope serves.

use std::io::{BufRead, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;

/// One GET, the body (the connection closed by the server).
fn get(addr: SocketAddr, path: &str) -> Option<String> {
    let mut c = TcpStream::connect(addr).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut s = String::new();
    c.read_to_string(&mut s).ok()?;
    let body = s.split_once("\r\n\r\n")?.1.to_string();
    // Prometheus answers in chunks: the JSON is the longest line of the body.
    Some(
        body.lines()
            .max_by_key(|l| l.len())
            .unwrap_or_default()
            .to_string(),
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The API's result vector for `query`, empty until it has one.
fn query(prom: SocketAddr, q: &str) -> Vec<Value> {
    let path = format!("/api/v1/query?query={}", urlencode(q));
    get(prom, &path)
        .and_then(|b| serde_json::from_str::<Value>(&b).ok())
        .and_then(|v| v["data"]["result"].as_array().cloned())
        .unwrap_or_default()
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn value(v: &Value) -> f64 {
    v["value"][1].as_str().unwrap().parse().unwrap()
}

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_prometheus(dir: &Path, target: SocketAddr) -> Option<(Killed, SocketAddr)> {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  \
             - job_name: drivescope\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    Some((Killed(child), SocketAddr::from(([127, 0, 0, 1], port))))
}

/// Waits until `check` holds, for at most `limit`: a bound on a failure, not a pace.
fn until<T>(limit: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(v) = check() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    None
}

#[test]
fn prometheus_scrapes_a_running_drivescope_and_holds_its_series() {
    if Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        skip!(
            Tool,
            "prometheus is not installed (.ci/run installs Debian's package)"
        );
    }
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("t.bin");
    let (mut run, out, addr, first) = run_with_metrics(
        home.path(),
        &[
            "--target",
            target.to_str().unwrap(),
            "--size",
            "32M",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "4",
        ],
    );
    let mut interval_reads = first["read"]["ios"].as_u64().unwrap();

    let prom_dir = tempfile::tempdir().unwrap();
    let Some((_prom, prom)) = start_prometheus(prom_dir.path(), addr) else {
        skip!(Tool, "prometheus would not start");
    };
    let iops = until(Duration::from_secs(120), || {
        query(prom, "drivescope_iops{direction=\"read\"} > 0")
            .into_iter()
            .next()
    })
    .expect("Prometheus holds drivescope_iops");
    assert_eq!(iops["metric"]["drive"], "0");
    assert_eq!(iops["metric"]["label"], target.to_str().unwrap());
    assert_eq!(iops["metric"]["job"], "drivescope");
    // Latency as a histogram: p99 over the scrapes, within 10 µs..10 s.
    let p99 = until(Duration::from_secs(60), || {
        query(
            prom,
            "histogram_quantile(0.99, rate(drivescope_latency_seconds_bucket{direction=\"read\"}[10s]))",
        )
        .into_iter()
        .find(|v| value(v).is_finite() && value(v) > 0.0)
    })
    .expect("a p99 from the scraped histogram");
    assert!(value(&p99) > 1e-6 && value(&p99) < 10.0, "{p99}");
    // Temperature: a file on this machine's disk reports none, and the series says so.
    let known = until(Duration::from_secs(30), || {
        query(prom, "drivescope_temperature_known")
            .into_iter()
            .next()
    })
    .expect("drivescope_temperature_known");
    let temps = query(prom, "drivescope_temperature_celsius");
    assert_eq!(value(&known) == 1.0, !temps.is_empty(), "{known} {temps:?}");
    let state = query(prom, "drivescope_run_state{state=\"running\"}");
    assert_eq!(value(&state[0]), 1.0);

    // Stop the run; what Prometheus last scraped is at most the run's total and a fair
    // share of it.
    let scraped = value(
        &query(
            prom,
            "max_over_time(drivescope_ios_total{direction=\"read\"}[10m])",
        )[0],
    );
    // SAFETY: signalling the child this test started and still owns.
    unsafe { libc::kill(run.0.id() as i32, libc::SIGINT) };
    // The rest of the stream: every interval's reads, to the summary.
    for line in out.iter() {
        let v: Value = serde_json::from_str(&line).unwrap_or_default();
        if v["type"] == "interval" {
            interval_reads += v["read"]["ios"].as_u64().unwrap();
        }
    }
    let _ = run.0.wait();
    assert!(
        scraped > 0.0 && scraped <= interval_reads as f64,
        "Prometheus scraped {scraped} reads of the run's {interval_reads}"
    );
}

/// Every metric the Grafana dashboard's queries name is one drivescope serves: a run's
/// figures with a drive's SMART reading (a real smartctl output) encoded as a scrape.
#[test]
fn the_grafana_dashboard_uses_only_metrics_drivescope_serves() {
    use drivescope::metrics::{encode_text, DriveFigures, Figures};
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/grafana/drivescope.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let mut d = DriveFigures::new("nvme0n1".into(), "lab1".into());
    d.smart = Some(
        drivescope::telemetry::smartctl::decode_file(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/smartctl/nvme_micron_7450_MTFDKCC3T2TFS.json"
        )))
        .unwrap(),
    );
    // The power state and throttle counters come from nvme-cli's Get Features and SMART
    // log on a real controller (tests/qemu), not from this smartctl output.
    if let Some(s) = &mut d.smart {
        s.power_state = Some(0);
        s.thermal_throttle = Some(drivescope::telemetry::ThermalThrottle {
            tmt1_seconds: 3,
            ..Default::default()
        });
    }
    d.target_iops = Some(1000.0);
    d.interval_latency = Some(Default::default());
    let text = encode_text(&Figures {
        drives: vec![d],
        ..Default::default()
    });
    let served: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .collect();
    let mut used = Vec::new();
    for panel in dash["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().unwrap() {
            let expr = t["expr"].as_str().unwrap();
            let mut rest = expr;
            while let Some(i) = rest.find("drivescope_") {
                let name: String = rest[i..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                rest = &rest[i + name.len()..];
                used.push(name);
            }
        }
    }
    assert!(used.len() >= 10, "{used:?}");
    for name in &used {
        assert!(
            served.contains(name.as_str()),
            "{name} is not served:\n{text}"
        );
    }
}

/// A headless JSON run of `args` (after `run`) for 10 minutes, serving its metrics on a
/// loopback port of its own, once its first interval is out: the run, its stdout lines from
/// there, where it serves and that interval.
fn run_with_metrics(
    home: &Path,
    args: &[&str],
) -> (Killed, std::sync::mpsc::Receiver<String>, SocketAddr, Value) {
    let mut all = vec![
        "run",
        "--duration",
        "10m",
        "--json",
        "--metrics",
        "127.0.0.1:0",
    ];
    all.extend_from_slice(args);
    let mut child = common::spawn(home, &all);
    // Where it listens: the line on stderr (the rest drained on a thread of its own).
    let err = child.stderr.take().unwrap();
    let mut lines = std::io::BufReader::new(err).lines();
    let addr: SocketAddr = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            l.strip_prefix("drivescope: metrics on http://")
                .and_then(|r| r.strip_suffix("/metrics"))
                .map(|a| a.parse().unwrap())
        })
        .expect("the metrics address on stderr");
    std::thread::spawn(move || lines.for_each(drop));
    assert!(addr.ip().is_loopback());
    let out = common::lines_of(&mut child);
    let run = Killed(child);
    let first = common::wait_for_line(&out, "interval", Duration::from_secs(120));
    (run, out, addr, first)
}

/// One scrape of `/metrics`: the whole answer (status line first), and how long it took.
fn scrape(addr: SocketAddr) -> (String, Duration) {
    let t = Instant::now();
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(c, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut s = String::new();
    let _ = c.read_to_string(&mut s);
    (s, t.elapsed())
}

/// Whether the server has closed `c` (a read sees the end, or a reset), without waiting.
fn closed(c: &mut TcpStream) -> bool {
    c.set_nonblocking(true).unwrap();
    let mut b = [0u8; 256];
    let gone = loop {
        match c.read(&mut b) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    c.set_nonblocking(false).unwrap();
    gone
}

/// 50 clients that send a byte a second (one would hold a server that reads a connection at
/// a time for ever) do not delay a scrape: it is answered before any of them could have
/// reached its deadline, and each of them is closed at its deadline, not before. Past
/// `MAX_CONNECTIONS` silent connections a new one is refused at once, and once they go the
/// endpoint serves again.
#[test]
fn slow_clients_do_not_delay_a_scrape_and_a_flood_does_not_stop_the_endpoint() {
    use drivescope::metrics::{MAX_CONNECTIONS, REQUEST_DEADLINE};
    let home = tempfile::tempdir().unwrap();
    let (_run, out, addr, _) =
        run_with_metrics(home.path(), &["--engine", "nop", "--rate-iops", "100"]);
    std::thread::spawn(move || out.iter().for_each(drop));
    let (unloaded, _) = scrape(addr);
    assert!(unloaded.starts_with("HTTP/1.1 200"), "{unloaded}");

    // 50 slow clients, each sending its request a byte a second (the pace is the workload's,
    // not a wait for a state).
    let request = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    let first_connect = Instant::now();
    let mut slow: Vec<(TcpStream, Instant, Option<Instant>)> = (0..50)
        .map(|_| {
            let at = Instant::now();
            (TcpStream::connect(addr).unwrap(), at, None)
        })
        .collect();
    for (c, _, _) in &mut slow {
        c.write_all(&request[..1]).unwrap();
    }
    std::thread::sleep(Duration::from_secs(1));
    for (c, _, _) in &mut slow {
        c.write_all(&request[1..2]).unwrap();
    }
    let (loaded, took) = scrape(addr);
    let answered = Instant::now();
    assert!(loaded.starts_with("HTTP/1.1 200"), "{loaded}");
    assert!(
        answered < first_connect + REQUEST_DEADLINE,
        "the scrape took {took:?} and ended {:?} after the first slow client connected: \
         it waited for a slow client's deadline ({REQUEST_DEADLINE:?})",
        answered - first_connect
    );
    // The slow clients go on, a byte a second, until the server closes each: at its
    // deadline (never before it: the deadline runs from the accept, after the connect), and
    // within a generous bound after it (a byte a second never runs a per-read timeout out).
    let mut sent = 2;
    let limit = Instant::now() + REQUEST_DEADLINE + Duration::from_secs(60);
    while slow.iter().any(|s| s.2.is_none()) && Instant::now() < limit {
        std::thread::sleep(Duration::from_secs(1));
        for (c, _, closed_at) in slow.iter_mut().filter(|s| s.2.is_none()) {
            if closed(c) || c.write_all(&request[sent..sent + 1]).is_err() {
                *closed_at = Some(Instant::now());
            }
        }
        sent = (sent + 1).min(request.len() - 5);
    }
    for (i, (_, connected, closed_at)) in slow.iter().enumerate() {
        let closed_at = closed_at.unwrap_or_else(|| {
            panic!("slow client {i} still open {REQUEST_DEADLINE:?} + 60 s after it began")
        });
        assert!(
            closed_at >= *connected + REQUEST_DEADLINE,
            "slow client {i} closed {:?} after it connected, before its deadline",
            closed_at - *connected
        );
    }
    drop(slow);

    // A flood: every slot held by a silent connection, then more. Accepts are in order, so
    // the ones past MAX_CONNECTIONS find every slot taken: a 503 at once, long before the
    // silent ones' deadline.
    let flood_start = Instant::now();
    let silent: Vec<TcpStream> = (0..MAX_CONNECTIONS)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    for i in 0..10 {
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut s = String::new();
        let _ = c.read_to_string(&mut s);
        assert!(
            s.starts_with("HTTP/1.1 503"),
            "connection {}: {s:?}",
            MAX_CONNECTIONS + i + 1
        );
    }
    assert!(
        flood_start.elapsed() < REQUEST_DEADLINE,
        "the refusals took {:?}",
        flood_start.elapsed()
    );
    // The silent ones close: their slots free, the endpoint serves again.
    drop(silent);
    let served = until(Duration::from_secs(60), || {
        let (s, _) = scrape(addr);
        s.starts_with("HTTP/1.1 200").then_some(s)
    });
    assert!(served.is_some(), "no scrape served after the flood");
}
