//! What every experiment is handed instead of a long list of arguments: the models it runs, the
//! language its reports are written in, and the caller's clock. Progress is not in it: a sweep
//! hands each of its runs a share of its own callback ([`crate::clock::part`]).

use crate::clock::Clock;
use crate::i18n::Lang;
use crate::model::Models;

/// The models, the language of the reports, and the clock of one experiment.
#[derive(Clone, Copy)]
pub struct Lab<'a> {
    pub models: &'a Models,
    pub lang: Lang,
    pub clock: Clock<'a>,
}

impl<'a> Lab<'a> {
    pub fn new(models: &'a Models, lang: Lang, clock: Clock<'a>) -> Lab<'a> {
        Lab {
            models,
            lang,
            clock,
        }
    }
}
