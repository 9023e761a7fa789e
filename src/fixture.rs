//! The small results fixture (`tests/fixtures/results-small.jsonl`: real runs' documents, one per
//! line), read in one way by every unit test that needs a run as the runner writes it. It names
//! no type of the crate (the result module's own tests read it too): callers say what to read.

use serde::de::DeserializeOwned;

/// The fixture's text.
pub(crate) const RESULTS_SMALL: &str = include_str!("../tests/fixtures/results-small.jsonl");

/// Its documents, in order.
pub(crate) fn documents<T: DeserializeOwned>() -> Vec<T> {
    RESULTS_SMALL
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Its first document.
pub(crate) fn first<T: DeserializeOwned>() -> T {
    serde_json::from_str(RESULTS_SMALL.lines().next().unwrap()).unwrap()
}
