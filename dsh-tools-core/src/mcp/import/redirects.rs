//! The HTTP client of a streamable-HTTP import: redirects stay on the endpoint's origin.
//!
//! A redirect to another origin would carry the request (and the headers the host configured,
//! an API key among them) to a server the user never named; a redirect loop would keep the
//! connection busy. Both are refused, and the refusal is kept so the connection's error can say
//! which (the transport's own error only says that a redirect failed).

use std::sync::{Arc, Mutex, PoisonError};

use reqwest::Url;
use reqwest::redirect::{Attempt, Policy};

/// How many redirects one request follows (within the origin) before it fails.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// Why the last refused redirect was refused (shared with the redirect policy).
#[derive(Debug, Clone, Default)]
pub(crate) struct Refusal(Arc<Mutex<Option<String>>>);

impl Refusal {
    /// The reason of the last refused redirect, if any (taken).
    pub(crate) fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn refuse(&self, attempt: Attempt<'_>, reason: String) -> reqwest::redirect::Action {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason.clone());
        attempt.error(reason)
    }
}

/// A client for `endpoint` that follows at most [`MAX_REDIRECTS`] redirects, all on the
/// endpoint's origin, and the record of its refusals; fails when no HTTP client can be built
/// (no TLS backend).
pub(crate) fn client(endpoint: &str) -> Result<(reqwest::Client, Refusal), String> {
    let origin = Url::parse(endpoint).ok().map(|url| url.origin());
    let refusal = Refusal::default();
    let policy = {
        let refusal = refusal.clone();
        Policy::custom(move |attempt| {
            let target = attempt.url().clone();
            if Some(target.origin()) != origin {
                let reason = format!(
                    "the server redirected to another origin ({target}), which this client does \
                     not follow"
                );
                return refusal.refuse(attempt, reason);
            }
            if attempt.previous().len() > MAX_REDIRECTS {
                let reason = format!(
                    "the server redirected more than {MAX_REDIRECTS} times (too many redirects; \
                     the last to {target})"
                );
                return refusal.refuse(attempt, reason);
            }
            attempt.follow()
        })
    };
    let client = reqwest::Client::builder()
        .redirect(policy)
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    Ok((client, refusal))
}
