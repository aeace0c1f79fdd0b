//! Writes the man pages of the command line (clap_mangen, from the same `Cli` that parses
//! it): `taskchain.1` and one page per subcommand (`taskchain-compare.1`, …). Run it through
//! `scripts/man.sh [DIR]`, or `cargo run --example man -- DIR`.

fn main() -> std::io::Result<()> {
    use clap::CommandFactory;
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or("target/man".into()));
    std::fs::create_dir_all(&dir)?;
    let cli = taskchain::internals::cli::Cli::command().version(env!("TASKCHAIN_LONG_VERSION"));
    clap_mangen::generate_to(cli, &dir)?;
    for page in std::fs::read_dir(&dir)? {
        println!("{}", page?.path().display());
    }
    Ok(())
}
