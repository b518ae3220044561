//! The generic vector runner (tests/vectors/shape.py describes the one shape every file has) and
//! helpers to decode inputs. Each language has one runner like this one; only the adapter table,
//! which calls the function a group names, differs.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::result_large_err
)]

use serde_json::Value;

/// Loads a vector file from `$ROYALTYKIT_VECTORS` or the repository's tests/vectors.
pub fn load(name: &str) -> Value {
    let dir = std::env::var("ROYALTYKIT_VECTORS")
        .unwrap_or_else(|_| format!("{}/../tests/vectors", env!("CARGO_MANIFEST_DIR")));
    serde_json::from_str(&std::fs::read_to_string(format!("{dir}/{name}")).unwrap()).unwrap()
}

/// What an adapter gives back: a JSON view of the result, or the core's error.
pub type Outcome = Result<Value, royaltykit::Error>;

/// Runs every test of one file through `adapter(function, input)`; `None` means the runner has
/// no adapter for that function, which fails the run. Returns the number of tests run.
pub fn run(file: &str, adapter: impl Fn(&str, &Value) -> Option<Outcome>) -> usize {
    let data = load(file);
    let mut failures = Vec::new();
    let mut count = 0;
    for group in data["testGroups"].as_array().unwrap() {
        let function = group["function"].as_str().unwrap();
        for t in group["tests"].as_array().unwrap() {
            count += 1;
            let id = format!("{file} tcId {} {function} ({})", t["tcId"], t["comment"]);
            let Some(got) = adapter(function, &t["input"]) else {
                failures.push(format!("{id}: no adapter for `{function}`"));
                continue;
            };
            let problem = match (t["result"].as_str().unwrap(), got) {
                ("valid", Ok(v)) => mismatch(&t["expected"], &v).map(|m| format!("{m} in {v}")),
                ("invalid", Err(e)) => {
                    mismatch(&t["error"], &error_view(&e)).map(|m| format!("{m}: {e}"))
                }
                (_, Ok(v)) => Some(format!("accepted: {v}")),
                (_, Err(e)) => Some(format!("refused: {} ({e})", e.code())),
            };
            if let Some(p) = problem {
                failures.push(format!("{id}: {p}"));
            }
        }
    }
    assert_eq!(
        count as u64,
        data["numberOfTests"].as_u64().unwrap(),
        "{file}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    count
}

/// The core's error as JSON, with an API error's parsed response flattened onto it (as every
/// binding presents it).
fn error_view(e: &royaltykit::Error) -> Value {
    let mut v = serde_json::to_value(e).unwrap();
    if let Some(Value::Object(inner)) = v.as_object_mut().unwrap().remove("error") {
        v.as_object_mut().unwrap().extend(inner);
    }
    v
}

fn camel(key: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in key.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn member<'a>(actual: &'a Value, key: &str) -> Option<&'a Value> {
    actual.get(key).or_else(|| actual.get(camel(key)))
}

/// Why `actual` does not match `expected` (a subset match; see shape.py), or `None`.
pub fn mismatch(expected: &Value, actual: &Value) -> Option<String> {
    match expected {
        Value::Object(fields) => fields.iter().find_map(|(k, want)| {
            let checked = [("_prefix", 0), ("_max_len", 1), ("_count", 2)]
                .iter()
                .find_map(|(suffix, kind)| {
                    let base = k.strip_suffix(suffix)?;
                    let got = member(actual, base)?;
                    Some(match kind {
                        0 => got.as_str()?.starts_with(want.as_str()?),
                        1 => got.as_str()?.chars().count() as u64 <= want.as_u64()?,
                        _ => got.as_array()?.len() as u64 == want.as_u64()?,
                    })
                });
            match (checked, member(actual, k)) {
                (Some(true), _) => None,
                (Some(false), _) => Some(format!("`{k}` {want} does not hold")),
                (None, None) => Some(format!("`{k}` missing")),
                (None, Some(got)) => mismatch(want, got).map(|m| format!("{k}: {m}")),
            }
        }),
        Value::Array(items) => match actual.as_array() {
            Some(got) if got.len() == items.len() => items
                .iter()
                .zip(got)
                .enumerate()
                .find_map(|(i, (w, g))| mismatch(w, g).map(|m| format!("[{i}]: {m}"))),
            _ => Some(format!("expected {expected}, got {actual}")),
        },
        Value::Number(n) => match actual.as_f64() {
            Some(g) if (g - n.as_f64().unwrap()).abs() < 1e-9 => None,
            _ => Some(format!("expected {expected}, got {actual}")),
        },
        _ => (expected != actual).then(|| format!("expected {expected}, got {actual}")),
    }
}

/// A body given as `{"utf8": …}` or `{"hex": …}`; empty when absent or null.
pub fn bytes(v: &Value) -> Vec<u8> {
    if let Some(s) = v.get("utf8") {
        return s.as_str().unwrap().as_bytes().to_vec();
    }
    let h = v.get("hex").and_then(Value::as_str).unwrap_or("");
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

/// `[[name, value], …]` as owned pairs; empty when absent.
pub fn pairs(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|p| (p[0].as_str().unwrap().into(), p[1].as_str().unwrap().into()))
                .collect()
        })
        .unwrap_or_default()
}

/// A list of strings; empty when absent.
pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}
