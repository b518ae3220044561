//! The defaults a host supplies to the pure core: the system clock and OS randomness.
//! Used by the Python and Kotlin bindings (the Node binding uses JS's own `Date` and `crypto`).
#![forbid(unsafe_code)]
// royaltykit::Error is returned by value on the cold error path; its size does not matter here.
#![allow(clippy::result_large_err)]

/// The system clock as Unix seconds (0 if the clock is before 1970).
pub fn now_unix_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `now` if given, else the system clock.
pub fn now_or_clock(now: Option<i64>) -> i64 {
    now.unwrap_or_else(now_unix_seconds)
}

/// A random version-4 UUID, for delivery ids of signed test deliveries.
pub fn random_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// 16 bytes from the OS RNG, for `DedupWindow` hash seeds.
pub fn random_seed() -> Result<[u8; 16], royaltykit::Error> {
    let mut seed = [0u8; 16];
    getrandom::fill(&mut seed).map_err(royaltykit::Error::rng_unavailable)?;
    Ok(seed)
}

/// A uniform random number in `[0, 1)` from the OS RNG (53 random bits), for backoff jitter.
pub fn random_unit() -> Result<f64, royaltykit::Error> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(royaltykit::Error::rng_unavailable)?;
    Ok((u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64)
}

/// `random` when the caller gave one (tests, replays), else [`random_unit`].
pub fn random_or_os(random: Option<f64>) -> Result<f64, royaltykit::Error> {
    random.map_or_else(random_unit, Ok)
}

/// The system clock as Unix seconds with their fraction, for the protocol machines' clocks.
pub fn now_unix_f64() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// `now` (Unix seconds with a fraction) if given, else [`now_unix_f64`]: a protocol machine's
/// input at the host's clock unless the caller fixes the time.
pub fn now_or_clock_f64(now: Option<f64>) -> f64 {
    now.unwrap_or_else(now_unix_f64)
}

/// 64 bits from the OS RNG: a protocol machine's seed (jitter, idempotency keys).
pub fn random_u64() -> Result<u64, royaltykit::Error> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(royaltykit::Error::rng_unavailable)?;
    Ok(u64::from_le_bytes(b))
}

/// A protocol machine's bounds, its seed drawn from the OS RNG unless the host gives one.
pub fn call_options(
    max_attempts: Option<i64>,
    max_elapsed_seconds: Option<f64>,
    seed: Option<u64>,
) -> Result<royaltykit::machine::CallOptions, royaltykit::Error> {
    Ok(royaltykit::machine::CallOptions {
        max_attempts,
        max_elapsed_seconds,
        seed: seed.map_or_else(random_u64, Ok)?,
    })
}
