//! The address in use, in the player's bar: said now and at every switch
//! of a client of several addresses.

use super::shared::Shared;
use crate::ui::state::Answer;
use std::sync::Arc;

/// The address in use of `client`, when it has several: said now and at
/// every switch, until the client is gone; a client of one says none.
pub(super) async fn addresses(sh: Arc<Shared>, client: crate::api::Client) {
    if client.addresses().len() < 2 {
        sh.ui.send(Answer::Via(None));
        return;
    }
    let mut switches = client.watch_base();
    drop(client);
    loop {
        let label = switches.borrow_and_update().label();
        sh.ui.send(Answer::Via(Some(label)));
        if switches.changed().await.is_err() {
            return;
        }
    }
}
