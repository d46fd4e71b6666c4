//! Session reduction core: `Sessions::feed` over the Python session benchmark's traces
//! (`sessions-tokens.ndjson`, `sessions-terminal.ndjson`, `sessions-mixed.ndjson`) in 64 KiB
//! pieces, each run ending with the snapshot of every session.
//!
//! ```text
//! PYTHONPATH=python python3 benches/scripts/write_corpus.py
//! cargo bench --bench session -- --warm-up-time 1 --measurement-time 3
//! ```

mod corpus;

use std::hint::black_box;

use acpwire::session::Sessions;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn reduce(data: &[u8]) {
    let mut store = Sessions::default();
    for piece in data.chunks(corpus::CHUNK) {
        store.feed(piece);
    }
    store.finish();
    for id in store.ids() {
        if let Some(session) = store.get(&id) {
            black_box(session.snapshot());
        }
    }
}

fn session(c: &mut Criterion) {
    let mut group = c.benchmark_group("session");
    group.sample_size(10);
    for workload in ["tokens", "terminal", "mixed"] {
        let data = corpus::read(&format!("sessions-{workload}.ndjson"));
        group.throughput(Throughput::Bytes(data.len() as u64));
        group.bench_function(workload, |b| b.iter(|| reduce(&data)));
    }
    group.finish();
}

criterion_group!(benches, session);
criterion_main!(benches);
