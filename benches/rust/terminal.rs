//! The terminal core on the Python terminal benchmark's corpus (`terminal.bin`): acpwire's
//! `text` view, `spans` view and a 200x50 screen, against `vte`'s bare parse (a `Perform`
//! that does nothing) and `vt100::Parser::process`, in one run. Throughput is per byte fed.
//!
//! ```text
//! PYTHONPATH=python python3 benches/scripts/write_corpus.py
//! cargo bench --bench terminal -- --warm-up-time 1 --measurement-time 3
//! ```

mod corpus;

use std::hint::black_box;

use acpwire::terminal::{Terminal, TerminalConfig};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Takes every parsed action and does nothing with it: what is left is `vte`'s state machine.
struct Discard;

impl vte::Perform for Discard {}

fn fed(config: TerminalConfig, data: &[u8]) -> Terminal {
    let mut terminal = Terminal::new(config);
    for piece in data.chunks(corpus::CHUNK) {
        terminal.feed(piece);
    }
    terminal
}

fn terminal(c: &mut Criterion) {
    let data = corpus::read("terminal.bin");
    let screen = TerminalConfig {
        cols: Some(200),
        rows: 50,
        ..TerminalConfig::default()
    };
    let mut group = c.benchmark_group("terminal");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.sample_size(10);
    group.bench_function("acpwire text", |b| {
        b.iter(|| black_box(fed(TerminalConfig::default(), &data).text()));
    });
    group.bench_function("acpwire spans", |b| {
        b.iter(|| black_box(fed(TerminalConfig::default(), &data).spans()));
    });
    group.bench_function("acpwire screen 200x50", |b| {
        b.iter(|| black_box(fed(screen, &data).screen()));
    });
    group.bench_function("vte parse", |b| {
        b.iter(|| {
            let mut parser = vte::Parser::new();
            let mut perform = Discard;
            for piece in data.chunks(corpus::CHUNK) {
                parser.advance(&mut perform, piece);
            }
            black_box(parser);
        });
    });
    group.bench_function("vt100 200x50", |b| {
        b.iter(|| {
            let mut parser = vt100::Parser::new(50, 200, 0);
            for piece in data.chunks(corpus::CHUNK) {
                parser.process(piece);
            }
            black_box(parser.screen().contents())
        });
    });
    group.finish();
}

criterion_group!(benches, terminal);
criterion_main!(benches);
