//! `jig acp`: jig's agent served to an editor over the Agent Client Protocol.

use clap::Args;

use crate::CliResult;
use crate::run_cmd::AgentArgs;

/// Arguments of `jig acp`: the agent's options `jig run` takes, and where files are read and
/// written.
#[derive(Debug, Args)]
pub(crate) struct AcpArgs {
    #[command(flatten)]
    agent: AgentArgs,
    /// Read and write files through the editor (fs/read_text_file, fs/write_text_file), so the
    /// model sees and edits the open buffers, unsaved changes included. Off by default: the
    /// files on disk are what commands, search and other tools see, and an edit the editor
    /// holds unsaved is invisible to them.
    #[arg(long)]
    client_fs: bool,
}

/// Runs `jig acp`.
pub(crate) fn run_acp(args: &AcpArgs) -> CliResult {
    jig_acp::run(&args.agent.options(), args.client_fs)
}
