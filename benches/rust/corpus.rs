//! The corpora the Rust benches share with the Python ones, read from the files that
//! `benches/scripts/write_corpus.py` writes (by default under `target/bench-corpus/`).

use std::path::PathBuf;

/// Pieces the benches feed, as a stream reader would hand them over.
pub const CHUNK: usize = 64 * 1024;

/// The directory holding the corpora: `ACPWIRE_BENCH_CORPUS_DIR`, else `target/bench-corpus`
/// in the crate.
fn dir() -> PathBuf {
    std::env::var_os("ACPWIRE_BENCH_CORPUS_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-corpus"),
        PathBuf::from,
    )
}

/// The bytes of corpus `name`; exits with the command that writes it when it is absent.
pub fn read(name: &str) -> Vec<u8> {
    let path = dir().join(name);
    match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!(
                "cannot read the bench corpus {} ({err}); write it first with\n\n    \
                 PYTHONPATH=python python3 benches/scripts/write_corpus.py\n",
                path.display()
            );
            std::process::exit(2);
        }
    }
}
