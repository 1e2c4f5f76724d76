//! `weights.json`: the ranking multipliers a version was built with
//! (nancy-brain's weights.yaml layout).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Multipliers by extension and by path substring; absent means 1.0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathWeights {
    /// Multiplier by file extension, with its dot (`.py: 1.0`).
    #[serde(default)]
    pub extensions: BTreeMap<String, f32>,
    /// Multiplier when the path contains a substring (`tests: 0.7`); all that match multiply.
    #[serde(default)]
    pub path_includes: BTreeMap<String, f32>,
}

impl PathWeights {
    /// The static multiplier of a path.
    pub fn for_path(&self, path: &str) -> f32 {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rfind('.').map(|i| name[i..].to_ascii_lowercase());
        let mut w = ext
            .and_then(|e| self.extensions.get(&e).copied())
            .unwrap_or(1.0);
        for (needle, m) in &self.path_includes {
            if path.contains(needle.as_str()) {
                w *= m;
            }
        }
        w
    }
}
