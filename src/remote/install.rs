//! `drivescope host install HOST`: this running drivescope copied to a host over the same
//! ssh command a `--host` run uses, into `~/.local/bin` (or the directory named), when the
//! drivescope there is missing or of another version or protocol. The copy is written to a
//! temporary name beside its place, checked (its size, `--version` run there) and renamed
//! over the old one; a file of that name that is not a drivescope is never replaced. The
//! installed one then answers the agent's handshake, as a run would start it. The remote
//! shell's scripts are fixed text; the directory and figures travel as their arguments.

use std::fmt;
use std::process::{Command, Output, Stdio};

use thiserror::Error;

use super::host::{Host, SshCommand};
use super::link::{Link, RemoteOptions};
use super::proto::{PROTOCOL, VERSION};
use crate::host::RemoteError;

/// Where a drivescope is installed when no directory is named: relative to the remote
/// user's home (where ssh starts the remote command), the directory Debian's `~/.profile`
/// puts first on PATH, and the one a `--host` run looks in first.
pub const DEFAULT_DIR: &str = ".local/bin";

/// The directory `$1` as the remote shell resolves it: a relative one under `$HOME`.
const DIR: &str = "case $1 in /*) d=$1 ;; *) d=\"$HOME/$1\" ;; esac
f=\"${d%/}/drivescope\"
";

/// Whether a drivescope is at `$1/drivescope`: exit 10 when nothing is, 11 when what is
/// there does not answer `--version`; else `drivescope-at PATH` and its `--version` on
/// stdout.
const PROBE: &str = "[ -e \"$f\" ] || [ -L \"$f\" ] || exit 10
v=$(\"$f\" --version 2>/dev/null) || exit 11
printf 'drivescope-at %s\\n%s\\n' \"$f\" \"$v\"";

/// The copy on stdin written to `$1/.drivescope.install.PID`, its size checked against `$2`,
/// its `--version` against `drivescope $3`, then renamed to `$1/drivescope` unless a file
/// there is not a drivescope; `drivescope-at PATH` on stdout. Exits: 20 the directory, 21
/// the write or rename, 22 the size, 23 it does not run there (its words on stderr), 24 the
/// name is another program's.
const COPY: &str = "umask 022
mkdir -p -- \"$d\" || exit 20
t=\"${d%/}/.drivescope.install.$$\"
trap 'rm -f -- \"$t\"' EXIT
(set -C; cat > \"$t\") || exit 21
n=$(wc -c < \"$t\" | tr -d ' ')
[ \"$n\" = \"$2\" ] || { echo \"$n\" >&2; exit 22; }
chmod 755 -- \"$t\" || exit 21
v=$(\"$t\" --version 2>&1) || { printf '%s\\n' \"$v\" >&2; exit 23; }
[ \"$v\" = \"drivescope $3\" ] || { printf '%s\\n' \"$v\" >&2; exit 23; }
if [ -e \"$f\" ] || [ -L \"$f\" ]; then
  case $(\"$f\" --version 2>/dev/null) in \"drivescope \"*) ;; *) exit 24 ;; esac
fi
mv -f -- \"$t\" \"$f\" || exit 21
trap - EXIT
printf 'drivescope-at %s\\n' \"$f\"";

/// What `host install` was asked.
#[derive(Debug, Clone)]
pub struct InstallRequest {
    pub host: Host,
    pub ssh: SshCommand,
    /// The directory on the host; [`DEFAULT_DIR`] when `None`. A relative one is relative
    /// to the remote user's home.
    pub dir: Option<String>,
}

impl InstallRequest {
    fn dir(&self) -> &str {
        self.dir.as_deref().unwrap_or(DEFAULT_DIR)
    }

    /// The path as the user reads it (`~/` for the home).
    fn shown(&self) -> String {
        let p = format!("{}/drivescope", self.dir().trim_end_matches('/'));
        if p.starts_with('/') {
            p
        } else {
            format!("~/{p}")
        }
    }
}

/// What was at the install's path before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Missing,
    /// A drivescope of this version.
    Drivescope(String),
}

/// What `host install` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallOutcome {
    /// A drivescope of this version and protocol was there already: nothing copied.
    AlreadyThere { host: String, path: String },
    /// This drivescope was copied there; `was` what it replaced. `default_dir`: a `--host`
    /// run finds it without `--remote-drivescope`.
    Installed {
        host: String,
        path: String,
        was: Found,
        /// The protocol the replaced one spoke, when it was a drivescope of this version
        /// that spoke another.
        was_protocol: Option<u32>,
        default_dir: bool,
    },
}

impl fmt::Display for InstallOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstallOutcome::AlreadyThere { host, path } => write!(
                f,
                "{host}: drivescope {VERSION} (protocol {PROTOCOL}) is already at {path}; nothing copied"
            ),
            InstallOutcome::Installed {
                host,
                path,
                was,
                was_protocol,
                default_dir,
            } => {
                write!(
                    f,
                    "{host}: installed drivescope {VERSION} at {path} (its agent answers, protocol {PROTOCOL})"
                )?;
                match (was, was_protocol) {
                    (Found::Missing, _) => {}
                    (Found::Drivescope(v), Some(p)) => {
                        write!(f, "; replaced drivescope {v} (protocol {p})")?
                    }
                    (Found::Drivescope(v), None) => write!(f, "; replaced drivescope {v}")?,
                }
                if !default_dir {
                    write!(f, "; runs on this host need --remote-drivescope {path}")?;
                }
                Ok(())
            }
        }
    }
}

/// Why `host install` did not install.
#[derive(Debug, Error)]
pub enum InstallError {
    #[error("cannot read this drivescope's own binary ({path}): {source}")]
    Exe {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Remote(Box<RemoteError>),
    #[error("host {host}: {path} is there and is not a drivescope (it does not answer `--version` as one); not replaced: remove it or install with --dir")]
    NotDrivescope { host: String, path: String },
    #[error("host {host}: cannot {what} {dir}{}", said(.why))]
    Write {
        host: String,
        what: &'static str,
        dir: String,
        why: String,
    },
    #[error("host {host}: the copy arrived short ({got} of {sent} bytes); nothing replaced")]
    Short {
        host: String,
        sent: u64,
        got: String,
    },
    #[error("host {host}: the copy does not run there{}; nothing replaced (another architecture or C library, or a noexec directory: try --dir)", said(.why))]
    DoesNotRun { host: String, why: String },
    #[error("host {host}: installed at {path}, but its agent does not answer: {source}")]
    NoAnswer {
        host: String,
        path: String,
        source: Box<RemoteError>,
    },
}

fn said(why: &str) -> String {
    if why.is_empty() {
        String::new()
    } else {
        format!(": {why}")
    }
}

impl From<RemoteError> for InstallError {
    fn from(e: RemoteError) -> InstallError {
        InstallError::Remote(Box::new(e))
    }
}

/// One fixed script run by `sh` on the host after [`DIR`] (`$1` the directory), with `args`
/// and `stdin` its input.
fn remote_sh(
    req: &InstallRequest,
    script: &str,
    args: &[&str],
    stdin: Stdio,
) -> Result<Output, RemoteError> {
    let script = format!("{DIR}{script}");
    let mut words = vec!["sh", "-c", &script, "sh", req.dir()];
    words.extend_from_slice(args);
    let mut cmd: Command = req.ssh.command(&req.host, &words);
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = cmd.output().map_err(|source| RemoteError::Spawn {
        host: req.host.to_string(),
        program: req.ssh.words()[0].clone(),
        source,
    })?;
    if out.status.code() == Some(255) || out.status.code().is_none() {
        return Err(RemoteError::Unreachable {
            host: req.host.to_string(),
            why: last_words(&out.stderr),
        });
    }
    Ok(out)
}

/// The last line that says something.
fn last_words(b: &[u8]) -> String {
    String::from_utf8_lossy(b)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The path a script printed (`drivescope-at PATH`; a login banner before it is skipped).
fn path_said(stdout: &[u8]) -> Option<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("drivescope-at ").map(str::to_string))
}

/// What is at the install's path and the path as the host resolved it: `None` for a file
/// that is not a drivescope.
fn probe(req: &InstallRequest) -> Result<Option<(Found, Option<String>)>, RemoteError> {
    let out = remote_sh(req, PROBE, &[], Stdio::null())?;
    Ok(match out.status.code() {
        Some(10) => Some((Found::Missing, None)),
        Some(0) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("drivescope ").map(str::to_string))
            .map(|v| (Found::Drivescope(v), path_said(&out.stdout))),
        _ => None,
    })
}

/// The agent at `program` on the host, as a run starts it: its handshake's version, or why
/// not.
fn handshake(req: &InstallRequest, program: String) -> Result<String, RemoteError> {
    let opts = RemoteOptions {
        ssh: req.ssh.clone(),
        program: Some(program),
        agent_metrics: None,
    };
    Link::open(&req.host, &opts, None).map(|l| l.agent_version.clone())
}

/// Copies this drivescope to the host unless the same one is there.
pub fn install(req: &InstallRequest) -> Result<InstallOutcome, InstallError> {
    let host = req.host.to_string();
    let path = req.shown();
    let (found, at) = probe(req)?.ok_or_else(|| InstallError::NotDrivescope {
        host: host.clone(),
        path: path.clone(),
    })?;
    let mut was_protocol = None;
    if let (Found::Drivescope(v), Some(at)) = (&found, at) {
        if v == VERSION {
            match handshake(req, at) {
                Ok(v) if v == VERSION => return Ok(InstallOutcome::AlreadyThere { host, path }),
                Ok(_) => {}
                Err(RemoteError::Version { their_protocol, .. }) => {
                    was_protocol = Some(their_protocol)
                }
                // Its agent does not answer: a broken copy of this version, replaced.
                Err(e) if !matches!(e, RemoteError::Spawn { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    let at = copy(req)?;
    match handshake(req, at) {
        Ok(_) => Ok(InstallOutcome::Installed {
            host,
            path,
            was: found,
            was_protocol,
            default_dir: req.dir.is_none(),
        }),
        Err(source) => Err(InstallError::NoAnswer {
            host,
            path,
            source: Box::new(source),
        }),
    }
}

/// This binary, streamed to the host's copy script: the path it was installed at.
fn copy(req: &InstallRequest) -> Result<String, InstallError> {
    let host = req.host.to_string();
    let exe_err = |path: String| move |source| InstallError::Exe { path, source };
    let exe = std::env::current_exe().map_err(exe_err("?".into()))?;
    let shown_exe = crate::ostext::escaped(exe.as_os_str()).to_string();
    let file = std::fs::File::open(&exe).map_err(exe_err(shown_exe.clone()))?;
    let size = file.metadata().map_err(exe_err(shown_exe))?.len();
    let out = remote_sh(req, COPY, &[&size.to_string(), VERSION], Stdio::from(file))?;
    let why = last_words(&out.stderr);
    let write = |what| InstallError::Write {
        host: host.clone(),
        what,
        dir: req.dir().to_string(),
        why: why.clone(),
    };
    match out.status.code() {
        Some(0) => path_said(&out.stdout).ok_or_else(|| write("write into")),
        Some(20) => Err(write("make the directory")),
        Some(22) => Err(InstallError::Short {
            host: host.clone(),
            sent: size,
            got: why.clone(),
        }),
        Some(23) => Err(InstallError::DoesNotRun {
            host: host.clone(),
            why: why.clone(),
        }),
        Some(24) => Err(InstallError::NotDrivescope {
            host: host.clone(),
            path: req.shown(),
        }),
        _ => Err(write("write into")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(dir: Option<&str>) -> InstallRequest {
        InstallRequest {
            host: "h".parse().unwrap(),
            ssh: SshCommand::default(),
            dir: dir.map(str::to_string),
        }
    }

    #[test]
    fn paths_are_shown_from_the_remote_home() {
        assert_eq!(req(None).shown(), "~/.local/bin/drivescope");
        assert_eq!(req(Some("/opt/ds/")).shown(), "/opt/ds/drivescope");
        assert_eq!(req(Some("bin")).shown(), "~/bin/drivescope");
    }
}
