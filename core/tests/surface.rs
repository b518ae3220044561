//! `surface/functions.toml` against the core: the wire names it lists for each string enum (the
//! Python `Literal`s the generator writes) are the enum's own, in its order, and every enum it
//! lists is checked here.
#![allow(clippy::expect_used, clippy::indexing_slicing)]

use royaltykit::catalog::StepUp;
use royaltykit::dedup::{ClaimState, SqlDialect};
use royaltykit::export::{ExportCommand, StepUpKind};
use royaltykit::receiver::ReceiverFailure;

fn enums() -> toml::Table {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../surface/functions.toml");
    let text = std::fs::read_to_string(path).expect("surface/functions.toml is readable");
    let table: toml::Table = text.parse().expect("surface/functions.toml is TOML");
    table["enums"]
        .as_table()
        .expect("[enums] is a table")
        .clone()
}

fn listed(enums: &toml::Table, name: &str) -> (String, Vec<String>) {
    let entry = enums[name].as_table().expect("an enum is a table");
    let path = entry["path"].as_str().expect("path is text").to_owned();
    let values = entry["values"].as_array().expect("values is a list");
    (
        path,
        values
            .iter()
            .map(|v| v.as_str().expect("a value is text").to_owned())
            .collect(),
    )
}

/// `(path, the wire names of every value in order)` of each string enum given.
macro_rules! wire {
    ($($path:literal => $t:ident),+ $(,)?) => {
        [$(($path, $t::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>())),+]
    };
}

#[test]
fn the_enums_of_the_surface_are_the_cores() {
    let enums = enums();
    let cases = wire![
        "royaltykit::export::ExportCommand" => ExportCommand,
        "royaltykit::catalog::StepUp" => StepUp,
        "royaltykit::export::StepUpKind" => StepUpKind,
        "royaltykit::dedup::SqlDialect" => SqlDialect,
        "royaltykit::dedup::ClaimState" => ClaimState,
        "royaltykit::receiver::ReceiverFailure" => ReceiverFailure,
    ];
    for (path, values) in &cases {
        let name = path.rsplit("::").next().unwrap_or(path);
        let (listed_path, listed_values) = listed(&enums, name);
        assert_eq!(
            &listed_path, path,
            "{name}: the path in surface/functions.toml"
        );
        assert_eq!(
            &listed_values, values,
            "{name}: the values in surface/functions.toml"
        );
    }
    let mut names: Vec<&str> = enums.keys().map(String::as_str).collect();
    names.sort_unstable();
    let mut checked: Vec<&str> = cases
        .iter()
        .map(|c| c.0.rsplit("::").next().unwrap_or(c.0))
        .collect();
    checked.sort_unstable();
    assert_eq!(
        names, checked,
        "every enum of surface/functions.toml is checked here"
    );
}
