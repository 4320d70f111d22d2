//! `drivescope agent`: serves the drivescope that started it over ssh, on stdin and stdout.

/// Serves one controller until it says goodbye or its end of the link closes.
pub fn run() {
    crate::remote::agent::serve(std::io::stdin().lock(), std::io::stdout());
}
