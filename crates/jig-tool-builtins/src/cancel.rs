//! Racing env operations against the call's cancellation token.

use std::future::Future;

use jig_tool::{ToolContext, ToolError};

/// Runs `future` unless the call is cancelled first; a cancelled call drops the future, which
/// the `ExecutionEnv` contract allows for every operation (see its cancellation notes).
pub(crate) async fn cancellable<T>(
    ctx: &ToolContext,
    future: impl Future<Output = T>,
) -> Result<T, ToolError> {
    tokio::select! {
        biased;
        () = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
        value = future => Ok(value),
    }
}
