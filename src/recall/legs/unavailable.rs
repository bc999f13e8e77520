use crate::recall::leg::{Leg, LegError, LegHits, LegQuery, RecallLeg};

/// Stands in for a leg that could not be set up (model missing, index unreadable): it fails
/// open on every query, with the reason.
pub struct UnavailableLeg {
    pub leg: Leg,
    pub reason: String,
}

impl RecallLeg for UnavailableLeg {
    fn leg(&self) -> Leg {
        self.leg
    }

    fn search(&self, _query: &LegQuery) -> Result<LegHits, LegError> {
        Err(LegError::Failed(self.reason.clone()))
    }
}
