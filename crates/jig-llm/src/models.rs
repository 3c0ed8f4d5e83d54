//! The table of known models: context windows and prices, built in for Anthropic's and
//! OpenAI's models and extended by the host (custom providers' models from the settings).
//!
//! Prices are US dollars per million tokens as Anthropic and OpenAI listed them on their pricing
//! pages in November 2025 ([`PRICES_TAKEN`]); Anthropic's cache write is the 5-minute tier,
//! OpenAI charges nothing extra for cache writes. They change: a host overrides them by adding
//! entries ([`ModelTable::with_models`]), which win over the built-in ones.

use jig_protocol::Usage;
use serde::{Deserialize, Serialize};

/// When the built-in prices were taken from the providers' pricing pages.
pub const PRICES_TAKEN: &str = "2025-11";

/// What one model costs, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelCost {
    /// Input tokens not served from a cache.
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read: f64,
    /// Input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_write: f64,
}

/// What some usage cost, in US dollars.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// For uncached input tokens.
    pub input: f64,
    /// For output tokens.
    pub output: f64,
    /// For cache reads.
    pub cache_read: f64,
    /// For cache writes.
    pub cache_write: f64,
    /// The sum.
    pub total: f64,
}

impl ModelCost {
    /// What `usage` costs at these prices.
    #[expect(
        clippy::cast_precision_loss,
        reason = "token counts stay far below 2^52; a cost is an estimate in dollars"
    )]
    pub fn of(&self, usage: &Usage) -> Cost {
        let price = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1_000_000.0;
        let input = price(usage.input, self.input);
        let output = price(usage.output, self.output);
        let cache_read = price(usage.cache_read, self.cache_read);
        let cache_write = price(usage.cache_write, self.cache_write);
        Cost {
            input,
            output,
            cache_read,
            cache_write,
            total: input + output + cache_read + cache_write,
        }
    }
}

/// One model the table knows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelInfo {
    /// The model id as sent to the API.
    pub id: String,
    /// Its context window in tokens, when known.
    #[serde(default)]
    pub context_window: Option<u64>,
    /// Its prices, when known.
    #[serde(default)]
    pub cost: Option<ModelCost>,
}

/// A built-in row: a model (or, without a price, a family of models sharing a window).
struct BuiltIn {
    provider: &'static str,
    id: &'static str,
    context_window: u64,
    cost: Option<ModelCost>,
}

const fn priced(
    provider: &'static str,
    id: &'static str,
    context_window: u64,
    [input, output, cache_read, cache_write]: [f64; 4],
) -> BuiltIn {
    BuiltIn {
        provider,
        id,
        context_window,
        cost: Some(ModelCost {
            input,
            output,
            cache_read,
            cache_write,
        }),
    }
}

/// The built-in models: `[input, output, cache read, cache write]` in dollars per million
/// tokens, taken [`PRICES_TAKEN`].
const BUILT_IN: &[BuiltIn] = &[
    // Anthropic
    priced(
        "anthropic",
        "claude-opus-4-5",
        200_000,
        [5.0, 25.0, 0.5, 6.25],
    ),
    priced(
        "anthropic",
        "claude-opus-4-1",
        200_000,
        [15.0, 75.0, 1.5, 18.75],
    ),
    priced(
        "anthropic",
        "claude-opus-4",
        200_000,
        [15.0, 75.0, 1.5, 18.75],
    ),
    priced(
        "anthropic",
        "claude-sonnet-4-5",
        200_000,
        [3.0, 15.0, 0.3, 3.75],
    ),
    priced(
        "anthropic",
        "claude-sonnet-4",
        200_000,
        [3.0, 15.0, 0.3, 3.75],
    ),
    priced(
        "anthropic",
        "claude-haiku-4-5",
        200_000,
        [1.0, 5.0, 0.1, 1.25],
    ),
    BuiltIn {
        provider: "anthropic",
        id: "claude-haiku-4",
        context_window: 200_000,
        cost: None,
    },
    priced(
        "anthropic",
        "claude-3-7-sonnet",
        200_000,
        [3.0, 15.0, 0.3, 3.75],
    ),
    priced(
        "anthropic",
        "claude-3-5-sonnet",
        200_000,
        [3.0, 15.0, 0.3, 3.75],
    ),
    priced(
        "anthropic",
        "claude-3-5-haiku",
        200_000,
        [0.8, 4.0, 0.08, 1.0],
    ),
    priced(
        "anthropic",
        "claude-3-opus",
        200_000,
        [15.0, 75.0, 1.5, 18.75],
    ),
    priced(
        "anthropic",
        "claude-3-haiku",
        200_000,
        [0.25, 1.25, 0.03, 0.3],
    ),
    // OpenAI
    priced("openai", "gpt-5", 400_000, [1.25, 10.0, 0.125, 0.0]),
    priced("openai", "gpt-5-mini", 400_000, [0.25, 2.0, 0.025, 0.0]),
    priced("openai", "gpt-5-nano", 400_000, [0.05, 0.4, 0.005, 0.0]),
    priced("openai", "gpt-4.1", 1_047_576, [2.0, 8.0, 0.5, 0.0]),
    priced("openai", "gpt-4.1-mini", 1_047_576, [0.4, 1.6, 0.1, 0.0]),
    priced("openai", "gpt-4.1-nano", 1_047_576, [0.1, 0.4, 0.025, 0.0]),
    priced("openai", "gpt-4o", 128_000, [2.5, 10.0, 1.25, 0.0]),
    priced("openai", "gpt-4o-mini", 128_000, [0.15, 0.6, 0.075, 0.0]),
    priced("openai", "gpt-4-turbo", 128_000, [10.0, 30.0, 10.0, 0.0]),
    priced("openai", "gpt-4", 8_192, [30.0, 60.0, 30.0, 0.0]),
    priced("openai", "gpt-3.5-turbo", 16_385, [0.5, 1.5, 0.5, 0.0]),
    priced("openai", "o1", 200_000, [15.0, 60.0, 7.5, 0.0]),
    priced("openai", "o3", 200_000, [2.0, 8.0, 0.5, 0.0]),
    priced("openai", "o3-mini", 200_000, [1.1, 4.4, 0.55, 0.0]),
    priced("openai", "o4-mini", 200_000, [1.1, 4.4, 0.275, 0.0]),
];

/// The models jig knows: the built-in ones and those the host adds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelTable {
    /// `(provider, model)` added by the host; they win over the built-in rows.
    added: Vec<(String, ModelInfo)>,
    /// The built-in prices do not apply: the models are served by another endpoint than the
    /// provider's own (a local server's `gpt-4.1` is not OpenAI's).
    no_builtin_prices: bool,
}

impl ModelTable {
    /// The built-in table.
    pub fn builtin() -> Self {
        Self::default()
    }

    /// The table with `models` of `provider` added (a custom provider's models, or overrides of
    /// built-in prices and windows).
    #[must_use]
    pub fn with_models(
        mut self,
        provider: &str,
        models: impl IntoIterator<Item = ModelInfo>,
    ) -> Self {
        self.added
            .extend(models.into_iter().map(|model| (provider.to_owned(), model)));
        self
    }

    /// The table for models served at an endpoint other than their provider's own (a local
    /// or custom base URL): only the prices added to it apply, so an unconfigured model's cost
    /// is unknown.
    #[must_use]
    pub fn without_builtin_prices(mut self) -> Self {
        self.no_builtin_prices = true;
        self
    }

    fn added(&self, provider: &str, model: &str) -> Option<&ModelInfo> {
        self.added
            .iter()
            .rev()
            .find(|(name, info)| name == provider && info.id == model)
            .map(|(_, info)| info)
    }

    /// Whether `model` is one this table knows for `provider` (an added entry, or a built-in
    /// row's id, also with a date suffix), and the ids it knows for `provider` otherwise.
    pub fn check_model(&self, provider: &str, model: &str) -> Result<(), Vec<String>> {
        let known = self.added(provider, model).is_some()
            || BUILT_IN.iter().any(|row| {
                row.provider == provider
                    && (model == row.id
                        || model
                            .strip_prefix(row.id)
                            .and_then(|rest| rest.strip_prefix('-'))
                            .is_some_and(is_date))
            });
        if known {
            return Ok(());
        }
        let mut ids: Vec<String> = BUILT_IN
            .iter()
            .filter(|row| row.provider == provider)
            .map(|row| row.id.to_owned())
            .chain(
                self.added
                    .iter()
                    .filter(|(name, _)| name == provider)
                    .map(|(_, info)| info.id.clone()),
            )
            .collect();
        ids.sort();
        ids.dedup();
        Err(ids)
    }

    /// The models this table knows for `provider`, in its order: the built-in ones (not the
    /// unpriced rows, which stand for a family of models rather than one id), then the added
    /// ones not among them. What a model picker offers.
    pub fn known_models(&self, provider: &str) -> Vec<String> {
        let mut ids: Vec<String> = BUILT_IN
            .iter()
            .filter(|row| row.provider == provider && row.cost.is_some())
            .map(|row| row.id.to_owned())
            .collect();
        for id in self.added_models(provider) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    }

    /// The models added for `provider` (a custom provider's, the settings' overrides), in the
    /// order they were added: all that is known of what a local or custom endpoint serves.
    pub fn added_models(&self, provider: &str) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for (name, info) in &self.added {
            if name == provider && !ids.contains(&info.id) {
                ids.push(info.id.clone());
            }
        }
        ids
    }

    /// The prices of `provider`'s `model`: an added entry with exactly that id, else a built-in
    /// model of that provider whose id is `model` or `model` without a date suffix
    /// (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`). `None` when unknown: jig never
    /// guesses a price (a local server's `gpt-4.1` is not OpenAI's).
    pub fn cost(&self, provider: &str, model: &str) -> Option<ModelCost> {
        if let Some(info) = self.added(provider, model) {
            return info.cost;
        }
        if self.no_builtin_prices {
            return None;
        }
        BUILT_IN
            .iter()
            .filter(|row| row.provider == provider)
            .find(|row| {
                model == row.id
                    || model
                        .strip_prefix(row.id)
                        .and_then(|rest| rest.strip_prefix('-'))
                        .is_some_and(is_date)
            })
            .and_then(|row| row.cost)
    }

    /// The context window of `provider`'s `model`: an added entry with exactly that id, else the
    /// built-in row whose id is the longest prefix of the model id (any provider, so OpenRouter's
    /// `anthropic/claude-sonnet-4.5` is found: a provider prefix is ignored and `.` in versions
    /// matches `-`).
    pub fn context_window(&self, provider: &str, model: &str) -> Option<u64> {
        if let Some(window) = self
            .added(provider, model)
            .and_then(|info| info.context_window)
        {
            return Some(window);
        }
        let id = model.rsplit('/').next().unwrap_or(model).replace('.', "-");
        BUILT_IN
            .iter()
            .filter(|row| id.starts_with(&row.id.replace('.', "-")))
            .max_by_key(|row| row.id.len())
            .map(|row| row.context_window)
    }
}

/// `20250929` or `2025-04-14`.
fn is_date(text: &str) -> bool {
    let digits: String = text.chars().filter(|c| *c != '-').collect();
    digits.len() == 8
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (text.len() == 8
            || (text.len() == 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_found_for_ids_and_dated_ids_of_the_right_provider_only() {
        let table = ModelTable::builtin();
        let sonnet = table.cost("anthropic", "claude-sonnet-4-5-20250929");
        assert_eq!(sonnet, table.cost("anthropic", "claude-sonnet-4-5"));
        assert_eq!(sonnet.map(|c| c.output), Some(15.0));
        assert_eq!(
            table.cost("openai", "gpt-4.1-2025-04-14").map(|c| c.input),
            Some(2.0)
        );
        assert_eq!(
            table.cost("openai", "gpt-4.1-mini").map(|c| c.input),
            Some(0.4)
        );
        assert_eq!(table.cost("openai", "gpt-4.1-preview"), None);
        assert_eq!(table.cost("openai-compatible", "gpt-4.1"), None);
        assert_eq!(table.cost("anthropic", "claude-haiku-4"), None);
    }

    #[test]
    fn context_windows_match_by_longest_prefix_and_ignore_the_provider() {
        let table = ModelTable::builtin();
        assert_eq!(
            table.context_window("anthropic", "claude-sonnet-4-5"),
            Some(200_000)
        );
        assert_eq!(
            table.context_window("openrouter", "anthropic/claude-sonnet-4.5"),
            Some(200_000)
        );
        assert_eq!(
            table.context_window("openai", "gpt-4.1-mini"),
            Some(1_047_576)
        );
        assert_eq!(table.context_window("openai", "gpt-4o-mini"), Some(128_000));
        assert_eq!(table.context_window("openai", "gpt-4"), Some(8_192));
        assert_eq!(table.context_window("ollama", "qwen3-coder"), None);
    }

    #[test]
    fn models_are_checked_against_the_providers_known_ids() {
        let table = ModelTable::builtin();
        assert_eq!(table.check_model("openai", "gpt-4.1"), Ok(()));
        assert_eq!(table.check_model("openai", "gpt-4.1-2025-04-14"), Ok(()));
        let known = table.check_model("openai", "gtp-5-typo").unwrap_err();
        assert!(known.contains(&"gpt-4.1".to_owned()), "{known:?}");
        // A provider jig has no table for knows nothing: every id is refused with an empty list.
        assert_eq!(table.check_model("nosuch", "x"), Err(Vec::new()));
    }

    #[test]
    fn known_models_are_the_built_in_ones_in_order_then_the_added_ones() {
        let table = ModelTable::builtin().with_models(
            "openai",
            ["gpt-4.1", "my-tune", "my-tune"].map(|id| ModelInfo {
                id: id.into(),
                context_window: None,
                cost: None,
            }),
        );
        let known = table.known_models("openai");
        assert_eq!(known[..3], ["gpt-5", "gpt-5-mini", "gpt-5-nano"]);
        assert_eq!(known.last().map(String::as_str), Some("my-tune"));
        assert_eq!(known.iter().filter(|id| *id == "gpt-4.1").count(), 1);
        assert_eq!(table.added_models("openai"), ["gpt-4.1", "my-tune"]);
        // A family row (no price) is no model id to pick.
        assert!(
            !table
                .known_models("anthropic")
                .contains(&"claude-haiku-4".to_owned())
        );
        assert!(table.known_models("ollama").is_empty());
    }

    #[test]
    fn at_another_endpoint_only_added_prices_apply() {
        let table = ModelTable::builtin();
        assert!(table.cost("openai", "gpt-4.1").is_some());
        let elsewhere = table.without_builtin_prices();
        assert_eq!(elsewhere.cost("openai", "gpt-4.1"), None);
        // The window is still known: it is the model's, wherever it is served.
        assert!(elsewhere.context_window("openai", "gpt-4.1").is_some());
        let priced = elsewhere.with_models(
            "openai",
            [ModelInfo {
                id: "gpt-4.1".into(),
                context_window: None,
                cost: Some(ModelCost {
                    input: 1.0,
                    output: 2.0,
                    cache_read: 0.0,
                    cache_write: 0.0,
                }),
            }],
        );
        assert_eq!(
            priced.cost("openai", "gpt-4.1").map(|cost| cost.input),
            Some(1.0)
        );
    }

    #[test]
    fn added_models_win_and_cost_is_per_million_tokens() {
        let table = ModelTable::builtin().with_models(
            "anthropic",
            [ModelInfo {
                id: "claude-sonnet-4-5".into(),
                context_window: Some(1_000_000),
                cost: Some(ModelCost {
                    input: 6.0,
                    output: 22.5,
                    cache_read: 0.6,
                    cache_write: 7.5,
                }),
            }],
        );
        assert_eq!(
            table.context_window("anthropic", "claude-sonnet-4-5"),
            Some(1_000_000)
        );
        let usage = Usage {
            input: 1_000_000,
            output: 2_000_000,
            cache_read: 0,
            cache_write: 0,
        };
        let cost = table
            .cost("anthropic", "claude-sonnet-4-5")
            .unwrap()
            .of(&usage);
        assert!((cost.total - 51.0).abs() < 1e-9, "{cost:?}");
    }
}
