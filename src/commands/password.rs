//! Reading the password: from the terminal without echo, or one line from
//! standard input (`--password-stdin`). It is only ever held in memory.

use std::io::{BufRead, Write};

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("no terminal to read the password from; pipe it in with --password-stdin")]
    NoTerminal,
    #[error("no password given on standard input")]
    Empty,
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

/// Prompt on the controlling terminal and read without echo.
#[cfg(unix)]
pub fn from_terminal(prompt: &str) -> Result<String, PasswordError> {
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
    quiet.c_lflag &= !(libc::ECHO | libc::ECHONL);
    quiet.c_lflag |= libc::ICANON;
    let mut out = &tty;
    out.write_all(prompt.as_bytes())?;
    out.flush()?;
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) };
    let mut line = String::new();
    let read = std::io::BufReader::new(&tty).read_line(&mut line);
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &old) };
    let _ = out.write_all(b"\n");
    read?;
    let pw = line.trim_end_matches(['\n', '\r']).to_owned();
    line.clear();
    if pw.is_empty() {
        return Err(PasswordError::Empty);
    }
    Ok(pw)
}

#[cfg(not(unix))]
pub fn from_terminal(_prompt: &str) -> Result<String, PasswordError> {
    Err(PasswordError::NoTerminal)
}
