//! The names of every environment variable jig reads or sets, in one place.

/// Names of environment variables jig reads (API keys, endpoints, directories, logging) and sets
/// for the commands it runs (the session variables). Code that reads or sets a variable names it
/// through these constants, so a name is spelled once.
#[derive(Debug, Clone, Copy)]
pub struct EnvVars;

impl EnvVars {
    /// OpenAI's API key (also sent by `openai-compatible` when set).
    pub const OPENAI_API_KEY: &'static str = "OPENAI_API_KEY";
    /// Replaces OpenAI's endpoint, as in OpenAI's own SDKs.
    pub const OPENAI_BASE_URL: &'static str = "OPENAI_BASE_URL";
    /// Anthropic's API key.
    pub const ANTHROPIC_API_KEY: &'static str = "ANTHROPIC_API_KEY";
    /// Replaces Anthropic's endpoint, as in Anthropic's own SDKs.
    pub const ANTHROPIC_BASE_URL: &'static str = "ANTHROPIC_BASE_URL";
    /// OpenRouter's API key.
    pub const OPENROUTER_API_KEY: &'static str = "OPENROUTER_API_KEY";

    /// The user's home directory.
    pub const HOME: &'static str = "HOME";
    /// The base directory of user data (sessions); default `$HOME/.local/share`.
    pub const XDG_DATA_HOME: &'static str = "XDG_DATA_HOME";
    /// The base directory of user configuration (settings); default `$HOME/.config`.
    pub const XDG_CONFIG_HOME: &'static str = "XDG_CONFIG_HOME";

    /// The log filter of `jig mcp` (`tracing` env-filter syntax).
    pub const JIG_LOG: &'static str = "JIG_LOG";
    /// `1` makes `jig tool` print how long the call took.
    pub const JIG_TIMING: &'static str = "JIG_TIMING";
    /// Seconds jig waits for an extension's answer to an event (default 30; notifications wait
    /// at most 5).
    pub const JIG_EXTENSION_TIMEOUT: &'static str = "JIG_EXTENSION_TIMEOUT";

    /// Seconds a call through `--env` waits while nothing at all arrives from the far side
    /// before the connection is given up (default 15, at least 2; `0` waits forever). A running
    /// call is never that quiet (the far side says it is alive every second), so this ends only
    /// stalls.
    pub const JIG_ENV_IDLE_TIMEOUT: &'static str = "JIG_ENV_IDLE_TIMEOUT";

    /// Forces the mechanism of the command sandbox: `bwrap`, `landlock` (not built in: a
    /// sandbox that is on then fails with a clear error) or `none` (see docs/sandbox.md).
    pub const JIG_SANDBOX_MECHANISM: &'static str = "JIG_SANDBOX_MECHANISM";

    /// Set for commands: the running session's id.
    pub const JIG_SESSION_ID: &'static str = "JIG_SESSION_ID";
    /// Set for commands: the running session's file (only when it has one).
    pub const JIG_SESSION_FILE: &'static str = "JIG_SESSION_FILE";
    /// Set for commands: the provider's name.
    pub const JIG_PROVIDER: &'static str = "JIG_PROVIDER";
    /// Set for commands: the model id.
    pub const JIG_MODEL: &'static str = "JIG_MODEL";
    /// Set for commands: the reasoning level (`off` when thinking is off).
    pub const JIG_REASONING_LEVEL: &'static str = "JIG_REASONING_LEVEL";

    /// Every session variable: what commands get, and what is removed from the environment they
    /// inherit.
    pub const SESSION_VARIABLES: [&'static str; 5] = [
        Self::JIG_SESSION_ID,
        Self::JIG_SESSION_FILE,
        Self::JIG_PROVIDER,
        Self::JIG_MODEL,
        Self::JIG_REASONING_LEVEL,
    ];
}
