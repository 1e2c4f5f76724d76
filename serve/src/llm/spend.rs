//! What the configured model's replies cost, in its tokens: each caller's
//! spending against `--llm-tokens-per-minute` (beside its CPU budget, which
//! counts the pool's time, not the model's), and every caller's together
//! for `/metrics`. A reply is charged after it arrives, so a caller may run
//! into debt by one reply; it is refused until the debt is paid back.

use super::error::LlmError;
use super::wire::Usage;
use crate::ratelimit::RateLimiter;
use prometheus::{IntCounterVec, Opts};
use std::time::Instant;

/// Minutes of tokens a caller may owe after a burst.
const DEBT_MINUTES: u32 = 10;

/// The model's tokens spent, per caller and in all.
pub struct Spending {
    /// Each caller's tokens a minute (`None`: unlimited).
    per_caller: Option<RateLimiter>,
    /// Tokens read (`prompt`) and written (`completion`), for `/metrics`.
    counter: IntCounterVec,
}

impl Spending {
    /// Each caller may spend `tokens_per_minute` (unlimited when `None`).
    pub fn new(tokens_per_minute: Option<u32>) -> Self {
        let counter = IntCounterVec::new(
            Opts::new(
                "model_tokens_total",
                "Tokens the configured language model read (prompt) and wrote (completion)",
            ),
            &["kind"],
        )
        .unwrap_or_else(|_| unreachable!("a fixed, valid metric name and label"));
        Self {
            // A burst of replies (8 may wait at once) is charged whole: up
            // to ten minutes of debt before it is forgiven.
            per_caller: tokens_per_minute.map(|n| RateLimiter::with_debt(n, DEBT_MINUTES)),
            counter,
        }
    }

    /// Ok while `caller` has tokens left; else how long until it has.
    pub fn allow(&self, caller: &str) -> Result<(), LlmError> {
        match &self.per_caller {
            Some(budget) => budget
                .check(caller, Instant::now())
                .map_err(|wait| LlmError::OverBudget { wait }),
            None => Ok(()),
        }
    }

    /// Charges `usage` to `caller` and to the totals.
    pub fn spend(&self, caller: &str, usage: &Usage) {
        // The endpoint's counts; a reply that reports none is counted as nothing.
        let total = usage
            .total_tokens
            .max(usage.prompt_tokens.saturating_add(usage.completion_tokens));
        if let Some(budget) = &self.per_caller {
            budget.charge(caller, total as f64, Instant::now());
        }
        self.counter
            .with_label_values(&["prompt"])
            .inc_by(usage.prompt_tokens);
        self.counter
            .with_label_values(&["completion"])
            .inc_by(usage.completion_tokens);
    }

    /// The totals, for the server's metrics registry.
    pub fn counter(&self) -> &IntCounterVec {
        &self.counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_over_its_tokens_waits_and_others_do_not() {
        let s = Spending::new(Some(600));
        let usage = Usage {
            prompt_tokens: 500,
            completion_tokens: 200,
            total_tokens: 700,
        };
        assert!(s.allow("a").is_ok());
        s.spend("a", &usage);
        match s.allow("a") {
            Err(LlmError::OverBudget { wait }) => assert!((1..=60).contains(&wait), "{wait}"),
            other => panic!("{other:?}"),
        }
        assert!(s.allow("b").is_ok());
        // A burst charged after the fact is owed whole, up to ten minutes' worth.
        for _ in 0..8 {
            s.spend("c", &usage);
        }
        match s.allow("c") {
            Err(LlmError::OverBudget { wait }) => assert!(wait > 60 * 8, "{wait}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(s.counter().with_label_values(&["prompt"]).get(), 4_500);
        assert!(Spending::new(None).allow("a").is_ok());
    }
}
