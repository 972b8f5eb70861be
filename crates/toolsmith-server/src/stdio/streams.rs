//! The process's standard streams, taken over for the protocol: a pipe or socket is driven
//! by tokio's reactor, and file descriptor 1 is pointed at stderr.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The protocol's input: a pipe or socket on the reactor, else tokio's stdin.
pub(super) enum Input {
    #[cfg(target_os = "linux")]
    Pipe(tokio::net::unix::pipe::Receiver),
    #[cfg(unix)]
    Socket(tokio::net::UnixStream),
    Stdin(tokio::io::Stdin),
}

/// The protocol's output: a pipe or socket on the reactor, else a file handle.
pub(super) enum Output {
    #[cfg(target_os = "linux")]
    Pipe(tokio::net::unix::pipe::Sender),
    #[cfg(unix)]
    Socket(tokio::net::UnixStream),
    File(tokio::fs::File),
    #[cfg(not(unix))]
    Stdout(tokio::io::Stdout),
}

/// Takes stdin and stdout for the protocol, then points file descriptor 1 at stderr so
/// nothing else can write to the protocol stream.
pub(super) fn protocol_streams() -> io::Result<(Input, Output)> {
    #[cfg(unix)]
    {
        let input = unix::input();
        let output = unix::output()?;
        unix::guard_standard_streams(&input);
        Ok((input, output))
    }
    #[cfg(not(unix))]
    {
        Ok((
            Input::Stdin(tokio::io::stdin()),
            Output::Stdout(tokio::io::stdout()),
        ))
    }
}

#[cfg(unix)]
mod unix {
    use std::fs::OpenOptions;
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

    use super::{Input, Output, io};

    enum Kind {
        Fifo,
        Socket,
        Other,
    }

    fn kind(fd: impl AsFd) -> Kind {
        let Ok(owned) = fd.as_fd().try_clone_to_owned() else {
            return Kind::Other;
        };
        match std::fs::File::from(owned).metadata().map(|m| m.file_type()) {
            Ok(kind) if kind.is_fifo() => Kind::Fifo,
            Ok(kind) if kind.is_socket() => Kind::Socket,
            _ => Kind::Other,
        }
    }

    /// A FIFO reopened through `/proc/self/fd` with `O_NONBLOCK`: its own open file
    /// description, so the flag does not leak to the process's standard streams.
    #[cfg(target_os = "linux")]
    fn reopen(fd: i32, write: bool) -> io::Result<OwnedFd> {
        let mut options = OpenOptions::new();
        options
            .read(!write)
            .write(write)
            .custom_flags(libc::O_NONBLOCK);
        Ok(options.open(format!("/proc/self/fd/{fd}"))?.into())
    }

    fn socket(fd: impl AsFd) -> io::Result<tokio::net::UnixStream> {
        let stream = std::os::unix::net::UnixStream::from(fd.as_fd().try_clone_to_owned()?);
        stream.set_nonblocking(true)?;
        tokio::net::UnixStream::from_std(stream)
    }

    pub(super) fn input() -> Input {
        let stdin = std::io::stdin();
        match kind(&stdin) {
            #[cfg(target_os = "linux")]
            Kind::Fifo => {
                match reopen(0, false).and_then(tokio::net::unix::pipe::Receiver::from_owned_fd) {
                    Ok(pipe) => Input::Pipe(pipe),
                    Err(_) => Input::Stdin(tokio::io::stdin()),
                }
            }
            Kind::Socket => {
                socket(&stdin).map_or_else(|_| Input::Stdin(tokio::io::stdin()), Input::Socket)
            }
            _ => Input::Stdin(tokio::io::stdin()),
        }
    }

    pub(super) fn output() -> io::Result<Output> {
        let stdout = std::io::stdout();
        let fallback = || -> io::Result<Output> {
            let file = std::fs::File::from(stdout.as_fd().try_clone_to_owned()?);
            Ok(Output::File(tokio::fs::File::from_std(file)))
        };
        match kind(&stdout) {
            #[cfg(target_os = "linux")]
            Kind::Fifo => {
                match reopen(1, true).and_then(tokio::net::unix::pipe::Sender::from_owned_fd) {
                    Ok(pipe) => Ok(Output::Pipe(pipe)),
                    Err(_) => fallback(),
                }
            }
            Kind::Socket => socket(&stdout).map(Output::Socket).or_else(|_| fallback()),
            _ => fallback(),
        }
    }

    /// Points fd 1 at stderr, and fd 0 at `/dev/null` when the protocol has its own
    /// handle on the input, so no library or child process touches the protocol streams.
    pub(super) fn guard_standard_streams(input: &Input) {
        if let Err(error) = nix::unistd::dup2_stdout(std::io::stderr()) {
            tracing::warn!(%error, "could not redirect stdout to stderr");
        }
        if !matches!(input, Input::Stdin(_))
            && let Ok(null) = std::fs::File::open("/dev/null")
            && let Err(error) = nix::unistd::dup2_stdin(&null)
        {
            tracing::warn!(%error, "could not detach stdin");
        }
    }
}

impl AsyncRead for Input {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            Self::Pipe(pipe) => Pin::new(pipe).poll_read(cx, buf),
            #[cfg(unix)]
            Self::Socket(socket) => Pin::new(socket).poll_read(cx, buf),
            Self::Stdin(stdin) => Pin::new(stdin).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            Self::Pipe(pipe) => Pin::new(pipe).poll_write(cx, buf),
            #[cfg(unix)]
            Self::Socket(socket) => Pin::new(socket).poll_write(cx, buf),
            Self::File(file) => Pin::new(file).poll_write(cx, buf),
            #[cfg(not(unix))]
            Self::Stdout(stdout) => Pin::new(stdout).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            Self::Pipe(pipe) => Pin::new(pipe).poll_flush(cx),
            #[cfg(unix)]
            Self::Socket(socket) => Pin::new(socket).poll_flush(cx),
            Self::File(file) => Pin::new(file).poll_flush(cx),
            #[cfg(not(unix))]
            Self::Stdout(stdout) => Pin::new(stdout).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            Self::Pipe(pipe) => Pin::new(pipe).poll_shutdown(cx),
            #[cfg(unix)]
            Self::Socket(socket) => Pin::new(socket).poll_shutdown(cx),
            Self::File(file) => Pin::new(file).poll_shutdown(cx),
            #[cfg(not(unix))]
            Self::Stdout(stdout) => Pin::new(stdout).poll_shutdown(cx),
        }
    }
}
