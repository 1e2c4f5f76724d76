//! weights.yaml: the static per-path ranking weights.

use super::error::{ConfigError, at, read, yaml_error};
use cairn_index::PathWeights;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;
use std::path::Path;

/// The weights used when no weights.yaml is given: `config/weights.yaml`, compiled in.
pub fn default_weights() -> PathWeights {
    const DEFAULT: &str = include_str!("../../../config/weights.yaml");
    parse_weights(Path::new("config/weights.yaml"), DEFAULT).unwrap_or_default()
}

/// Reads weights.yaml, rejecting negative or absurd multipliers.
pub fn load_weights(path: &Path) -> Result<PathWeights, ConfigError> {
    parse_weights(path, &read(path)?)
}

fn parse_weights(path: &Path, text: &str) -> Result<PathWeights, ConfigError> {
    {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            #[serde(default)]
            extensions: BTreeMap<String, Spanned<f32>>,
            #[serde(default)]
            path_includes: BTreeMap<String, Spanned<f32>>,
        }
        let raw: Raw = serde_saphyr::from_str(text).map_err(|e| yaml_error(path, &e))?;
        let check =
            |m: BTreeMap<String, Spanned<f32>>| -> Result<BTreeMap<String, f32>, ConfigError> {
                m.into_iter()
                    .map(|(k, v)| {
                        if v.value.is_finite() && (0.0..=10.0).contains(&v.value) {
                            Ok((k, v.value))
                        } else {
                            Err(at(
                                path,
                                &v,
                                format!("weight for {k:?} must be between 0 and 10"),
                            ))
                        }
                    })
                    .collect()
            };
        Ok(PathWeights {
            extensions: check(raw.extensions)?,
            path_includes: check(raw.path_includes)?,
        })
    }
}
