//! Exercise 5 of the lecture (§10, on §4.2–4.3): three drafts merged into a token tree, its
//! number of speculated nodes, its depth-first order with depths, and what node e attends to.

use super::{check, number, Exercise};
use crate::i18n::Lang;
use crate::tree::TokenTree;

pub(super) fn exercise(l: Lang) -> Exercise {
    let paths: Vec<Vec<String>> = [
        vec!["a", "b", "c"],
        vec!["a", "b", "d", "e"],
        vec!["f", "g"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| s.to_string()).collect())
    .collect();
    let tree = TokenTree::merge(&paths, "r");
    let order = tree.linearize_dfs();
    let names: Vec<String> = order
        .iter()
        .map(|&n| tree.nodes()[n].token.clone())
        .collect();
    let depths = tree.depths(&order);
    let e = tree
        .nodes()
        .iter()
        .position(|n| n.token == "e")
        .expect("e is in the tree");
    let sees: Vec<String> = order
        .iter()
        .filter(|&&n| n != 0 && tree.is_ancestor(n, e))
        .map(|&n| tree.nodes()[n].token.clone())
        .collect();
    let statement = l
        .pick(
            "Three drafts guess [a b c], [a b d e] and [f g] after the verified token r. (1) \
             How many speculated nodes has the merged tree? (2) Write its depth-first order, \
             each node with its position offset (depth), e.g. r0 x1 y2. (3) Which speculated \
             nodes may e attend to (besides the verified prefix)?",
            "三个小模型在已验证的 token r 之后分别猜出 [a b c]、[a b d e]、[f g]。（1）合并后\
             的令牌树有几个猜测节点？（2）写出深度优先的顺序和每个节点的位置偏移（深度），例如 \
             r0 x1 y2。（3）节点 e 在注意力里能看到哪些猜测节点（已验证的前缀之外）？",
        )
        .to_string();
    let count = tree.speculated();
    let sequences = tree.sequence_tokens();
    let want_order: Vec<(String, usize)> = names.iter().cloned().zip(depths.clone()).collect();
    let want_sees = sees.clone();
    let checks = vec![
        check(
            l.pick("(1) speculated nodes", "（1）猜测节点数"),
            move |text| {
                let x = number(text, l)?;
                Ok(if x == count as f64 {
                    Ok(())
                } else if x == sequences as f64 {
                    Err(l
                        .pick(
                            "That counts every sequence on its own; shared prefixes are one node.",
                            "这是把每条序列单独数了；共享的前缀只算一个节点。",
                        )
                        .into())
                } else {
                    Err(l
                        .pick(
                            "Merge equal prefixes into one node, then count the nodes below r.",
                            "把相同的前缀合并成一个节点，再数 r 下面的节点。",
                        )
                        .into())
                })
            },
        ),
        check(
            l.pick(
                "(2) depth-first order with depths",
                "（2）深度优先顺序和深度",
            ),
            move |text| {
                let got = parse_order(text, l)?;
                let want: Vec<(String, usize)> = if got.first().is_some_and(|(t, _)| t == "r") {
                    want_order.clone()
                } else {
                    want_order[1..].to_vec()
                };
                Ok(if got == want {
                    Ok(())
                } else if got.iter().map(|x| &x.0).eq(want.iter().map(|x| &x.0)) {
                    Err(l
                        .pick(
                            "The order is right; a node's offset is its depth below r (r is 0).",
                            "顺序对了；节点的偏移是它在 r 下面的深度（r 是 0）。",
                        )
                        .into())
                } else {
                    Err(l
                        .pick(
                            "Depth first: go down the first branch to its end, then back up to \
                             the nearest node with a child not yet visited; siblings in the \
                             drafts' order.",
                            "深度优先：沿第一个分支走到底，再退回到最近的还有未访问孩子的节点；\
                             兄弟节点按草稿的顺序。",
                        )
                        .into())
                })
            },
        ),
        check(
            l.pick("(3) what e sees", "（3）e 能看到什么"),
            move |text| {
                let mut got: Vec<String> = text
                    .split([',', '，', '、', ' '])
                    .filter(|s| !s.is_empty() && *s != "r")
                    .map(str::to_string)
                    .collect();
                if got.iter().any(|t| t.chars().count() != 1) {
                    return Err(l
                        .pick(
                            "Type node names separated by spaces, e.g. a b.",
                            "请输入用空格分隔的节点名，例如 a b。",
                        )
                        .into());
                }
                got.sort();
                got.dedup();
                let mut want = want_sees.clone();
                want.sort();
                Ok(if got == want {
                    Ok(())
                } else {
                    Err(l
                        .pick(
                            "A node sees exactly its ancestors and itself, whatever comes before \
                         it in the layout.",
                            "一个节点恰好看到它的祖先和它自己，不管排列里它前面还有什么。",
                        )
                        .into())
                })
            },
        ),
    ];
    let layout = names
        .iter()
        .zip(&depths)
        .map(|(t, d)| format!("{t}({d})"))
        .collect::<Vec<_>>()
        .join(" ");
    let not_seen = names
        .iter()
        .filter(|t| *t != "r" && !sees.contains(t))
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let seen = sees.join(", ");
    let solution = l.pick(
        format!(
            "{count} speculated nodes ({sequences} if every sequence ran alone: a and b are \
             shared). Depth first: {layout}. e sees the verified prefix and {seen}: not \
             {not_seen}, although c comes before it in the layout."
        ),
        format!(
            "{count} 个猜测节点（每条序列单独跑则是 {sequences} 个：a 和 b 是共享的）。深度\
             优先：{layout}。e 能看到已验证的前缀和 {seen}：看不到 {not_seen}，尽管 c 在排列里\
             排在它前面。"
        ),
    );
    (statement, checks, solution)
}

/// "r0 a1 b2" or "r(0) a(1)" → [(r, 0), (a, 1), (b, 2)].
fn parse_order(text: &str, l: Lang) -> Result<Vec<(String, usize)>, String> {
    let form = || {
        l.pick(
            "Write each node with its depth, e.g. r0 a1 b2 (or r(0) a(1) b(2)).",
            "每个节点写上它的深度，例如 r0 a1 b2（或 r(0) a(1) b(2)）。",
        )
        .to_string()
    };
    text.split([',', '，', ' '])
        .filter(|s| !s.is_empty())
        .map(|item| {
            let item = item.replace(['(', ')', '（', '）'], "");
            let split = item.find(|c: char| c.is_ascii_digit()).ok_or_else(form)?;
            let (name, depth) = item.split_at(split);
            if name.is_empty() {
                return Err(form());
            }
            Ok((name.to_string(), depth.parse().map_err(|_| form())?))
        })
        .collect()
}
