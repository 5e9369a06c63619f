//! Request body field names of the writes the contract leaves "not shown":
//! progress (single and batch), playback settings and bookmarks. Defaults
//! are the reference dialect (docs/contract.md); a profile overrides any of
//! them in config.toml `[profiles.NAME.fields]`. An empty name leaves that
//! field out of the body. (Login's field names live in `Paths`.)

use crate::domain::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// How a position is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PositionUnit {
    #[default]
    Seconds,
    Milliseconds,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BodyFields {
    pub progress_chapter_id: String,
    pub progress_position: String,
    pub progress_position_unit: PositionUnit,
    pub progress_client_updated_at: String,
    pub progress_finished: String,
    pub progress_reset: String,
    pub progress_device_id: String,
    /// The array of a batch write.
    pub batch_items: String,
    /// The book of one batch item.
    pub batch_book_id: String,
    pub settings_speed: String,
    pub settings_volume: String,
    pub settings_client_updated_at: String,
    pub bookmark_book_id: String,
    pub bookmark_chapter_id: String,
    pub bookmark_position: String,
    pub bookmark_note: String,
    pub bookmark_client_id: String,
}

impl Default for BodyFields {
    fn default() -> Self {
        BodyFields {
            progress_chapter_id: "chapterId".into(),
            progress_position: "positionSec".into(),
            progress_position_unit: PositionUnit::Seconds,
            progress_client_updated_at: "clientUpdatedAt".into(),
            progress_finished: "finished".into(),
            progress_reset: "reset".into(),
            progress_device_id: "deviceId".into(),
            batch_items: "items".into(),
            batch_book_id: "bookId".into(),
            settings_speed: "speed".into(),
            settings_volume: "volume".into(),
            settings_client_updated_at: "clientUpdatedAt".into(),
            bookmark_book_id: "bookId".into(),
            bookmark_chapter_id: "chapterId".into(),
            bookmark_position: "positionSec".into(),
            bookmark_note: "note".into(),
            bookmark_client_id: "clientId".into(),
        }
    }
}

/// An object builder that skips fields whose configured name is empty.
struct Body(Map<String, Value>);

impl Body {
    fn put(&mut self, name: &str, v: Value) {
        if !name.trim().is_empty() {
            self.0.insert(name.trim().to_owned(), v);
        }
    }
}

impl BodyFields {
    fn position(&self, secs: f64) -> Value {
        match self.progress_position_unit {
            PositionUnit::Seconds => json!(secs),
            PositionUnit::Milliseconds => json!((secs * 1000.0).round() as i64),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn progress(
        &self,
        chapter: &ChapterId,
        position: f64,
        client_updated_at: EpochMillis,
        finished: bool,
        reset: bool,
        device_id: Option<&str>,
    ) -> Value {
        let mut b = Body(Map::new());
        b.put(&self.progress_chapter_id, json!(chapter));
        b.put(&self.progress_position, self.position(position));
        b.put(&self.progress_client_updated_at, json!(client_updated_at));
        b.put(&self.progress_finished, json!(finished));
        b.put(&self.progress_reset, json!(reset));
        if let Some(d) = device_id {
            b.put(&self.progress_device_id, json!(d));
        }
        Value::Object(b.0)
    }

    /// One item of a batch: the progress body plus the book.
    pub fn batch_item(&self, book: &BookId, mut progress: Value) -> Value {
        if let (Some(o), false) = (
            progress.as_object_mut(),
            self.batch_book_id.trim().is_empty(),
        ) {
            o.insert(self.batch_book_id.trim().to_owned(), json!(book));
        }
        progress
    }

    pub fn batch(&self, items: Vec<Value>) -> Value {
        let key = match self.batch_items.trim() {
            "" => "items",
            k => k,
        };
        let mut m = Map::new();
        m.insert(key.to_owned(), Value::Array(items));
        Value::Object(m)
    }

    pub fn settings(&self, speed: f32, volume: Option<f32>, at: EpochMillis) -> Value {
        let mut b = Body(Map::new());
        b.put(&self.settings_speed, json!(speed));
        if let Some(v) = volume {
            b.put(&self.settings_volume, json!(v));
        }
        b.put(&self.settings_client_updated_at, json!(at));
        Value::Object(b.0)
    }

    pub fn bookmark(
        &self,
        book: &BookId,
        chapter: &ChapterId,
        position: f64,
        note: Option<&str>,
        client_id: Option<&str>,
    ) -> Value {
        let mut b = Body(Map::new());
        b.put(&self.bookmark_book_id, json!(book));
        b.put(&self.bookmark_chapter_id, json!(chapter));
        b.put(&self.bookmark_position, json!(position));
        if let Some(n) = note {
            b.put(&self.bookmark_note, json!(n));
        }
        if let Some(c) = client_id {
            b.put(&self.bookmark_client_id, json!(c));
        }
        Value::Object(b.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_reference_dialect() {
        let f = BodyFields::default();
        let v = f.progress(&ChapterId::new("c"), 1.5, 7, false, false, Some("d"));
        assert_eq!(
            v,
            json!({"chapterId": "c", "positionSec": 1.5, "clientUpdatedAt": 7,
                "finished": false, "reset": false, "deviceId": "d"})
        );
        assert_eq!(
            f.settings(1.25, None, 7),
            json!({"speed": 1.25, "clientUpdatedAt": 7})
        );
    }

    #[test]
    fn overrides_rename_drop_and_change_units() {
        let f: BodyFields = toml::from_str(
            "progress_chapter_id = \"trackId\"\nprogress_position = \"positionMs\"\nprogress_position_unit = \"milliseconds\"\nprogress_reset = \"\"\nbatch_items = \"records\"",
        )
        .unwrap();
        let v = f.progress(&ChapterId::new("c"), 1.5, 7, true, true, None);
        assert_eq!(
            v,
            json!({"trackId": "c", "positionMs": 1500, "clientUpdatedAt": 7, "finished": true})
        );
        assert_eq!(f.batch(vec![]), json!({"records": []}));
        assert!(toml::from_str::<BodyFields>("nonsense = \"x\"").is_err());
    }
}
