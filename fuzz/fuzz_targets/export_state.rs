//! Arbitrary export states through every command and the poll decision.
#![no_main]
use libfuzzer_sys::fuzz_target;
use royaltykit::export::{self, ExportCommand, ExportState};

fuzz_target!(|data: (String, i64, i64, f64)| {
    let (value, attempt, max_polls, random) = data;
    let state = ExportState::parse(&value);
    for c in [ExportCommand::Get, ExportCommand::Cancel, ExportCommand::Revoke, ExportCommand::Download] {
        let _ = export::validate_export_command(&state, c);
    }
    let _ = export::export_poll_decision(&state, attempt, random, Some(max_polls));
    let _ = export::export_poll_decision(&state, attempt, random, None);
});
