//! The request body of a form or raw upload, read under the same rules as a tus body
//! ([`ferry_body`]): cut off when it delivers less than 1 KiB in one idle window, and charged to
//! the subject's quota: a declared length whole before reading ([`Reading::charge`]), an
//! undeclared one as it arrives. Afterwards [`Reading::error`] tells why a read failed, whatever
//! the parser reading the body saw, and [`Reading::discard`] gives the charge back when nothing
//! was kept, so a retried upload is charged once.

use axum::body::Body;
use ferry_auth::{Meter, Principal};
use ferry_body::{GuardedBody, Metered, Stop, StopCell};

use crate::{FormError, FormState};

/// The body as the store reads it.
pub(crate) type FormBody = Metered<GuardedBody, Option<Meter>>;

/// What is known of a body being read, for its charge and for the answer when it fails.
#[derive(Debug)]
pub(crate) struct Reading {
    stop: StopCell,
    principal: Option<Principal>,
    /// The subject's charges for this body, when a quota applies.
    meter: Option<Meter>,
    declared: Option<u64>,
}

/// `body` under the idle rule; unless `declared`, metered against `principal`'s quota as it
/// arrives.
pub(crate) fn read(
    state: &FormState,
    body: Body,
    principal: Option<&Principal>,
    declared: Option<u64>,
) -> (FormBody, Reading) {
    let guarded = GuardedBody::new(body, state.idle_timeout);
    let meter = principal.and_then(|p| p.meter(0));
    let budget = match declared {
        Some(_) => None,
        None => meter.clone(),
    };
    let reading = Reading {
        stop: guarded.stop_cell(),
        principal: principal.cloned(),
        meter,
        declared,
    };
    (Metered::new(guarded, budget), reading)
}

impl Reading {
    /// Charges a declared body whole before it is read (413 or 429 when it does not fit); an
    /// undeclared one is refused here only once the quota is used up, and charged as it
    /// arrives. The body may hold several files, so the request is charged, not each file.
    pub(crate) fn charge(&self) -> Result<(), FormError> {
        match (&self.meter, self.declared) {
            (Some(meter), Some(n)) => Ok(meter.reserve(n)?),
            _ => match &self.principal {
                Some(principal) => Ok(principal.charge(None)?),
                None => Ok(()),
            },
        }
    }

    /// The answer for a read that failed with `e`: the quota's refusal, 408 for an idle body,
    /// 400 for a body the client broke off, else `e` itself.
    pub(crate) fn error(&self, e: FormError) -> FormError {
        if let Some(refusal) = self.meter.as_ref().and_then(Meter::refusal) {
            return FormError::Auth(refusal);
        }
        match self.stop.get() {
            Some(Stop::Idle) => FormError::IdleTimeout,
            Some(Stop::ClientGone) => {
                FormError::BadRequest("Could not read the request body: it was cut off".to_owned())
            }
            _ => e,
        }
    }

    /// Nothing of the body was kept: its charges are given back.
    pub(crate) fn discard(&self) {
        if let Some(meter) = &self.meter {
            meter.keep(0);
        }
    }
}
