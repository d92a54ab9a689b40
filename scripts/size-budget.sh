#!/usr/bin/env bash
# The page's download budget, gzipped (what a visitor fetches): checked in CI after the build.
#   first visit (page, scripts, styles, CPU module, weights)  ≤ 1.71 MB (the CPU module: the
#   largest of its four builds, of which a visitor downloads one: www/threads.js; each build ≤ the
#   CPU module's budget; on 2026-12-03 the threaded ones are 1.108 MB, the one-thread ones 1.158);
#   raised for issue 31's threads to 1.74 MB and the page's scripts to 0.126 MB, which they took
#   to ≈ 1.728 and 0.1219 MB: the choice of build and its probe, the helper threads' start-up and
#   their worker, the sentences saying how the matmuls ran (both languages), the threaded
#   bindings
#   CPU module ≤ 1.16 MB, weights ≤ 0.50 MB, page scripts + styles + HTML ≤ 0.105 MB
#   (raised on 2026-12-02 from 1.50, 1.00 and 0.06 MB, which the modules and scripts had reached
#   at 1.494, 0.987 and 0.0598 MB: cross-origin embedding, the phone layout, the Chinese page made
#   complete and the γ sweep add scripts and text; the budget still catches a dependency or a
#   debug build slipping in; raised again the same day from 1.56, 1.03, 0.075 and 2.50 MB, which
#   the drafts on the target's hidden states took to 1.599, 1.077, 0.074 and 2.555 MB: Medusa's
#   heads, EAGLE's draft and its trees, the §6 table and their figures run in both modules;
#   raised on 2026-12-03 from 1.62, 1.09 and 0.08 MB, which issue 32 took to 1.630, 1.092 and
#   0.090 MB: the widget reference in Chinese, §5's and §6's own texts, the job queue, each
#   element's language and Run, figures drawn for their room, the exactness window's verdicts;
#   raised on 2026-12-03 from 1.64 and 1.10 MB, which issue 34's speculation under load took
#   from 1.092 to 1.105 MB (CPU module, measured against the commit before it): the sweep over
#   the batch, its figure with the published serving figures, its caption in both languages and
#   the experiment's parser); raised again for the whole of issue 34 (speculation under load,
#   per-sequence against tree-parallel verification timed, the serving model's many GPUs and
#   offloading) to 1.68, 1.13, 0.098 and 2.62 MB, which it took to 1.670, 1.126, 0.0969 and
#   2.601 MB (the GPU module as CI builds it): two timed experiments with their figures and
#   bilingual captions, a widget, the roofline's deployment controls and presets); raised again
#   for the rest of issue 34 to 1.69, 1.14 and 0.100 MB, which it took to 1.682, 1.135, 0.0994
#   and 2.615 MB: measured offloading (the crossing timed and drawn in the measured roofline, its
#   reports and error texts in both languages, the weights control and its sentences in the
#   page) and EAGLE-2's dynamic tree in the per-sequence vs tree-parallel experiment); raised
#   for issue 33's learned speculators to 1.71, 1.16, 0.105 and 2.64 MB, which they took to
#   1.705, 1.154, 0.1032 and 2.631 MB: the boost-tuned pools' experiment (a pool's merged tree,
#   coverage, wall clock), the draft files it reads and checks, and its widget in both languages
#   GPU module (fetched only when someone picks WebGPU) ≤ 2.64 MB (2.48 MB: wgpu alone, no CPU
#   backend, built for size throughout)
#   the drafts on the target's hidden states (Medusa, EAGLE, EAGLE + training-time test), fetched
#   only by the experiments that run them ≤ 0.50 MB
#   the boost-tuned pools and their control (eight small models of draft A's shape, 446 KB raw),
#   fetched only by the widget that runs them ≤ 0.45 MB
#   the training module (flex with burn's autodiff and optimizers), fetched only by the training
#   widget ≤ 1.00 MB (0.78 MB on 2026-12-03); with it the CPU module raised to 1.17 MB (1.1633:
#   the pools verified with MSS, the trained draft handed over, its reports relabelled "your
#   draft"), the GPU module to 2.65 MB (2.638: the same in it), the page's scripts to 0.12 MB
#   and the first visit to 1.73 MB, for that widget, its worker, the store of the trained draft
#   and the decoding widget's draft “yours” (0.1032 and 1.7075 MB before them; 0.1158 and 1.7268
#   with them)
#   the GPU module raised to 3.00 MB for issue 31's GPU target with a CPU draft: it now carries
#   flex (and our kernels), so that drafts A and B run on the CPU in the worker beside the WebGPU
#   target, c a draft's CPU time over the target's GPU step (2.638 → 2.972 MB; on SwiftShader the
#   ×1 chain went from 0.56× to 1.17× with it). Only a visitor who picks WebGPU downloads it; the
#   first visit is unchanged
#   the first visit raised on 2026-12-04 to 1.75 MB for issue 31's packed weights (the strip
#   kernel and the widened target's packed layers: the threaded FMA build 1.1096 → 1.1142 MB),
#   which took it to 1.7394–1.7409 MB; the ×16 target's one-token call in the page went from 2.40–2.50
#   to 2.04–2.19 ms with them (three rounds side by side)
#   each CPU build raised on 2026-12-04 to 1.175 MB: every draft model beside a WebGPU target (the
#   reports' and the decoding view's drafts_on, the hidden-state drafts loaded on the drafts'
#   device) took the one-thread build to 1.16997 MB (1.16960 before the view's), 26 bytes under 1.17; the
#   threaded builds, which most visitors get, are 1.114 MB, and the first visit's budget stands
#   the page's scripts raised on 2026-12-05 to 0.128 MB (the first visit's budget stands) for
#   issue 31's reports a student can trust: the measured roofline's caution where its points are
#   noisy, how the draft models' matmuls ran beside a WebGPU target, why the trained target's
#   matmuls run on one thread, the look-up's own wording, the kernel line's rows (0.1258 → 0.1272 MB; first visit
#   1.7436 → 1.7457 MB); raised again the same day to 0.130 MB for a second review of the page
#   (0.1272 → 0.1289 MB, first visit 1.7448 MB): the step-through in a module of its own, stale
#   results greyed and said so, lists cut between values, the typed-number and caption fixes
#   the page's scripts raised again on 2026-12-05 to 0.131 MB and the first visit to 1.755 MB
#   for a third review (page 0.1291 → 0.1301 MB, the one-thread CPU build 1.1707 → 1.1741 MB,
#   first visit 1.7494 → 1.7520 MB, as CI builds them, through clippy's driver): the rules'
#   Chinese names and bar labels, α = 1's missing optimum said so in both figures, c per draft
#   call, the Monte Carlo caption's like-for-like noise, exercise 4's overhead, full-width
#   separators in the multi-draft widget, Chinese line breaks without a space, a widget that
#   cannot be built kept to its own place
#   the page's scripts raised on 2026-12-06 to 0.1355 MB and the first visit to 1.7595 MB for
#   issue 53's items 7, 8, 9 and 12, which added 4,457 bytes to the page's HTML, CSS and scripts
#   (measured commit by commit, each against its parent): §5's widget's own title and presets
#   (widgets/sections.js) and its wall-clock row, the heat map's cells that could not run, the
#   choice among the builds that exist (pkg/builds.json), and the notes' Run before the engine
#   loads (specdec-widget.js, the exactness lab's Run, the reference's texts in both languages)
#   raised on 2026-12-06 for issue 53's items 5 and 10, by what they measured against their
#   parents: the CPU modules by 3.9 KB (the one-thread build 1,178,451 → 1,182,281 bytes gzip, a
#   plain build: figures that keep their texts apart on a phone, category names wrapped and
#   staggered, labels cut with an ellipsis, the §5 and §6 figures drawn for their room), the
#   page's scripts by 1.4 KB (1,386 bytes: www/frame.js, the widgets mounted together), the first
#   visit by both (5.3 KB)
#   raised on 2026-12-06 for issue 53's items 0, 3, 4, 6 and 11, by what they measured: the page's
#   scripts by 1.9 KB (1,873 bytes, commit by commit against their parents: the exercises' work
#   kept across the language switch (url.js's keep, exercises.js), docs.html's note on links over
#   16 KB, the multi-draft widget's numbering, the backend choices in Chinese), the CPU modules by
#   1.8 KB (1,798 bytes, the one-thread build with and without these changes: every message's
#   quoting cut, invisible characters named in both languages, the drawn tokens numbered from 1),
#   the first visit by both (3.7 KB)
#   raised on 2026-12-06 for issue 53's items 0-2 and what was left of the others, from what CI's
#   build measured at main's head (through clippy's driver): the CPU modules 1,184,212 bytes (the
#   measured roofline's peak as a ceiling, its calibrations reused and timed, every timed table's
#   IQR), the page's scripts 140,926 bytes (www/noise.js, the noise flags of the boost, latency,
#   tree-vs-paths, batch and §6 tables), the first visit 1,772,924 bytes. The budgets are set
#   2-4 KB above, since builds of nearly one tree moved by over 1 KB gzip (1,183,302 plain,
#   1,184,212 through clippy's driver, then 1,185,393 with one line more; the day before a plain
#   and a clippy build were 0.2 KB apart): the CPU modules to 1.188 MB, the page to 0.1415 MB,
#   the first visit to 1.777 MB; the GPU module, 2,997,009 bytes in that run, to 3.004 MB for the
#   same reason
#   raised on 2026-12-06 for issue 54 (how to speculate on this device), measured here at its
#   head: the one-thread CPU module 1,208,411 bytes through clippy's driver, +24 KB (Sequoia's
#   DP and the choice, the device profiles, the §4.7 widget's view with its heat map and tree,
#   their wasm export and presets, expansion trees of any shape in the engine), the FMA build
#   1,203,448; the threaded builds, rebuilt by the nightly in the same minutes, 1,152,992 and
#   1,152,929; the page 144,308 bytes (www/widgets/choose.js and §4.7's text), the first visit
#   1,800,505, the GPU module 3,015,738. The budgets are set 4-6 KB above: the CPU modules to
#   1.213 MB, the page to 0.1475 MB, the first visit to 1.806 MB, the GPU module to 3.021 MB
#   raised on 2026-12-06 for the exactness lab's typical acceptance and gallery of ten real bugs
#   (lecture §5.1, §6), measured at ee695aa: the one-thread CPU module 1,231,416 bytes, +23 KB
#   from the core's commits (sampling::typical and Rule, the ten bugs run by enumeration, Monte
#   Carlo and greedy, the χ² power of each test, their views, captions in both languages and the
#   samples-needed figure; the working tree with other sessions' unfinished lab/ code, 1,233,899),
#   the FMA build 1,230,470, the threaded builds 1,176,159 and 1,177,075; the page 147,464 bytes,
#   +3.1 KB from its side (www/widgets/exactness-gallery.js, ε and δ, the typical figure's part, their
#   styles); the first visit 1,829,149. Set 4-6 KB above: the CPU modules to 1.239 MB, the page
#   to 0.1515 MB, the first visit to 1.834 MB. The GPU module was not rebuilt for it (3,015,738)
#   the GPU module rebuilt for it at the head with typical acceptance on LikesWorld (Medusa's tree
#   rule, lab::typical), through clippy's driver: 3,037,980 bytes, +22 KB; set to 3.044 MB
#   raised again at f6f92f1 from what a fresh clone's CI run built (through clippy's driver): the
#   one-thread CPU module 1,237,140, the FMA build 1,232,869, the first visit 1,832,644, the GPU
#   module 3,043,655 — 0.3 to 1.9 KB under the budgets just set, closer than builds of one tree
#   agree (about 1 KB): the CPU modules to 1.243 MB, the first visit to 1.838 MB, the GPU module
#   to 3.050 MB
#   raised on 2026-12-07 for issue 54's page half, measured at its head through clippy's driver:
#   the one-thread CPU module 1,278,055 bytes, +35 KB (every draft's acceptance vector, the
#   choice measured with its engine calibration and limit, the §6 table's budget auto and the
#   sweep's choice, the measured widget's view with its curve and vector figures), the FMA build
#   1,273,825, the threaded builds 1,214,001 and 1,214,353; the page 160,803 bytes, +9 KB
#   (www/widgets/choosehere.js and decoding-auto.js); the first visit 1,886,644; the GPU module
#   3,077,113. Set 4-6 KB above: the CPU modules to 1.283 MB, the page to 0.166 MB, the first
#   visit to 1.893 MB, the GPU module to 3.083 MB. Issue 56 (a first module without burn) is
#   where the first visit shrinks. The limit beside every speedup (lab::limit) then took the GPU
#   module to 3,083,443 and the CPU module to 1,278,290: the GPU module's budget set to 3.089 MB
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
gz() { cat "$@" | gzip -9c | wc -c; }
cpu=$(gz pkg/specdec_bg.wasm)
# The CPU module's other builds (threads, FMA: www/threads.js): a visitor downloads one of the four.
cpu_fma=$(gz pkg/fma/specdec_bg.wasm)
cpu_mt=$(gz pkg/mt/specdec_bg.wasm)
cpu_mt_fma=$(gz pkg/mt-fma/specdec_bg.wasm)
largest=$cpu
for b in "$cpu_fma" "$cpu_mt" "$cpu_mt_fma"; do [ "$b" -gt "$largest" ] && largest=$b; done
gpu=$(gz pkg/gpu/specdec_bg.wasm)
weights=$(gz pkg/weights/*.bpk)
hidden=$(gz pkg/weights/hidden/*.bpk)
pool=$(gz pkg/weights/pool/*.bpk)
train=$(gz pkg/train/specdec_bg.wasm)
# The bindings of the largest build's (the threaded ones' are larger: their thread start-up).
glue=pkg/specdec.js
for g in pkg/fma/specdec.js pkg/mt/specdec.js pkg/mt-fma/specdec.js; do
  [ "$(gz "$g")" -gt "$(gz "$glue")" ] && glue=$g
done
page=$(gz www/*.html www/*.css www/*.js www/widgets/*.js "$glue")
first=$((largest + weights + page))
status=0
check() { # name bytes budget
  local verdict=ok
  if [ "$2" -gt "$3" ]; then verdict="OVER BUDGET"; status=1; fi
  printf '  %-44s %9d bytes gzip   budget %9d   %s\n' "$1" "$2" "$3" "$verdict"
}
echo "Download size budget:"
check "first visit (page + largest CPU build + weights)" "$first" 1893000
check "CPU module (pkg/specdec_bg.wasm)" "$cpu" 1283000
check "CPU module, FMA build (pkg/fma/)" "$cpu_fma" 1283000
check "CPU module, threaded build (pkg/mt/)" "$cpu_mt" 1283000
check "CPU module, threaded FMA build (pkg/mt-fma/)" "$cpu_mt_fma" 1283000
check "weights (pkg/weights/*.bpk)" "$weights" 500000
check "page: HTML, CSS, scripts" "$page" 166000
check "GPU module, on demand (pkg/gpu/)" "$gpu" 3089000
check "hidden-state drafts, on demand (pkg/weights/hidden/)" "$hidden" 500000
check "boost-tuned pools, on demand (pkg/weights/pool/)" "$pool" 450000
check "training module, on demand (pkg/train/)" "$train" 1000000
exit "$status"
