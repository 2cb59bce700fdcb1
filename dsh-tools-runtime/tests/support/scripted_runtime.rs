//! A code runtime whose "program" is a Rust closure over the run's bindings: what a test needs
//! to drive `run_code` without a sandbox.

use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use dsh_tools_runtime::code::{
    BindingFn, CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeError,
};

/// The program: the run's request in, its result out.
pub(crate) type Program = Arc<
    dyn Fn(CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeError>>
        + Send
        + Sync,
>;

/// A TypeScript-language runtime that runs its [`Program`] for every run.
pub(crate) struct ScriptedRuntime(pub(crate) Program);

impl CodeRuntime for ScriptedRuntime {
    fn language(&self) -> &str {
        "typescript"
    }
    fn isolation(&self) -> &str {
        "scripted"
    }
    fn run(
        &self,
        request: CodeRunRequest,
    ) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeError>> {
        (self.0)(request)
    }
}

/// The `tools.<name>` binding of a run, if it has one.
pub(crate) fn find_binding(request: &CodeRunRequest, name: &str) -> Option<BindingFn> {
    request.bindings[0]
        .functions
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, f)| Arc::clone(f))
}
