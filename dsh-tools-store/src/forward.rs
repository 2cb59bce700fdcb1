//! The one `DurableStore` impl every store shares: each method forwards to the store's `Core`.

/// Implements [`DurableStore`](crate::DurableStore) for a store struct whose field `core` is a
/// `Core`.
macro_rules! forward_store {
    ($store:ty, $kind:literal) => {
        #[async_trait::async_trait]
        impl $crate::DurableStore for $store {
            fn kind(&self) -> &'static str {
                $kind
            }
            async fn begin_run(
                &self,
                run: &str,
                meta: &serde_json::Value,
            ) -> Result<$crate::RunInfo, $crate::StoreError> {
                self.core.begin_run(run, meta).await
            }
            async fn run(&self, run: &str) -> Result<Option<$crate::RunInfo>, $crate::StoreError> {
                self.core.run(run).await
            }
            async fn append_entry(
                &self,
                run: &str,
                index: u64,
                entry: &serde_json::Value,
            ) -> Result<bool, $crate::StoreError> {
                self.core.append_entry(run, index, entry).await
            }
            async fn entries(
                &self,
                run: &str,
            ) -> Result<Vec<$crate::JournalRecord>, $crate::StoreError> {
                self.core.entries(run).await
            }
            async fn finish_run(
                &self,
                run: &str,
                outcome: &serde_json::Value,
            ) -> Result<bool, $crate::StoreError> {
                self.core.finish_run(run, outcome).await
            }
            async fn unfinished_runs(&self) -> Result<Vec<$crate::RunInfo>, $crate::StoreError> {
                self.core.unfinished_runs().await
            }
            async fn save_checkpoint(
                &self,
                run: &str,
                step: u64,
                state: &serde_json::Value,
            ) -> Result<bool, $crate::StoreError> {
                self.core.save_checkpoint(run, step, state).await
            }
            async fn checkpoint(
                &self,
                run: &str,
            ) -> Result<Option<$crate::Checkpoint>, $crate::StoreError> {
                self.core.checkpoint(run).await
            }
            async fn record_intent(
                &self,
                run: &str,
                intent: &$crate::Intent,
            ) -> Result<bool, $crate::StoreError> {
                self.core.record_intent(run, intent).await
            }
            async fn complete_intent(
                &self,
                run: &str,
                call: &str,
                result: &serde_json::Value,
            ) -> Result<bool, $crate::StoreError> {
                self.core.complete_intent(run, call, result).await
            }
            async fn intents(
                &self,
                run: &str,
            ) -> Result<Vec<$crate::IntentRecord>, $crate::StoreError> {
                self.core.intents(run).await
            }
            async fn spend(&self, id: &str) -> Result<bool, $crate::StoreError> {
                self.core.spend(id).await
            }
            async fn record_approval(
                &self,
                key: &str,
                approval: &$crate::Approval,
            ) -> Result<(), $crate::StoreError> {
                self.core.record_approval(key, approval).await
            }
            async fn approval(
                &self,
                key: &str,
                args: &$crate::ArgsDigest,
            ) -> Result<Option<$crate::Approval>, $crate::StoreError> {
                self.core.approval(key, args).await
            }
            async fn create_task(
                &self,
                task: &$crate::TaskRecord,
            ) -> Result<bool, $crate::StoreError> {
                self.core.create_task(task).await
            }
            async fn task(
                &self,
                id: &str,
            ) -> Result<Option<$crate::TaskRecord>, $crate::StoreError> {
                self.core.task(id).await
            }
            async fn update_task(
                &self,
                id: &str,
                from: $crate::TaskStatus,
                to: $crate::TaskStatus,
                data: Option<&serde_json::Value>,
            ) -> Result<bool, $crate::StoreError> {
                self.core.update_task(id, from, to, data).await
            }
        }
    };
}
pub(crate) use forward_store;
