//! A worker process for the Monty runtime's `Isolation::Workers`: it serves Python programs to
//! its parent over stdin/stdout, with the memory-counting allocator the memory limit needs. See
//! `dsh_tools_runtime::code::monty::serve_worker`.

#[global_allocator]
static ALLOCATOR: dsh_tools_runtime::code::monty::WorkerAllocator =
    dsh_tools_runtime::code::monty::WorkerAllocator;

fn main() -> std::process::ExitCode {
    dsh_tools_runtime::code::monty::serve_worker()
}
