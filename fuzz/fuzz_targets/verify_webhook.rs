//! Arbitrary header lines and body through verification: any result but a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use royaltykit::webhook::{self, VerifyOptions};

fuzz_target!(|data: &[u8]| {
    // Split the input: lines of "name:value" headers, a NUL, then the body.
    let (head, body) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let text = String::from_utf8_lossy(head);
    let headers: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
    let _ = webhook::verify(&headers, body, &["whsec_fuzz", "previous"], 1_800_000_000, VerifyOptions::default());
});
