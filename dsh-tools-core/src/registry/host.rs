//! The host's entry points into the pipeline the registry owns: running calls, registering
//! hooks, the approval service, host state and deadlines. Each is a thin forward; the work is in
//! `crate::pipeline`.

use std::future::Future;
use std::sync::Arc;

use dsh_tools::exec::{ScopeId, ToolExecution, ToolExecutionInput, ToolExecutionResult};

use super::{Effect, Registration, ToolRegistry};
use crate::approval::ApprovalService;
use crate::batch::BatchOptions;
use crate::hooks::{
    ExecuteWrapper, ExecuteWrapperFn, Guard, HookKind, PostExecute, PostExecuteFn, PreExecute,
    PreExecuteFn, ResultObserver, ResultObserverFn,
};

impl ToolRegistry {
    /// Executes one call through the whole pipeline and returns its result. Exactly one result
    /// notification is published per call.
    ///
    /// ```
    /// use dsh_tools::ToolDefinition;
    /// use dsh_tools::exec::ToolExecutionInput;
    /// use dsh_tools_runtime::ToolRegistry;
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let registry = ToolRegistry::new();
    /// registry.register(ToolDefinition::builder("add")
    ///     .description("Add two integers.")
    ///     .parameters_json(json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}))
    ///     .output_json(json!({"type": "integer"}))
    ///     .execute(|args, _| async move { Ok(json!(args["a"].as_i64().unwrap() + args["b"].as_i64().unwrap())) })
    ///     .build().unwrap()).unwrap().keep();
    /// let ok = registry.execute(ToolExecutionInput::new("c1", "add", json!({"a": 2, "b": 3}))).await;
    /// assert_eq!(ok.value(), Some(&json!(5)));
    /// let bad = registry.execute(ToolExecutionInput::new("c2", "add", json!({"a": "2"}))).await;
    /// assert_eq!(bad.content()[0].as_text(), Some("Error: invalid arguments: missing required property \"b\"; \"a\" must be an integer"));
    /// # });
    /// ```
    pub fn execute(
        &self,
        input: ToolExecutionInput,
    ) -> impl Future<Output = ToolExecutionResult> + Send + '_ {
        crate::pipeline::execute(self, input)
    }

    /// Executes the calls of one model turn, overlapping the dispatch of concurrency-safe calls
    /// up to the registry's `max_parallel_sub_calls`, and returns their results in call order
    /// (see the [module docs](crate::batch) for the scheduling rules).
    ///
    /// ```
    /// use dsh_tools::ToolDefinition;
    /// use dsh_tools::exec::ToolExecutionInput;
    /// use dsh_tools_runtime::ToolRegistry;
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let registry = ToolRegistry::new();
    /// registry.register(ToolDefinition::builder("read")
    ///     .description("Read a file.")
    ///     .concurrency_safe(true)
    ///     .execute(|args, _| async move { Ok(json!(format!("contents of {}", args["path"]))) })
    ///     .build().unwrap()).unwrap().keep();
    /// let calls = ["a", "b", "c"]
    ///     .map(|path| ToolExecutionInput::new(path, "read", json!({"path": path})))
    ///     .to_vec();
    /// let results = registry.execute_batch(calls).await;
    /// let values: Vec<_> = results.iter().map(|r| r.value().unwrap().clone()).collect();
    /// assert_eq!(values, [json!("contents of \"a\""), json!("contents of \"b\""), json!("contents of \"c\"")]);
    /// # });
    /// ```
    pub async fn execute_batch(&self, inputs: Vec<ToolExecutionInput>) -> Vec<ToolExecutionResult> {
        self.execute_batch_with(inputs, self.config().into()).await
    }

    /// [`ToolRegistry::execute_batch`] with explicit options.
    pub async fn execute_batch_with(
        &self,
        inputs: Vec<ToolExecutionInput>,
        options: BatchOptions,
    ) -> Vec<ToolExecutionResult> {
        crate::pipeline::execute_batch(self, inputs, options.max_parallel).await
    }

    /// Adds a global hook of kind `K` (see [`HookKind`]); it sees every call.
    pub fn add_hook<K: HookKind>(&self, hook: K::Hook) -> Registration {
        self.hook_in::<K>(None, hook)
    }

    /// The hooks of kind `K` that apply to `exec` (the global ones and those of its scope's
    /// chain), in registration order, from the store as it is now: how an extension runs a
    /// hook kind of its own.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use dsh_tools::exec::ToolExecution;
    /// use dsh_tools_runtime::ToolRegistry;
    /// use dsh_tools_runtime::hooks::HookKind;
    ///
    /// /// A hook kind of an extension's own.
    /// struct Ping;
    /// impl HookKind for Ping {
    ///     type Hook = Arc<dyn Fn() -> &'static str + Send + Sync>;
    /// }
    /// let registry = ToolRegistry::new();
    /// registry.add_hook::<Ping>(Arc::new(|| "pong")).keep();
    /// let exec = ToolExecution::detached("c1", "x", serde_json::json!({}));
    /// let hooks = registry.applicable_hooks::<Ping>(&exec);
    /// assert_eq!(hooks.iter().map(|h| h()).collect::<Vec<_>>(), ["pong"]);
    /// ```
    pub fn applicable_hooks<K: HookKind>(&self, exec: &ToolExecution) -> Vec<K::Hook> {
        crate::pipeline::applicable::<K, _>(self, exec)
    }

    /// Adds a global guard (no change notification).
    pub fn guard(
        &self,
        guard: impl Fn(&ToolExecution) -> Option<String> + Send + Sync + 'static,
    ) -> Registration {
        self.add_hook::<Guard>(Arc::new(guard))
    }

    /// Adds a global pre-execute policy (sees every call).
    pub fn on_pre_execute(&self, hook: PreExecuteFn) -> Registration {
        self.add_hook::<PreExecute>(hook)
    }

    /// Adds a global execute wrapper.
    pub fn on_execute(&self, hook: ExecuteWrapperFn) -> Registration {
        self.add_hook::<ExecuteWrapper>(hook)
    }

    /// Adds a global post-execute policy.
    pub fn on_post_execute(&self, hook: PostExecuteFn) -> Registration {
        self.add_hook::<PostExecute>(hook)
    }

    /// Adds a global result observer.
    pub fn on_result(
        &self,
        observer: impl Fn(&ToolExecution, &ToolExecutionResult) + Send + Sync + 'static,
    ) -> Registration {
        let hook: ResultObserverFn = Arc::new(observer);
        self.add_hook::<ResultObserver>(hook)
    }

    /// Installs [`timeout_policy`](crate::timeout::timeout_policy) as a global execute wrapper
    /// (after the wrappers registered so far, i.e. inside them): the declared budgets then bound
    /// the wrappers registered after it too. Dispose the handle to uninstall it.
    pub fn install_timeout_policy(&self) -> Registration {
        self.on_execute(crate::timeout::timeout_policy())
    }

    /// Whether the pipeline enforces each tool's declared `timeout_ms` around its body — on by
    /// default (see [`timeout`](crate::timeout)). Turn it off only when the host enforces the
    /// budgets some other way.
    pub fn enforce_deadlines(&self, enforce: bool) {
        self.inner.pipeline.enforce_deadlines(enforce);
    }

    /// Mounts the host's approval service, registry-wide: it answers every `ask` — a tool that
    /// [requires approval](dsh_tools::ToolDefinition::requires_approval), a pre-execute policy's
    /// `ask` — on any call, with or without an agent (a Code Mode run or a durable run answers
    /// its own sub-calls first; `docs/CONTRACTS.md`, "Stages", stage 5).
    pub fn set_approval(&self, service: Arc<dyn ApprovalService>) {
        self.inner.pipeline.set_approval(service);
    }

    /// The approval service [`set_approval`](Self::set_approval) mounted, if any: for a host
    /// that asks its person about something other than a call (e.g. whether to run again a
    /// call whose outcome is unknown after a crash).
    pub fn approval(&self) -> Option<Arc<dyn ApprovalService>> {
        self.inner.pipeline.approval()
    }

    /// Which tools ask for approval by themselves (default
    /// [`ApprovalPolicy::Declared`](crate::approval::ApprovalPolicy::Declared): those declaring
    /// `requires_approval`); [`DeclaredOrDestructive`](crate::approval::ApprovalPolicy::DeclaredOrDestructive)
    /// adds every tool annotated destructive.
    pub fn set_approval_policy(&self, policy: crate::approval::ApprovalPolicy) {
        self.inner.pipeline.set_approval_policy(policy);
    }

    /// Forgets the tools approved for the session
    /// ([`ApprovalOutcome::AllowedForSession`](crate::approval::ApprovalOutcome::AllowedForSession)):
    /// their next `ask` reaches the approval service again.
    pub fn clear_session_approvals(&self) {
        self.inner.pipeline.clear_session_approvals();
    }

    /// Mounts the host's input service, registry-wide: it answers the questions of tool bodies
    /// ([`ToolRunContext::ask`](dsh_tools::exec::ToolRunContext::ask)) on calls whose caller
    /// brought no [`InputChannel`](dsh_tools::exec::InputChannel) of its own (a direct
    /// `execute`; an MCP client answers its own calls' questions). `docs/CONTRACTS.md`, "Tools
    /// that ask their caller".
    pub fn set_input_service(&self, service: Arc<dyn dsh_tools::exec::CallerInput>) {
        self.provide_state(Arc::new(dsh_tools::exec::HostInput(service)));
    }

    /// The host state of type `T` ([`provide_state`](Self::provide_state)), if provided.
    #[cfg(feature = "mcp")]
    pub(crate) fn host_state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner.pipeline.states().get::<T>()
    }

    /// Makes host state available to `State<T>` tool parameters.
    pub fn provide_state<T: Send + Sync + 'static>(&self, value: Arc<T>) {
        self.inner
            .pipeline
            .provide_state(|states| states.insert(value));
    }

    /// Adds a hook of kind `K` for `scope` (`None` = every call).
    pub(crate) fn hook_in<K: HookKind>(
        &self,
        scope: Option<ScopeId>,
        hook: K::Hook,
    ) -> Registration {
        // A hook of a disposed scope would outlive the scope's disposal (and still reach its
        // children, which keep their parent link): it is not added. The state lock is held
        // across the insert so a concurrent `Scope::dispose` either sees the hook or is seen.
        let state = self.inner.read();
        if state.layer(scope).is_none() {
            return Registration::new(&self.inner, Effect::Nothing);
        }
        let id = self.inner.next_id();
        self.inner.pipeline.add_hook::<K>(id, scope, hook);
        drop(state);
        Registration::new(&self.inner, Effect::Hook { id })
    }
}
