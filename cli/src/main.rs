//! The `dsh-tools` command-line host; see [`dsh_tools_cli`].

fn main() -> std::process::ExitCode {
    dsh_tools_cli::main()
}
