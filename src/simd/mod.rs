//! Every use of CPU intrinsics (`std::arch`) in the crate, each behind a safe function or an
//! `unsafe fn` whose `# Safety` section says what its caller must uphold. The rest of the crate
//! calls these and holds no intrinsic of its own.

pub(crate) mod json;
pub(crate) mod prefetch;
pub(crate) mod terminal_cells;
pub(crate) mod terminal_input;
