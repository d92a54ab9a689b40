use super::power::*;
use super::*;
use crate::sampling::speculative::Variant;
use crate::sampling::tv;
use crate::toy::enumerate::{exact_distribution_over, Strategy};
use crate::toy::{ToyConfig, PROMPT};

fn lm(draft_noise: f64) -> ToyLm {
    ToyLm::new(&ToyConfig {
        draft_noise,
        ..ToyConfig::default()
    })
}

fn run(lm: &ToyLm, gamma: usize, bug: Option<Bug>) -> Run<'_> {
    Run {
        lm,
        gamma,
        bug,
        mode: Mode::Sampled,
    }
}

#[test]
fn the_correct_run_is_the_reference_algorithm_and_argmax_draft_the_lectures_variant() {
    // The gallery's runner, with no bug, gives exactly what the toy's own enumeration gives for
    // Algorithm 1; with the argmax draft, exactly the lecture's exercise-7 variant.
    let lm = lm(1.5);
    for gamma in 1..=4 {
        for window in 1..=5 {
            for (bug, variant) in [
                (None, Variant::Correct),
                (Some(Bug::ArgmaxDraft), Variant::ArgmaxDraft),
            ] {
                let reference = exact_distribution_over(
                    &lm,
                    Strategy::Speculative {
                        gamma: gamma as u32,
                        rule: variant.into(),
                    },
                    window,
                );
                let ours = exact(run(&lm, gamma, bug), &PROMPT, window);
                let d = tv(&ours, &reference);
                assert!(d <= 1e-15, "{bug:?} γ {gamma} window {window}: {d}");
            }
        }
    }
}

#[test]
fn monte_carlo_of_each_bug_agrees_with_its_own_enumeration() {
    // The two ways of running a bug must agree (χ² at level 0.001 over 20,000 samples, fixed
    // seeds: eleven rules, so a chance alarm would be about 1% likely).
    let lm = lm(1.5);
    for bug in std::iter::once(None).chain(Bug::ALL.map(Some)) {
        let r = run(&lm, GAMMA, bug);
        let own = exact(r, &PROMPT, WINDOW);
        let test = chi_square(&samples(r, &PROMPT, WINDOW, 20_000, 11), &own);
        assert!(test.p_value > 1e-3, "{bug:?}: {test:?}");
    }
}

#[test]
fn every_bug_is_caught_by_a_test_and_the_correct_rule_by_none() {
    let lm = lm(1.5);
    let correct = examine(&lm, None, 7);
    assert!(correct.detected_by.is_empty(), "{correct:?}");
    assert!(correct.tv <= EXACT_TV && correct.samples_needed.is_none());
    assert_eq!(correct.greedy_identical, correct.greedy_runs);
    for bug in Bug::ALL {
        let e = examine(&lm, Some(bug), 7);
        assert!(e.detected_by.contains(&EXACT), "{e:?}");
        assert_eq!(e.exact_from_gamma, Some(1), "{bug:?}");
        let greedy_sees = e.greedy_identical < e.greedy_runs;
        match bug {
            // Faults in the sampler: greedy decoding never runs it.
            b if b.place() == Place::Sampler => assert!(!greedy_sees, "{e:?}"),
            // Faults in the loop show in greedy decoding on this toy…
            Bug::FirstDraftUnchecked | Bug::StaleCache => assert!(greedy_sees, "{e:?}"),
            // …except numerics that flip no argmax here: its TV is 0.3%, a χ² test needs over a
            // million samples, and only exact enumeration sees it.
            _ => {
                assert!(!greedy_sees && e.tv < 1e-2, "{e:?}");
                assert!(e.samples_needed.unwrap() > CAP as f64 && e.at_needed.is_none());
                assert_eq!(e.detected_by, vec![EXACT], "{e:?}");
                // The run it would need is not made, and not reported as a miss.
                assert_eq!(e.not_run, vec![MONTE_CARLO], "{e:?}");
            }
        }
    }
}

#[test]
fn the_power_the_gallery_reports_is_the_power_it_has() {
    // On a draft close to the target (noise 0.3) "same token or ratio" is subtle: the χ² test
    // needs about 4,800 samples for 95% power and has about 30% with 1,000. Over 20 seeds the
    // detections must fall where those powers put them (binomial, 99.9% ranges), and the
    // correct rule's alarms where the level puts them.
    let lm = lm(0.3);
    let (bug, correct) = (
        run(&lm, GAMMA, Some(Bug::SameTokenOr)),
        run(&lm, GAMMA, None),
    );
    let target = exact(run(&lm, 0, None), &PROMPT, WINDOW);
    let r = exact(bug, &PROMPT, WINDOW);
    let needed = samples_needed(&r, &target).unwrap();
    let quick = power(&r, &target, QUICK as f64);
    assert!((2_000.0..20_000.0).contains(&needed), "{needed}");
    assert!((0.1..0.6).contains(&quick), "{quick}");
    let alarms = |run: Run<'_>, n: usize| {
        (0..20)
            .filter(|&s| chi_square(&samples(run, &PROMPT, WINDOW, n, 500 + s), &target).alarm())
            .count()
    };
    let at_needed = alarms(bug, needed as usize);
    assert!(at_needed >= 15, "{at_needed}/20 at n {needed}");
    let at_quick = alarms(bug, QUICK);
    let expected = 20.0 * quick;
    assert!(
        at_quick >= 1 && (at_quick as f64 - expected).abs() <= 7.0,
        "{at_quick}/20 at 1,000, power {quick}"
    );
    assert!(alarms(correct, needed as usize) <= 4);
}

#[test]
fn false_alarms_of_the_correct_rule_stay_near_the_level() {
    for (n, alarms) in false_alarms(&lm(1.5)) {
        // 20 seeds at level 5%: more than 4 would happen by chance under 2% of the time.
        assert!(alarms <= 4, "{alarms}/20 at n {n}");
    }
}

#[test]
fn the_chi_square_tail_is_close_to_known_points() {
    // χ²₁₀ at 18.307 and χ²₁₀₀ at 124.342: the upper 5% points of the tables.
    assert!((chi_square_tail(18.307, 10.0) - 0.05).abs() < 2e-3);
    assert!((chi_square_tail(124.342, 100.0) - 0.05).abs() < 1e-3);
    // A distribution against itself: power equals the level.
    let p = [0.1, 0.2, 0.3, 0.4];
    assert!((power(&p, &p, 1e4) - LEVEL).abs() < 2e-3);
    // A draw the target cannot make is an alarm however few samples there are.
    let test = chi_square(&[10, 10, 10, 10, 1], &[0.25, 0.25, 0.25, 0.25, 0.0]);
    assert!(test.alarm() && test.p_value == 0.0, "{test:?}");
}
