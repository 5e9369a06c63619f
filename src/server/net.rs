//! Serving with a hard stop: `axum::serve`'s graceful shutdown waits for
//! open responses, and a paused audio stream never finishes. Every accepted
//! socket is wrapped so that shutdown makes its reads and writes fail, which
//! ends the connection at once; then the listener is dropped. The accept
//! loop is ours (not `axum::serve`) so HTTP/2 can be turned off: by default
//! a connection that opens with the HTTP/2 preface is served as h2c.

use axum::Extension;
use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower::Layer;

pub(crate) struct ServeHandle {
    kill: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl ServeHandle {
    pub(crate) async fn shutdown(self) {
        let _ = self.kill.send(true);
        let mut task = self.task;
        if tokio::time::timeout(Duration::from_secs(5), &mut task)
            .await
            .is_err()
        {
            task.abort();
            let _ = task.await;
        }
    }
}

pub(crate) fn serve(listener: TcpListener, router: Router, http1_only: bool) -> ServeHandle {
    let (kill, kill_rx) = watch::channel(false);
    let mut listener = KillableListener {
        inner: listener,
        kill: kill_rx.clone(),
    };
    let mut stop = kill_rx;
    // Each request holds a sender while its handler runs: over HTTP/2 a
    // handler is its own task and outlives its connection, so shutdown
    // waits for the last one (a database write) before the data dir is
    // free for another server.
    let (alive, mut handlers_gone) = tokio::sync::mpsc::channel::<()>(1);
    let router = router.layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let held = alive.clone();
            // An HTTP/1.1 answer says h2c is spoken here (RFC 9110 §7.8),
            // so a client probes for it only where it is.
            let advertise = !http1_only && req.version() < axum::http::Version::HTTP_2;
            async move {
                let mut answer = next.run(req).await;
                drop(held);
                if advertise {
                    answer.headers_mut().insert(
                        axum::http::header::UPGRADE,
                        axum::http::HeaderValue::from_static("h2c"),
                    );
                }
                answer
            }
        },
    ));
    let task = tokio::spawn(async move {
        // hyper-util's auto builder reads a connection's first bytes: the
        // HTTP/2 preface is h2c (prior knowledge), anything else HTTP/1.1.
        let mut builder = Builder::new(TokioExecutor::new());
        if http1_only {
            builder = builder.http1_only();
        }
        let mut open = tokio::task::JoinSet::new();
        loop {
            let (io, addr) = tokio::select! {
                a = listener.accept() => a,
                Some(_) = open.join_next(), if !open.is_empty() => continue,
                _ = stop.wait_for(|k| *k) => break,
            };
            // The peer address feeds the per-address login limit.
            let app = Extension(ConnectInfo(Peer(addr))).layer(router.clone());
            let conn = builder
                .serve_connection(TokioIo::new(io), TowerToHyperService::new(app))
                .into_owned();
            open.spawn(async move {
                if let Err(err) = conn.await {
                    tracing::debug!("connection from {addr} ended: {err}");
                }
            });
        }
        // Killed, every connection fails its next read or write: the port
        // is free once they are gone (streams included).
        drop(listener);
        while open.join_next().await.is_some() {}
        drop(router);
        while handlers_gone.recv().await.is_some() {}
    });
    ServeHandle { kill, task }
}

/// The address of the client of a connection (`ConnectInfo<Peer>`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub SocketAddr);

struct KillableListener {
    inner: TcpListener,
    kill: watch::Receiver<bool>,
}

impl KillableListener {
    async fn accept(&mut self) -> (KillableStream, SocketAddr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    let mut kill = self.kill.clone();
                    let killed: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(async move {
                        let _ = kill.wait_for(|k| *k).await;
                    });
                    return (
                        KillableStream {
                            inner: stream,
                            killed,
                            dead: false,
                        },
                        addr,
                    );
                }
                Err(err) => {
                    tracing::warn!("accept failed: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }
}

pub(crate) struct KillableStream {
    inner: TcpStream,
    killed: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// Set once `killed` has completed: a finished future must not be polled again.
    dead: bool,
}

impl KillableStream {
    fn check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        if !self.dead && self.killed.as_mut().poll(cx).is_ready() {
            self.dead = true;
        }
        if self.dead {
            Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "server shutting down",
            ))
        } else {
            Ok(())
        }
    }
}

impl AsyncRead for KillableStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for KillableStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
