//! The `/metrics` endpoint: a small HTTP/1.1 server on its own thread (std's TcpListener; a
//! scrape is one GET a second at most, so no HTTP crate is needed), loopback unless the user
//! names another address. Read-only: every other path or method is a 404 or a 405.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::registry::Registry;
use thiserror::Error;

use super::encode::Collector;
use super::figures::Figures;

/// Why the metrics endpoint could not start.
#[derive(Debug, Error)]
pub enum MetricsError {
    #[error("--metrics {addr}: cannot listen there: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("--metrics {0}: not an address (PORT, HOST:PORT or [IPv6]:PORT)")]
    Address(String),
}

/// The listening endpoint; the thread serving it ends with the process.
#[derive(Debug, Clone)]
pub struct MetricsServer {
    pub addr: SocketAddr,
    pub figures: Arc<Mutex<Figures>>,
}

/// `PORT` alone is loopback (127.0.0.1); `HOST:PORT` listens where it says.
fn parse_addr(s: &str) -> Result<Vec<SocketAddr>, MetricsError> {
    use std::net::ToSocketAddrs;
    let with_host = if s.parse::<u16>().is_ok() {
        format!("127.0.0.1:{s}")
    } else {
        s.to_string()
    };
    with_host
        .to_socket_addrs()
        .map(Iterator::collect)
        .map_err(|_| MetricsError::Address(s.to_string()))
}

impl MetricsServer {
    /// Listens on `addr` and serves `/metrics` from a thread of its own.
    pub fn start(addr: &str) -> Result<MetricsServer, MetricsError> {
        let addrs = parse_addr(addr)?;
        let listener = TcpListener::bind(&addrs[..]).map_err(|source| MetricsError::Bind {
            addr: addr.to_string(),
            source,
        })?;
        let bound = listener.local_addr().map_err(|source| MetricsError::Bind {
            addr: addr.to_string(),
            source,
        })?;
        let figures = Arc::new(Mutex::new(Figures::default()));
        let registry = Arc::new(registry(figures.clone()));
        std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || {
                for conn in listener.incoming().flatten() {
                    let _ = serve(conn, &registry);
                }
            })
            .map_err(|source| MetricsError::Bind {
                addr: addr.to_string(),
                source,
            })?;
        Ok(MetricsServer {
            addr: bound,
            figures,
        })
    }
}

fn registry(figures: Arc<Mutex<Figures>>) -> Registry {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Collector(figures)));
    registry
}

/// The figures as a scrape shows them (OpenMetrics text, `# EOF` last).
pub fn encode_text(figures: &Figures) -> String {
    let mut text = String::new();
    let r = registry(Arc::new(Mutex::new(figures.clone())));
    match prometheus_client::encoding::text::encode(&mut text, &r) {
        Ok(()) => text,
        Err(_) => String::new(),
    }
}

/// One request on one connection (the connection is then closed).
fn serve(conn: TcpStream, registry: &Registry) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    conn.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut request = String::new();
    reader.by_ref().take(8192).read_line(&mut request)?;
    // The headers, up to the blank line (read and dropped; bounded).
    let mut line = String::new();
    for _ in 0..100 {
        line.clear();
        if reader.by_ref().take(8192).read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
    }
    let mut words = request.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, body, kind) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => {
            let mut text = String::new();
            match prometheus_client::encoding::text::encode(&mut text, registry) {
                Ok(()) => (
                    "200 OK",
                    text,
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                ),
                Err(_) => ("500 Internal Server Error", String::new(), "text/plain"),
            }
        }
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "drivescope serves /metrics only\n".to_string(),
            "text/plain",
        ),
        _ => ("405 Method Not Allowed", String::new(), "text/plain"),
    };
    let mut w = conn;
    write!(
        w,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != "HEAD" {
        w.write_all(body.as_bytes())?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn serves_openmetrics_on_metrics_only_and_on_loopback_for_a_bare_port() {
        let m = MetricsServer::start("127.0.0.1:0").unwrap();
        assert!(m.addr.ip().is_loopback());
        {
            let mut f = m.figures.lock().unwrap();
            let mut d = super::super::DriveFigures::new("a".into(), "h".into());
            d.ios = [5, 7, 3];
            f.drives.push(d);
        }
        let r = get(m.addr, "/metrics");
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(r.contains("application/openmetrics-text"));
        assert!(
            r.contains(r#"drivescope_ios_total{drive="0",label="a",host="h",direction="write"} 7"#),
            "{r}"
        );
        assert!(
            r.contains(r#"drivescope_ios_total{drive="0",label="a",host="h",direction="trim"} 3"#),
            "{r}"
        );
        assert!(
            r.contains(r#"drivescope_run_state{state="starting"} 1"#),
            "{r}"
        );
        assert!(r.trim_end().ends_with("# EOF"));
        assert!(get(m.addr, "/").starts_with("HTTP/1.1 404"));
        assert!(matches!(parse_addr("9100").unwrap()[0], a if a.ip().is_loopback()));
        assert!(matches!(
            parse_addr("not an address"),
            Err(MetricsError::Address(_))
        ));
    }
}
