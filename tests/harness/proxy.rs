//! A loopback TCP proxy for tests and the bench: it forwards, refuses
//! connections (the port is closed) or answers every request with an error,
//! and it can hold the byte stream back by a set delay in each direction,
//! as a slow link does (`netem` is not available on these machines).
//!
//! The delay is on the bytes, not on requests: each chunk read from one side
//! is written to the other `delay` after it was read, in order. A new
//! connection costs one round trip more before its first byte goes up, as
//! TCP's handshake does (the client's `connect` itself returns at once).
//!
//! It counts what it sees: connections, and HTTP/1.1 requests as they
//! stream through (several per kept-alive connection; bodies by
//! `content-length`; no pipelining), each logged with its method, path,
//! `Range`, `Authorization` and body. A request is *in flight* from the moment the client
//! sent it until the first byte of its answer reaches the proxy; the most
//! in flight at once tells requests sent together from requests sent one
//! after another.
//!
//! HTTP/2 with prior knowledge (h2c) passes only when allowed
//! ([`Proxy::pass_h2`]); otherwise the proxy is an HTTP/1.1 one and answers
//! the HTTP/2 preface with `400`, as such proxies do. A connection that
//! passes is read as frames: each client HEADERS frame on a new stream is a
//! request (method `H2`, path and `Range` unknown without HPACK, `http2`
//! set), answered by the server's first HEADERS frame on that stream.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

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
    /// The `Range` header, when there was one.
    pub range: Option<String>,
    /// The `Authorization` header, when there was one (a token that
    /// reached this proxy's server).
    pub authorization: Option<String>,
    pub body: String,
    /// The proxy forwarded it (false: refused or answered with an error).
    pub forwarded: bool,
    /// Which connection carried it (1 for the first the proxy accepted).
    pub connection: u64,
    /// When the proxy read it from the client.
    pub sent: Instant,
    /// Read from HTTP/2 frames: method `H2`, path `?`, no `Range`, no
    /// `Authorization`, no body (they are HPACK-coded).
    pub http2: bool,
}

/// What a client sends first on an HTTP/2 connection with prior knowledge.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Chunks read ahead of the writer per direction (16 KiB each): the most a
/// connection holds in the proxy, 4 MiB, bounds its throughput to 4 MiB
/// per one-way delay.
const IN_FLIGHT_CHUNKS: usize = 256;
const CHUNK: usize = 16 * 1024;

#[derive(Default)]
struct Counts {
    log: Mutex<Vec<Request>>,
    /// One-way delay, microseconds.
    delay_us: AtomicU64,
    connections: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    pass_h2: std::sync::atomic::AtomicBool,
}

impl Counts {
    fn log(&self) -> MutexGuard<'_, Vec<Request>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn delay(&self) -> Duration {
        Duration::from_micros(self.delay_us.load(Ordering::Relaxed))
    }

    fn sent(&self) {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
    }

    fn answered(&self, n: u64) {
        self.in_flight.fetch_sub(n, Ordering::SeqCst);
    }
}

pub struct Proxy {
    addr: SocketAddr,
    upstream: Arc<Mutex<SocketAddr>>,
    mode: watch::Sender<Mode>,
    counts: Arc<Counts>,
}

impl Proxy {
    /// A proxy to `upstream` on a free 127.0.0.1 port, forwarding with no
    /// delay. Its tasks run on the current tokio runtime.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port on 127.0.0.1");
        let addr = listener.local_addr().expect("a bound address");
        let (mode, rx) = watch::channel(Mode::Forward);
        let counts = Arc::new(Counts::default());
        let upstream = Arc::new(Mutex::new(upstream));
        tokio::spawn(accept_loop(
            Some(listener),
            addr,
            rx,
            upstream.clone(),
            counts.clone(),
        ));
        Proxy {
            addr,
            upstream,
            mode,
            counts,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Lets HTTP/2 with prior knowledge through (connections from now on);
    /// by default the proxy is an HTTP/1.1 one and answers it with 400.
    pub fn pass_h2(&self, pass: bool) {
        self.counts.pass_h2.store(pass, Ordering::SeqCst);
    }

    /// `http://127.0.0.1:PORT/api/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/api/v1", self.addr)
    }

    /// `url` (of the upstream server) as reached through the proxy.
    pub fn via(&self, url: &str) -> String {
        let up = self.upstream.lock().unwrap_or_else(|e| e.into_inner());
        url.replacen(&up.to_string(), &self.addr.to_string(), 1)
    }

    pub fn set_mode(&self, m: Mode) {
        self.mode.send_replace(m);
    }

    /// Holds each direction's bytes back by `one_way` (a round trip of
    /// twice that), from the next chunk on.
    pub fn set_delay(&self, one_way: Duration) {
        self.counts
            .delay_us
            .store(one_way.as_micros() as u64, Ordering::Relaxed);
    }

    /// Waits until the proxy accepts connections again (after `Refuse`).
    pub async fn wait_listening(&self) {
        for _ in 0..250 {
            if TcpStream::connect(self.addr).await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the proxy did not listen again");
    }

    /// Points the proxy at another server (a rebuilt instance).
    pub fn set_upstream(&self, a: SocketAddr) {
        *self.upstream.lock().unwrap_or_else(|e| e.into_inner()) = a;
    }

    pub fn requests(&self) -> Vec<Request> {
        self.counts.log().clone()
    }

    /// Connections accepted since the start or the last [`clear`](Self::clear).
    pub fn connections(&self) -> u64 {
        self.counts.connections.load(Ordering::SeqCst)
    }

    /// The most requests in flight at once since the last `clear`.
    pub fn max_in_flight(&self) -> u64 {
        self.counts.max_in_flight.load(Ordering::SeqCst)
    }

    /// Forgets the requests and connections seen so far (the connection
    /// numbers in the log go on).
    pub fn clear(&self) {
        self.counts.log().clear();
        self.counts.connections.store(0, Ordering::SeqCst);
        let now = self.counts.in_flight.load(Ordering::SeqCst);
        self.counts.max_in_flight.store(now, Ordering::SeqCst);
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
    counts: Arc<Counts>,
) {
    let mut serial = 0u64;
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
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let Some(l) = listener.as_ref() else {
            // The port is still held elsewhere: try again shortly.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let conn_mode = mode.clone();
        tokio::select! {
            r = l.accept() => {
                let Ok((client, _)) = r else { continue };
                serial += 1;
                counts.connections.fetch_add(1, Ordering::SeqCst);
                let up = *upstream.lock().unwrap_or_else(|e| e.into_inner());
                let conn = Conn { id: serial, counts: counts.clone(), accepted: Instant::now() };
                tokio::spawn(conn.handle(client, up, m, conn_mode));
            }
            r = mode.changed() => if r.is_err() { return },
        }
    }
}

struct Conn {
    id: u64,
    counts: Arc<Counts>,
    accepted: Instant,
}

impl Conn {
    async fn handle(
        self,
        mut client: TcpStream,
        upstream: SocketAddr,
        mode: Mode,
        mut mode_rx: watch::Receiver<Mode>,
    ) {
        if mode == Mode::Error500 || mode == Mode::Refuse400 {
            return self.answer_error(&mut client, mode).await;
        }
        let mut head = [0u8; 24];
        let http2 = matches!(client.peek(&mut head).await, Ok(n) if n >= 3 && H2_PREFACE.starts_with(&head[..n]));
        if http2 && !self.counts.pass_h2.load(Ordering::SeqCst) {
            let refusal =
                "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
            let _ = client.write_all(refusal.as_bytes()).await;
            let _ = client.shutdown().await;
            return;
        }
        let Ok(server) = TcpStream::connect(upstream).await else {
            return;
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let (cr, cw) = client.into_split();
        let (sr, sw) = server.into_split();
        // Requests sent on this connection and not answered yet.
        let waiting = Arc::new(AtomicU64::new(0));
        let (counts, waiting_up) = (self.counts.clone(), waiting.clone());
        let (id, mut pending) = (self.id, Vec::new());
        let mut up_frames = Frames::new(http2, true);
        let on_up = move |bytes: &[u8]| {
            if http2 {
                for _ in 0..up_frames.new_streams(bytes) {
                    counts.log().push(Request::h2(id));
                    counts.sent();
                    waiting_up.fetch_add(1, Ordering::SeqCst);
                }
                return;
            }
            pending.extend_from_slice(bytes);
            while let Some((req, used)) = parse_request(&pending, id) {
                counts.log().push(req);
                counts.sent();
                waiting_up.fetch_add(1, Ordering::SeqCst);
                pending.drain(..used);
            }
        };
        let (counts, waiting_down) = (self.counts.clone(), waiting.clone());
        let mut down_frames = Frames::new(false, false);
        let on_down = move |bytes: &[u8]| {
            // h1: the first bytes after a request are its answer's; h2: the
            // first HEADERS frame on its stream.
            let answers = if http2 {
                down_frames.new_streams(bytes)
            } else {
                1
            };
            for _ in 0..answers {
                if waiting_down
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok()
                {
                    counts.answered(1);
                }
            }
        };
        // The handshake's round trip: nothing leaves for upstream before
        // it is over.
        let first_up = self.accepted + 2 * self.counts.delay();
        let up = delayed(cr, sw, self.counts.clone(), first_up, on_up);
        let down = delayed(sr, cw, self.counts.clone(), self.accepted, on_down);
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
        self.counts.answered(waiting.swap(0, Ordering::SeqCst));
    }

    async fn answer_error(&self, client: &mut TcpStream, mode: Mode) {
        let mut buf = Vec::new();
        if let Some(req) = read_request(client, &mut buf, self.id).await {
            self.counts.log().push(Request {
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
    }
}

/// Copies `from` to `to`, each chunk written the proxy's delay after it
/// was read (or after `not_before`, when later) and in order; `seen` sees
/// every chunk as it is read. Ends when either side closes.
async fn delayed(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    counts: Arc<Counts>,
    not_before: Instant,
    mut seen: impl FnMut(&[u8]),
) {
    let (tx, mut rx) = mpsc::channel::<(Instant, Vec<u8>)>(IN_FLIGHT_CHUNKS);
    let read = async move {
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            seen(&buf[..n]);
            let due = Instant::now().max(not_before) + counts.delay();
            if tx.send((due, buf[..n].to_vec())).await.is_err() {
                break;
            }
        }
    };
    let write = async move {
        while let Some((due, chunk)) = rx.recv().await {
            tokio::time::sleep_until(due.max(not_before).into()).await;
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(read, write);
}

async fn read_request(s: &mut TcpStream, buf: &mut Vec<u8>, conn: u64) -> Option<Request> {
    let mut chunk = [0u8; 8192];
    loop {
        if let Some((r, _)) = parse_request(buf, conn) {
            return Some(r);
        }
        match s.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

impl Request {
    /// A request seen as an HTTP/2 HEADERS frame.
    fn h2(connection: u64) -> Request {
        Request {
            method: "H2".into(),
            path: "?".into(),
            range: None,
            authorization: None,
            body: String::new(),
            forwarded: true,
            connection,
            sent: Instant::now(),
            http2: true,
        }
    }
}

/// One direction of an HTTP/2 connection read as frames (9-byte header:
/// length, type, flags, stream id), as its bytes pass.
struct Frames {
    buf: Vec<u8>,
    /// Bytes of the client's preface still to skip.
    preface: usize,
    /// The streams seen with HEADERS (a second one is trailers).
    seen: std::collections::HashSet<u32>,
    /// Only odd (client-opened) streams count.
    client: bool,
}

impl Frames {
    fn new(preface: bool, client: bool) -> Frames {
        Frames {
            buf: Vec::new(),
            preface: if preface { H2_PREFACE.len() } else { 0 },
            seen: Default::default(),
            client,
        }
    }

    /// How many HEADERS frames on a stream not seen before `bytes` end.
    fn new_streams(&mut self, bytes: &[u8]) -> usize {
        self.buf.extend_from_slice(bytes);
        let skip = self.preface.min(self.buf.len());
        self.buf.drain(..skip);
        self.preface -= skip;
        let mut n = 0;
        while self.buf.len() >= 9 {
            let len = u32::from_be_bytes([0, self.buf[0], self.buf[1], self.buf[2]]) as usize;
            if self.buf.len() < 9 + len {
                break;
            }
            let kind = self.buf[3];
            let stream = u32::from_be_bytes([self.buf[5], self.buf[6], self.buf[7], self.buf[8]])
                & 0x7fff_ffff;
            const HEADERS: u8 = 0x1;
            let opened = !self.client || stream % 2 == 1;
            if kind == HEADERS && opened && self.seen.insert(stream) {
                n += 1;
            }
            self.buf.drain(..9 + len);
        }
        n
    }
}

/// One whole HTTP/1.1 request at the start of `b` (with a content-length
/// body), and how many bytes it used.
fn parse_request(b: &[u8], connection: u64) -> Option<(Request, usize)> {
    let end = b.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&b[..end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(&str, &str)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    };
    let len = header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    if b.len() < end + len {
        return None;
    }
    let body = String::from_utf8_lossy(&b[end..end + len]).to_string();
    Some((
        Request {
            method,
            path,
            range: header("range").map(str::to_owned),
            authorization: header("authorization").map(str::to_owned),
            body,
            forwarded: true,
            connection,
            sent: Instant::now(),
            http2: false,
        },
        end + len,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kept_alive_requests_one_after_another() {
        let two = b"GET /a HTTP/1.1\r\nRange: bytes=5-\r\n\r\nPOST /b HTTP/1.1\r\nauthorization: Bearer t\r\ncontent-length: 2\r\n\r\nhi";
        let (a, used) = parse_request(two, 3).unwrap();
        assert_eq!((a.method.as_str(), a.path.as_str()), ("GET", "/a"));
        assert_eq!(a.range.as_deref(), Some("bytes=5-"));
        let (b, rest) = parse_request(&two[used..], 3).unwrap();
        assert_eq!((b.path.as_str(), b.body.as_str()), ("/b", "hi"));
        assert_eq!(a.authorization, None);
        assert_eq!(b.authorization.as_deref(), Some("Bearer t"));
        assert_eq!(used + rest, two.len());
        // A body not yet all there: not a request yet.
        assert!(parse_request(&two[used..two.len() - 1], 3).is_none());
    }

    fn frame(kind: u8, stream: u32, len: usize) -> Vec<u8> {
        let l = (len as u32).to_be_bytes();
        let mut f = vec![l[1], l[2], l[3], kind, 0];
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend(std::iter::repeat_n(0u8, len));
        f
    }

    #[test]
    fn counts_each_client_headers_frame_on_a_new_stream_as_a_request_however_the_bytes_are_cut() {
        let mut bytes = H2_PREFACE.to_vec();
        bytes.extend(frame(0x4, 0, 12)); // SETTINGS
        bytes.extend(frame(0x1, 1, 40)); // a request
        bytes.extend(frame(0x0, 1, 100)); // its body
        bytes.extend(frame(0x1, 3, 30)); // another
        bytes.extend(frame(0x1, 1, 5)); // trailers of the first: not new
        bytes.extend(frame(0x8, 0, 4)); // WINDOW_UPDATE
        for cut in [1, 7, 24, 33, bytes.len()] {
            let mut f = Frames::new(true, true);
            let n: usize = bytes.chunks(cut).map(|c| f.new_streams(c)).sum();
            assert_eq!(n, 2, "cut in pieces of {cut}");
        }
    }
}
