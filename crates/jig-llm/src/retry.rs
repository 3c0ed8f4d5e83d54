//! [`RetryPolicy`]: how often and how long apart failed model requests are sent again.

use std::time::Duration;

/// How failed requests are retried: on HTTP 408, 409, 429, 5xx (including Anthropic's 529
/// "overloaded") and on connection failures, with exponential backoff. A `Retry-After` header
/// (seconds) is honoured up to `max_delay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` attempts in all).
    pub max_retries: u32,
    /// The wait before the first retry; doubled for each further one.
    pub initial_delay: Duration,
    /// The longest wait between two attempts.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry + 1` (0-based `retry`): `initial_delay` doubled per
    /// earlier retry, at most `max_delay`.
    pub fn backoff(&self, retry: u32) -> Duration {
        self.initial_delay
            .saturating_mul(2u32.saturating_pow(retry))
            .min(self.max_delay)
    }

    /// The wait before retry number `retry + 1`: the server's `Retry-After` when it sent one,
    /// else [`RetryPolicy::backoff`]; at most `max_delay` either way.
    pub(crate) fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        retry_after.map_or_else(|| self.backoff(retry), |after| after.min(self.max_delay))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let policy = RetryPolicy {
            max_retries: 5,
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
        };
        assert_eq!(policy.delay(0, None), Duration::from_millis(100));
        assert_eq!(policy.delay(1, None), Duration::from_millis(200));
        assert_eq!(policy.delay(2, None), Duration::from_millis(300));
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(10))),
            Duration::from_millis(300)
        );
    }
}
