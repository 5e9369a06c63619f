//! An account for the tests of the modules that keep them.

use crate::domain::{Account, ServerId, UserId};

/// User `user` of server `server`.
pub(crate) fn account(server: &str, user: u64) -> Account {
    Account {
        server_id: ServerId::new(server),
        user_id: UserId::from(user),
    }
}
