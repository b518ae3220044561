//! Arbitrary bodies, correctly signed, reach the payload parser; a resource path it accepts is
//! always a path under /api/v1/ without a dot segment, a query or another origin.
#![no_main]
use libfuzzer_sys::fuzz_target;
use royaltykit::webhook::{self, VerifyOptions};

fuzz_target!(|body: &[u8]| {
    let h = webhook::sign(&["whsec_fuzz"], body, 1_800_000_000, "dlv").expect("signing cannot fail here");
    let _ = webhook::verify(&h.pairs(), body, &["whsec_fuzz"], 1_800_000_000, VerifyOptions::default());
    if let Ok(event) = webhook::WebhookEvent::parse(body) {
        if let Ok(path) = event.resource_path() {
            assert!(path.starts_with("/api/v1/") && !path.contains(['?', '#', '\\']), "{path}");
            assert!(!path.split('/').any(|s| s == "." || s == ".."), "{path}");
        }
    }
    let _ = royaltykit::parse_timestamp(&String::from_utf8_lossy(body));
});
