fn main() -> std::process::ExitCode {
    earmark::cli::main()
}
