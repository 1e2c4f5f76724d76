//! Finding a model's files: a folder, or the Hugging Face hub cache.

use crate::error::EmbedError;
use std::path::{Path, PathBuf};

/// The default sentence model.
pub const DEFAULT_MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// Which model to load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSpec {
    /// A model in the hub cache (`$HF_HOME/hub`, else `~/.cache/huggingface/hub`).
    Hub {
        /// Hub id, e.g. [`DEFAULT_MODEL`].
        id: String,
        /// Revision (branch or commit) to resolve in the cache.
        revision: String,
    },
    /// A folder holding config.json, tokenizer.json and model.safetensors.
    Dir(PathBuf),
}

/// Paths of one model's files.
#[derive(Clone, Debug)]
pub struct ModelFiles {
    /// Model id to record.
    pub id: String,
    /// Revision to record.
    pub revision: String,
    /// config.json.
    pub config: PathBuf,
    /// tokenizer.json.
    pub tokenizer: PathBuf,
    /// model.safetensors.
    pub weights: PathBuf,
    /// sentence_bert_config.json, when the model has one (it sets max_seq_length).
    pub sentence_config: Option<PathBuf>,
}

const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

impl ModelSpec {
    /// The default model in the hub cache.
    pub fn default_hub() -> Self {
        Self::Hub {
            id: DEFAULT_MODEL.to_owned(),
            revision: "main".to_owned(),
        }
    }

    /// The model an index recorded: its hub id at its revision. A model
    /// read from a folder records the revision `local`, and is looked up in
    /// the hub at `main` (a caller with the folder names it instead).
    pub fn recorded(id: &str, revision: &str) -> Self {
        Self::Hub {
            id: id.to_owned(),
            revision: match revision {
                "" | "local" => "main".to_owned(),
                r => r.to_owned(),
            },
        }
    }

    /// Resolves the files, or says where they were looked for.
    pub fn locate(&self) -> Result<ModelFiles, EmbedError> {
        self.locate_in(&hf_hub::Cache::from_env())
    }

    /// [`ModelSpec::locate`] in a given hub cache. A revision is a branch or
    /// tag (resolved through `refs/`) or a commit (its snapshot folder): a
    /// manifest records the commit the build resolved, and the server opens
    /// exactly that.
    pub fn locate_in(&self, cache: &hf_hub::Cache) -> Result<ModelFiles, EmbedError> {
        match self {
            ModelSpec::Dir(dir) => from_dir(dir, &dir_name(dir), "local"),
            ModelSpec::Hub { id, revision } => {
                let hub_repo = hf_hub::Repo::with_revision(
                    id.clone(),
                    hf_hub::RepoType::Model,
                    revision.clone(),
                );
                let snapshot = cache
                    .path()
                    .join(hub_repo.folder_name())
                    .join("snapshots")
                    .join(revision)
                    .join("config.json");
                let config = cache
                    .repo(hub_repo)
                    .get("config.json")
                    .or_else(|| snapshot.is_file().then_some(snapshot))
                    .ok_or_else(|| EmbedError::NotFound {
                        id: id.clone(),
                        detail: format!(
                            "revision {revision} is not in the hub cache at {}",
                            cache.path().display()
                        ),
                    })?;
                let dir = config.parent().map(Path::to_path_buf).unwrap_or_default();
                // The snapshot folder is named by the commit the revision resolved to.
                let commit = dir_name(&dir);
                from_dir(&dir, id, &commit)
            }
        }
    }
}

fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

fn from_dir(dir: &Path, id: &str, revision: &str) -> Result<ModelFiles, EmbedError> {
    let missing: Vec<&str> = FILES
        .into_iter()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if !missing.is_empty() {
        return Err(EmbedError::NotFound {
            id: id.to_owned(),
            detail: format!("{} lacks {}", dir.display(), missing.join(", ")),
        });
    }
    let sentence = dir.join("sentence_bert_config.json");
    Ok(ModelFiles {
        id: id.to_owned(),
        revision: revision.to_owned(),
        config: dir.join(FILES[0]),
        tokenizer: dir.join(FILES[1]),
        weights: dir.join(FILES[2]),
        sentence_config: sentence.is_file().then_some(sentence),
    })
}

impl ModelFiles {
    /// Parses `config.json` as a BERT configuration.
    pub(crate) fn bert_config(
        &self,
    ) -> Result<candle_transformers::models::bert::Config, EmbedError> {
        serde_json::from_slice(&read(&self.config)?).map_err(|e| bad_model(&self.config, e))
    }
}

/// A model file's bytes.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, EmbedError> {
    std::fs::read(path).map_err(|source| EmbedError::Io {
        path: path.to_owned(),
        source,
    })
}

/// A model file that is there but cannot be used.
pub(crate) fn bad_model(path: &Path, message: impl ToString) -> EmbedError {
    EmbedError::BadModel {
        path: path.to_owned(),
        message: message.to_string(),
    }
}

/// The sha256 a manifest records for a weights file.
pub(crate) fn weights_sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hub cache as `scripts/fetch-model.sh` leaves it: `refs/main` names
    /// the snapshot. Both the branch and the commit it resolved to (what a
    /// manifest records) find the same files; an unknown commit does not.
    #[test]
    fn a_recorded_commit_finds_its_snapshot() {
        let home = tempfile::tempdir().expect("tempdir");
        let commit = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf";
        let repo = home.path().join("models--org--tiny");
        crate::fixtures::write_tiny_bert(&repo.join("snapshots").join(commit)).expect("model");
        std::fs::create_dir_all(repo.join("refs")).expect("refs");
        std::fs::write(repo.join("refs/main"), commit).expect("ref");
        let cache = hf_hub::Cache::new(home.path().to_owned());
        let hub = |revision: &str| ModelSpec::Hub {
            id: "org/tiny".into(),
            revision: revision.into(),
        };
        let by_branch = hub("main").locate_in(&cache).expect("main");
        let by_commit = hub(commit).locate_in(&cache).expect("commit");
        assert_eq!(by_branch.weights, by_commit.weights);
        assert_eq!(by_commit.revision, commit);
        assert!(hub(&"0".repeat(40)).locate_in(&cache).is_err());
    }
}
