//! The job rules (`super`), one test per rule.
use super::*;

