//! Real processes for the soaks: the reference server as a child
//! (`earmark serve --log-writes`) that can be killed with SIGKILL and
//! started again on the same port and data directory, `earmark play`'s
//! status lines read as they come, and a process's own resources from
//! `/proc` (RSS, open descriptors, threads).

use crate::harness::{Home, text};
use std::io::BufRead;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_earmark");

/// `earmark serve` in a child process, user "alice", a valid license.
pub struct ServerProcess {
    pub addr: SocketAddr,
    pub data: tempfile::TempDir,
    pub password: String,
    library: PathBuf,
    child: Option<Child>,
    /// How many times it was started.
    pub starts: u32,
}

impl ServerProcess {
    /// Sets up a data directory for `library` and starts serving it.
    pub fn start(library: &Path) -> ServerProcess {
        let data = tempfile::Builder::new()
            .prefix("earmark-soak-server-")
            .tempdir()
            .unwrap();
        let password = "correct horse battery staple".to_owned();
        let admin = |args: &[&str], stdin: &str| {
            use std::io::Write;
            let mut c = Command::new(BIN)
                .arg("serve")
                .args(args)
                .arg("--data")
                .arg(data.path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            c.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "serve {args:?}: {}", text(&o));
        };
        admin(&["user", "add", "alice", "--password-stdin"], &password);
        admin(&["license", "set", "valid"], "");
        // A free port, given back at once: the server binds it from now on.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let mut s = ServerProcess {
            addr,
            data,
            password,
            library: library.to_owned(),
            child: None,
            starts: 0,
        };
        s.spawn();
        s
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/api/v1", self.addr)
    }

    pub fn is_up(&self) -> bool {
        self.child.is_some()
    }

    /// Starts the server and waits until it accepts connections.
    pub fn spawn(&mut self) {
        assert!(self.child.is_none(), "the server is already running");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data.path().join("serve.log"))
            .unwrap();
        let child = Command::new(BIN)
            .arg("serve")
            .arg("--library")
            .arg(&self.library)
            .arg("--data")
            .arg(self.data.path())
            .arg("--listen")
            .arg(self.addr.to_string())
            .arg("--log-writes")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        self.starts += 1;
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_err() {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("earmark serve exited with {status}: {}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "earmark serve did not listen within 60 s: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: no shutdown, whatever it was doing.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.data.path().join("serve.log")).unwrap_or_default()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `earmark --json play ARGS` with `env`, its status lines read by a
/// thread as they come.
pub struct Playing {
    pub child: Child,
    lines: mpsc::Receiver<serde_json::Value>,
    /// Every status line so far (not the startup line).
    pub states: Vec<serde_json::Value>,
    stderr: std::thread::JoinHandle<String>,
}

impl Playing {
    pub fn start(home: &Home, args: &[&str], env: &[(&str, String)]) -> Playing {
        let mut all = vec!["--json", "play"];
        all.extend_from_slice(args);
        let mut c = home.command(&all);
        for (k, v) in env {
            c.env(k, v);
        }
        c.stdin(Stdio::null());
        let mut child = c.spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
                    && v.get("startup").is_none()
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(err), &mut s);
            s
        });
        Playing {
            child,
            lines,
            states: Vec::new(),
            stderr,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Takes the status lines printed so far.
    pub fn drain(&mut self) {
        while let Ok(v) = self.lines.try_recv() {
            self.states.push(v);
        }
    }

    /// The book position of the latest status line.
    pub fn book_position(&mut self) -> f64 {
        self.drain();
        self.states
            .last()
            .and_then(|s| s["book_position"].as_f64())
            .unwrap_or(0.0)
    }

    /// Whether it has exited (without waiting).
    pub fn exited(&mut self) -> bool {
        self.child.try_wait().unwrap().is_some()
    }

    /// Waits for it to exit (at most `within`); its exit status, every
    /// status line and its stderr.
    pub fn finish(
        mut self,
        within: Duration,
    ) -> (std::process::ExitStatus, Vec<serde_json::Value>, String) {
        let deadline = Instant::now() + within;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("earmark play did not exit within {within:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stderr = self.stderr.join().unwrap();
        // The reader ends at the pipe's end: every line is in.
        while let Ok(v) = self.lines.recv() {
            self.states.push(v);
        }
        (status, self.states, stderr)
    }
}

/// A process's own resources, from `/proc/PID`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resources {
    pub rss_kb: u64,
    pub fds: usize,
    pub threads: usize,
}

impl Resources {
    /// `None` once the process is gone.
    pub fn of(pid: u32) -> Option<Resources> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let rss_kb = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        let count = |dir: &str| std::fs::read_dir(format!("/proc/{pid}/{dir}")).map(|d| d.count());
        Some(Resources {
            rss_kb,
            fds: count("fd").ok()?,
            threads: count("task").ok()?,
        })
    }
}
