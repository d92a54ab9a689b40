//! LikesWorld (lecture §3, SPEC §2.4): the tiny world the neural target and drafts live in.
//!
//! A sequence is `<bos>`, some facts `NAME likes ITEM .`, then one question per person in the
//! facts, in random order, `q NAME ITEM .`, then `<eos>`. Answering means looking the item up in
//! the facts, which a 2-layer Transformer learns (an induction-style copy) and a small draft
//! mostly does not. The prompt is the facts; the model generates the questions and answers.
//! [`TokenKind`] labels each position by what predicting it takes, which is what the lecture's
//! acceptance-by-kind experiment (demo 03.1) groups by.

use crate::error::{Error, Text};
use crate::i18n::Lang;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Padding (never predicted; masked out of the loss).
pub const PAD: u32 = 0;
pub const BOS: u32 = 1;
pub const EOS: u32 = 2;
pub const LIKES: u32 = 3;
pub const DOT: u32 = 4;
pub const Q: u32 = 5;

pub const NAMES: [&str; 18] = [
    "ann", "bob", "cal", "dan", "eve", "fay", "gus", "hal", "ivy", "jon", "kim", "lee", "max",
    "ned", "oli", "pam", "rex", "sue",
];
pub const ITEMS: [&str; 16] = [
    "jam", "nuts", "tea", "figs", "rice", "soup", "cake", "pie", "eggs", "milk", "corn", "plums",
    "beans", "honey", "salt", "kale",
];
const SPECIALS: [&str; 6] = ["<pad>", "<bos>", "<eos>", "likes", ".", "q"];
const FIRST_NAME: u32 = SPECIALS.len() as u32;
const FIRST_ITEM: u32 = FIRST_NAME + NAMES.len() as u32;

/// The vocabulary size (40, as the peer models in `shared/peers`).
pub const VOCAB: usize = SPECIALS.len() + NAMES.len() + ITEMS.len();
/// Fewest and most facts in a world.
pub const MIN_FACTS: usize = 3;
pub const MAX_FACTS: usize = 6;
/// The longest sequence: `<bos>`, MAX_FACTS facts and questions of 4 tokens each, `<eos>`.
pub const MAX_LEN: usize = 2 + 8 * MAX_FACTS;

pub fn is_name(t: u32) -> bool {
    (FIRST_NAME..FIRST_ITEM).contains(&t)
}

pub fn is_item(t: u32) -> bool {
    (FIRST_ITEM..VOCAB as u32).contains(&t)
}

/// The word of a token id.
pub fn word(t: u32) -> &'static str {
    let t = t as usize;
    match t {
        _ if t < SPECIALS.len() => SPECIALS[t],
        _ if t < FIRST_ITEM as usize => NAMES[t - FIRST_NAME as usize],
        _ if t < VOCAB => ITEMS[t - FIRST_ITEM as usize],
        _ => "<?>",
    }
}

/// Words ↔ ids. Words are separated by whitespace; unknown words are an error naming the word.
pub fn encode(text: &str) -> Result<Vec<u32>, Error> {
    text.split_whitespace()
        .map(|w| {
            (0..VOCAB as u32)
                .find(|&t| word(t) == w)
                .ok_or_else(|| {
                    Error::Unknown {
                what: "LikesWorld word",
                name: w.to_string(),
                known: Text::new(
                    "<bos> <eos> likes . q, names such as ann bob cal, items such as jam nuts tea",
                    "<bos> <eos> likes . q，名字如 ann、bob、cal，物品如 jam、nuts、tea",
                ),
            }
                })
        })
        .collect()
}

pub fn decode(tokens: &[u32]) -> String {
    tokens
        .iter()
        .map(|&t| word(t))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One world: who likes what, and the order in which they are asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct World {
    /// (name, item) token ids; names are distinct.
    pub facts: Vec<(u32, u32)>,
    /// Indices into `facts`: the question order.
    pub order: Vec<usize>,
}

impl World {
    /// A random world with MIN_FACTS..=MAX_FACTS facts.
    pub fn sample<R: Rng + ?Sized>(rng: &mut R) -> World {
        let n = rng.random_range(MIN_FACTS..=MAX_FACTS);
        let mut names: Vec<u32> = (FIRST_NAME..FIRST_ITEM).collect();
        names.shuffle(rng);
        let facts: Vec<(u32, u32)> = names[..n]
            .iter()
            .map(|&who| (who, FIRST_ITEM + rng.random_range(0..ITEMS.len() as u32)))
            .collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(rng);
        World { facts, order }
    }

    /// The prompt: `<bos>` and the facts.
    pub fn prompt(&self) -> Vec<u32> {
        let mut t = vec![BOS];
        for &(who, what) in &self.facts {
            t.extend([who, LIKES, what, DOT]);
        }
        t
    }

    /// The whole sequence: prompt, questions with answers, `<eos>`.
    pub fn tokens(&self) -> Vec<u32> {
        let mut t = self.prompt();
        for &i in &self.order {
            let (who, what) = self.facts[i];
            t.extend([Q, who, what, DOT]);
        }
        t.push(EOS);
        t
    }
}

/// `n` worlds from a seed. Training and evaluation use disjoint seed streams (see [`Split`]).
pub fn worlds(split: Split, seed: u64, n: usize) -> Vec<World> {
    let mut rng = StdRng::seed_from_u64(split.stream() ^ seed);
    (0..n).map(|_| World::sample(&mut rng)).collect()
}

/// Seed of the held-out worlds the experiments decode.
pub const WORLD_SEED: u64 = 17;

/// The experiments' prompts: `n` held-out worlds (each world's facts are its prompt).
pub fn prompts(n: usize) -> Vec<World> {
    worlds(Split::HeldOut, WORLD_SEED, n)
}

/// Sampling prompts: the facts and "q NAME" of the first person asked (lecture §3.4).
pub fn sampling_prompts(n: usize) -> Vec<Vec<u32>> {
    prompts(n)
        .iter()
        .map(|w| {
            let mut p = w.prompt();
            p.extend([Q, w.facts[w.order[0]].0]);
            p
        })
        .collect()
}

/// Which stream of worlds: the model trains on one and is measured on the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    Train,
    HeldOut,
}

impl Split {
    fn stream(self) -> u64 {
        match self {
            Split::Train => 0x7472_6169_6e00_0000,
            Split::HeldOut => 0x6865_6c64_6f75_7400,
        }
    }
}

crate::error::choices! {
    /// What predicting a token takes (lecture §3.1).
    #[derive(Hash)]
    pub enum TokenKind("token kind") {
        /// Fixed by the grammar: `<bos>`, `likes`, `.`, `q`, `<eos>`.
        Boilerplate = "boilerplate",
        /// A fact's name or item: random, nobody can predict it.
        RandomFact = "random-fact",
        /// The name in a question: one of the people not yet asked about.
        QuestionName = "question-name",
        /// The item in a question: must be looked up in the facts.
        Answer = "answer",
    }
}

impl TokenKind {
    /// The kind in the page's words (the lecture's §3.1 names).
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            TokenKind::Boilerplate => lang.pick("boilerplate", "套话"),
            TokenKind::RandomFact => lang.pick("random fact", "随机事实"),
            TokenKind::QuestionName => lang.pick("question name", "问题里的名字"),
            TokenKind::Answer => lang.pick("answer", "答案"),
        }
    }
}

/// The kind of every token of a well-formed sequence (prefixes allowed).
pub fn token_kinds(tokens: &[u32]) -> Vec<TokenKind> {
    let mut in_questions = false;
    let mut kinds = Vec::with_capacity(tokens.len());
    for (i, &t) in tokens.iter().enumerate() {
        if t == Q {
            in_questions = true;
        }
        let prev = if i > 0 { tokens[i - 1] } else { PAD };
        kinds.push(match t {
            _ if is_name(t) && in_questions => TokenKind::QuestionName,
            _ if is_item(t) && in_questions && is_name(prev) => TokenKind::Answer,
            _ if is_name(t) || is_item(t) => TokenKind::RandomFact,
            _ => TokenKind::Boilerplate,
        });
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_is_40_and_round_trips() {
        assert_eq!(VOCAB, 40);
        let text = "<bos> dan likes jam . fay likes nuts . q fay nuts . q dan jam . <eos>";
        let ids = encode(text).unwrap();
        assert_eq!(decode(&ids), text);
        assert!(encode("dan loves jam")
            .unwrap_err()
            .to_string()
            .contains("\"loves\""));
        // The words it knows are named in the page's language too.
        let zh = encode("dan loves jam").unwrap_err().message(Lang::Zh);
        assert_eq!(
            zh,
            "未知的LikesWorld 词“loves”（可选：<bos> <eos> likes . q，名字如 ann、bob、cal，物品如 jam、nuts、tea）"
        );
    }

    #[test]
    fn worlds_follow_the_grammar() {
        for w in worlds(Split::Train, 1, 200) {
            let t = w.tokens();
            assert!(t.len() <= MAX_LEN);
            assert_eq!((t[0], *t.last().unwrap()), (BOS, EOS));
            let mut names: Vec<u32> = w.facts.iter().map(|f| f.0).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), w.facts.len(), "names are distinct");
            let mut asked = w.order.clone();
            asked.sort();
            assert_eq!(
                asked,
                (0..w.facts.len()).collect::<Vec<_>>(),
                "everyone is asked once"
            );
            // Every answer is the item of that name in the facts.
            let q0 = w.prompt().len();
            for k in 0..w.facts.len() {
                let (who, what) = (t[q0 + 4 * k + 1], t[q0 + 4 * k + 2]);
                assert!(w.facts.contains(&(who, what)));
            }
        }
    }

    #[test]
    fn splits_and_seeds_differ() {
        assert_ne!(worlds(Split::Train, 0, 5), worlds(Split::HeldOut, 0, 5));
        assert_eq!(worlds(Split::HeldOut, 3, 5), worlds(Split::HeldOut, 3, 5));
    }

    #[test]
    fn kinds_of_the_lecture_example() {
        use TokenKind::*;
        let t = encode("<bos> dan likes jam . q dan jam . <eos>").unwrap();
        assert_eq!(
            token_kinds(&t),
            [
                Boilerplate,
                RandomFact,
                Boilerplate,
                RandomFact,
                Boilerplate,
                Boilerplate,
                QuestionName,
                Answer,
                Boilerplate,
                Boilerplate
            ]
        );
    }
}
