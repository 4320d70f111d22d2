//! Real OpenSSH servers on 127.0.0.1 for the remote-host tests: each with its own host key
//! and port, one user key for all, and an ssh client config naming each server by an alias
//! (`ssh -F CONFIG ALIAS`). Needs root (sshd's privilege separation) and /usr/sbin/sshd.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::skip::{self, Skip};

/// The keys and client config the servers of one test share.
pub struct Lab {
    pub dir: tempfile::TempDir,
    pub servers: Vec<Sshd>,
}

/// One running sshd.
pub struct Sshd {
    pub alias: String,
    pub port: u16,
    child: Child,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        kill_tree(self.child.id(), true);
        let _ = self.child.wait();
    }
}

const SSHD: &str = "/usr/sbin/sshd";

/// A port nothing listens on (bound and let go).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A directory (in `d`) of links to every program of the standard PATH's directories but
/// drivescope, the first directory's where two have one.
fn path_without_drivescope(d: &Path) -> PathBuf {
    let bin = d.join("path");
    std::fs::create_dir_all(&bin).unwrap();
    let standard = [
        "/usr/local/sbin",
        "/usr/local/bin",
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin",
    ];
    for dir in standard {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let link = bin.join(e.file_name());
            if e.file_name() != "drivescope" && std::fs::symlink_metadata(&link).is_err() {
                std::os::unix::fs::symlink(e.path(), &link).unwrap();
            }
        }
    }
    bin
}

fn keygen(path: &Path) {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", ""])
        .arg("-f")
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("ssh-keygen runs");
    assert!(st.success(), "ssh-keygen made {}", path.display());
}

/// The pids whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    super::processes()
        .into_iter()
        .filter(|p| p.ppid == pid)
        .map(|p| p.pid)
        .collect()
}

/// SIGKILLs the descendants of `pid` (and `pid` itself when `me`).
pub fn kill_tree(pid: u32, me: bool) {
    for c in children(pid) {
        kill_tree(c, true);
    }
    if me {
        // SAFETY: kill has no memory preconditions; a pid gone already gives ESRCH.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
}

impl Lab {
    /// `n` servers (aliases host0, host1, …), or `None` with the reason noted as a skip.
    pub fn start(n: usize) -> Option<Lab> {
        if !super::is_root() {
            skip::note(Skip::NotRoot, "sshd's privilege separation needs root");
            return None;
        }
        if !Path::new(SSHD).exists() || Command::new("ssh").arg("-V").output().is_err() {
            skip::note(
                Skip::Tool,
                "openssh-server and openssh-client are not installed",
            );
            return None;
        }
        let _ = std::fs::create_dir_all("/run/sshd");
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        keygen(&d.join("user_key"));
        std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).unwrap();
        let mut client = String::new();
        let mut servers = Vec::new();
        for i in 0..n {
            let alias = format!("host{i}");
            let key = d.join(format!("{alias}_key"));
            keygen(&key);
            let port = free_port();
            let conf = d.join(format!("{alias}_sshd_config"));
            std::fs::write(
                &conf,
                format!(
                    "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
                     PidFile none\nStrictModes no\nUsePAM no\nPermitRootLogin yes\n\
                     PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                     PermitUserEnvironment yes\n",
                    key.display(),
                    d.join("authorized_keys").display()
                ),
            )
            .unwrap();
            let child = Command::new(SSHD)
                .args(["-D", "-e", "-f"])
                .arg(&conf)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(
                    std::fs::File::create(d.join(format!("{alias}_sshd.log"))).unwrap(),
                ))
                .spawn()
                .expect("sshd starts");
            client.push_str(&Self::client_entry(&alias, port, d));
            servers.push(Sshd { alias, port, child });
        }
        std::fs::write(d.join("ssh_config"), client).unwrap();
        for s in &servers {
            let until = Instant::now() + Duration::from_secs(10);
            while TcpStream::connect(("127.0.0.1", s.port)).is_err() {
                assert!(
                    Instant::now() < until,
                    "sshd {} listens on {}",
                    s.alias,
                    s.port
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Some(Lab { dir, servers })
    }

    fn client_entry(alias: &str, port: u16, d: &Path) -> String {
        format!(
            "Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  IdentityFile {}\n  \
             IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  \
             LogLevel ERROR\n",
            d.join("user_key").display()
        )
    }

    /// Gives the user's sessions `home` as `$HOME` (the key's `environment=` option), so
    /// that what a test puts in the remote home stays in a directory of its own, and a
    /// `$PATH` with every program of the standard one but drivescope: whether the host has
    /// a drivescope is the test's doing, not the machine's (one installed from the Debian
    /// package is in /usr/bin).
    pub fn set_home(&self, home: &Path) {
        let d = self.dir.path();
        let path = path_without_drivescope(d);
        let key = std::fs::read_to_string(d.join("user_key.pub")).unwrap();
        std::fs::write(
            d.join("authorized_keys"),
            format!(
                "environment=\"HOME={}\",environment=\"PATH={}\" {key}",
                home.display(),
                path.display()
            ),
        )
        .unwrap();
    }

    /// Adds an alias for a port nothing listens on.
    pub fn add_dead_host(&self, alias: &str) {
        let entry = Self::client_entry(alias, free_port(), self.dir.path());
        let path = self.config();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&entry);
        std::fs::write(path, text).unwrap();
    }

    /// The client config naming every server.
    pub fn config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// The `--ssh-command` that reaches the servers.
    pub fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.config().display())
    }

    /// Drops every connection of server `i` (its session processes and what they run,
    /// the agent among them, killed with SIGKILL); the server itself listens on.
    pub fn cut(&self, i: usize) {
        kill_tree(self.servers[i].child.id(), false);
    }

    /// Server `i`'s listening process (what it forks for a connection inherits its
    /// cgroups).
    pub fn pid(&self, i: usize) -> u32 {
        self.servers[i].child.id()
    }

    /// Whether server `i` has a connection (a session process) now.
    pub fn connected(&self, i: usize) -> bool {
        !children(self.servers[i].child.id()).is_empty()
    }

    /// Waits until server `i` has no connection (a minute at most: its session process
    /// ends a moment after the client's ssh).
    pub fn wait_disconnected(&self, i: usize) {
        let t0 = Instant::now();
        while self.connected(i) {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "server {i} keeps a connection"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
