//! The CLI's options and output contract: `--name value` options (split by lexopt) read one by
//! one (anything left over is an error), a failed invocation as one line ([`Usage`]), and what a
//! subcommand produces ([`Report`]: the JSON object and the table rows for people). Every command
//! file reads these; this file reads none of them.

use serde_json::Value;
use specdec::error::Range;
use std::collections::BTreeMap;

/// Options that take no value (`--json` is read by the dispatcher, the others by commands).
const FLAGS: [&str; 8] = [
    "json",
    "no-cache",
    "gallery",
    "sequoia",
    "dynamic",
    "ttt",
    "offload",
    "no-filter",
];

/// A failed invocation: the one line printed on stderr before exiting with status 2.
pub struct Usage(pub String);

impl From<specdec::Error> for Usage {
    fn from(e: specdec::Error) -> Usage {
        Usage(e.to_string())
    }
}

/// Parsed `--name value` options of one subcommand; each read removes its option so that
/// anything left over is reported as unknown.
pub struct Opts {
    pub command: String,
    values: BTreeMap<String, String>,
    /// Words before the first option (`likesworld accuracy …`), read by the routers
    /// ([`Opts::word`]); one left unread is an error, as an option is.
    words: Vec<String>,
    /// Options given without a value (`--no-cache`).
    flags: Vec<String>,
    pub json: bool,
    /// Added to the report by the dispatcher, as a JSON key and a row: what an option changed
    /// that the report's own words do not say (`--draft-file`: the reports say "your draft", this
    /// row which file it is; the experiments that compare drafts A and B refuse it).
    pub beside: Vec<(&'static str, String)>,
}

impl Opts {
    /// Reads `args` with lexopt: `--name value` or `--name=value` (the value taken whatever it
    /// looks like: `--alpha -0.5`), the [`FLAGS`] alone, and words before the first option other
    /// than `--json` or after `--`. The caller has refused arguments that are not UTF-8.
    pub fn parse(command: &str, args: &[String]) -> Result<Opts, Usage> {
        use lexopt::Arg::{Long, Short, Value};
        let usage = |why: String| Usage(format!("{command}: {why}"));
        let (mut values, mut words, mut flags) = (BTreeMap::new(), Vec::new(), Vec::new());
        let mut parser = lexopt::Parser::from_args(args);
        parser.set_short_equals(false); // `-x=1` stays one word, as written
        while let Some(arg) = parser.next().map_err(|e| usage(e.to_string()))? {
            let word = match arg {
                Long(name) if FLAGS.contains(&name) => {
                    let name = name.to_string();
                    if parser.optional_value().is_some() {
                        return Err(usage(format!("--{name} takes no value")));
                    } else if flags.contains(&name) {
                        return Err(usage(format!("--{name} given twice")));
                    }
                    flags.push(name);
                    continue;
                }
                Long(name) => {
                    let name = name.to_string();
                    let Ok(value) = parser.value() else {
                        return Err(usage(format!("--{name} needs a value")));
                    };
                    let value = value.to_string_lossy().into_owned();
                    if values.insert(name.clone(), value).is_some() {
                        return Err(usage(format!("--{name} given twice")));
                    }
                    continue;
                }
                // A single dash and what follows it, whole (`-x`, `-abc`), is a word as any other.
                Short(c) => {
                    let rest = parser.optional_value().unwrap_or_default();
                    format!("-{c}{}", rest.to_string_lossy())
                }
                Value(word) => word.to_string_lossy().into_owned(),
            };
            if !values.is_empty() || flags.iter().any(|f| f != "json") {
                return Err(usage(format!(
                    "unexpected argument {word:?} (options look like --name value)"
                )));
            }
            words.push(word);
        }
        let mut o = Opts {
            command: command.to_string(),
            values,
            words,
            flags,
            json: false,
            beside: Vec::new(),
        };
        o.json = o.flag("json");
        Ok(o)
    }

    /// Whether a value-less option such as `--no-cache` was given.
    pub fn flag(&mut self, name: &str) -> bool {
        let had = self.flags.iter().any(|f| f == name);
        self.flags.retain(|f| f != name);
        had
    }

    /// The value of `--name` without reading it (an option whose form decides what it means).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub fn peek(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    pub fn take(&mut self, name: &str) -> Option<String> {
        self.values.remove(name)
    }

    pub fn required(&mut self, name: &str) -> Result<String, Usage> {
        self.take(name)
            .ok_or_else(|| Usage(format!("{}: missing --{name}", self.command)))
    }

    pub fn number<T: std::str::FromStr>(
        &mut self,
        name: &str,
        default: Option<T>,
    ) -> Result<T, Usage> {
        match self.take(name) {
            Some(text) => text.trim().parse().map_err(|_| {
                Usage(format!(
                    "{}: bad value for --{name}: {text:?} is not a valid number here",
                    self.command
                ))
            }),
            None => default.ok_or_else(|| Usage(format!("{}: missing --{name}", self.command))),
        }
    }

    /// A whole number within its declared range (the range is part of every message: a number
    /// out of it, a fraction, or text that is no number).
    pub fn count(&mut self, range: &Range, default: Option<usize>) -> Result<usize, Usage> {
        let name = range.name;
        let Some(text) = self.take(name) else {
            return default.ok_or_else(|| Usage(format!("{}: missing --{name}", self.command)));
        };
        let bad = |why: &str| {
            let allowed = range.allowed();
            Usage(format!(
                "{}: bad value for --{name}: {text:?} {why} ({allowed})",
                self.command
            ))
        };
        let x: f64 = text.trim().parse().map_err(|_| bad("is not a number"))?;
        range.check(x)?;
        if x.fract() != 0.0 {
            return Err(bad("is not a whole number"));
        }
        Ok(x as usize)
    }

    /// The next word before the options (a subcommand), read.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub fn word(&mut self) -> Option<String> {
        (!self.words.is_empty()).then(|| self.words.remove(0))
    }

    /// Fails on any option or word no reader asked for.
    pub fn finish(&self) -> Result<(), Usage> {
        if let Some(w) = self.words.first() {
            return Err(Usage(format!(
                "{}: unexpected argument {w:?} (options look like --name value)",
                self.command
            )));
        }
        match (self.values.keys().next(), self.flags.first()) {
            (Some(name), _) | (None, Some(name)) => {
                Err(Usage(format!("{}: unknown option --{name}", self.command)))
            }
            (None, None) => Ok(()),
        }
    }
}

/// What a subcommand produces: the JSON object and the table rows for people.
pub struct Report {
    pub json: Value,
    pub rows: Vec<(String, String)>,
}

pub fn row(k: &str, v: impl std::fmt::Display) -> (String, String) {
    (k.to_string(), v.to_string())
}
