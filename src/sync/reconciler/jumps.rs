//! Jumps back (undo, a place picked in the history, smart rewind) are the
//! listener's seeks: the rules that make them reach the server, as
//! properties. No new rule was needed: a seek already reports where the
//! listener was, waits for the landing, then reports the new place even
//! behind what the server has; only a place at the very start of the book
//! needs `reset`, which a seek there sets.

use super::tests::*;
use super::*;
use proptest::prelude::*;

proptest! {
    #[test]
    fn a_jump_back_is_reported_where_it_landed(
        from_ch in 1u32..=3,
        from in 0.0f64..2000.0,
        to_ch in 1u32..=3,
        to in 0.0f64..2000.0,
    ) {
        let mut r = Reconciler::new(ReconcilerConfig::default());
        live_at(&mut r, P1, "a", spot("a", from_ch, from));
        let target = spot("a", to_ch, to);
        let d = act(&mut r, P1, Action::Seek(target.clone()), 5_000);
        // Where the listener was goes first (when it is reportable at all).
        for w in reports(&d) {
            prop_assert_eq!(&w.spot, &spot("a", from_ch, from));
        }
        // Nothing while the engine travels (it may read anything).
        prop_assert!(reports(&pos(&mut r, P1, spot("a", 1, 0.0), false, 5_100)).is_empty());
        pos(&mut r, P1, target.clone(), true, 5_200);
        let d = act(&mut r, P1, Action::Pause, 6_000);
        let w = reports(&d);
        prop_assert_eq!(w.len(), 1);
        prop_assert_eq!(&w[0].spot, &target);
        // The start of the book is the one place that needs the explicit reset.
        prop_assert_eq!(w[0].reset, to_ch == 1 && to < START_EPSILON);
    }
}
