//! The request body of a form or raw upload, read under the same rules as a tus body
//! ([`ferry_body`]): cut off when it delivers less than 1 KiB in one idle window, and, when the
//! client did not declare its length, charged to the subject's quota as it arrives (a declared
//! length is charged whole before reading, [`crate::access::charge`]). Afterwards
//! [`Reading::error`] tells why a read failed, whatever the parser reading the body saw.

use axum::body::Body;
use ferry_auth::{Meter, Principal};
use ferry_body::{GuardedBody, Metered, Stop, StopCell};

use crate::{FormError, FormState};

/// The body as the store reads it.
pub(crate) type FormBody = Metered<GuardedBody, Option<Meter>>;

/// What is known of a body being read, for the answer when it fails.
#[derive(Debug)]
pub(crate) struct Reading {
    stop: StopCell,
    meter: Option<Meter>,
}

/// `body` under the idle rule, metered against `principal`'s quota unless `declared`.
pub(crate) fn read(
    state: &FormState,
    body: Body,
    principal: Option<&Principal>,
    declared: Option<u64>,
) -> (FormBody, Reading) {
    let guarded = GuardedBody::new(body, state.idle_timeout);
    let meter = match declared {
        Some(_) => None,
        None => principal.and_then(|p| p.meter(0)),
    };
    let reading = Reading {
        stop: guarded.stop_cell(),
        meter: meter.clone(),
    };
    (Metered::new(guarded, meter), reading)
}

impl Reading {
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
