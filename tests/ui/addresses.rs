//! The player bar says which of the server's addresses is in use, when
//! the profile lists several (issue 24 §2).

use crate::fixtures::*;
use earmark::ui::state::*;

fn bar(text: &str) -> &str {
    text.lines()
        .find(|l| l.contains("1.25×"))
        .unwrap_or_default()
}

#[test]
fn the_player_bar_says_which_address_is_in_use_of_several() {
    let mut app = playing();
    let one = render(&mut app, 110, 24);
    assert!(!bar(&one).contains("via"), "one address says none: {one}");
    app.update(Event::Answer(Answer::Via(Some("vpn.example/nas".into()))));
    let text = render(&mut app, 110, 24);
    assert!(bar(&text).contains("via vpn.example/nas"), "{text}");
    app.update(Event::Answer(Answer::Via(Some("nas.local:8686".into()))));
    let text = render(&mut app, 110, 24);
    assert!(
        bar(&text).contains("via nas.local:8686"),
        "it follows a switch: {text}"
    );
}
