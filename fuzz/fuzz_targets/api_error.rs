//! Arbitrary error bodies and statuses for both APIs, with and without an operation.
#![no_main]
use libfuzzer_sys::fuzz_target;
use royaltykit::api_error::parse_api_error;
use royaltykit::catalog::Api;

fuzz_target!(|data: (u16, bool, &[u8])| {
    let (status, enterprise, body) = data;
    let api = if enterprise { Api::Enterprise } else { Api::Reports };
    let op = if enterprise { "createEnterpriseWebhook" } else { "downloadPlatformExport" };
    let headers = [("Retry-After", "120")];
    let _ = parse_api_error(api, i64::from(status), &headers, body, None, 0);
    let _ = parse_api_error(api, i64::from(status), &headers, body, Some(op), 0);
    let _ = royaltykit::token::parse_token_response(i64::from(status), &headers, body, &["exports:read"], "0f8fad5b-d9cb-469f-a165-70867728950e", 0);
    let _ = royaltykit::token::parse_enterprise_token_response(i64::from(status), &headers, body, 0);
});
