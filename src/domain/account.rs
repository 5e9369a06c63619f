//! Whose data it is: one server instance and account, whichever of the
//! server's addresses is in use. Sync's journal sends an entry only to its
//! own; downloads, the library cache and the up next list are kept apart
//! by it. (What was kept under an address before is read and moved here.)

use super::{ServerId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    pub server_id: ServerId,
    pub user_id: UserId,
}

impl std::fmt::Display for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "server {}, user {}", self.server_id, self.user_id)
    }
}
