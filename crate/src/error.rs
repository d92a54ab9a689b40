//! The one error type of the core. Every variant names the offending value, so the CLI can print
//! it on one line and the page can show it beside the control that caused it.

use std::fmt;

/// A rejected input. The core validates at its boundary and cannot fail past it.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A number outside its allowed range: `name`, the value given, and the range in words.
    OutOfRange {
        name: &'static str,
        value: f64,
        allowed: &'static str,
    },
    /// A value that does not parse: what was being parsed, the text, and why.
    Parse {
        what: &'static str,
        text: String,
        why: String,
    },
    /// A name that is not one of the known presets or variants.
    Unknown {
        what: &'static str,
        name: String,
        known: String,
    },
    /// A device or resource this machine or browser does not offer (no GPU adapter, say).
    Unavailable { what: &'static str, why: String },
    /// A token tree over the node budget.
    TooLarge {
        what: String,
        nodes: u64,
        budget: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::OutOfRange {
                name,
                value,
                allowed,
            } => {
                write!(f, "{name} = {value} is out of range: {allowed}")
            }
            Error::Parse { what, text, why } => write!(f, "bad {what} {text:?}: {why}"),
            Error::Unknown { what, name, known } => {
                write!(f, "unknown {what} {name:?} (known: {known})")
            }
            Error::Unavailable { what, why } => write!(f, "{what} unavailable: {why}"),
            Error::TooLarge {
                what,
                nodes,
                budget,
            } => {
                write!(f, "{what} has {nodes} nodes, over the budget of {budget}")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Checks that `value` is finite and within `[lo, hi]`.
pub fn check_range(
    name: &'static str,
    value: f64,
    lo: f64,
    hi: f64,
    allowed: &'static str,
) -> Result<f64, Error> {
    if value.is_finite() && value >= lo && value <= hi {
        Ok(value)
    } else {
        Err(Error::OutOfRange {
            name,
            value,
            allowed,
        })
    }
}
