//! A suffix index over token sequences and the SuffixDecoding drafter (lecture §5.3).
//!
//! The index is a suffix automaton: every substring of the indexed text is a path from the root,
//! states group the substrings that end at the same set of positions, and the size of that set
//! is the number of occurrences. So matching the longest suffix of the context costs one
//! transition per matched token (falling back along suffix links on a miss), and the frequency
//! of a continuation c after the matched string s is `occurrences(s·c) / occurrences(s)`: both
//! stored counts. Nothing in a lookup scans the index, so its cost follows the matched length
//! and the tree grown, not the index size (the `suffix-bench` command measures it).
//!
//! Documents are separated by [`SEP`], which no context contains, so no match crosses two
//! documents. The drafter keeps two indices, as SuffixDecoding does: the request index (this
//! request's prompt and output so far) and the global index (earlier outputs of the workload),
//! matches the context in each, and grows one speculation tree best-first from both under a node
//! budget, scoring a node by the product of its continuation frequencies along the path.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Drafter;
use crate::decode::{Proposal, Source};

/// The document separator.
pub const SEP: u32 = u32::MAX;
const NONE: u32 = u32::MAX;

/// A suffix automaton with occurrence counts.
#[derive(Debug, Clone)]
pub struct SuffixIndex {
    /// Per state: the longest string's length, the suffix link, outgoing transitions sorted by
    /// token, whether it was created for a position (not cloned), and its occurrence count.
    len: Vec<u32>,
    link: Vec<u32>,
    next: Vec<Vec<(u32, u32)>>,
    original: Vec<bool>,
    count: Vec<u32>,
    last: u32,
    tokens: usize,
}

impl Default for SuffixIndex {
    fn default() -> Self {
        SuffixIndex::new()
    }
}

/// Where the longest suffix of a context ends in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    pub state: u32,
    /// Matched tokens (0: nothing matched).
    pub len: usize,
}

impl SuffixIndex {
    pub fn new() -> SuffixIndex {
        SuffixIndex {
            len: vec![0],
            link: vec![NONE],
            next: vec![Vec::new()],
            original: vec![false],
            count: vec![0],
            last: 0,
            tokens: 0,
        }
    }

    /// Tokens indexed (separators included).
    pub fn tokens(&self) -> usize {
        self.tokens
    }

    pub fn states(&self) -> usize {
        self.len.len()
    }

    /// Appends tokens to the text and brings the counts up to date.
    pub fn extend(&mut self, tokens: &[u32]) {
        for &t in tokens {
            self.push(t);
        }
        self.recount();
    }

    /// Appends a whole document, closed by [`SEP`].
    pub fn add_document(&mut self, tokens: &[u32]) {
        self.add_documents([tokens]);
    }

    /// Appends documents and counts once (counting is linear in the index, so a large index is
    /// built in batches, not a document at a time).
    pub fn add_documents<'d>(&mut self, docs: impl IntoIterator<Item = &'d [u32]>) {
        for d in docs {
            for &t in d {
                self.push(t);
            }
            self.push(SEP);
        }
        self.recount();
    }

    fn go(&self, state: u32, token: u32) -> Option<u32> {
        let edges = &self.next[state as usize];
        edges
            .binary_search_by_key(&token, |&(t, _)| t)
            .ok()
            .map(|i| edges[i].1)
    }

    fn set(&mut self, state: u32, token: u32, to: u32) {
        let edges = &mut self.next[state as usize];
        match edges.binary_search_by_key(&token, |&(t, _)| t) {
            Ok(i) => edges[i].1 = to,
            Err(i) => edges.insert(i, (token, to)),
        }
    }

    fn new_state(&mut self, len: u32, link: u32, next: Vec<(u32, u32)>, original: bool) -> u32 {
        self.len.push(len);
        self.link.push(link);
        self.next.push(next);
        self.original.push(original);
        self.count.push(0);
        (self.len.len() - 1) as u32
    }

    /// The textbook online construction (Blumer et al.), one token.
    fn push(&mut self, c: u32) {
        self.tokens += 1;
        let cur = self.new_state(self.len[self.last as usize] + 1, NONE, Vec::new(), true);
        let mut p = self.last;
        while p != NONE && self.go(p, c).is_none() {
            self.set(p, c, cur);
            p = self.link[p as usize];
        }
        if p == NONE {
            self.link[cur as usize] = 0;
        } else {
            let q = self.go(p, c).expect("the loop stopped on a transition");
            if self.len[p as usize] + 1 == self.len[q as usize] {
                self.link[cur as usize] = q;
            } else {
                let edges = self.next[q as usize].clone();
                let clone = self.new_state(
                    self.len[p as usize] + 1,
                    self.link[q as usize],
                    edges,
                    false,
                );
                while p != NONE && self.go(p, c) == Some(q) {
                    self.set(p, c, clone);
                    p = self.link[p as usize];
                }
                self.link[q as usize] = clone;
                self.link[cur as usize] = clone;
            }
        }
        self.last = cur;
    }

    /// Occurrence counts: one per position-created state, summed up the suffix links from the
    /// longest states down (a counting sort by length; linear in the states).
    fn recount(&mut self) {
        let n = self.len.len();
        let max = self.len.iter().copied().max().unwrap_or(0) as usize;
        let mut by_len = vec![0usize; max + 2];
        for &l in &self.len {
            by_len[l as usize + 1] += 1;
        }
        for i in 1..by_len.len() {
            by_len[i] += by_len[i - 1];
        }
        let mut order = vec![0u32; n];
        for (s, &l) in self.len.iter().enumerate() {
            order[by_len[l as usize]] = s as u32;
            by_len[l as usize] += 1;
        }
        for s in 0..n {
            self.count[s] = u32::from(self.original[s]);
        }
        for &s in order.iter().rev() {
            let l = self.link[s as usize];
            if l != NONE {
                self.count[l as usize] += self.count[s as usize];
            }
        }
    }

    /// How often the strings of `state` occur.
    pub fn occurrences(&self, state: u32) -> u32 {
        self.count[state as usize]
    }

    /// Continuations of `state` other than the end of a document: (token, state, occurrences).
    pub fn continuations(&self, state: u32) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.next[state as usize]
            .iter()
            .filter(|&&(t, _)| t != SEP)
            .map(|&(t, s)| (t, s, self.count[s as usize]))
    }

    /// The longest suffix of `ctx` (of at most `max` tokens) that occurs in the index followed
    /// by some token, i.e. has a continuation. Cost: O(max) transitions.
    pub fn longest_suffix(&self, ctx: &[u32], max: usize) -> Match {
        let (mut state, mut len) = (0u32, 0usize);
        for &c in &ctx[ctx.len().saturating_sub(max)..] {
            loop {
                if let Some(t) = self.go(state, c) {
                    state = t;
                    len += 1;
                    break;
                }
                if state == 0 {
                    break;
                }
                state = self.link[state as usize];
                len = self.len[state as usize] as usize;
            }
        }
        while state != 0 && self.continuations(state).next().is_none() {
            state = self.link[state as usize];
            len = self.len[state as usize] as usize;
        }
        Match { state, len }
    }
}

/// A matched suffix in one index, the root of a speculation subtree.
#[derive(Debug, Clone, Copy)]
pub struct Root<'a> {
    pub index: &'a SuffixIndex,
    pub at: Match,
    pub source: Source,
}

struct Entry {
    score: f64,
    order: usize,
    /// Tree position to hang the token under (0: the root).
    under: usize,
    depth: usize,
    root: usize,
    token: u32,
    state: u32,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Highest score first; on a tie, the earlier pushed.
    fn cmp(&self, o: &Self) -> Ordering {
        self.score
            .total_cmp(&o.score)
            .then_with(|| o.order.cmp(&self.order))
    }
}

/// Grows one tree from the matched roots, best-first by path frequency, until `budget` nodes
/// (at most `depth` levels). Two roots proposing the same token at the same place share the
/// node, and both continue from it. A root that matched nothing (length 0) proposes nothing.
pub fn grow(roots: &[Root], budget: usize, depth: usize) -> Proposal {
    let mut p = Proposal::empty();
    let mut heap = BinaryHeap::new();
    let mut order = 0;
    let mut push = |heap: &mut BinaryHeap<Entry>, r: usize, state: u32, under, d, score: f64| {
        let index = roots[r].index;
        let total = f64::from(index.occurrences(state).max(1));
        for (token, next, n) in index.continuations(state) {
            order += 1;
            heap.push(Entry {
                score: score * f64::from(n) / total,
                order,
                under,
                depth: d,
                root: r,
                token,
                state: next,
            });
        }
    };
    if depth == 0 || budget == 0 {
        return p;
    }
    for (r, root) in roots.iter().enumerate() {
        if root.at.len > 0 {
            push(&mut heap, r, root.at.state, 0, 1, 1.0);
        }
    }
    while let Some(e) = heap.pop() {
        if p.tree.len() >= budget && p.child(e.under, e.token).is_none() {
            continue;
        }
        let (node, _) = p.offer(e.under, e.token, roots[e.root].source);
        if e.depth < depth {
            push(&mut heap, e.root, e.state, node + 1, e.depth + 1, e.score);
        }
    }
    p
}

/// Which indices the drafter matches in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indices {
    /// Earlier outputs only.
    Global,
    /// This request's prompt and output, and earlier outputs (SuffixDecoding's two trees).
    Both,
}

/// The SuffixDecoding drafter.
#[derive(Debug, Clone)]
pub struct SuffixDrafter {
    pub indices: Indices,
    /// Node budget per call.
    pub budget: usize,
    /// Longest context suffix matched.
    pub max_match: usize,
    /// Whether finished requests are added to the global index.
    pub learn: bool,
    pub global: SuffixIndex,
    request: SuffixIndex,
    seen: Vec<u32>,
}

impl SuffixDrafter {
    pub fn new(indices: Indices, budget: usize, global: SuffixIndex) -> SuffixDrafter {
        SuffixDrafter {
            indices,
            budget,
            max_match: 32,
            learn: true,
            global,
            request: SuffixIndex::new(),
            seen: Vec::new(),
        }
    }
}

impl Drafter for SuffixDrafter {
    fn propose(&mut self, ctx: &[u32], _prompt: usize, depth: usize) -> Proposal {
        let mut roots = vec![Root {
            index: &self.global,
            at: self.global.longest_suffix(ctx, self.max_match),
            source: Source::Earlier,
        }];
        if self.indices == Indices::Both {
            // The request index follows the context; a new request starts it afresh.
            if !ctx.starts_with(&self.seen) {
                self.request = SuffixIndex::new();
                self.seen.clear();
            }
            self.request.extend(&ctx[self.seen.len()..]);
            self.seen = ctx.to_vec();
            roots.insert(
                0,
                Root {
                    index: &self.request,
                    at: self.request.longest_suffix(ctx, self.max_match),
                    source: Source::Request,
                },
            );
        }
        grow(&roots, self.budget, depth)
    }

    fn finish(&mut self, output: &[u32]) {
        if self.learn {
            self.global.add_document(output);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// Occurrences of `s` in the documents, counted the slow way.
    fn occurrences(docs: &[Vec<u32>], s: &[u32]) -> u32 {
        docs.iter()
            .map(|d| d.windows(s.len()).filter(|w| *w == s).count() as u32)
            .sum()
    }

    fn walk(index: &SuffixIndex, s: &[u32]) -> Option<u32> {
        s.iter().try_fold(0, |st, &c| index.go(st, c))
    }

    #[test]
    fn counts_and_matches_agree_with_brute_force() {
        let mut rng = StdRng::seed_from_u64(3);
        for _ in 0..200 {
            let docs: Vec<Vec<u32>> = (0..rng.random_range(1..4))
                .map(|_| {
                    (0..rng.random_range(0..25))
                        .map(|_| rng.random_range(0..3))
                        .collect()
                })
                .collect();
            let mut index = SuffixIndex::new();
            let (first, rest) = docs.split_at(1);
            index.add_document(&first[0]);
            // One document at a time and in a batch count the same.
            index.add_documents(rest.iter().map(Vec::as_slice));
            // Every short string: present iff it occurs, and its count is its occurrences.
            for len in 1..5 {
                for code in 0..3u32.pow(len) {
                    let s: Vec<u32> = (0..len).map(|i| code / 3u32.pow(i) % 3).collect();
                    let n = occurrences(&docs, &s);
                    match walk(&index, &s) {
                        Some(st) => assert_eq!(index.occurrences(st), n, "{docs:?} {s:?}"),
                        None => assert_eq!(n, 0, "{docs:?} {s:?}"),
                    }
                }
            }
            // The longest suffix with a continuation, against a scan.
            let ctx: Vec<u32> = (0..rng.random_range(0..10))
                .map(|_| rng.random_range(0..3))
                .collect();
            let m = index.longest_suffix(&ctx, 32);
            let want = (0..=ctx.len())
                .rev()
                .find(|&l| {
                    let s = &ctx[ctx.len() - l..];
                    l == 0 || docs.iter().any(|d| d.windows(l + 1).any(|w| &w[..l] == s))
                })
                .unwrap();
            assert_eq!(m.len, want, "{docs:?} {ctx:?}");
        }
    }

    #[test]
    fn grows_the_most_frequent_continuations_first() {
        let mut index = SuffixIndex::new();
        // After 1 2: 3 three times, 4 once.
        for d in [[1, 2, 3, 5], [1, 2, 3, 6], [1, 2, 3, 5], [1, 2, 4, 7]] {
            index.add_document(&d);
        }
        let at = index.longest_suffix(&[9, 1, 2], 8);
        assert_eq!(at.len, 2);
        let root = Root {
            index: &index,
            at,
            source: Source::Earlier,
        };
        let one = grow(&[root], 1, 8);
        assert_eq!(one.tree.tokens, vec![3]);
        // Scores: 3 (.75), 3→5 (.5), 4 (.25), 3→6 (.25), 4→7 (.25).
        let three = grow(&[root], 3, 8);
        assert_eq!(three.tree.tokens, vec![3, 5, 4]);
        assert_eq!(three.tree.parents, vec![None, Some(0), None]);
        let all = grow(&[root], 48, 8);
        assert_eq!(all.tree.len(), 5);
        assert!(all.sources.iter().all(|&s| s == Source::Earlier));
        assert!(grow(&[root], 48, 1).tree.len() == 2);
    }

    #[test]
    fn two_indices_share_nodes_and_keep_their_sources() {
        let mut a = SuffixIndex::new();
        a.add_document(&[1, 2, 3]);
        let mut b = SuffixIndex::new();
        b.add_document(&[1, 2, 8, 1, 3, 4]);
        let roots = [
            Root {
                index: &a,
                at: a.longest_suffix(&[1], 8),
                source: Source::Request,
            },
            Root {
                index: &b,
                at: b.longest_suffix(&[1], 8),
                source: Source::Earlier,
            },
        ];
        let p = grow(&roots, 16, 8);
        // 2 (from both: one node), then 3 under 2 (a), 8 under 2 (b), and b's 3 → 4 branch.
        let first: Vec<u32> = p.candidates[0]
            .iter()
            .map(|c| p.tree.tokens[c.node])
            .collect();
        assert_eq!(first.iter().filter(|&&t| t == 2).count(), 1);
        assert!(first.contains(&3));
        assert_eq!(p.sources[p.child(0, 2).unwrap()], Source::Request);
        let under2 = p.child(0, 2).unwrap() + 1;
        assert!(p.child(under2, 3).is_some() && p.child(under2, 8).is_some());
    }

    #[test]
    fn a_lookup_does_not_scan_the_index() {
        // A long repetitive text: one lookup still takes few transitions and returns quickly
        // with the right continuation (timing lives in the suffix-bench command).
        let mut index = SuffixIndex::new();
        let text: Vec<u32> = (0..200_000u32).map(|i| i % 97).collect();
        index.extend(&text);
        let m = index.longest_suffix(&[10, 11, 12], 32);
        assert_eq!(m.len, 3);
        let best = index.continuations(m.state).max_by_key(|c| c.2).unwrap();
        assert_eq!(best.0, 13);
    }
}
