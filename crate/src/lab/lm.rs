//! A burn decoder for the decoding engine: [`Batch`] scores many sequences per call on one KV
//! cache (a [`Batched`] model), [`Cached`] one sequence (a [`LanguageModel`]). Either knows which
//! tokens each sequence has in the cache and feeds only what is missing.

use crate::decode::batch::{Batched, Request};
use crate::decode::{LanguageModel, Speculation};
use crate::error::{Error, Range};
use crate::model::{floats, Decoder, KvCache};
use crate::sampling::Dist;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};

/// Positions the decoders were trained with (`DecoderConfig::max_positions`).
pub const MAX_POSITIONS: usize = 64;

/// What one sequence has in the cache, and where.
#[derive(Debug, Clone, Default)]
struct Row {
    id: usize,
    /// The tokens whose keys and values are cached (a linear prefix), and their slots…
    cached: Vec<u32>,
    slots: Vec<usize>,
    /// …followed by this tree, after a tree call, and its nodes' slots…
    tree: Speculation,
    tree_slots: Vec<usize>,
    /// …and what the last call answered (after the context, after each node of the tree).
    answers: Vec<Dist>,
    /// With features on ([`Cached::with_features`]): the target's feature at each cached token
    /// and at each node of the tree.
    feats: Vec<Vec<f32>>,
    tree_feats: Vec<Vec<f32>>,
    /// The sequence is done; its slots are garbage.
    closed: bool,
}

impl Row {
    /// Prepares the cache for `score(context, tree)` and returns how many of `tree`'s first nodes
    /// are already in it, with their answers: a draft growing a tree level by level asks again
    /// after the same context with the tree of the last call plus one level. Otherwise keeps the
    /// cached prefix of `context` (at most all but its last token), following an earlier tree
    /// along the path `context` took through it. Only bookkeeping: the slots left behind are
    /// masked until the cache is compacted.
    fn reconcile(&mut self, context: &[u32], tree: &Speculation) -> usize {
        let k = self.tree.len();
        let grows = |old: &Speculation| {
            tree.len() >= k
                && tree.tokens[..k] == old.tokens[..]
                && tree.parents[..k] == old.parents[..]
        };
        if k > 0 && self.cached == context && grows(&self.tree) {
            return k;
        }
        let tree = std::mem::take(&mut self.tree);
        let tree_slots = std::mem::take(&mut self.tree_slots);
        let tree_feats = std::mem::take(&mut self.tree_feats);
        let mut parent = None;
        for &t in context.iter().skip(self.cached.len()) {
            match (0..tree.len()).find(|&i| tree.parents[i] == parent && tree.tokens[i] == t) {
                Some(i) => {
                    self.cached.push(t);
                    self.slots.push(tree_slots[i]);
                    if let Some(f) = tree_feats.get(i) {
                        self.feats.push(f.clone());
                    }
                    parent = Some(i);
                }
                None => break,
            }
        }
        let common = self
            .cached
            .iter()
            .zip(context)
            .take_while(|(a, b)| a == b)
            .count()
            .min(context.len().saturating_sub(1));
        self.cached.truncate(common);
        self.slots.truncate(common);
        self.feats.truncate(common);
        0
    }

    /// The features along `context`'s longest prefix that was fed: the cached tokens, then the
    /// last tree's path.
    fn features_along(&self, context: &[u32]) -> Vec<&[f32]> {
        let n = self
            .cached
            .iter()
            .zip(context)
            .take_while(|(a, b)| a == b)
            .count()
            .min(self.feats.len());
        let mut out: Vec<&[f32]> = self.feats[..n].iter().map(Vec::as_slice).collect();
        if n == self.cached.len() {
            let mut parent = None;
            for &t in &context[n..] {
                let next = (0..self.tree.len())
                    .find(|&i| self.tree.parents[i] == parent && self.tree.tokens[i] == t);
                match next.and_then(|i| self.tree_feats.get(i).map(|f| (i, f))) {
                    Some((i, f)) => {
                        out.push(f);
                        parent = Some(i);
                    }
                    None => break,
                }
            }
        }
        out
    }

    /// The slots still in use.
    fn live(&self) -> Vec<usize> {
        self.slots.iter().chain(&self.tree_slots).copied().collect()
    }
}

/// A decoder and one KV cache for a batch of sequences (rows), each scored as
/// [`LanguageModel::score`] describes; [`Cached`] is the one-sequence case.
///
/// Each call feeds every requested row only what its cache lacks: the part of the context after
/// the longest cached prefix (at least the context's last token, whose next-token distribution is
/// wanted), then the speculated tree under the topology-aware mask with depth positions (lecture
/// §4.3). The rows' new tokens are padded to the longest and appended as new slots of the shared
/// cache; a row attends only to its own slots. Rolling back after a rejection, or keeping the
/// accepted path of a tree, is forgetting slots; the cache is compacted when more than `slack`
/// slots are forgotten (0: before every call, as a single sequence wants).
pub struct Batch<'a> {
    model: &'a Decoder,
    device: &'a Device,
    cache: KvCache,
    /// In cache order (row `i` of the cache is `rows[i]`).
    rows: Vec<Row>,
    next_id: usize,
    temperature: f64,
    slack: usize,
    /// Tokens fed to the model so far, padding not counted.
    fed: usize,
    /// Keep this many of each fed position's features (`None`: none).
    features: Option<usize>,
}

impl<'a> Batch<'a> {
    /// `temperature` scales the logits before the softmax (1: the model's own distribution).
    pub fn new(model: &'a Decoder, device: &'a Device, temperature: f64, slack: usize) -> Self {
        Batch {
            cache: KvCache::new(model.n_layers()),
            model,
            device,
            rows: Vec::new(),
            next_id: 0,
            temperature,
            slack,
            fed: 0,
            features: None,
        }
    }

    /// Drops closed rows and forgotten slots when they are worth a copy of the cache, and
    /// gives rows opened since the last call their (zeroed) place in it.
    fn compact(&mut self) {
        if self.cache.is_empty() {
            self.rows.retain(|r| !r.closed);
            return;
        }
        let cached = self.cache.rows();
        let closed = self.rows[..cached].iter().filter(|r| r.closed).count();
        if closed * 4 >= cached {
            let keep: Vec<usize> = (0..cached).filter(|&i| !self.rows[i].closed).collect();
            self.cache.select_rows(&keep);
            self.rows.retain(|r| !r.closed);
        }
        self.cache.grow_rows(self.rows.len() - self.cache.rows());
        let live: Vec<Vec<usize>> = self.rows.iter().map(Row::live).collect();
        let width = live.iter().map(Vec::len).max().unwrap_or(0);
        if self.cache.len() <= width + self.slack {
            return;
        }
        if live
            .iter()
            .all(|s| s.iter().enumerate().all(|(i, &x)| i == x))
        {
            return self.cache.narrow(width);
        }
        self.cache.gather(&live);
        for (row, live) in self.rows.iter_mut().zip(&live) {
            let n = row.slots.len();
            row.slots = (0..n).collect();
            row.tree_slots = (n..live.len()).collect();
        }
    }
}

fn ints(values: Vec<i64>, shape: [usize; 2], device: &Device) -> Tensor<2, Int> {
    Tensor::from_data(TensorData::new(values, shape), device)
}

impl Batched for Batch<'_> {
    fn vocab(&self) -> usize {
        crate::likesworld::VOCAB
    }

    fn open(&mut self) -> usize {
        self.next_id += 1;
        self.rows.push(Row {
            id: self.next_id - 1,
            ..Row::default()
        });
        self.next_id - 1
    }

    fn close(&mut self, id: usize) {
        if let Some(r) = self.rows.iter_mut().find(|r| r.id == id) {
            r.closed = true;
        }
    }

    async fn score_rows(&mut self, requests: &[Request]) -> Result<Vec<Vec<Dist>>, Error> {
        let mut at = Vec::with_capacity(requests.len()); // the cache row of each request
        for r in requests {
            let deepest = r.context.len() + r.tree.depths().into_iter().max().unwrap_or(0);
            if r.context.is_empty() || deepest > MAX_POSITIONS {
                let positions =
                    Range::new("context + speculation length", 1.0, MAX_POSITIONS as f64);
                return Err(Error::OutOfRange {
                    name: positions.name,
                    value: deepest as f64,
                    allowed: positions
                        .after("tokens (the models' positions)", "个 token（模型的位置数）")
                        .allowed_text(),
                });
            }
            // A token outside the vocabulary: an error here on every backend (the GPU kernels
            // would read some other row of the embedding).
            let vocab = crate::likesworld::VOCAB;
            if let Some(&t) = r
                .context
                .iter()
                .chain(&r.tree.tokens)
                .find(|&&t| t as usize >= vocab)
            {
                let ids = Range::new("token id", 0.0, (vocab - 1) as f64)
                    .after("(LikesWorld's tokens)", "（LikesWorld 的 token）");
                return Err(Error::OutOfRange {
                    name: ids.name,
                    value: f64::from(t),
                    allowed: ids.allowed_text(),
                });
            }
            let i = self
                .rows
                .iter()
                .position(|row| row.id == r.row && !row.closed);
            at.push(i.expect("a request names an open row"));
        }
        let kept: Vec<usize> = requests
            .iter()
            .zip(&at)
            .map(|(r, &i)| self.rows[i].reconcile(&r.context, &r.tree))
            .collect();
        self.compact();
        // `compact` may have dropped closed rows: find the requests' rows again.
        for (r, i) in requests.iter().zip(at.iter_mut()) {
            *i = self
                .rows
                .iter()
                .position(|row| row.id == r.row)
                .expect("open");
        }
        let (batch, s) = (self.rows.len(), self.cache.len());
        // What each request feeds: the context past its cached prefix, then the tree's new nodes.
        let fresh: Vec<usize> = requests
            .iter()
            .zip(&at)
            .map(|(r, &i)| r.context.len() - self.rows[i].cached.len())
            .collect();
        let feeds: Vec<usize> = (0..requests.len())
            .map(|q| fresh[q] + requests[q].tree.len() - kept[q])
            .collect();
        let n = feeds.iter().copied().max().unwrap_or(0);
        self.fed += feeds.iter().sum::<usize>();
        let width = s + n;
        // Padding: token 0 at position 0; rows without a request see nothing (a fully masked
        // row stays finite, see `Decoder`), and their new slots are never used.
        let mut ids = vec![0i64; batch * n];
        let mut pos = vec![0i64; batch * n];
        let mut mask = vec![false; batch * n * width];
        for (q, (r, &i)) in requests.iter().zip(&at).enumerate() {
            let row = &self.rows[i];
            let (l, f, kept) = (r.context.len(), fresh[q], kept[q]);
            let common = l - f;
            let depths = r.tree.depths();
            // Node a's slot: kept from the last call, or new in this one.
            let slot = |a: usize| match a.checked_sub(kept) {
                None => row.tree_slots[a],
                Some(new) => s + f + new,
            };
            for j in 0..feeds[q] {
                let node = j.checked_sub(f).map(|new| kept + new);
                let (id, p) = match node {
                    None => (r.context[common + j], common + j),
                    Some(k) => (r.tree.tokens[k], l - 1 + depths[k]),
                };
                ids[i * n + j] = i64::from(id);
                pos[i * n + j] = p as i64;
                // Context rows are causal; a node sees the whole context and its ancestors.
                let m = &mut mask[(i * n + j) * width..(i * n + j + 1) * width];
                row.slots.iter().for_each(|&c| m[c] = true);
                let own = if node.is_none() { j + 1 } else { f };
                m[s..s + own].iter_mut().for_each(|x| *x = true);
                if let Some(k) = node {
                    for a in (0..=k).filter(|&a| r.tree.is_ancestor(a, k)) {
                        m[slot(a)] = true;
                    }
                }
            }
        }
        // Nothing new anywhere (every request repeats its last call): no model call.
        let (flat, feats) = if n == 0 {
            (Vec::new(), Vec::new())
        } else {
            let ids = ints(ids, [batch, n], self.device);
            let pos = ints(pos, [batch, n], self.device);
            let mask =
                Tensor::<3, Bool>::from_data(TensorData::new(mask, [batch, n, width]), self.device);
            match self.features {
                None => {
                    let logits = self.model.forward(ids, pos, mask, &mut self.cache);
                    (floats(logits).await?, Vec::new())
                }
                Some(w) => {
                    let (f, logits) = self.model.forward_features(ids, pos, mask, &mut self.cache);
                    // A widened target replicates each unit r times in place
                    // (`model::widen`): one copy of each is the trained target's feature.
                    let r = f.dims()[2] / w;
                    let f = f
                        .reshape([batch, n, w, r])
                        .narrow(3, 0, 1)
                        .reshape([batch, n, w]);
                    (floats(logits).await?, floats(f).await?)
                }
            }
        };
        let fw = self.features.unwrap_or(0);
        let v = crate::likesworld::VOCAB;
        let mut out = Vec::with_capacity(requests.len());
        for (q, (r, &i)) in requests.iter().zip(&at).enumerate() {
            let (f, kept) = (fresh[q], kept[q]);
            let row = &mut self.rows[i];
            // The answers kept from the last call, then one per new row: the context's last
            // token (when it was fed) and each new node.
            let first = if kept > 0 { 0 } else { f - 1 };
            let mut answers = std::mem::take(&mut row.answers);
            answers.truncate(if kept > 0 { kept + 1 } else { 0 });
            answers.extend((first..feeds[q]).map(|j| {
                let at = (i * n + j) * v;
                softmax(&flat[at..at + v], self.temperature)
            }));
            if fw > 0 {
                let feature = |j: usize| feats[(i * n + j) * fw..(i * n + j + 1) * fw].to_vec();
                row.feats.extend((0..f).map(feature));
                row.tree_feats.truncate(kept);
                row.tree_feats.extend((f..feeds[q]).map(feature));
            }
            row.slots.extend(s..s + f);
            row.cached = r.context.clone();
            row.tree = r.tree.clone();
            row.tree_slots.truncate(kept);
            row.tree_slots.extend(s + f..s + feeds[q]);
            if !r.tree.is_empty() {
                row.answers.clone_from(&answers);
            }
            out.push(answers);
        }
        Ok(out)
    }
}

/// One sequence on a decoder: its KV cache kept exactly as long as the context and the last
/// tree (compacted before every call).
pub struct Cached<'a> {
    batch: Batch<'a>,
    row: usize,
}

impl<'a> Cached<'a> {
    /// `temperature` scales the logits before the softmax (1: the model's own distribution).
    pub fn new(model: &'a Decoder, device: &'a Device, temperature: f64) -> Cached<'a> {
        let mut batch = Batch::new(model, device, temperature, 0);
        let row = batch.open();
        Cached { batch, row }
    }

    /// [`Cached::new`], keeping the features (the LM head's input) of every position fed, `width`
    /// of them: the trained target's width, of which a widened target holds each unit r times in
    /// place (one copy is kept). What Medusa's heads and EAGLE's draft read ([`Cached::features`]).
    pub fn with_features(
        model: &'a Decoder,
        device: &'a Device,
        temperature: f64,
        width: usize,
    ) -> Cached<'a> {
        let mut c = Cached::new(model, device, temperature);
        c.batch.features = Some(width);
        c
    }

    /// The features after each token of `context`'s longest prefix that the model has seen
    /// (position i: after `context[i]`), from the calls so far.
    pub fn features(&self, context: &[u32]) -> Vec<&[f32]> {
        let row = self
            .batch
            .rows
            .iter()
            .find(|r| r.id == self.row)
            .expect("the row is open");
        row.features_along(context)
    }

    /// Slots in the cache (tests: after a call, the context and the tree).
    pub fn cached_len(&self) -> usize {
        self.batch.cache.len()
    }

    /// Tokens fed to the model so far (tests: a call feeds only what the cache lacks).
    pub fn fed(&self) -> usize {
        self.batch.fed
    }
}

impl LanguageModel for Cached<'_> {
    fn vocab(&self) -> usize {
        crate::likesworld::VOCAB
    }

    async fn score(&mut self, context: &[u32], tree: &Speculation) -> Result<Vec<Dist>, Error> {
        let request = Request {
            row: self.row,
            context: context.to_vec(),
            tree: tree.clone(),
        };
        let mut out = self.batch.score_rows(&[request]).await?;
        Ok(out.pop().expect("one answer"))
    }
}

/// softmax(logits / T) in f64.
pub fn softmax(logits: &[f32], temperature: f64) -> Dist {
    let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f64> = logits
        .iter()
        .map(|&x| ((f64::from(x) - f64::from(m)) / temperature).exp())
        .collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|x| x / s).collect()
}
