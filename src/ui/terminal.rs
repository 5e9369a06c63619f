//! Terminal setup and teardown, the panic hook that restores it, signal
//! handling (SIGTERM/SIGHUP/SIGINT/SIGWINCH on one waiting thread), and the
//! input reader thread that ends when the terminal vanishes.

use super::input;
use super::state::Event;
use crossterm::{cursor, event as cevent, execute, terminal};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// What the event loop receives: app events and the loop's own signals.
// Messages move a few times per keystroke; boxing would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum LoopEvent {
    App(Event),
    /// The terminal is gone (read error, EOF, zero size): end quietly.
    TerminalGone(String),
    /// SIGTERM, SIGHUP or SIGINT: save and quit.
    Signal(i32),
}

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Enters raw mode and the alternate screen; hides the cursor until the
/// first frame puts it on the selection (`views::render`); enables mouse
/// and bracketed paste.
pub fn enter() -> io::Result<()> {
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = io::stdout();
    execute!(
        out,
        terminal::EnterAlternateScreen,
        cursor::Hide,
        cevent::EnableMouseCapture,
        cevent::EnableBracketedPaste
    )?;
    Ok(())
}

/// Restores the terminal; safe to call more than once and from the panic
/// hook. Errors are ignored: the terminal may already be gone.
pub fn leave() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    let _ = execute!(
        out,
        cevent::DisableBracketedPaste,
        cevent::DisableMouseCapture,
        cursor::Show,
        terminal::LeaveAlternateScreen
    );
    let _ = out.flush();
    let _ = terminal::disable_raw_mode();
}

/// Restores the terminal before the default panic message is printed.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        leave();
        previous(info);
    }));
}

const SIGNALS: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGWINCH];

fn signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise the set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Blocks our signals in this thread and every thread spawned after it, so
/// only the waiting thread sees them. Call before spawning any thread.
pub fn block_signals() {
    let set = signal_set();
    // SAFETY: plain libc call with a valid set.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// A thread that waits for our signals and forwards them; resize signals
/// become resize events (a zero size means the terminal is gone).
pub fn spawn_signal_thread(tx: Sender<LoopEvent>) {
    std::thread::Builder::new()
        .name("earmark-signals".into())
        .spawn(move || {
            let set = signal_set();
            loop {
                let mut sig: libc::c_int = 0;
                // SAFETY: waits on a valid set; writes the signal number.
                let rc = unsafe { libc::sigwait(&set, &mut sig) };
                if rc != 0 {
                    return;
                }
                let ev = if sig == libc::SIGWINCH {
                    match terminal::size() {
                        Ok((w, h)) if w > 0 && h > 0 => LoopEvent::App(Event::Resize(w, h)),
                        Ok(_) => LoopEvent::TerminalGone("the terminal has no size".into()),
                        Err(e) => LoopEvent::TerminalGone(format!("terminal size: {e}")),
                    }
                } else {
                    LoopEvent::Signal(sig)
                };
                if tx.send(ev).is_err() {
                    return;
                }
            }
        })
        .expect("spawn the signal thread");
}

/// Reads the tty in a thread and sends parsed events. Ends on EOF or a read
/// error (the terminal vanished) after saying so, never spinning.
pub fn spawn_input_thread(tx: Sender<LoopEvent>) -> io::Result<()> {
    let mut tty = tty_input()?;
    std::thread::Builder::new()
        .name("earmark-input".into())
        .spawn(move || {
            let mut pending: Vec<u8> = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let n = match tty.read(&mut chunk) {
                    Ok(0) => {
                        let _ = tx.send(LoopEvent::TerminalGone("end of terminal input".into()));
                        return;
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let _ = tx.send(LoopEvent::TerminalGone(format!("terminal read: {e}")));
                        return;
                    }
                };
                pending.extend_from_slice(&chunk[..n]);
                let (mut events, used) = input::parse(&pending, false);
                pending.drain(..used);
                // A lone Esc, or a sequence split across reads: wait briefly
                // for the rest, else take it as it is.
                let wait = Duration::from_millis(25);
                if !pending.is_empty() && !readable(tty.as_raw_fd(), wait) {
                    let (rest, used) = input::parse(&pending, true);
                    events.extend(rest);
                    pending.drain(..used);
                }
                for ev in events {
                    if tx.send(LoopEvent::App(ev)).is_err() {
                        return;
                    }
                }
            }
        })?;
    Ok(())
}

/// The terminal's input: stdin when it is one, else /dev/tty.
pub(super) fn tty_input() -> io::Result<std::fs::File> {
    // SAFETY: isatty on fd 0 has no preconditions.
    if unsafe { libc::isatty(0) } != 1 {
        return std::fs::File::open("/dev/tty");
    }
    // SAFETY: dup gives us our own fd for stdin; the File owns it.
    let fd = unsafe { libc::dup(0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// True when input is readable on `fd` within `wait`.
pub(super) fn readable(fd: i32, wait: Duration) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = wait.as_millis().clamp(1, 60_000) as i32;
    // SAFETY: one valid pollfd.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    rc > 0 && pfd.revents & libc::POLLIN != 0
}
