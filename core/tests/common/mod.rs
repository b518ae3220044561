//! Helpers shared by the vector harnesses: loading tests/vectors/*.json and decoding fields.
#![allow(dead_code, clippy::unwrap_used, clippy::indexing_slicing)]

use serde_json::Value;

/// Loads a vector file from `$ROYALTYKIT_VECTORS` or the repository's tests/vectors.
pub fn load(name: &str) -> Value {
    let dir = std::env::var("ROYALTYKIT_VECTORS")
        .unwrap_or_else(|_| format!("{}/../tests/vectors", env!("CARGO_MANIFEST_DIR")));
    serde_json::from_str(&std::fs::read_to_string(format!("{dir}/{name}")).unwrap()).unwrap()
}

/// A body given as `{"utf8": …}` or `{"hex": …}`; `None` for JSON null.
pub fn bytes(v: &Value) -> Option<Vec<u8>> {
    if v.is_null() {
        return None;
    }
    Some(match v.get("utf8") {
        Some(s) => s.as_str().unwrap().as_bytes().to_vec(),
        None => {
            let h = v["hex"].as_str().unwrap();
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect()
        }
    })
}

/// `[[name, value], …]` as owned pairs.
pub fn pairs(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().into(), p[1].as_str().unwrap().into()))
        .collect()
}
