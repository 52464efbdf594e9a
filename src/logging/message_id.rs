//! The `MESSAGE_ID`s of plugtop's main journal entries: fixed 128-bit ids
//! (made once, never changed), so a site finds every start, plug or
//! refusal with `journalctl MESSAGE_ID=...` whatever the text says and in
//! whatever version.

/// A journal message id: 32 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageId(&'static str);

impl MessageId {
    /// The id as the journal field's value.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// `plugtop run` started (mode, root and rule file in the text).
pub const STARTED: MessageId = MessageId("5f61c2c0c5c645199b7b16acb0a9ef48");
/// Asked to stop (by a signal, or the end of a recording).
pub const STOPPING: MessageId = MessageId("6e1867a111814b3eb45c438db208bcd2");
/// The guest was put back as it was at the start, or could not be.
pub const RESTORED: MessageId = MessageId("007f6029b665434b8329a19e131903e5");
/// A CPU was plugged.
pub const PLUGGED: MessageId = MessageId("201ab810b7d14256b844ef9b23d70891");
/// A CPU was unplugged.
pub const UNPLUGGED: MessageId = MessageId("d872c07ca8f3440cb609086b8b1981b5");
/// The CMM pool changed size.
pub const POOL_CHANGED: MessageId = MessageId("870e29f3e47c4471bb15b4716e22bd9a");
/// The start was refused; nothing was changed.
pub const REFUSED: MessageId = MessageId("5ac223f9bd954adca4e92ff7f1f2281b");
/// The rule file was reloaded (SIGHUP).
pub const RELOADED: MessageId = MessageId("af83ccd8fba745ea8494aa20900f74ba");
/// A reload failed; the old rules stay.
pub const RELOAD_FAILED: MessageId = MessageId("73a97789ba9245548d8cadad1770a8ab");
/// The guest started flapping.
pub const FLAPPING: MessageId = MessageId("7ca8acbdc00b4bac83f1a84db92f2e03");
/// A rule group was skipped for an interval by an evaluation fault.
pub const FAULT: MessageId = MessageId("49ef9ce353224ad8a4e5874a0c461817");
/// A change to the guest was decided but could not be made.
pub const ACTION_FAILED: MessageId = MessageId("2d2b9d071f814b2f8497e071dcb0fbc0");
/// cpuplugd would have exited here; plugtop stops and restores.
pub const FATAL: MessageId = MessageId("fa91f573d47649e8ae762931c5267e94");
/// What observe mode would have done.
pub const DECIDED: MessageId = MessageId("3d5894b5f0464fcc9d5c4f82c70e9440");

/// Every id, for the test that they are well-formed and distinct.
pub const ALL: [MessageId; 14] = [
    STARTED,
    STOPPING,
    RESTORED,
    PLUGGED,
    UNPLUGGED,
    POOL_CHANGED,
    REFUSED,
    RELOADED,
    RELOAD_FAILED,
    FLAPPING,
    FAULT,
    ACTION_FAILED,
    FATAL,
    DECIDED,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_128_bit_lowercase_hex_and_distinct() {
        for id in ALL {
            let s = id.as_str();
            assert_eq!(s.len(), 32, "{s}");
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{s}"
            );
        }
        let mut seen: Vec<&str> = ALL.iter().map(|i| i.as_str()).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), ALL.len());
    }
}
