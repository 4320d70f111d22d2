//! A remote host as the user names it (`[USER@]HOST[:PORT]`) and the ssh command that
//! reaches it: the system's OpenSSH client (or the command `--ssh-command` or
//! `DRIVESCOPE_SSH` names, as rsync's `-e` and `GIT_SSH_COMMAND` do), in batch mode, with
//! the remote program's words quoted for the remote shell (never a string built from user
//! input: a target's name travels as data on the agent's stdin, not on the command line).

use std::fmt;
use std::process::Command;
use std::str::FromStr;

use thiserror::Error;

/// The environment variable that names the ssh command when `--ssh-command` is not given.
pub const SSH_ENV: &str = "DRIVESCOPE_SSH";

/// Why a host or ssh command cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HostError {
    #[error("host '{0}': the host name is empty")]
    Empty(String),
    #[error("host '{0}': a host or user may not start with '-' (ssh would read it as an option)")]
    Dash(String),
    #[error("host '{0}': '{1}' is not a port (1-65535)")]
    Port(String, String),
    #[error("host '{0}': spaces and control characters are not allowed in a host name")]
    Space(String),
    #[error("the ssh command is empty")]
    EmptySsh,
    #[error("the ssh command '{0}' has an unclosed quote")]
    Quote(String),
}

/// `[USER@]HOST[:PORT]`; an IPv6 address with a port is written in brackets
/// (`[::1]:2222`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Host {
    pub user: Option<String>,
    pub name: String,
    pub port: Option<u16>,
}

impl FromStr for Host {
    type Err = HostError;

    fn from_str(s: &str) -> Result<Host, HostError> {
        let bad_char = |t: &str| t.chars().any(|c| c.is_whitespace() || c.is_control());
        if bad_char(s) {
            return Err(HostError::Space(s.into()));
        }
        let (user, rest) = match s.rsplit_once('@') {
            Some((u, r)) => (Some(u.to_string()), r),
            None => (None, s),
        };
        let (name, port) = if let Some(r) = rest.strip_prefix('[') {
            match r.split_once(']') {
                Some((n, p)) => (n, p.strip_prefix(':')),
                None => (rest, None),
            }
        } else if rest.matches(':').count() == 1 {
            let (n, p) = rest.split_once(':').unwrap_or((rest, ""));
            (n, Some(p))
        } else {
            // A bare IPv6 address (several colons) has no port.
            (rest, None)
        };
        if name.is_empty() || user.as_deref() == Some("") {
            return Err(HostError::Empty(s.into()));
        }
        if name.starts_with('-') || user.as_deref().is_some_and(|u| u.starts_with('-')) {
            return Err(HostError::Dash(s.into()));
        }
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => Some(n),
                _ => return Err(HostError::Port(s.into(), p.into())),
            },
        };
        Ok(Host {
            user,
            name: name.to_string(),
            port,
        })
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        match self.port {
            Some(p) if self.name.contains(':') => write!(f, "[{}]:{p}", self.name),
            Some(p) => write!(f, "{}:{p}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// The ssh command: a program and its first words, split as a shell would split a plain
/// command line (quotes group words; nothing is expanded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshCommand {
    argv: Vec<String>,
}

impl Default for SshCommand {
    fn default() -> Self {
        SshCommand {
            argv: vec!["ssh".into()],
        }
    }
}

impl SshCommand {
    /// `--ssh-command` when given, else `DRIVESCOPE_SSH` when set and not empty, else `ssh`.
    pub fn choose(flag: Option<&str>) -> Result<SshCommand, HostError> {
        match flag {
            Some(s) => SshCommand::parse(s),
            None => match std::env::var(SSH_ENV) {
                Ok(s) if !s.trim().is_empty() => SshCommand::parse(&s),
                _ => Ok(SshCommand::default()),
            },
        }
    }

    /// Splits `s` into words: whitespace separates, single quotes keep everything, double
    /// quotes keep everything but `\"` and `\\`, a backslash outside quotes keeps the
    /// next character.
    pub fn parse(s: &str) -> Result<SshCommand, HostError> {
        let mut argv = Vec::new();
        let mut word: Option<String> = None;
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            match c {
                c if c.is_whitespace() => {
                    if let Some(w) = word.take() {
                        argv.push(w);
                    }
                }
                '\'' => {
                    let w = word.get_or_insert_with(String::new);
                    loop {
                        match chars.next() {
                            Some('\'') => break,
                            Some(x) => w.push(x),
                            None => return Err(HostError::Quote(s.into())),
                        }
                    }
                }
                '"' => {
                    let w = word.get_or_insert_with(String::new);
                    loop {
                        match chars.next() {
                            Some('"') => break,
                            Some('\\') => match chars.next() {
                                Some(x @ ('"' | '\\')) => w.push(x),
                                Some(x) => {
                                    w.push('\\');
                                    w.push(x);
                                }
                                None => return Err(HostError::Quote(s.into())),
                            },
                            Some(x) => w.push(x),
                            None => return Err(HostError::Quote(s.into())),
                        }
                    }
                }
                '\\' => {
                    let w = word.get_or_insert_with(String::new);
                    if let Some(x) = chars.next() {
                        w.push(x);
                    }
                }
                c => word.get_or_insert_with(String::new).push(c),
            }
        }
        if let Some(w) = word {
            argv.push(w);
        }
        if argv.is_empty() {
            return Err(HostError::EmptySsh);
        }
        Ok(SshCommand { argv })
    }

    /// The words, as split.
    pub fn words(&self) -> &[String] {
        &self.argv
    }

    /// The command that runs `remote` (a program and its arguments) on `host`: batch mode
    /// (never a password prompt), keep-alives so a dead link is noticed, the user and port
    /// as options, and the remote words quoted for the remote user's shell.
    pub fn command(&self, host: &Host, remote: &[&str]) -> Command {
        let mut c = Command::new(&self.argv[0]);
        c.args(&self.argv[1..]);
        c.args(["-T", "-o", "BatchMode=yes"]);
        c.args(["-o", "ConnectTimeout=15"]);
        c.args(["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"]);
        if let Some(u) = &host.user {
            c.arg("-l").arg(u);
        }
        if let Some(p) = host.port {
            c.arg("-p").arg(p.to_string());
        }
        c.arg("--").arg(&host.name);
        c.arg(
            remote
                .iter()
                .map(|w| shell_quote(w))
                .collect::<Vec<_>>()
                .join(" "),
        );
        c
    }
}

/// `w` as one word for a POSIX shell: in single quotes, each `'` written as `'\''`.
pub fn shell_quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use HostError::*;

    #[test]
    fn hosts_parse_and_print_back() {
        for (s, user, name, port) in [
            ("lab1", None, "lab1", None),
            ("root@lab1", Some("root"), "lab1", None),
            ("root@lab1:2222", Some("root"), "lab1", Some(2222)),
            ("10.0.0.5:22", None, "10.0.0.5", Some(22)),
            ("[::1]:2222", None, "::1", Some(2222)),
            ("fe80::1", None, "fe80::1", None),
        ] {
            let h: Host = s.parse().unwrap();
            assert_eq!(h.user.as_deref(), user, "{s}");
            assert_eq!(h.name, name, "{s}");
            assert_eq!(h.port, port, "{s}");
            assert_eq!(h.to_string(), s);
        }
    }

    #[test]
    fn bad_hosts_are_refused() {
        assert!(matches!("".parse::<Host>(), Err(Empty(_))));
        assert!(matches!("@x".parse::<Host>(), Err(Empty(_))));
        assert!(matches!("-oProxyCommand=x".parse::<Host>(), Err(Dash(_))));
        assert!(matches!("-l@x".parse::<Host>(), Err(Dash(_))));
        assert!(matches!("x:0".parse::<Host>(), Err(Port(..))));
        assert!(matches!("x:99999".parse::<Host>(), Err(Port(..))));
        assert!(matches!("a b".parse::<Host>(), Err(Space(_))));
    }

    #[test]
    fn ssh_commands_split_like_a_shell() {
        let c = SshCommand::parse(r#"ssh -F '/tmp/my cfg' -o "User=a b" x\ y"#).unwrap();
        assert_eq!(
            c.words(),
            ["ssh", "-F", "/tmp/my cfg", "-o", "User=a b", "x y"]
        );
        assert_eq!(SshCommand::parse("  "), Err(EmptySsh));
        assert!(matches!(SshCommand::parse("ssh 'x"), Err(Quote(_))));
    }

    #[test]
    fn remote_words_are_quoted_for_the_remote_shell() {
        let h: Host = "u@h:22".parse().unwrap();
        let c = SshCommand::default().command(&h, &["/opt/my tools/drivescope", "agent"]);
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args.last().unwrap(), "'/opt/my tools/drivescope' 'agent'");
        let i = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(args[i + 1], "h");
        assert!(args.windows(2).any(|w| w == ["-l", "u"]));
        assert!(args.windows(2).any(|w| w == ["-p", "22"]));
        assert_eq!(shell_quote("a'b;rm -rf x"), r"'a'\''b;rm -rf x'");
    }
}
