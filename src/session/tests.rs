//! Unit tests of the session reducer.
