//! Arbitrary parameters for arbitrary catalog operations. A built path never holds a dot segment
//! (`.` or `..`), which HTTP clients would resolve to another route.
#![no_main]
use libfuzzer_sys::fuzz_target;
use royaltykit::request::{build_request, RequestParams};

fuzz_target!(|data: (u8, Vec<(String, String)>, Vec<(String, String)>, Option<Vec<u8>>, Option<String>, Option<String>)| {
    let (pick, path, query, body, token, key) = data;
    let ops = royaltykit::catalog::operations();
    let op = &ops[usize::from(pick) % ops.len()];
    let params = RequestParams {
        path,
        query,
        body,
        // either API's token, so both routes' refusals are reached
        token: token.map(|t| {
            if pick % 2 == 0 {
                royaltykit::token::BearerToken::reports(t, "0f8fad5b-d9cb-469f-a165-70867728950e")
            } else {
                royaltykit::token::BearerToken::enterprise(t)
            }
        }),
        tenant_id: Some("0f8fad5b-d9cb-469f-a165-70867728950e".to_owned()),
        idempotency_key: key,
        ..RequestParams::default()
    };
    if let Ok(d) = build_request(&op.id, &params) {
        assert!(
            !d.path.split('/').any(|segment| segment == "." || segment == ".."),
            "dot segment in {}",
            d.path
        );
    }
});
