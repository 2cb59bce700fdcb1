//! The `dsh-tools` command-line host; see [`dsh_tools_examples::cli`].

fn main() -> std::process::ExitCode {
    dsh_tools_examples::cli::main()
}
