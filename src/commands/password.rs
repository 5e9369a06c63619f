//! Reading the password: from the terminal without echo, or one line from
//! standard input (`--password-stdin`). It is only ever held in memory.

use std::io::{BufRead, Write};

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("no terminal to read the password from; pipe it in with --password-stdin")]
    NoTerminal,
    #[error("no password given")]
    Empty,
    #[error("login cancelled")]
    Cancelled,
    #[error("the password is not valid UTF-8")]
    NotUtf8,
    #[error("cannot read the password: {0}")]
    Io(#[from] std::io::Error),
}

/// One line of standard input, without its line ending.
pub fn from_stdin() -> Result<String, PasswordError> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let pw = line.trim_end_matches(['\n', '\r']).to_owned();
    line.clear();
    if pw.is_empty() {
        return Err(PasswordError::Empty);
    }
    Ok(pw)
}

/// Prompt on the controlling terminal and read without echo. The terminal
/// is in raw-ish mode (no echo, no signals) while reading, so Ctrl-C
/// cancels cleanly and the echo always comes back.
#[cfg(unix)]
pub fn from_terminal(prompt: &str) -> Result<String, PasswordError> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|_| PasswordError::NoTerminal)?;
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data; fd is an open terminal for this scope.
    let mut old: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(fd, &mut old) } != 0 {
        return Err(PasswordError::NoTerminal);
    }
    let mut quiet = old;
    quiet.c_lflag &= !(libc::ECHO | libc::ECHONL | libc::ICANON | libc::ISIG);
    quiet.c_cc[libc::VMIN] = 1;
    quiet.c_cc[libc::VTIME] = 0;
    // Quiet first, prompt second: keys typed after the prompt are never echoed.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) };
    let mut out = &tty;
    let prompted = out.write_all(prompt.as_bytes()).and_then(|_| out.flush());
    let mut line = Vec::new();
    let result = prompted.map_err(PasswordError::from).and_then(|_| {
        let mut byte = [0u8; 1];
        loop {
            if (&tty).read(&mut byte)? == 0 {
                return Ok(false);
            }
            match byte[0] {
                b'\r' | b'\n' => return Ok(true),
                0x03 => return Err(PasswordError::Cancelled),
                0x04 if line.is_empty() => return Ok(false),
                0x7f | 0x08 => {
                    // Drop one whole UTF-8 character.
                    while let Some(b) = line.pop() {
                        if b & 0xC0 != 0x80 {
                            break;
                        }
                    }
                }
                0x15 => line.clear(),
                b => line.push(b),
            }
        }
    });
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &old) };
    let _ = out.write_all(b"\n");
    result?;
    let pw = String::from_utf8(line).map_err(|_| PasswordError::NotUtf8)?;
    if pw.is_empty() {
        return Err(PasswordError::Empty);
    }
    Ok(pw)
}

#[cfg(not(unix))]
pub fn from_terminal(_prompt: &str) -> Result<String, PasswordError> {
    Err(PasswordError::NoTerminal)
}
