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
    /// Where programs are looked up (`bwrap` for the sandbox).
    pub const PATH: &'static str = "PATH";
    /// The base directory of user data (sessions); default `$HOME/.local/share`.
    pub const XDG_DATA_HOME: &'static str = "XDG_DATA_HOME";
    /// The base directory of user configuration (settings); default `$HOME/.config`.
    pub const XDG_CONFIG_HOME: &'static str = "XDG_CONFIG_HOME";
    /// The user's runtime directory (where podman's user socket is).
    pub const XDG_RUNTIME_DIR: &'static str = "XDG_RUNTIME_DIR";

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

    /// The `ssh` program (and leading arguments) an `ssh://` env runs; default `ssh`.
    pub const JIG_SSH: &'static str = "JIG_SSH";
    /// The `kubectl` program (and leading arguments) a `k8s://` env runs; default `kubectl`.
    pub const JIG_KUBECTL: &'static str = "JIG_KUBECTL";
    /// The Docker-compatible API a `docker://` env talks to (`unix://…`, `tcp://…`).
    pub const DOCKER_HOST: &'static str = "DOCKER_HOST";
    /// The API a `podman://` env talks to, before `DOCKER_HOST`.
    pub const CONTAINER_HOST: &'static str = "CONTAINER_HOST";
    /// Set to ask for TLS on a `tcp://` container API (refused: not supported).
    pub const DOCKER_TLS_VERIFY: &'static str = "DOCKER_TLS_VERIFY";
    /// The directory of the Pi extension host (`jig pi-host`'s install), instead of the
    /// default under the user data directory.
    pub const JIG_PI_HOST: &'static str = "JIG_PI_HOST";
    /// Set, not empty: no colours or attributes in the terminal (<https://no-color.org>).
    pub const NO_COLOR: &'static str = "NO_COLOR";

    /// Set for commands: a tag that marks the processes of one call, so a timeout or an abort
    /// finds every one of them (also those that left the process group).
    pub const JIG_EXEC_TAG: &'static str = "JIG_EXEC_TAG";

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
