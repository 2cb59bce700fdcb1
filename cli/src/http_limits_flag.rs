//! The `mcp serve --http` limit flags (`--max-sessions`, `--header-timeout`, …): each one
//! overrides one field of [`HttpLimits`], whose defaults hold otherwise.

use std::time::Duration;

use clap::Args;
use dsh_tools_runtime::mcp::HttpLimits;

/// The limits of the HTTP server (see [`HttpLimits`] for the defaults).
#[derive(Debug, Clone, Default, Args)]
pub struct HttpLimitFlags {
    /// Sessions held at once; an `initialize` past it gets 503 with Retry-After.
    #[arg(long, value_name = "N")]
    pub max_sessions: Option<usize>,
    /// Seconds a session may wait for the client's `notifications/initialized`.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub pending_session_timeout: Option<Duration>,
    /// Seconds an initialized session lives without a request.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub session_idle_timeout: Option<Duration>,
    /// Connections held at once; one past it gets 503 and is closed.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Seconds to wait for a request's head (also how long an idle connection is kept).
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub header_timeout: Option<Duration>,
    /// Seconds to wait for a request's body.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub body_timeout: Option<Duration>,
}

impl HttpLimitFlags {
    /// The defaults with the flags given applied.
    pub fn limits(&self) -> HttpLimits {
        let mut limits = HttpLimits::default();
        let set = |field: &mut Duration, flag: Option<Duration>| {
            if let Some(value) = flag {
                *field = value;
            }
        };
        if let Some(n) = self.max_sessions {
            limits.max_sessions = n;
        }
        if let Some(n) = self.max_connections {
            limits.max_connections = n;
        }
        set(
            &mut limits.pending_session_timeout,
            self.pending_session_timeout,
        );
        set(&mut limits.session_idle_timeout, self.session_idle_timeout);
        set(&mut limits.header_timeout, self.header_timeout);
        set(&mut limits.body_timeout, self.body_timeout);
        limits
    }
}

/// A positive number of seconds (`0.5`, `30`).
fn seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("expected a positive number of seconds, got {text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_defaults_they_name() {
        let flags = HttpLimitFlags {
            max_sessions: Some(8),
            header_timeout: Some(Duration::from_millis(250)),
            ..HttpLimitFlags::default()
        };
        let limits = flags.limits();
        assert_eq!(limits.max_sessions, 8);
        assert_eq!(limits.header_timeout, Duration::from_millis(250));
        assert_eq!(limits.body_timeout, HttpLimits::default().body_timeout);
        assert_eq!(seconds("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(
            seconds("-1"),
            Err("expected a positive number of seconds, got \"-1\"".to_owned())
        );
    }
}
