//! What an explanation may look at: the toolkit the caller names, and the
//! repository entries for the version the caller has installed.

use crate::access;
use crate::engine::Engine;
use crate::error::{SearchError, invalid};
use std::collections::HashSet;

impl Engine {
    /// Refuses a `toolkit` that no document the caller may see belongs to.
    pub(super) fn check_toolkit(
        &self,
        toolkit: Option<&str>,
        groups: Option<&[String]>,
    ) -> Result<(), SearchError> {
        if let Some(t) = toolkit
            && !self
                .snapshot()
                .docs
                .iter()
                .any(|d| d.toolkit == t && access::visible(d, groups))
        {
            return Err(invalid(
                "toolkit",
                format!("no indexed toolkit is named {t:?}"),
            ));
        }
        Ok(())
    }

    /// The repository entries an error is looked for in: each repository's
    /// default ref, except where another indexed ref is the installed
    /// `version` (`v3.1.6` for 3.1.6): then that ref instead.
    pub(super) fn repos_for(&self, version: Option<&str>) -> HashSet<&str> {
        let bare = |v: &str| v.trim_start_matches(['v', 'V']).to_owned();
        let wanted = version.map(bare);
        let records = &self.snapshot().manifest.repos;
        let chosen: Vec<&str> = records
            .iter()
            .filter(|r| {
                access::repo_ref(r).1
                    && wanted.as_deref() == Some(bare(access::repo_ref(r).0).as_str())
            })
            .map(|r| r.name.as_str())
            .collect();
        records
            .iter()
            .filter(|r| {
                let base = r.name.split_once('@').map_or(r.name.as_str(), |(b, _)| b);
                let replaced = chosen
                    .iter()
                    .any(|c| c.split_once('@').is_some_and(|(b, _)| b == base));
                match access::repo_ref(r).1 {
                    true => chosen.contains(&r.name.as_str()),
                    false => !replaced,
                }
            })
            .map(|r| r.name.as_str())
            .collect()
    }
}
