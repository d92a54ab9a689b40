//! The workloads of demo 05.1: two where the target is a deterministic rule (it only counts
//! calls, as in the lecture) and LikesWorld with the real target.
//!
//! - **code rewrite**: the prompt is a small code-like function and "rename OLD to NEW"; the
//!   output copies the code with the identifier renamed. Long stretches repeat the prompt.
//! - **agent**: requests of a few kinds ("book a flight from paris to oslo on monday"); each
//!   output follows its kind's template (a tool call, then a reply) with the slots copied from
//!   the prompt. Template text repeats across requests, slot values come from the prompt.
//! - **LikesWorld**: held-out worlds as prompts, the trained target's greedy output.
//!
//! Each workload also has "earlier" outputs: what the same workload produced before (other
//! requests of the same kinds), the global index's starting content.

use std::collections::HashMap;

use rand::rngs::StdRng;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};

use crate::decode::{LanguageModel, Speculation};
use crate::error::Error;
use crate::i18n::Lang;
use crate::likesworld::{self, Split};
use crate::sampling::{one_hot, Dist};

crate::error::choices! {
    /// Which workload.
    pub enum Kind("workload") {
        CodeRewrite = "code-rewrite",
        Agent = "agent",
        Likesworld = "likesworld",
    }
}

impl Kind {
    /// The workload as the page's figures name it, in `lang` (`name` is the identifier the
    /// CLI and the URL take).
    pub fn title(self, lang: Lang) -> &'static str {
        match self {
            Kind::CodeRewrite => lang.pick("code rewrite", "代码改写"),
            Kind::Agent => lang.pick("agent", "智能体"),
            Kind::Likesworld => "LikesWorld",
        }
    }
}

/// One request: its prompt and, for the rule workloads, the output the rule writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub prompt: Vec<u32>,
    pub output: Vec<u32>,
}

/// A workload: its words, requests, and earlier outputs.
#[derive(Debug, Clone)]
pub struct Workload {
    pub kind: Kind,
    pub words: Vec<String>,
    pub eos: u32,
    pub max_len: usize,
    pub requests: Vec<Request>,
    pub earlier: Vec<Vec<u32>>,
}

impl Workload {
    /// `n` requests and `earlier` earlier outputs, from `seed`.
    pub fn new(kind: Kind, n: usize, earlier: usize, seed: u64) -> Workload {
        match kind {
            Kind::CodeRewrite => rule_workload(kind, &code_rewrite, n, earlier, seed),
            Kind::Agent => rule_workload(kind, &agent, n, earlier, seed),
            Kind::Likesworld => {
                let words = (0..likesworld::VOCAB as u32)
                    .map(|t| likesworld::word(t).to_string())
                    .collect();
                let request = |w: &likesworld::World| {
                    let prompt = w.prompt();
                    let output = w.tokens()[prompt.len()..].to_vec();
                    Request { prompt, output }
                };
                let requests = likesworld::prompts(n).iter().map(request).collect();
                // Earlier outputs: the answers of other held-out worlds (what the target writes).
                let earlier = likesworld::worlds(Split::HeldOut, seed ^ 0x5EED_0005, earlier)
                    .iter()
                    .map(|w| request(w).output)
                    .collect();
                Workload {
                    kind,
                    words,
                    eos: likesworld::EOS,
                    max_len: likesworld::MAX_LEN,
                    requests,
                    earlier,
                }
            }
        }
    }

    pub fn vocab(&self) -> usize {
        self.words.len()
    }

    /// Tokens as text.
    pub fn text(&self, tokens: &[u32]) -> Vec<String> {
        tokens
            .iter()
            .map(|&t| {
                self.words
                    .get(t as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("#{t}"))
            })
            .collect()
    }
}

/// Words as ids, the vocabulary growing as new words appear (ids 0 and 1: `<pad>`, `<eos>`).
struct Words {
    words: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Words {
    fn new() -> Words {
        let mut w = Words {
            words: Vec::new(),
            ids: HashMap::new(),
        };
        w.encode("<pad> <eos>");
        w
    }

    fn encode(&mut self, text: &str) -> Vec<u32> {
        text.split_whitespace()
            .map(|word| {
                *self.ids.entry(word.to_string()).or_insert_with(|| {
                    self.words.push(word.to_string());
                    (self.words.len() - 1) as u32
                })
            })
            .collect()
    }
}

const EOS: u32 = 1;

/// A generator of (prompt, output) texts.
type Generator = dyn Fn(&mut StdRng) -> (String, String);

fn rule_workload(kind: Kind, make: &Generator, n: usize, earlier: usize, seed: u64) -> Workload {
    let mut words = Words::new();
    // Every word of every list first, so that ids do not depend on n.
    words.encode(&VOCABULARY.join(" "));
    let mut rng = StdRng::seed_from_u64(seed ^ 0x0C0D_E5EE_D000_0001);
    let mut request = |rng: &mut StdRng| {
        let (p, o) = make(rng);
        let mut output = words.encode(&o);
        output.push(EOS);
        Request {
            prompt: words.encode(&p),
            output,
        }
    };
    let earlier = (0..earlier).map(|_| request(&mut rng).output).collect();
    let requests: Vec<Request> = (0..n).map(|_| request(&mut rng)).collect();
    let max_len = requests
        .iter()
        .map(|r| r.prompt.len() + r.output.len())
        .max()
        .unwrap_or(0);
    Workload {
        kind,
        words: words.words,
        eos: EOS,
        max_len,
        requests,
        earlier,
    }
}

const IDENTIFIERS: [&str; 20] = [
    "total", "count", "item", "value", "index", "result", "buffer", "width", "height", "score",
    "limit", "offset", "node", "acc", "left", "right", "step", "size", "key", "flag",
];
const FUNCTIONS: [&str; 8] = [
    "update", "compute", "merge", "scan", "apply", "reduce", "parse", "render",
];
const CITIES: [&str; 10] = [
    "paris", "tokyo", "lima", "oslo", "cairo", "delhi", "quito", "rome", "seoul", "dakar",
];
const DAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];
const PEOPLE: [&str; 8] = ["ana", "ben", "chloe", "dev", "eve", "farid", "gita", "hugo"];
const TOPICS: [&str; 6] = ["budget", "launch", "hiring", "roadmap", "audit", "offsite"];

/// Statement templates of the code: X, Y, Z identifiers, F a function, N a digit.
const STATEMENTS: [&str; 7] = [
    "let X = Y + Z ;",
    "X = X * N ;",
    "if X > Y { X = Y ; }",
    "for X in Y { Z = Z + X ; }",
    "let X = F ( Y , Z ) ;",
    "while X < N { X = X + 1 ; }",
    "Y = F ( X ) - N ;",
];

/// (request, output) templates of the agent; slots in braces.
const AGENT: [(&str, &str); 4] = [
    (
        "user : book a flight from {city} to {city2} on {day} .",
        "call search_flights ( from = {city} , to = {city2} , date = {day} ) ; reply : i found \
         flights from {city} to {city2} on {day} . shall i book the first one ?",
    ),
    (
        "user : what is the weather in {city} on {day} ?",
        "call get_weather ( city = {city} , date = {day} ) ; reply : here is the forecast for \
         {city} on {day} .",
    ),
    (
        "user : send an email to {person} about the {topic} .",
        "call send_email ( to = {person} , subject = {topic} ) ; reply : i sent the email about \
         the {topic} to {person} .",
    ),
    (
        "user : schedule a meeting with {person} on {day} about the {topic} .",
        "call create_event ( with = {person} , date = {day} , topic = {topic} ) ; reply : the \
         meeting with {person} about the {topic} is on {day} .",
    ),
];

const VOCABULARY: [&str; 7] = [
    "rename to : => fn ( ) { } , ; let = + - * > < if for in while return 0 1 2 3 4 5 6 7 8 9",
    "total count item value index result buffer width height score limit offset node acc left \
     right step size key flag update compute merge scan apply reduce parse render",
    "user book a flight from to on what is the weather in ? send an email about schedule \
     meeting with",
    "call search_flights get_weather send_email create_event city date subject topic reply i \
     found flights shall first one here forecast for sent the is",
    "paris tokyo lima oslo cairo delhi quito rome seoul dakar",
    "monday tuesday wednesday thursday friday saturday sunday",
    "ana ben chloe dev eve farid gita hugo budget launch hiring roadmap audit offsite",
];

fn code_rewrite(rng: &mut StdRng) -> (String, String) {
    let mut ids: Vec<&str> = IDENTIFIERS.to_vec();
    ids.shuffle(rng);
    let (used, unused) = ids.split_at(8);
    let pick = |rng: &mut StdRng| *used.choose(rng).expect("eight identifiers");
    let f = *FUNCTIONS.choose(rng).expect("functions");
    let mut code = format!("fn {f} ( {} , {} ) {{", used[0], used[1]);
    for _ in 0..rng.random_range(3..=6) {
        let s = STATEMENTS.choose(rng).expect("statements");
        let mut line = String::new();
        for tok in s.split_whitespace() {
            let w = match tok {
                "X" | "Y" | "Z" => pick(rng).to_string(),
                "F" => FUNCTIONS.choose(rng).expect("functions").to_string(),
                "N" => rng.random_range(0..10).to_string(),
                t => t.to_string(),
            };
            line.push(' ');
            line.push_str(&w);
        }
        code.push_str(&line);
    }
    code.push_str(&format!(" return {} ; }}", pick(rng)));
    let present: Vec<&str> = used
        .iter()
        .copied()
        .filter(|u| code.split_whitespace().any(|w| w == *u))
        .collect();
    let old = *present.choose(rng).expect("the parameters are in the code");
    let new = unused[rng.random_range(0..unused.len())];
    let renamed: Vec<&str> = code
        .split_whitespace()
        .map(|w| if w == old { new } else { w })
        .collect();
    (
        format!("rename {old} to {new} : {code} =>"),
        renamed.join(" "),
    )
}

fn agent(rng: &mut StdRng) -> (String, String) {
    let (ask, answer) = AGENT.choose(rng).expect("templates");
    let two: Vec<&&str> = CITIES.choose_multiple(rng, 2).collect();
    let slots = [
        ("{city2}", *two[1]),
        ("{city}", *two[0]),
        ("{day}", *DAYS.choose(rng).expect("days")),
        ("{person}", *PEOPLE.choose(rng).expect("people")),
        ("{topic}", *TOPICS.choose(rng).expect("topics")),
    ];
    let fill = |t: &str| {
        slots
            .iter()
            .fold(t.to_string(), |acc, (k, v)| acc.replace(k, v))
    };
    (fill(ask), fill(answer))
}

/// A deterministic target: while the context is on the expected output it emits the next
/// expected token; off it (only speculated nodes go there) a fixed pseudo-random token, as a
/// model conditioned on a wrong prefix predicts something unrelated.
#[derive(Debug, Clone)]
pub struct RuleTarget {
    vocab: usize,
    prompt: usize,
    expected: Vec<u32>,
}

impl RuleTarget {
    pub fn new(vocab: usize, prompt: usize, expected: Vec<u32>) -> RuleTarget {
        RuleTarget {
            vocab,
            prompt,
            expected,
        }
    }

    fn next(&self, out: &[u32]) -> u32 {
        if out.len() < self.expected.len() && self.expected.starts_with(out) {
            return self.expected[out.len()];
        }
        // FNV-1a over the off-path output.
        let h = out.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &t| {
            (h ^ u64::from(t)).wrapping_mul(0x0100_0000_01b3)
        });
        (h % self.vocab as u64) as u32
    }
}

impl LanguageModel for RuleTarget {
    fn vocab(&self) -> usize {
        self.vocab
    }

    async fn score(&mut self, context: &[u32], tree: &Speculation) -> Result<Vec<Dist>, Error> {
        let base = &context[self.prompt.min(context.len())..];
        let mut out = Vec::with_capacity(tree.len() + 1);
        out.push(one_hot(self.vocab, self.next(base) as usize));
        for node in 0..tree.len() {
            let mut seq = base.to_vec();
            seq.extend(tree.path_to(node).iter().map(|&n| tree.tokens[n]));
            out.push(one_hot(self.vocab, self.next(&seq) as usize));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Named;

    #[test]
    fn code_rewrite_renames_one_identifier_and_copies_the_rest() {
        let w = Workload::new(Kind::CodeRewrite, 20, 0, 1);
        for r in &w.requests {
            let p = w.text(&r.prompt);
            let o = w.text(&r.output);
            let (old, new) = (&p[1], &p[3]);
            assert_eq!(o.last().unwrap(), "<eos>");
            let code = &p[5..p.len() - 1];
            assert_eq!(code.len(), o.len() - 1);
            for (a, b) in code.iter().zip(&o) {
                assert_eq!(b, if a == old { new } else { a });
            }
            assert!(code.contains(old) && !code.contains(new));
        }
        assert!(w.words.len() < 200);
    }

    #[test]
    fn agent_outputs_copy_their_slots_from_the_prompt() {
        let w = Workload::new(Kind::Agent, 30, 10, 2);
        assert_eq!(w.earlier.len(), 10);
        for r in &w.requests {
            let p = w.text(&r.prompt);
            for word in w.text(&r.output) {
                let slot = CITIES.contains(&word.as_str())
                    || DAYS.contains(&word.as_str())
                    || PEOPLE.contains(&word.as_str());
                assert!(!slot || p.contains(&word), "{word} not in {p:?}");
            }
        }
    }

    #[test]
    fn the_rule_target_follows_its_output_and_leaves_it_deterministically() {
        use crate::decode::ready;
        let mut t = RuleTarget::new(20, 2, vec![5, 6, 7]);
        let tree = Speculation {
            tokens: vec![5, 9, 6],
            parents: vec![None, None, Some(0)],
        };
        let p = ready(t.score(&[0, 0], &tree)).unwrap();
        let top: Vec<usize> = p.iter().map(|d| crate::sampling::argmax(d)).collect();
        assert_eq!(top[0], 5);
        assert_eq!(top[1], 6); // after 5
        assert_eq!(top[3], 7); // after 5 6
        let again = ready(t.score(&[0, 0], &tree)).unwrap();
        assert_eq!(p, again);
        assert!(Kind::parse("chat")
            .unwrap_err()
            .to_string()
            .contains("\"chat\""));
    }
}
