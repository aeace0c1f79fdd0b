//! Floor of the source-map rows of scripts/bench.sh: reads each map file and decodes it
//! with the `sourcemap` crate alone (`sourcemap::decode_slice`: the JSON parsed, every
//! mapping decoded into tokens, names and sources read; an index map's sections flattened
//! into one map), as a tool that symbolicates with that crate must before its first
//! lookup. Prints each map's tokens and sources.
//!
//! Usage: cargo run --release --example mapdecode -- MAP...

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: mapdecode MAP...");
        std::process::exit(2);
    }
    for path in paths {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| {
            eprintln!("{path}: {e}");
            std::process::exit(1)
        });
        let map = match sourcemap::decode_slice(&bytes) {
            Ok(sourcemap::DecodedMap::Regular(m)) => m,
            Ok(sourcemap::DecodedMap::Index(i)) => i.flatten().unwrap_or_else(|e| {
                eprintln!("{path}: {e}");
                std::process::exit(1)
            }),
            Ok(_) => {
                eprintln!("{path}: not a regular or index map");
                std::process::exit(1)
            }
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1)
            }
        };
        println!(
            "{path}: {} tokens, {} sources",
            map.get_token_count(),
            map.get_source_count()
        );
    }
}
