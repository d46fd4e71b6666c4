//! NDJSON framing core: `Framer::feed` over the mixed-sessions trace (`sessions-mixed.ndjson`)
//! in 64 KiB pieces, against `memchr`'s newline search over the same bytes (the floor: a
//! splitter that neither keeps partial lines nor counts them).
//!
//! ```text
//! PYTHONPATH=python python3 benches/scripts/write_corpus.py
//! cargo bench --bench framing -- --warm-up-time 1 --measurement-time 3
//! ```

mod corpus;

use std::hint::black_box;

use acpwire::framing::{Event, Framer};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn framing(c: &mut Criterion) {
    let data = corpus::read("sessions-mixed.ndjson");
    let mut group = c.benchmark_group("framing");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("acpwire Framer", |b| {
        b.iter(|| {
            let mut framer = Framer::default();
            let mut framed_bytes = 0_usize;
            let mut count = |event: Event<'_>| {
                if let Event::Frame(frame) = event {
                    framed_bytes += black_box(frame.bytes).len();
                }
            };
            for piece in data.chunks(corpus::CHUNK) {
                framer.feed(piece, &mut count);
            }
            framer.finish(&mut count);
            framed_bytes
        });
    });
    group.bench_function("memchr newlines", |b| {
        b.iter(|| memchr::memchr_iter(b'\n', black_box(&data)).count());
    });
    group.finish();
}

criterion_group!(benches, framing);
criterion_main!(benches);
