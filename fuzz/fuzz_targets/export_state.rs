//! Arbitrary export states through every command and the poll decision.
#![no_main]
use libfuzzer_sys::fuzz_target;
use royaltykit::export::{self, ExportCommand, ExportState};

fuzz_target!(|data: (String, i64, i64, f64)| {
    let (value, attempt, unchanged, random) = data;
    let state = ExportState::parse(&value);
    for c in [ExportCommand::Get, ExportCommand::Cancel, ExportCommand::Revoke, ExportCommand::Download] {
        let _ = export::validate_export_command(&state, c);
    }
    let _ = export::export_poll_decision(&state, attempt, Some(unchanged), random, Some(100), Some(5));
    let _ = export::export_poll_decision(&state, attempt, None, random, None, None);
});
