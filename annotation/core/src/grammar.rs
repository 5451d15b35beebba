//! TODO(helper): see lib.rs.
