//! The `/metrics` endpoint: a small HTTP/1.1 server (std's TcpListener; a scrape is one GET
//! a second at most, so no HTTP crate is needed), loopback unless the user names another
//! address. Read-only: every other path or method is a 404 or a 405.
//!
//! Each connection has a thread of its own, at most [`MAX_CONNECTIONS`] at once (past that a
//! new one is answered 503 and closed at once), and a whole request must arrive within
//! [`REQUEST_DEADLINE`] of its accept (not per read: a byte a second would hold a per-read
//! timeout open for ever), and its answer must leave within as long again. A slow or silent
//! client so holds one thread for a bounded time and never delays another's scrape.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prometheus_client::registry::Registry;
use thiserror::Error;

use super::encode::Collector;
use super::figures::Figures;

/// How long a client has to send its whole request (from its accept), and then to take the
/// answer.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// Connections served at once; past this a new one is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 64;
/// The longest request head read (request line and headers); past it, a 431.
const MAX_HEAD: usize = 16 * 1024;

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

/// The listening endpoint; the threads serving it end with the process.
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
    /// Listens on `addr` and serves `/metrics`: a thread accepts, a thread per connection
    /// answers.
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
            .spawn(move || accept(&listener, &registry))
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

/// One connection counted in the open ones until it drops.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// A slot, unless [`MAX_CONNECTIONS`] are taken.
    fn take(open: &Arc<AtomicUsize>) -> Option<Slot> {
        open.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < MAX_CONNECTIONS).then_some(n + 1)
        })
        .ok()
        .map(|_| Slot(open.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The accept loop: each connection to a thread of its own while there is a slot, else a
/// 503 that cannot block (the socket non-blocking: what its buffer takes) and the close.
fn accept(listener: &TcpListener, registry: &Arc<Registry>) {
    let open = Arc::new(AtomicUsize::new(0));
    loop {
        let conn = match listener.accept() {
            Ok((conn, _)) => conn,
            // Out of descriptors or memory for a moment (EMFILE, ENOBUFS): the connection
            // stays in the backlog; a pause keeps this loop from spinning on it.
            Err(_) => {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        let accepted = Instant::now();
        let Some(slot) = Slot::take(&open) else {
            refuse(conn);
            continue;
        };
        let registry = registry.clone();
        // A thread that cannot start drops the connection (and its slot) with the closure.
        let _ = std::thread::Builder::new()
            .name("metrics-conn".into())
            .spawn(move || {
                let _slot = slot;
                let _ = serve(conn, &registry, accepted + REQUEST_DEADLINE);
            });
    }
}

/// Past [`MAX_CONNECTIONS`]: a 503, as much of it as the socket takes without waiting.
fn refuse(mut conn: TcpStream) {
    let _ = conn.set_nonblocking(true);
    let _ = conn.write_all(
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\n\
          Connection: close\r\n\r\n",
    );
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

/// The time left until `deadline`, or a timed-out error once it has passed.
fn left(deadline: Instant) -> std::io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(std::io::ErrorKind::TimedOut.into())
    } else {
        Ok(left)
    }
}

/// A request head as read.
enum Head {
    /// The request line and headers, up to the blank line.
    Complete(String),
    /// The client closed before the blank line.
    Closed,
    /// More than [`MAX_HEAD`] bytes and no blank line yet.
    TooLarge,
}

/// The request head, all of it read by `deadline` (else a timed-out error).
fn read_head(conn: &mut TcpStream, deadline: Instant) -> std::io::Result<Head> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.ends_with(b"\r\n\r\n") && !head.ends_with(b"\n\n") {
        if head.len() >= MAX_HEAD {
            return Ok(Head::TooLarge);
        }
        conn.set_read_timeout(Some(left(deadline)?))?;
        let n = match conn.read(&mut buf) {
            Ok(0) => return Ok(Head::Closed),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        head.extend_from_slice(&buf[..n]);
    }
    Ok(Head::Complete(String::from_utf8_lossy(&head).into_owned()))
}

/// Writes all of `bytes` by `deadline`.
fn write_by(conn: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        conn.set_write_timeout(Some(left(deadline)?))?;
        match conn.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One request on one connection (the connection is then closed): the whole head must
/// arrive by `deadline`, and the answer leave within [`REQUEST_DEADLINE`] after it.
fn serve(mut conn: TcpStream, registry: &Registry, deadline: Instant) -> std::io::Result<()> {
    let request = match read_head(&mut conn, deadline)? {
        Head::Complete(request) => request,
        Head::Closed => return Ok(()),
        Head::TooLarge => {
            let answer = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\
                          Connection: close\r\n\r\n";
            return write_by(
                &mut conn,
                answer.as_bytes(),
                Instant::now() + REQUEST_DEADLINE,
            );
        }
    };
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
    let mut answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if method != "HEAD" {
        answer.push_str(&body);
    }
    write_by(
        &mut conn,
        answer.as_bytes(),
        Instant::now() + REQUEST_DEADLINE,
    )
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
        assert!(get(m.addr, "/metrics?x=1").starts_with("HTTP/1.1 200"));
        assert!(matches!(parse_addr("9100").unwrap()[0], a if a.ip().is_loopback()));
        assert!(matches!(
            parse_addr("not an address"),
            Err(MetricsError::Address(_))
        ));
    }

    /// A request that arrives in pieces is answered once whole; a head past the bound is a
    /// 431, not a read without end.
    #[test]
    fn a_head_in_pieces_is_served_and_an_endless_one_refused() {
        let m = MetricsServer::start("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(m.addr).unwrap();
        for piece in ["GE", "T /metr", "ics HTTP/1.1\r\n", "Host: x\r\n", "\r\n"] {
            c.write_all(piece.as_bytes()).unwrap();
            c.flush().unwrap();
        }
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        assert!(s.starts_with("HTTP/1.1 200"), "{s}");

        // Exactly the bound, no blank line: the server reads it all (so its close is a FIN,
        // not a reset that could lose the answer) and answers.
        let mut c = TcpStream::connect(m.addr).unwrap();
        let mut head = b"GET /metrics HTTP/1.1\r\nX-Long: ".to_vec();
        head.resize(MAX_HEAD, b'a');
        c.write_all(&head).unwrap();
        let mut answer = String::new();
        let _ = c.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    }
}
