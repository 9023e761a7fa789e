//! [`EngineOptions`] as results, profiles and the JSON reference store them: flat, one key per
//! column of every engine's table in the registry's order (each engine's own order where its
//! spec gives one), a switch as `false`/`true`, a count or a setting whose unset is null as
//! `null`/number, one whose unset is 0 as `0`/number — byte for byte the form readlab has always
//! written. Missing keys are unset and unknown keys ignored on reading. Here rather than beside
//! the type: it walks the registry, which `options.rs`, a leaf, may not name.

use super::options::EngineOptions;
use super::registry;
use super::spec::{EngineOption, Unset, Value};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::sync::OnceLock;

/// One key of the stored form: an engine's row (with the engine's name), or the SQ poll
/// thread's idle time.
#[derive(Clone, Copy)]
enum Key {
    Row(&'static str, &'static EngineOption),
    IdleMs,
}

impl Key {
    fn column(self) -> &'static str {
        match self {
            Key::Row(_, d) => d.column,
            Key::IdleMs => EngineOptions::SQPOLL_IDLE_MS,
        }
    }
}

/// Every key, in the order they are stored: each engine's [`stored`](super::EngineSpec::stored)
/// columns, then the rest of its table; the idle time last unless an engine places it.
fn keys() -> &'static [Key] {
    static KEYS: OnceLock<Vec<Key>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut keys = Vec::new();
        for spec in registry() {
            let row = |d| Key::Row(spec.name, d);
            for &c in spec.stored {
                if c == EngineOptions::SQPOLL_IDLE_MS {
                    keys.push(Key::IdleMs);
                } else if let Some(d) = spec.options.iter().find(|d| d.column == c) {
                    keys.push(row(d));
                }
            }
            let rest = spec
                .options
                .iter()
                .filter(|d| !spec.stored.contains(&d.column));
            keys.extend(rest.map(row));
        }
        if !keys.iter().any(|k| matches!(k, Key::IdleMs)) {
            keys.push(Key::IdleMs);
        }
        keys
    })
}

/// How a row's value is stored: `null` or a number unless a switch or a setting off at 0.
fn optional(d: &EngineOption) -> bool {
    matches!(
        d.value,
        Value::Count
            | Value::Setting {
                unset: Unset::Null,
                ..
            }
    )
}

impl Serialize for EngineOptions {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("EngineOptions", keys().len())?;
        for &k in keys() {
            match k {
                Key::IdleMs => st.serialize_field(k.column(), &self.sqpoll_idle_ms)?,
                Key::Row(_, d) if d.value == Value::Switch => {
                    st.serialize_field(d.column, &d.on(self))?
                }
                Key::Row(_, d) if optional(d) => st.serialize_field(d.column, &d.get(self))?,
                Key::Row(_, d) => st.serialize_field(d.column, &d.get(self).unwrap_or(0))?,
            }
        }
        st.end()
    }
}

impl<'de> Deserialize<'de> for EngineOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<EngineOptions, D::Error> {
        d.deserialize_map(Stored)
    }
}

/// Reads the stored form back, each value as the type it was written from (a switch as a bool,
/// a setting as a `u32`), so what was refused before is refused now.
struct Stored;

impl<'de> Visitor<'de> for Stored {
    type Value = EngineOptions;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("struct EngineOptions")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EngineOptions, A::Error> {
        let mut o = EngineOptions::default();
        let mut seen: Vec<&'static str> = Vec::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let Some(&k) = keys().iter().find(|k| k.column() == key) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            if seen.contains(&k.column()) {
                return Err(de::Error::duplicate_field(k.column()));
            }
            seen.push(k.column());
            match k {
                Key::IdleMs => o.sqpoll_idle_ms = map.next_value()?,
                Key::Row(_, d) => {
                    let n = match d.value {
                        Value::Switch => map.next_value::<bool>()?.then_some(1),
                        Value::Count => map.next_value::<Option<usize>>()?.map(|n| n as u64),
                        _ if optional(d) => map.next_value::<Option<u32>>()?.map(u64::from),
                        _ => Some(map.next_value::<u32>()?.into()),
                    };
                    d.put(&mut o, n);
                }
            }
        }
        Ok(o)
    }
}

/// In the JSON reference: an object with every key, each typed and described by its row.
impl JsonSchema for EngineOptions {
    fn schema_name() -> Cow<'static, str> {
        "EngineOptions".into()
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for &k in keys() {
            let (mut s, default, description) = match k {
                Key::IdleMs => (
                    g.subschema_for::<u32>(),
                    0.into(),
                    "Milliseconds the SQ poll thread spins before it sleeps.".to_string(),
                ),
                Key::Row(engine, d) => {
                    let (s, default) = match d.value {
                        Value::Switch => (g.subschema_for::<bool>(), false.into()),
                        Value::Count => (g.subschema_for::<Option<usize>>(), ().into()),
                        _ if optional(d) => (g.subschema_for::<Option<u32>>(), ().into()),
                        _ => (g.subschema_for::<u32>(), 0.into()),
                    };
                    (s, default, format!("{engine} --{}: {}.", d.flag, d.help))
                }
            };
            s.insert("default".into(), default);
            s.insert("description".into(), description.into());
            properties.insert(k.column().into(), s.into());
            required.push(k.column());
        }
        let mut schema = schemars::json_schema!({
            "description": "Engine options that only some engines understand: each engine's own \
                typed options, stored\nflat (`\"fixed_files\": true`, …) as readlab has always \
                written them.",
            "type": "object",
            "properties": properties,
        });
        // What is written has every key; what is read may leave any out.
        if g.contract().is_serialize() {
            schema.insert("required".into(), required.into());
        }
        schema
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::option;

    /// Every option of every engine set (a setting to 0 where 0 is a value), as JSON.
    fn all_set() -> EngineOptions {
        let mut o = EngineOptions::default();
        for (_, d) in option::all() {
            d.set(&mut o, if optional(d) { 0 } else { 7 });
        }
        o.sqpoll_idle_ms = 9;
        o
    }

    /// The stored form, byte for byte as readlab has always written it: these keys in this
    /// order, with these values (an option added since may sit among them; with none added,
    /// `every_column_is_stored_once` says there is no other key).
    #[test]
    fn stored_as_readlab_always_wrote_it() {
        let written = |o: &EngineOptions, form: &str| {
            let json = serde_json::to_string(o).unwrap();
            let mut at = 0;
            for field in form.split(',') {
                let found = json[at..].find(field).map(|i| at + i);
                at = found.unwrap_or_else(|| panic!("{field} not in order in {json}")) + 1;
            }
        };
        written(
            &EngineOptions::default(),
            r#""hipri":false,"nowait":false,"fixed_files":false,"fixed_bufs":false,"sqpoll":false,"sqpoll_cpu":null,"sqpoll_idle_ms":0,"iopoll":false,"plain_setup":false,"pool_threads":null,"busy_poll_us":0"#,
        );
        written(
            &all_set(),
            r#""hipri":true,"nowait":true,"fixed_files":true,"fixed_bufs":true,"sqpoll":true,"sqpoll_cpu":0,"sqpoll_idle_ms":9,"iopoll":true,"plain_setup":true,"pool_threads":0,"busy_poll_us":7"#,
        );
    }

    /// Every key is a row's column or the idle time, once; every row has its key.
    #[test]
    fn every_column_is_stored_once() {
        let columns: Vec<&str> = keys().iter().map(|k| k.column()).collect();
        let unique: std::collections::BTreeSet<&str> = columns.iter().copied().collect();
        assert_eq!(unique.len(), columns.len(), "{columns:?}");
        assert_eq!(columns.len(), option::all().count() + 1);
        for spec in registry() {
            for c in spec.stored {
                let row = spec.options.iter().any(|d| d.column == *c);
                assert!(
                    row || *c == EngineOptions::SQPOLL_IDLE_MS,
                    "{}: {c}",
                    spec.name
                );
            }
        }
    }

    /// What is written reads back as it was; what is left out is unset, unknown keys are
    /// ignored, and 0 is off only where the row says so.
    #[test]
    fn reads_back_what_it_writes() {
        for o in [EngineOptions::default(), all_set()] {
            let json = serde_json::to_string(&o).unwrap();
            assert_eq!(serde_json::from_str::<EngineOptions>(&json).unwrap(), o);
        }
        let read = |s: &str| serde_json::from_str::<EngineOptions>(s);
        assert_eq!(read("{}").unwrap(), EngineOptions::default());
        let o = read(r#"{"fixed_files":true,"unknown":[1],"busy_poll_us":0,"sqpoll_cpu":0}"#);
        let o = o.unwrap();
        let u = crate::engine::UringOptions::of(&o);
        assert!(u.fixed_files && !u.fixed_bufs && u.sqpoll_cpu == Some(0));
        assert_eq!(crate::engine::NbdOptions::of(&o).busy_poll_us, 0);
        assert!(!o.on("busy_poll_us"));
        let o = read(r#"{"pool_threads":0,"hipri":false}"#).unwrap();
        assert_eq!(crate::engine::PoolOptions::of(&o).pool_threads, Some(0));
        assert!(!o.on("hipri"));
        // Refused as the typed fields refused them.
        assert!(read(r#"{"hipri":1}"#).is_err());
        assert!(read(r#"{"busy_poll_us":null}"#).is_err());
        assert!(read(r#"{"sqpoll_cpu":4294967296}"#).is_err());
        assert!(read(r#"{"sqpoll_idle_ms":-1}"#).is_err());
        assert!(read(r#"{"nowait":true,"nowait":true}"#).is_err());
    }
}
