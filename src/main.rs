//! The `readlab` binary: everything happens in the library's `cli` module.

fn main() -> std::process::ExitCode {
    readlab::cli::main()
}
