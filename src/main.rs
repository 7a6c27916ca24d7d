//! The `redlock-sim` binary: the command layer is the library's
//! [`redlock_sim::cli`].

fn main() -> std::process::ExitCode {
    redlock_sim::cli::main()
}
