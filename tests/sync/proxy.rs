//! A loopback TCP proxy the tests control: forward, refuse connections
//! (the port is closed), or answer every request with HTTP 500. It records
//! every request that passes through (method, path, body) so tests can
//! count sync requests and check what the server received.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Forward,
    /// Nothing listens: connection refused.
    Refuse,
    /// Every request gets `500 internal`.
    Error500,
    /// Every request gets `400 bad_request`: the server refuses it.
    Refuse400,
}

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub body: String,
    /// The proxy forwarded it (false: refused or answered 500).
    pub forwarded: bool,
}

pub struct Proxy {
    addr: SocketAddr,
    upstream: Arc<Mutex<SocketAddr>>,
    mode: watch::Sender<Mode>,
    log: Arc<Mutex<Vec<Request>>>,
}

impl Proxy {
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (mode, rx) = watch::channel(Mode::Forward);
        let log = Arc::new(Mutex::new(Vec::new()));
        let upstream = Arc::new(Mutex::new(upstream));
        tokio::spawn(accept_loop(
            Some(listener),
            addr,
            rx,
            upstream.clone(),
            log.clone(),
        ));
        Proxy {
            addr,
            upstream,
            mode,
            log,
        }
    }

    /// `http://127.0.0.1:PORT/api/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/api/v1", self.addr)
    }

    pub fn set_mode(&self, m: Mode) {
        self.mode.send_replace(m);
    }

    /// Waits until the proxy accepts connections again (after `Refuse`).
    pub async fn wait_listening(&self) {
        for _ in 0..250 {
            if TcpStream::connect(self.addr).await.is_ok() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("the proxy did not listen again");
    }

    /// Points the proxy at another server (a rebuilt instance).
    pub fn set_upstream(&self, a: SocketAddr) {
        *self.upstream.lock().unwrap() = a;
    }

    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    pub fn clear(&self) {
        self.log.lock().unwrap().clear();
    }

    /// Requests to the sync endpoints (progress and playback settings).
    pub fn sync_requests(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| {
                r.path.contains("/auth/reading-progress")
                    || r.path.contains("/auth/playback-settings")
            })
            .collect()
    }
}

async fn accept_loop(
    mut listener: Option<TcpListener>,
    addr: SocketAddr,
    mut mode: watch::Receiver<Mode>,
    upstream: Arc<Mutex<SocketAddr>>,
    log: Arc<Mutex<Vec<Request>>>,
) {
    loop {
        let m = *mode.borrow_and_update();
        if m == Mode::Refuse {
            listener = None; // the port is closed: connections are refused
            if mode.changed().await.is_err() {
                return;
            }
            continue;
        }
        if listener.is_none() {
            // Re-open the same port; retry while the OS still holds it.
            for _ in 0..100 {
                if let Ok(l) = TcpListener::bind(addr).await {
                    listener = Some(l);
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
        let l = listener.as_ref().expect("bound");
        let conn_mode = mode.clone();
        tokio::select! {
            r = l.accept() => {
                let Ok((client, _)) = r else { continue };
                let up = *upstream.lock().unwrap();
                tokio::spawn(handle(client, up, m, conn_mode, log.clone()));
            }
            r = mode.changed() => if r.is_err() { return },
        }
    }
}

async fn handle(
    mut client: TcpStream,
    upstream: SocketAddr,
    mode: Mode,
    mut mode_rx: watch::Receiver<Mode>,
    log: Arc<Mutex<Vec<Request>>>,
) {
    if mode == Mode::Error500 || mode == Mode::Refuse400 {
        let mut buf = Vec::new();
        if let Some(req) = read_request(&mut client, &mut buf).await {
            log.lock().unwrap().push(Request {
                forwarded: false,
                ..req
            });
        }
        let (status, body) = if mode == Mode::Error500 {
            (
                "500 Internal Server Error",
                r#"{"code":"internal","message":"injected failure"}"#,
            )
        } else {
            (
                "400 Bad Request",
                r#"{"code":"bad_request","message":"injected refusal"}"#,
            )
        };
        let resp = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = client.write_all(resp.as_bytes()).await;
        let _ = client.shutdown().await;
        return;
    }
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    let (mut cr, mut cw) = client.split();
    let (mut sr, mut sw) = server.split();
    let up = async {
        // Parse requests as they stream through, to log them.
        let mut pending: Vec<u8> = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let n = match cr.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            pending.extend_from_slice(&chunk[..n]);
            while let Some((req, used)) = parse_request(&pending) {
                log.lock().unwrap().push(req);
                pending.drain(..used);
            }
            if sw.write_all(&chunk[..n]).await.is_err() {
                break;
            }
        }
        let _ = sw.shutdown().await;
    };
    let down = async {
        let _ = tokio::io::copy(&mut sr, &mut cw).await;
        let _ = cw.shutdown().await;
    };
    // A mode change cuts kept-alive connections, as an outage would.
    let changed = async {
        while mode_rx.changed().await.is_ok() {
            if *mode_rx.borrow() != Mode::Forward {
                return;
            }
        }
    };
    tokio::select! {
        _ = async { tokio::join!(up, down) } => {}
        _ = changed => {}
    }
}

async fn read_request(s: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Request> {
    let mut chunk = [0u8; 8192];
    loop {
        if let Some((r, _)) = parse_request(buf) {
            return Some(r);
        }
        match s.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// One whole HTTP/1.1 request at the start of `b` (with a content-length
/// body), and how many bytes it used.
fn parse_request(b: &[u8]) -> Option<(Request, usize)> {
    let end = b.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&b[..end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let len = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    if b.len() < end + len {
        return None;
    }
    let body = String::from_utf8_lossy(&b[end..end + len]).to_string();
    Some((
        Request {
            method,
            path,
            body,
            forwarded: true,
        },
        end + len,
    ))
}
