//! The `dsh-tools` command-line host; see [`dsh_tools_cli`].

// Python programs run in worker processes of this same binary (`__monty-worker`), whose memory
// limit needs the counting allocator; outside a worker it only counts.
#[global_allocator]
static ALLOCATOR: dsh_tools_runtime::code::monty::WorkerAllocator =
    dsh_tools_runtime::code::monty::WorkerAllocator;

fn main() -> std::process::ExitCode {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == dsh_tools_cli::WORKER_ARGUMENT)
    {
        return dsh_tools_runtime::code::monty::serve_worker();
    }
    dsh_tools_cli::main()
}
