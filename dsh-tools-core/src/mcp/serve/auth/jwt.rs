//! Bearer tokens: JWT access tokens verified against the issuer's JWKS.
//!
//! The JWKS URL comes from the issuer's metadata (RFC 8414 `oauth-authorization-server`, else
//! OpenID `openid-configuration`), whose `issuer` must equal the configured one. Keys are cached
//! by `kid`; a token naming a key the cache lacks refetches the set, at most once per
//! `refetch_interval` whatever the traffic (one fetch at a time: concurrent requests wait for it).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use tokio::sync::Mutex;

/// Why a token was refused (the `error_description` of the 401; never the token itself).
#[derive(Debug, thiserror::Error)]
pub(super) enum TokenError {
    #[error("the token is not a JWS: {0}")]
    Malformed(String),
    #[error("the token's algorithm {0:?} is not accepted (asymmetric signatures only)")]
    Algorithm(Algorithm),
    #[error("no key of the issuer's JWKS matches the token's kid {0:?}")]
    UnknownKey(Option<String>),
    #[error("the issuer's keys cannot be fetched: {0}")]
    Keys(String),
    #[error("the token is not valid: {0}")]
    Invalid(String),
}

/// The validated claims of a token.
#[derive(Debug, Clone)]
pub(super) struct Claims(pub(super) Value);

#[derive(Debug, Default)]
struct KeyCache {
    jwks_uri: Option<String>,
    keys: HashMap<Option<String>, (DecodingKey, Option<Algorithm>)>,
    fetched: Option<Instant>,
}

/// The verifier of one issuer's tokens for one audience.
#[derive(Debug)]
pub(super) struct Verifier {
    issuer: String,
    audience: String,
    leeway: Duration,
    refetch_interval: Duration,
    http: reqwest::Client,
    cache: Mutex<KeyCache>,
}

impl Verifier {
    pub(super) fn new(
        issuer: String,
        audience: String,
        leeway: Duration,
        refetch_interval: Duration,
    ) -> Self {
        Self {
            issuer,
            audience,
            leeway,
            refetch_interval,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            cache: Mutex::new(KeyCache::default()),
        }
    }

    /// Verifies signature, `iss`, `aud`, `exp` and `nbf` (with the leeway).
    pub(super) async fn verify(&self, token: &str) -> Result<Claims, TokenError> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| TokenError::Malformed(e.to_string()))?;
        if matches!(
            header.alg,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
        ) {
            return Err(TokenError::Algorithm(header.alg));
        }
        let key = self.key(header.kid.clone(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.leeway.as_secs();
        jsonwebtoken::decode::<Value>(token, &key, &validation)
            .map(|data| Claims(data.claims))
            .map_err(|e| TokenError::Invalid(e.to_string()))
    }

    /// The key for `kid` (or the only key, for a token without `kid`), refetching the set when
    /// the cache lacks it and the last fetch is older than the refetch interval.
    async fn key(&self, kid: Option<String>, alg: Algorithm) -> Result<DecodingKey, TokenError> {
        let mut cache = self.cache.lock().await;
        let stale = cache
            .fetched
            .is_none_or(|at| at.elapsed() >= self.refetch_interval);
        if lookup(&cache, &kid).is_none() && stale {
            cache.fetched = Some(Instant::now());
            let uri = match cache.jwks_uri.clone() {
                Some(uri) => uri,
                None => self.discover().await?,
            };
            cache.keys = self.fetch_keys(&uri).await?;
            cache.jwks_uri = Some(uri);
        }
        let (key, key_alg) = lookup(&cache, &kid).ok_or(TokenError::UnknownKey(kid))?;
        match key_alg {
            Some(key_alg) if *key_alg != alg => Err(TokenError::Algorithm(alg)),
            _ => Ok(key.clone()),
        }
    }

    /// The issuer's `jwks_uri`, from its metadata.
    async fn discover(&self) -> Result<String, TokenError> {
        let base = self.issuer.trim_end_matches('/');
        let mut last = String::new();
        for well_known in ["oauth-authorization-server", "openid-configuration"] {
            // RFC 8414 inserts the well-known segment before the issuer's path; OpenID appends it.
            let url = match (well_known, split_origin(base)) {
                ("oauth-authorization-server", Some((origin, path))) => {
                    format!("{origin}/.well-known/{well_known}{path}")
                }
                _ => format!("{base}/.well-known/{well_known}"),
            };
            match self.get_json(&url).await {
                Ok(meta) if meta["issuer"].as_str() == Some(self.issuer.as_str()) => {
                    return meta["jwks_uri"]
                        .as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| TokenError::Keys(format!("{url} names no jwks_uri")));
                }
                Ok(meta) => {
                    last = format!("{url} names issuer {} instead", meta["issuer"]);
                }
                Err(e) => last = e,
            }
        }
        Err(TokenError::Keys(last))
    }

    async fn fetch_keys(
        &self,
        uri: &str,
    ) -> Result<HashMap<Option<String>, (DecodingKey, Option<Algorithm>)>, TokenError> {
        let set = self.get_json(uri).await.map_err(TokenError::Keys)?;
        let keys = set["keys"]
            .as_array()
            .ok_or_else(|| TokenError::Keys(format!("{uri}: no \"keys\" array")))?;
        // Keys this verifier cannot use (encryption keys, symmetric keys, unknown types) are
        // skipped, not fatal: a set may hold them beside the signing keys.
        Ok(keys
            .iter()
            .filter_map(|key| serde_json::from_value::<Jwk>(key.clone()).ok())
            .filter(|jwk| !matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)))
            .filter(|jwk| !matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)))
            .filter_map(|jwk| {
                let alg = match jwk.common.key_algorithm {
                    Some(alg) => Some(Algorithm::try_from(alg).ok()?),
                    None => None,
                };
                let key = DecodingKey::from_jwk(&jwk).ok()?;
                Some((jwk.common.key_id, (key, alg)))
            })
            .collect())
    }

    async fn get_json(&self, url: &str) -> Result<Value, String> {
        let response = self
            .http
            .get(url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("GET {url}: HTTP {}", response.status()));
        }
        let body = response
            .bytes()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        serde_json::from_slice(&body).map_err(|e| format!("GET {url}: not JSON: {e}"))
    }
}

fn lookup<'a>(
    cache: &'a KeyCache,
    kid: &Option<String>,
) -> Option<&'a (DecodingKey, Option<Algorithm>)> {
    match kid {
        Some(_) => cache.keys.get(kid),
        // A token without `kid` is verified only when the set has exactly one key.
        None if cache.keys.len() == 1 => cache.keys.values().next(),
        None => None,
    }
}

/// `https://host:port/path` → (`https://host:port`, `/path`).
pub(super) fn split_origin(url: &str) -> Option<(&str, &str)> {
    let after_scheme = url.find("://")? + 3;
    match url[after_scheme..].find('/') {
        Some(slash) => Some(url.split_at(after_scheme + slash)),
        None => Some((url, "")),
    }
}
