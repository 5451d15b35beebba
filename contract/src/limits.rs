//! The sync server's request limits that its clients plan around: a client that splits its
//! queue by these never sends a request the server must refuse for its size.

/// The largest JSON request body the server reads, in bytes; past it, `413`.
pub const JSON_BODY_BYTES: usize = 10 * 1024 * 1024;

/// The most items one `runs:batchUpsert` takes.
pub const BATCH_ITEMS: usize = 200;
