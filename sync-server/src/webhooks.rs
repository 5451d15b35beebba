//! Webhook deliveries: a background task `serve` starts takes due rows of the outbox
//! (`webhook_deliveries`, written by `events::fire` in the transaction of the write that
//! caused them), POSTs each to its hook's URL signed with the hook's secret, and records the
//! answer. A 2xx is delivered; anything else, or no answer in time, is tried again after an
//! exponential backoff (`Config::webhook_base_delay`, doubled per attempt, capped at
//! `webhook_max_delay`) until `webhook_max_attempts`, then `failed`. A paused hook's rows
//! wait. A row is claimed before it is sent (its next attempt moved past the send's
//! timeout), so two server processes on one database do not send it twice at once.
//!
//! The secret signs and is never logged, listed or put in the audit log: errors name the
//! hook and the status only.

use std::sync::LazyLock;
use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::sync::Notify;

use crate::Config;
use crate::store::{Store, get_i64, get_str};

/// The signature header: `sha256=<hex>` of HMAC-SHA256(secret, body).
pub const SIGNATURE: &str = "X-AlphaScout-Signature";
pub const EVENT: &str = "X-AlphaScout-Event";
pub const DELIVERY: &str = "X-AlphaScout-Delivery";
pub const TIMESTAMP: &str = "X-AlphaScout-Timestamp";

/// How long one delivery may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

static WAKE: LazyLock<Notify> = LazyLock::new(Notify::new);

/// Wakes the delivery task (a new event is queued, or a hook resumed).
pub fn wake() {
    WAKE.notify_waiters();
}

/// `sha256=<hex>` of the body keyed with the secret.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body);
    format!("sha256={}", run_contract::digest::hex(&mac.finalize().into_bytes()))
}

/// A new secret: `whsec_` and 32 random bytes in hex.
pub fn new_secret() -> String {
    format!("whsec_{}", run_contract::digest::hex(&rand::random::<[u8; 32]>()))
}

/// Whether a hook may be sent to `url`: `https://` anywhere, `http://` to this computer
/// only, never with user info. Returns why not.
pub fn check_url(url: &str) -> Result<(), &'static str> {
    let parsed = run_contract::url::WebUrl::parse(url).ok_or("is not a URL")?;
    let after_scheme = url.split_once("://").map_or("", |(_, rest)| rest);
    let authority = after_scheme.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err("must not carry a user name or password");
    }
    match parsed.scheme() {
        "https" => Ok(()),
        "http" => {
            let host = parsed.host_str().unwrap_or("");
            let loopback = host == "localhost"
                || host == "[::1]"
                || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback());
            if loopback {
                Ok(())
            } else {
                Err("must be https://, or http:// to a loopback host (localhost, 127.0.0.1, [::1])")
            }
        }
        _ => Err("must be https://, or http:// to a loopback host"),
    }
}

/// How long to wait before attempt `attempts + 1`, after `attempts` failures.
pub fn backoff(config: &Config, attempts: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempts.saturating_sub(1));
    config.webhook_base_delay.saturating_mul(factor).min(config.webhook_max_delay)
}

/// Delivers due rows until the server stops: wakes when an event is queued, when the next
/// retry is due, or every `webhook_poll` (another server process may have queued one).
pub async fn deliver_forever(store: Store, config: std::sync::Arc<Config>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(SEND_TIMEOUT))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent("AlphaScout-Webhooks/1")
        .build()
        .into();
    loop {
        let woken = WAKE.notified();
        match deliver_due(&store, &config, &agent).await {
            Ok(0) => {}
            Ok(_) => continue,
            Err(e) => eprintln!("sync-server: webhook deliveries: {e}"),
        }
        let wait = next_due_in(&store).await.unwrap_or(config.webhook_poll);
        let _ = tokio::time::timeout(wait.min(config.webhook_poll), woken).await;
    }
}

/// How long until the earliest pending row of an active hook is due.
async fn next_due_in(store: &Store) -> Option<Duration> {
    let row = sqlx::query(
        "SELECT MIN(d.next_attempt_at) AS due FROM webhook_deliveries d \
         JOIN webhooks h ON h.id = d.hook_id WHERE d.status = 'pending' AND h.paused = 0",
    )
    .fetch_one(&store.pool)
    .await
    .ok()?;
    let due: Option<String> = sqlx::Row::try_get(&row, "due").ok()?;
    let due = run_contract::time::parse_ms(&due?)?;
    Some(Duration::from_millis((due - crate::time::now_ms()).max(0) as u64))
}

/// Sends every row due now (at most 20 a round); returns how many were tried.
async fn deliver_due(store: &Store, config: &Config, agent: &ureq::Agent) -> Result<usize, String> {
    let now = crate::time::now();
    let rows = sqlx::query(
        "SELECT d.id, d.event_id, d.event, d.body, d.attempts, d.next_attempt_at, h.url, \
         h.secret FROM webhook_deliveries d JOIN webhooks h ON h.id = d.hook_id \
         WHERE d.status = 'pending' AND h.paused = 0 AND d.next_attempt_at <= $1 \
         ORDER BY d.next_attempt_at, d.seq LIMIT 20",
    )
    .bind(now)
    .fetch_all(&store.pool)
    .await
    .map_err(|e| e.to_string())?;
    let mut tried = 0;
    for row in rows {
        let id = get_str(&row, "id").map_err(|e| e.to_string())?;
        let due = get_str(&row, "next_attempt_at").map_err(|e| e.to_string())?;
        // Claim it: push its next attempt past this send's timeout; whoever moves it sends.
        let lease =
            crate::time::format_ms(crate::time::now_ms() + 2 * SEND_TIMEOUT.as_millis() as i64);
        let claimed = sqlx::query(
            "UPDATE webhook_deliveries SET next_attempt_at = $3 WHERE id = $1 \
             AND next_attempt_at = $2 AND status = 'pending'",
        )
        .bind(id.clone())
        .bind(due)
        .bind(lease)
        .execute(&store.pool)
        .await
        .map_err(|e| e.to_string())?;
        if claimed.rows_affected() == 0 {
            continue;
        }
        tried += 1;
        let body = get_str(&row, "body").map_err(|e| e.to_string())?;
        let url = get_str(&row, "url").map_err(|e| e.to_string())?;
        let secret = get_str(&row, "secret").map_err(|e| e.to_string())?;
        let event = get_str(&row, "event").map_err(|e| e.to_string())?;
        let event_id = get_str(&row, "event_id").map_err(|e| e.to_string())?;
        let at = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|b| b["at"].as_str().and_then(run_contract::time::parse_ms))
            .unwrap_or_else(crate::time::now_ms);
        let agent = agent.clone();
        let sent = tokio::task::spawn_blocking(move || {
            let signature = sign(&secret, body.as_bytes());
            let answer = agent
                .post(&url)
                .header("Content-Type", "application/json")
                .header(SIGNATURE, &signature)
                .header(EVENT, &event)
                .header(DELIVERY, &event_id)
                .header(TIMESTAMP, &(at / 1000).to_string())
                .send(body.as_bytes());
            match answer {
                Ok(response) => Ok(response.status().as_u16()),
                // The client's words, which name the host but never the secret.
                Err(e) => Err(e.to_string()),
            }
        })
        .await
        .unwrap_or_else(|e| Err(format!("the delivery task failed: {e}")));
        let attempts = get_i64(&row, "attempts").map_err(|e| e.to_string())? + 1;
        record(store, config, &id, attempts, sent).await.map_err(|e| e.to_string())?;
    }
    Ok(tried)
}

/// Records an attempt's outcome: delivered, failed for good, or due again after the backoff.
async fn record(
    store: &Store,
    config: &Config,
    id: &str,
    attempts: i64,
    sent: Result<u16, String>,
) -> Result<(), sqlx::Error> {
    let now = crate::time::now_ms();
    let (code, error) = match &sent {
        Ok(code) => (Some(i64::from(*code)), None),
        Err(e) => (None, Some(e.chars().take(500).collect::<String>())),
    };
    let delivered = matches!(sent, Ok(code) if (200..300).contains(&code));
    let (status, next, delivered_at) = if delivered {
        ("delivered", None, Some(crate::time::format_ms(now)))
    } else if attempts >= i64::from(config.webhook_max_attempts) {
        ("failed", None, None)
    } else {
        let wait = backoff(config, attempts as u32).as_millis() as i64;
        ("pending", Some(crate::time::format_ms(now + wait)), None)
    };
    let mut tx = store.begin().await?;
    sqlx::query(
        "UPDATE webhook_deliveries SET status = $2, attempts = $3, next_attempt_at = $4, \
         last_status = $5, last_error = $6, delivered_at = $7 WHERE id = $1",
    )
    .bind(id.to_owned())
    .bind(status)
    .bind(attempts)
    .bind(next)
    .bind(code)
    .bind(error)
    .bind(delivered_at)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_hmac_sha256_hex() {
        // RFC 4231 test case 2.
        assert_eq!(
            sign("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(new_secret().starts_with("whsec_"));
        assert_eq!(new_secret().len(), 6 + 64);
    }

    #[test]
    fn hooks_go_to_https_or_this_computer_only() {
        assert_eq!(check_url("https://hooks.example.com/in"), Ok(()));
        assert_eq!(check_url("http://127.0.0.1:9000/in"), Ok(()));
        assert_eq!(check_url("http://localhost/in"), Ok(()));
        assert_eq!(check_url("http://[::1]:8080/"), Ok(()));
        assert!(check_url("http://hooks.example.com/in").is_err());
        assert!(check_url("http://10.0.0.1/in").is_err());
        assert!(check_url("ftp://127.0.0.1/").is_err());
        assert!(check_url("https://user:pw@hooks.example.com/").is_err());
        assert!(check_url("not a url").is_err());
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let config = Config {
            webhook_base_delay: Duration::from_secs(30),
            webhook_max_delay: Duration::from_secs(3600),
            ..Config::default()
        };
        assert_eq!(backoff(&config, 1), Duration::from_secs(30));
        assert_eq!(backoff(&config, 2), Duration::from_secs(60));
        assert_eq!(backoff(&config, 4), Duration::from_secs(240));
        assert_eq!(backoff(&config, 20), Duration::from_secs(3600));
    }
}
