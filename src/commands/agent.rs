//! `drivescope agent`: serves the drivescope that started it over ssh, on stdin and stdout;
//! with `--metrics ADDR`, this host's endpoint of the drive it serves.

use std::sync::Arc;

use crate::cli::AgentArgs;
use crate::metrics::{AgentMetrics, MetricsError, MetricsServer};
use crate::remote::agent::AgentWatch;

/// Serves one controller until it says goodbye or its end of the link closes.
pub fn run(args: &AgentArgs) -> Result<(), MetricsError> {
    let watch = match &args.metrics {
        Some(addr) => {
            let m = MetricsServer::start(addr)?;
            crate::output::err_line(&format!("drivescope: metrics on http://{}/metrics", m.addr));
            Some(Arc::new(AgentMetrics::new(&m)) as Arc<dyn AgentWatch>)
        }
        None => None,
    };
    // The JSON lines go out through the one writer (a record at a time: buffered, and
    // flushed whole after each).
    let out = crate::output::Output::default().writer(crate::output::Stream::Out);
    crate::remote::agent::serve_watched(
        std::io::stdin().lock(),
        std::io::BufWriter::new(out),
        watch,
    );
    Ok(())
}
