//! Arbitrary bodies, correctly signed, reach the payload parser.
#![no_main]
use libfuzzer_sys::fuzz_target;
use royaltykit::webhook::{self, VerifyOptions};

fuzz_target!(|body: &[u8]| {
    let h = webhook::sign(&["whsec_fuzz"], body, 1_800_000_000, "dlv").expect("signing cannot fail here");
    let _ = webhook::verify(&h.pairs(), body, &["whsec_fuzz"], 1_800_000_000, VerifyOptions::default());
    let _ = webhook::WebhookEvent::parse(body);
});
