//! Durations in JSON as seconds (f64), the unit people read: `#[serde(with = "crate::secs")]`.
//! A leaf of its own, so the types that carry a duration (run configurations, stop rules, the
//! monitor's samples) need not name each other for it.

use serde::{Deserialize, Deserializer, Serializer};
use std::time::Duration;

pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let v = f64::deserialize(d)?;
    Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
}
