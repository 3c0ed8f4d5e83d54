//! The signals that ask jig to stop (SIGINT, SIGTERM, SIGHUP), and the exit status each gives.

use std::future::Future;

/// A signal that asked the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Termination {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP (the terminal went away).
    Hangup,
}

impl Termination {
    /// The signal's name, `SIGINT`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
            Self::Hangup => "SIGHUP",
        }
    }

    /// The shell's convention for a process stopped by the signal: 128 + its number.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
            Self::Hangup => 129,
        }
    }
}

/// Completes with the first of SIGINT, SIGTERM or SIGHUP. The handlers are installed now, not
/// when the future is first polled, so a signal that arrives in between is not missed; from now
/// on these signals no longer kill the process, the caller decides. Must be called within a
/// tokio runtime. If the handlers cannot be installed the future never completes (and the
/// default action of the signals stays), with a warning.
pub(crate) fn termination() -> impl Future<Output = Termination> + Send {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        let hangup = signal(SignalKind::hangup());
        async move {
            match (interrupt, terminate, hangup) {
                (Ok(mut interrupt), Ok(mut terminate), Ok(mut hangup)) => {
                    tokio::select! {
                        _ = interrupt.recv() => Termination::Interrupt,
                        _ = terminate.recv() => Termination::Terminate,
                        _ = hangup.recv() => Termination::Hangup,
                    }
                }
                (interrupt, terminate, hangup) => {
                    let error = interrupt.err().or(terminate.err()).or(hangup.err());
                    tracing::warn!(?error, "cannot install signal handlers");
                    std::future::pending().await
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            match tokio::signal::ctrl_c().await {
                Ok(()) => Termination::Interrupt,
                Err(_) => std::future::pending().await,
            }
        }
    }
}
