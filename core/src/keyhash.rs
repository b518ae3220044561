//! The encoding of every derived key (delivery, content, event, idempotency; documented in
//! `dedup`): SHA-256 over a domain tag and length-prefixed fields, hex, behind a short prefix.
//! A leaf, so that `webhook` (the content key of a verified delivery) and `dedup` share it
//! without depending on each other.

use sha2::{Digest, Sha256};

const TAG_CONTENT: &[u8] = b"royaltykit/content/v1";

/// `<prefix>_<hex SHA-256 of tag and fields, each preceded by its length as 8 bytes big-endian>`.
pub(crate) fn hash_fields(prefix: &str, tag: &[u8], fields: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for f in std::iter::once(&tag).chain(fields.iter()) {
        h.update((f.len() as u64).to_be_bytes());
        h.update(f);
    }
    let mut hex = [0u8; 64];
    // 32 bytes always fit 64 hex characters.
    let _ = hex::encode_to_slice(h.finalize(), &mut hex);
    let mut key = String::with_capacity(prefix.len() + 65);
    key.push_str(prefix);
    key.push('_');
    key.push_str(std::str::from_utf8(&hex).unwrap_or_default());
    key
}

/// The content key from the MAC of the signed content under the first secret.
pub(crate) fn content_key_from_mac(mac: &[u8; 32]) -> String {
    hash_fields("cnt", TAG_CONTENT, &[mac])
}
