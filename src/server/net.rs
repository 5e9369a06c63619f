//! Serving with a hard stop: `axum::serve`'s graceful shutdown waits for
//! open responses, and a paused audio stream never finishes. Every accepted
//! socket is wrapped so that shutdown makes its reads and writes fail, which
//! ends the connection at once; then the listener is dropped.

use axum::Router;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

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

pub(crate) fn serve(listener: TcpListener, router: Router) -> ServeHandle {
    let (kill, kill_rx) = watch::channel(false);
    let listener = KillableListener {
        inner: listener,
        kill: kill_rx.clone(),
    };
    let mut stop = kill_rx;
    let task = tokio::spawn(async move {
        // The peer address feeds the per-address login limit.
        let app = router.into_make_service_with_connect_info::<Peer>();
        let result = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop.wait_for(|k| *k).await;
            })
            .await;
        if let Err(err) = result {
            tracing::error!("server stopped: {err}");
        }
    });
    ServeHandle { kill, task }
}

/// The address of the client of a connection (`ConnectInfo<Peer>`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, KillableListener>>
    for Peer
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, KillableListener>) -> Self {
        Peer(*stream.remote_addr())
    }
}

struct KillableListener {
    inner: TcpListener,
    kill: watch::Receiver<bool>,
}

impl axum::serve::Listener for KillableListener {
    type Io = KillableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
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

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
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
        if let Err(e) = this.check(cx) {
            return Poll::Ready(Err(e));
        }
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
        if let Err(e) = this.check(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Err(e) = this.check(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
