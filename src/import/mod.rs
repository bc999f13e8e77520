//! Importers from other formats into the memory model.

pub mod postmortems;
