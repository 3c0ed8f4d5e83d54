use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use jig_env::{EnvResult, ExecutionEnv};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// Serialises read-modify-write operations on one file; different files proceed concurrently.
///
/// The key is the file's canonical path computed so that aliases agree: relative and absolute
/// spellings, `..`, a symlink to the file, and a not-yet-existing file below a symlinked
/// directory (the nearest existing ancestor is canonicalised and the rest appended, see
/// [`ExecutionEnv::canonical_path_lenient`]). Key computation runs concurrently; only the map
/// update is serialised. Waiters are served in arrival order (tokio's mutex is fair). A failing
/// operation releases the next when its guard drops, and the map entry is removed when the last
/// holder or waiter for a key is gone, so nothing leaks.
///
/// One queue per env: hosts create one and share it through every [`ToolContext`](crate::ToolContext)
/// of that env.
#[derive(Debug, Default)]
pub struct MutationQueue {
    locks: Mutex<HashMap<PathBuf, Arc<AsyncMutex<()>>>>,
}

/// Held for the whole read-modify-write; dropping it lets the next operation on the file run.
#[derive(Debug)]
pub struct MutationGuard {
    queue: Arc<MutationQueue>,
    key: PathBuf,
    guard: Option<OwnedMutexGuard<()>>,
}

impl MutationGuard {
    /// The canonical key this guard holds.
    pub fn key(&self) -> &Path {
        &self.key
    }
}

impl Drop for MutationGuard {
    fn drop(&mut self) {
        // Release the file lock first so the strong count below reflects only other users.
        drop(self.guard.take());
        self.queue.release(&self.key);
    }
}

impl MutationQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Waits for this file's turn. `path` must be absolute (lexically normalised or not).
    pub async fn lock(
        self: &Arc<Self>,
        env: &dyn ExecutionEnv,
        path: &Path,
    ) -> EnvResult<MutationGuard> {
        let key = env.canonical_path_lenient(path).await?;
        Ok(self.lock_key(key).await)
    }

    /// Waits for the turn of an already computed key.
    pub async fn lock_key(self: &Arc<Self>, key: PathBuf) -> MutationGuard {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(locks.entry(key.clone()).or_default())
        };
        // If this future is dropped while waiting, `lock` is dropped too; the entry is then
        // cleaned by whoever releases last (see `release`), or stays until the next release on
        // the same key — at most one idle entry per abandoned key.
        let pending = PendingLock {
            queue: Arc::clone(self),
            key: Some(key.clone()),
        };
        let guard = lock.lock_owned().await;
        let _ = pending.disarm();
        MutationGuard {
            queue: Arc::clone(self),
            key,
            guard: Some(guard),
        }
    }

    /// The number of keys currently held or waited for.
    pub fn active_keys(&self) -> usize {
        self.locks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn release(&self, key: &Path) {
        let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lock) = locks.get(key) {
            // Only the map holds it: no holder and no waiter remains.
            if Arc::strong_count(lock) == 1 {
                locks.remove(key);
            }
        }
    }
}

/// Cleans the map entry when a waiter is cancelled before it got the lock.
struct PendingLock {
    queue: Arc<MutationQueue>,
    key: Option<PathBuf>,
}

impl PendingLock {
    fn disarm(mut self) -> Option<PathBuf> {
        self.key.take()
    }
}

impl Drop for PendingLock {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            // Our own clone of the lock Arc is already gone (dropped with the future's state)
            // or about to be; release checks the count under the map lock.
            self.queue.release(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn same_key_runs_in_arrival_order_and_entries_are_removed() {
        let queue = Arc::new(MutationQueue::new());
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut handles = Vec::new();
        for i in 0..20 {
            let queue = Arc::clone(&queue);
            let order = Arc::clone(&order);
            let guard_ready = queue.lock_key(PathBuf::from("/f")).await;
            drop(guard_ready);
            handles.push(tokio::spawn(async move {
                let _guard = queue.lock_key(PathBuf::from("/f")).await;
                order.lock().unwrap().push(i);
                tokio::time::sleep(Duration::from_millis(1)).await;
            }));
            tokio::task::yield_now().await;
        }
        for handle in handles {
            handle.await.unwrap();
        }
        assert_eq!(order.lock().unwrap().len(), 20);
        assert_eq!(queue.active_keys(), 0);
    }

    #[tokio::test]
    async fn different_keys_do_not_wait_for_each_other() {
        let queue = Arc::new(MutationQueue::new());
        let _a = queue.lock_key(PathBuf::from("/a")).await;
        let b =
            tokio::time::timeout(Duration::from_secs(1), queue.lock_key(PathBuf::from("/b"))).await;
        assert!(b.is_ok());
    }

    #[tokio::test]
    async fn a_cancelled_waiter_leaves_no_entry() {
        let queue = Arc::new(MutationQueue::new());
        let held = queue.lock_key(PathBuf::from("/f")).await;
        let waiting = tokio::time::timeout(
            Duration::from_millis(10),
            queue.lock_key(PathBuf::from("/f")),
        )
        .await;
        assert!(waiting.is_err());
        drop(held);
        assert_eq!(queue.active_keys(), 0);
    }
}
